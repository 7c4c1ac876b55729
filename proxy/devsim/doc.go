// Package devsim simulates fleets of network devices for gsalt's proxy tests and benchmarks.
//
// A Fleet serves N devices of one platform ("ios" for Cisco IOS-XE, "eos" for Arista EOS), each
// on its own 127.0.0.1 TCP port. Every device is an SSH server (password and keyboard-interactive
// authentication, one host key shared by the fleet, a bounded number of concurrent sessions)
// whose interactive shell speaks enough of the platform CLI for scrapligo's cisco_iosxe and
// arista_eos platforms and for NAPALM-style getters and configuration workflows:
//
//   - prompts for user exec, privileged exec, configuration and its sub-modes, IOS tclsh and
//     EOS configuration sessions; enable with a secret; terminal length/width; IOS paging;
//   - show commands derived from the device's live running configuration (version, running and
//     startup config, interfaces, LLDP, ARP, NTP, BGP summary, routes, ...), with the "| include",
//     "| exclude", "| begin", "| section", "| count" filters and, on EOS, "| json" for the
//     common getters;
//   - configuration changes typed in configuration mode, IOS flash files written through tclsh
//     or copy, "show archive config differences/incremental-diffs", "configure replace",
//     "copy <file> running-config", EOS "configure session" with diffs, commit, abort and
//     "rollback clean-config", and write memory.
//
// Device state (configuration trees, files, sessions) is allocated on the first connection, so
// thousands of idle devices cost little more than their listeners. Faults can be injected per
// device: hang (stop in the middle of show output), drop (close the connection in the middle of
// show output), badauth (refuse every login) and refuse (close every TCP connection at once).
//
// The command gsalt-devsim (cmd/gsalt-devsim) serves a fleet from the command line; tests start
// fleets in-process with Start and port 0.
package devsim

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
// The "iosxr" platform (a Cisco IOS XRv 9000 for scrapligo's cisco_iosxr) prompts
// "RP/0/RP0/CPU0:host#" with no enable, prints IOS XR's timestamp line before show output and
// "!"-closed configuration blocks, and follows the two-stage model: "configure" / "configure
// exclusive" edit a per-session target configuration ("show configuration [merge]", "show
// commit changes diff") that "commit" (comment, label, replace, confirmed N) applies; failed
// commits are explained by "show configuration failed"; "end" with uncommitted changes asks
// yes/no/cancel; "rollback configuration last N | to ID" and "show configuration commit list
// [detail]" use a bounded commit history, and unconfirmed trial commits revert on a timer.
//
// The "nxos" platform (a Cisco Nexus 9000v for scrapligo's cisco_nxos) lands logins in
// privileged exec, prints two-space-indented configurations without "!" or "end", and offers
// "terminal dont-ask", checkpoints (files and named), "show diff rollback-patch", "rollback
// running-config" (atomic or best-effort), "copy running-config startup-config", bootflash
// files (dir, delete, show file ... md5sum) and, once "feature scp-server" is configured, SCP
// uploads to bootflash: ("scp -t TARGET" on an SSH exec channel).
//
// Each platform is a folder, platforms/<name>/ (embedded): platform.yaml holds its prompts,
// error texts and messages, terminal limits, interface naming and types, hardware identity
// (MAC prefix, serial format, SSH version), file systems, VRF lines, feature switches and the
// command table (each command a Go handler named in registry.go or a text/template file of the
// folder), and the folder's *.tmpl files render show outputs, the configuration file header and
// each device's startup configuration. Feature switches select what is behaviour and stays Go:
// EOS configuration sessions, the IOS XR two-stage commit, NX-OS SCP, IOS file prompts. The
// "grammar" key picks the Go configuration grammar (ios, eos, nxos, iosxr). Options.Platforms
// adds platforms from any fs.FS with the same layout, so a new platform needs no Go code.
// Definitions are parsed once per fleet and shared read-only by its devices.
//
// Device state (configuration trees, files, sessions) is allocated on the first connection, so
// thousands of idle devices cost little more than their listeners. Faults can be injected per
// device: hang (stop in the middle of show output), drop (close the connection in the middle of
// show output), badauth (refuse every login) and refuse (close every TCP connection at once).
//
// The command gsalt-devsim (cmd/gsalt-devsim) serves a fleet from the command line; tests start
// fleets in-process with Start and port 0.
package devsim

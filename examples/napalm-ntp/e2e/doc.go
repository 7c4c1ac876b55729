// Package e2e applies the napalm-ntp example formula (netconfig.managed)
// and the netconfig states to simulated IOS-XE and EOS switches
// (proxy/devsim), through the napalm proxy module and net.* functions.
// It has tests only.
package e2e

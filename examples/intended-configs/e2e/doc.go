// Package e2e holds the end-to-end test of the intended-configs example
// (examples/intended-configs): a gsalt master with the example's reactor
// map and file_roots, a gsalt minion whose inotify beacon watches the
// directory of intended configurations, and an in-process gsalt-proxy fleet
// of NAPALM proxies for two simulated IOS-XE devices (proxy/devsim), all on
// loopback. Writing <device>.cfg replaces that device's running
// configuration and the outcome arrives on the master's event bus as
// intended/<device>/applied, unchanged or failed. The package has no code
// besides its tests.
package e2e

// Package e2e holds the end-to-end test of the dnsmasq reservations example
// (examples/dnsmasq): a gsalt master with the example's reactor map, gsalt
// minions and a real dnsmasq answering DNS on 127.0.0.2, all on loopback.
// Minions that start get a name in dnsmasq (checked with dig); a destroyed
// cloud VM or a deleted key takes it away again. The package has no code
// besides its tests.
package e2e

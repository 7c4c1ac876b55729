// Package e2e holds the end-to-end test of the nats-intended-configs
// example (examples/nats-intended-configs): real processes on loopback —
// nats-server with JetStream, gsalt-master with the example's master.d
// file and reactor, gsalt-proxy serving two NAPALM proxies, gsalt-devsim
// simulating the two IOS-XE devices and the example's publisher. A
// configuration published on dc1.<device>.configure replaces that
// device's running configuration, also when it was published while
// gsalt-master was down. The package has no code besides its tests.
package e2e

// Package e2e holds the end-to-end test of the network-as-a-service
// example (examples/naas): gsalt-master with the example's master.d file,
// reactor, orchestration, state, templates and pillar, gsalt-api in front
// of it, one gsalt-proxy serving NAPALM proxies for simulated IOS-XE
// devices (gsalt-devsim), all real processes on loopback. A POST to
// /hook/naas/configure replaces the named devices' configurations in
// batches; the test follows it on /events and checks every device over
// SSH. The package has no code besides its tests.
package e2e

package transport

import (
	"context"
	"testing"
	"time"
)

// TestConnGateSharedBudget checks the budget the master's two ports share:
// idle request connections make room for publish subscribers and new
// requesters once the gate is full (their pools reconnect on the next
// request without failing it), and with only publish connections left a
// further connection waits until one ends.
func TestConnGateSharedBudget(t *testing.T) {
	const budget = 4
	gate := NewConnGate(budget)
	lim := Limits{Gate: gate}
	srv := listenReq(t, "127.0.0.1:0", echo, ReqOptions{Limits: lim})
	pub := listenPub(t, "127.0.0.1:0", PubOptions{Limits: lim})
	ctx := context.Background()

	// Fill the budget with idle request connections.
	pools := make([]*ReqPool, budget)
	for i := range pools {
		pools[i] = &ReqPool{Addr: srv.Addr().String(), Logger: testLogger(t)}
		defer pools[i].Close()
		if _, err := pools[i].Send(ctx, []byte("x"), 1, 5*time.Second); err != nil {
			t.Fatalf("pool %d: %v", i, err)
		}
	}
	waitFor(t, func() bool { return gate.Conns() == budget })

	// Subscribers take the places of idle request connections.
	for i := range budget - 1 {
		c := rawDial(t, pub.Addr().String())
		c.handshake(t, "SUB")
		if got := gate.Evicted(); got != uint64(i+1) {
			t.Fatalf("subscriber %d: %d evictions, want %d", i, got, i+1)
		}
	}
	waitFor(t, func() bool { return pub.Subscribers() == budget-1 })

	// Every pool still gets its reply (the evicted ones reconnect, taking
	// the one request connection's place in turn), with a single try.
	for round := range 2 {
		for i, p := range pools {
			reply, err := p.Send(ctx, []byte("y"), 1, 5*time.Second)
			if err != nil || string(reply) != "re:y" {
				t.Fatalf("round %d pool %d: reply %q, err %v", round, i, reply, err)
			}
		}
	}
	waitFor(t, func() bool { return gate.Conns() <= budget })

	// A fourth subscriber evicts the last idle request connection; a fifth
	// finds nothing to evict and waits, unserved, until a subscriber leaves.
	c := rawDial(t, pub.Addr().String())
	c.handshake(t, "SUB")
	waitFor(t, func() bool { return pub.Subscribers() == budget })
	extra := rawDial(t, pub.Addr().String())
	if _, err := extra.Write(append(zGreeting(), zReady("SUB")...)); err != nil {
		t.Fatalf("write handshake: %v", err)
	}
	_ = extra.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := extra.r.ReadByte(); err == nil {
		t.Fatal("a fifth connection was served beyond the budget")
	}
	_ = extra.SetReadDeadline(time.Time{})
	c.Close()
	_ = extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := extra.r.ReadByte(); err != nil {
		t.Fatalf("the waiting connection was not served after a subscriber left: %v", err)
	}
	waitFor(t, func() bool { return pub.Subscribers() == budget && gate.Conns() == budget })
}

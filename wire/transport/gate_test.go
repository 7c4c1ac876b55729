package transport

import (
	"context"
	"math/rand/v2"
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

// TestConnGateEvictsRecentlyDone drives the pattern of a job sent to more
// minions than the budget holds: every requester sends one request per
// round, in a new order each round. The requesters short of a connection
// reconnect, and each reconnection evicts an idle connection: the one
// that finished a request last is done for the round, so a round costs
// about as many evictions as connections are missing. Evicting the one
// idle the longest (a requester still to come this round) made each
// eviction cause another: ~deficit*(1+ln(requesters/deficit)) a round.
func TestConnGateEvictsRecentlyDone(t *testing.T) {
	const (
		requesters = 40
		budget     = 30
		deficit    = requesters - budget
		rounds     = 6
	)
	gate := NewConnGate(budget)
	srv := listenReq(t, "127.0.0.1:0", echo, ReqOptions{Limits: Limits{Gate: gate}})
	ctx := context.Background()
	pools := make([]*ReqPool, requesters)
	for i := range pools {
		pools[i] = &ReqPool{Addr: srv.Addr().String(), Logger: testLogger(t)}
		defer pools[i].Close()
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var perRound []uint64
	for round := range rounds {
		before := gate.Evicted()
		for _, i := range rng.Perm(requesters) {
			reply, err := pools[i].Send(ctx, []byte("r"), 3, 10*time.Second)
			if err != nil || string(reply) != "re:r" {
				t.Fatalf("round %d requester %d: reply %q, err %v", round, i, reply, err)
			}
		}
		perRound = append(perRound, gate.Evicted()-before)
	}
	// The first round fills the budget; from the second on the evictions
	// are the pattern's. Allow a few at each round's start (the first
	// reconnections of a round find only the last round's connections).
	var sum uint64
	for _, n := range perRound[1:] {
		sum += n
	}
	if mean := float64(sum) / float64(rounds-1); mean > deficit*1.5 {
		t.Fatalf("evictions per round %v (mean %.1f), want about %d", perRound, mean, deficit)
	}
	t.Logf("evictions per round: %v (deficit %d)", perRound, deficit)
}

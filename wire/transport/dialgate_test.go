package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// gateState reads a gate's waiters and prober flag.
func gateState(g *DialGate) (waiters int, probing bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiters, g.probing
}

// TestDialGateOneProber: clients sharing a gate with requests in flight
// to a server that refuses connections dial once each, then only one of
// them probes while the others wait; when the server comes up on the
// address every request is answered.
func TestDialGateOneProber(t *testing.T) {
	addr := freeAddr(t)
	g := NewDialGate()
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &ReqClient{Addr: addr, Tries: 1, Timeout: testutil.Scale(30 * time.Second), Logger: testLogger(t), Gate: g}
			body := fmt.Sprintf("r%d", i)
			got, err := c.Send(context.Background(), []byte(body))
			if err == nil && string(got) != "re:"+body {
				err = fmt.Errorf("reply %q to %q", got, body)
			}
			errs <- err
		}()
	}
	testutil.Eventually(t, testutil.Scale(10*time.Second), func() bool {
		w, p := gateState(g)
		return w == n-1 && p
	}, "one client probing and the others waiting")
	all0, probes0 := g.Dials()
	if all0-probes0 > n {
		t.Errorf("%d dials before the clients waited, want at most one each (%d)", all0-probes0, n)
	}
	// Several probe rounds (50, 100, 200 ms apart) while the others wait.
	testutil.Eventually(t, testutil.Scale(10*time.Second), func() bool {
		_, p := g.Dials()
		return p >= probes0+3
	}, "three more probes")
	all1, probes1 := g.Dials()
	if all1-all0 != probes1-probes0 {
		t.Errorf("%d dials while the server was down, %d of them probes: the waiting clients dialed", all1-all0, probes1-probes0)
	}
	listenReq(t, addr, echo, ReqOptions{})
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if w, p := gateState(g); w != 0 || p {
		t.Errorf("after the server came up: %d waiters, probing %v", w, p)
	}
}

// TestDialGateWaiterTakesOver: when the probing client's context ends
// before the server is back, a waiting client probes in its place and
// connects once the server listens.
func TestDialGateWaiterTakesOver(t *testing.T) {
	addr := freeAddr(t)
	g := NewDialGate()
	short, cancel := context.WithTimeout(context.Background(), testutil.Scale(300*time.Millisecond))
	defer cancel()
	if _, err := g.dial(short, addr, ""); err == nil {
		t.Fatal("dial succeeded with nothing listening")
	}
	long, cancel2 := context.WithTimeout(context.Background(), testutil.Scale(30*time.Second))
	defer cancel2()
	done := make(chan error, 1)
	go func() {
		c, err := g.dial(long, addr, "")
		if err == nil {
			_ = c.Close()
		}
		done <- err
	}()
	testutil.Eventually(t, testutil.Scale(10*time.Second), func() bool {
		_, p := gateState(g)
		return p
	}, "the second client probing")
	listenReq(t, addr, echo, ReqOptions{})
	if err := <-done; err != nil {
		t.Fatalf("the second client: %v", err)
	}
}

// TestDialGateNoDeadline: without a deadline a client never waits on a
// closed gate: while another client probes it gets the last refusal at
// once without dialing.
func TestDialGateNoDeadline(t *testing.T) {
	addr := freeAddr(t)
	g := NewDialGate()
	if _, err := g.dial(context.Background(), addr, ""); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("first dial: %v, want connection refused", err)
	}
	long, cancel := context.WithCancel(context.Background())
	long, cancel2 := context.WithTimeout(long, testutil.Scale(30*time.Second))
	defer cancel2()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = g.dial(long, addr, "")
	}()
	testutil.Eventually(t, testutil.Scale(10*time.Second), func() bool {
		_, p := gateState(g)
		return p
	}, "a client probing")
	for i := range 3 {
		all0, probes0 := g.Dials()
		_, err := g.dial(context.Background(), addr, "")
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial %d: %v, want connection refused", i, err)
		}
		if all1, probes1 := g.Dials(); all1-all0 != probes1-probes0 {
			t.Errorf("dial %d dialed while another client probed", i)
		}
	}
	cancel()
	<-done
}

// TestDialGateWaiterLeavesAsGateOpens: a waiting client whose context
// ends at the moment the prober opens the gate is counted once: opening
// the gate already took it off the waiters, so its own leaving must not
// take it off again (the count went to -1). The test holds the gate's
// lock while it ends the waiter's context and opens the gate, so the
// waiter sees its context end before it sees the gate open.
func TestDialGateWaiterLeavesAsGateOpens(t *testing.T) {
	addr := freeAddr(t)
	for round := range 50 {
		g := NewDialGate()
		g.closeGate(syscall.ECONNREFUSED)
		g.mu.Lock()
		g.probing = true // another client is probing
		g.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(30*time.Second))
		done := make(chan error, 1)
		go func() {
			c, err := g.dial(ctx, addr, "")
			if c != nil {
				_ = c.Close()
			}
			done <- err
		}()
		testutil.Eventually(t, testutil.Scale(10*time.Second), func() bool {
			w, _ := gateState(g)
			return w == 1
		}, "the client waiting")
		g.mu.Lock()
		cancel()
		g.openLocked()
		g.probing = false
		g.mu.Unlock()
		if err := <-done; err == nil {
			t.Fatalf("round %d: the waiter connected after its context ended", round)
		}
		if w, _ := gateState(g); w != 0 {
			t.Fatalf("round %d: %d waiters after the only waiter left, want 0", round, w)
		}
	}
}

// TestDialGatesPerAddress: one gate per normalized address.
func TestDialGatesPerAddress(t *testing.T) {
	var gs DialGates
	a, b := gs.For("127.0.0.1:4506"), gs.For("tcp://127.0.0.1:4506")
	if a == nil || a != b {
		t.Errorf("the same address gave gates %p and %p", a, b)
	}
	if c := gs.For("127.0.0.1:4505"); c == a {
		t.Error("two addresses share a gate")
	}
	var none *DialGates
	if none.For("127.0.0.1:4506") != nil {
		t.Error("a nil DialGates gave a gate")
	}
}

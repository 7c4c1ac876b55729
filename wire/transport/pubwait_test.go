package transport

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// TestPubWaitSubscribedEdges drives WaitSubscribed through the states a
// connection goes through, with raw ZMTP peers (freshSubscriber cut to a
// second where a case is about it). Steps (space-separated words):
//
//	dial C           C connects and sends nothing (stays in its handshake)
//	ready C [ID]     C completes a SUB handshake (with identity ID)
//	bare C           dial C, ready C
//	named C ID       dial C, ready C ID
//	sub C TOPIC      C subscribes to TOPIC ("-" for everything)
//	close C          C closes its connection
//	wait W ID [T..]  W calls WaitSubscribed(ID, T...) with a long context
//	true W / false W W returns that (before its context ends)
//	waits W          W has not returned (checked after a short grace)
//	holds W C        W does not return until shortly before C expires
//	after C          until C connected fresh ago (the expiry under test)
func TestPubWaitSubscribedEdges(t *testing.T) {
	t.Parallel()
	// Cases about expiry run with a short freshSubscriber; the others with
	// one no stall of a loaded machine reaches.
	short, long := testutil.Scale(time.Second), testutil.Scale(5*time.Minute)
	for _, tc := range []struct {
		name  string
		steps []string
	}{
		{"no connection returns at once", []string{"wait w x", "false w"}},
		{"closed while handshaking", []string{"dial a", "wait w x", "waits w", "close a", "false w"}},
		{"subscribes after the handshake", []string{"bare a", "wait w x", "waits w", "sub a -", "false w"}},
		{"never subscribes: expires after fresh", []string{"bare a", "wait w x", "holds w a", "false w"}},
		{"closes without subscribing", []string{"bare a", "wait w x", "close a", "false w"}},
		{"a subscribed connection is not waited for", []string{"bare a", "sub a -", "wait w x", "false w"}},
		{"a connection after the call is not waited for", []string{"dial a", "wait w x", "dial b", "bare c", "close a", "false w", "close b"}},
		{"seq ordering with limit", []string{
			"dial a", "wait w1 x", "dial b", "wait w2 y", "bare c", "wait w3 z",
			"close b", "waits w1", "waits w2", "close a", "false w1", "false w2", "waits w3",
			"sub c -", "false w3"}},
		{"seq ordering: the oldest through first", []string{
			"dial a", "wait w1 x", "dial b", "wait w2 y", "close a", "false w1", "waits w2", "ready b", "waits w2", "sub b -", "false w2"}},
		{"a later connection that expired first", []string{
			"dial a", "bare b", "wait w x", "after b", "waits w", "close a", "false w"}},
		{"named: subscribes later", []string{"named a m1", "wait w m1", "waits w", "sub a -", "true w"}},
		{"named: handshake ends after the call", []string{"dial a", "wait w m1", "waits w", "ready a m1", "waits w", "sub a -", "true w"}},
		{"named: topics not covered until the last", []string{
			"named a m1", "sub a broadcast", "wait w m1 broadcast abc", "waits w", "sub a ab", "true w"}},
		{"named: never subscribes, expires after fresh", []string{"named a m1", "wait w m1", "holds w a", "false w"}},
		{"named: closes", []string{"named a m1", "wait w m1", "waits w", "close a", "false w"}},
		{"named: another peer's subscription wakes no one", []string{
			"named a m1", "named b m2", "wait w m1", "sub b -", "waits w", "sub a -", "true w"}},
		{"named and nameless: both waited for", []string{
			"dial a", "named b m1", "wait w m1 t", "sub b other", "waits w", "close a", "waits w", "sub b t", "true w"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fresh := long
			if slices.ContainsFunc(tc.steps, func(s string) bool {
				return strings.HasPrefix(s, "holds ") || strings.HasPrefix(s, "after ")
			}) {
				fresh = short
			}
			runWaitSteps(t, fresh, tc.steps)
		})
	}
}

// runWaitSteps runs the steps of TestPubWaitSubscribedEdges.
func runWaitSteps(t *testing.T, fresh time.Duration, steps []string) {
	p := listenPub(t, "127.0.0.1:0", PubOptions{fresh: fresh})
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(60*time.Second))
	defer cancel()
	conns := map[string]*rawConn{}
	dialed := map[string]time.Time{}
	type result struct {
		named bool
		err   error
	}
	waiters := map[string]chan result{}
	hs := func() uint64 {
		p.mu.RLock()
		defer p.mu.RUnlock()
		return p.hs
	}
	seqs := map[string]uint64{}
	// ready completes c's handshake (with the identity id if given) and
	// waits until the server is through it.
	ready := func(c string, id ...string) {
		props := []string{"Socket-Type", "SUB", "Identity", ""}
		if len(id) > 0 {
			props[3] = id[0]
		}
		if _, err := conns[c].Write(append(zGreeting(), zCommand("READY", zProps(props...))...)); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 10*time.Second, func() bool { return handshakeDone(p, seqs[c]) }, "the handshake of "+c)
	}
	for i, step := range steps {
		f := strings.Fields(step)
		where := func() string { return strings.Join(steps[:i+1], "; ") }
		switch f[0] {
		case "dial", "bare", "named":
			before := hs()
			dialed[f[1]] = time.Now()
			conns[f[1]] = rawDial(t, p.Addr().String())
			seqs[f[1]] = before + 1
			testutil.Eventually(t, 10*time.Second, func() bool { return hs() > before }, "the server to take the connection")
			if f[0] != "dial" {
				ready(f[1], f[2:]...)
			}
		case "ready":
			ready(f[1], f[2:]...)
		case "sub":
			topic := []byte{1}
			if f[2] != "-" {
				topic = append(topic, f[2]...)
			}
			if _, err := conns[f[1]].Write(zFrame(0, topic)); err != nil {
				t.Fatal(err)
			}
		case "close":
			conns[f[1]].Close()
		case "wait":
			var topics [][]byte
			for _, tp := range f[3:] {
				topics = append(topics, []byte(tp))
			}
			ch := make(chan result, 1)
			waiters[f[1]] = ch
			// Started and through its first look before the next step.
			before := idWaiters(p, f[2])
			go func() {
				named := p.WaitSubscribed(ctx, f[2], topics...)
				ch <- result{named, ctx.Err()}
			}()
			testutil.Eventually(t, 10*time.Second, func() bool {
				select {
				case r := <-ch:
					ch <- r
					return true
				default:
				}
				return idWaiters(p, f[2]) > before
			}, "WaitSubscribed to start")
		case "true", "false":
			select {
			case r := <-waiters[f[1]]:
				if r.err != nil || r.named != (f[0] == "true") {
					t.Fatalf("%s: WaitSubscribed returned %v (ctx %v), want %s", where(), r.named, r.err, f[0])
				}
			case <-time.After(testutil.Scale(10 * time.Second)):
				t.Fatalf("%s: WaitSubscribed did not return", where())
			}
		case "waits":
			// A negative check: the grace is the time allowed to return wrongly.
			select {
			case r := <-waiters[f[1]]:
				t.Fatalf("%s: WaitSubscribed returned %v (ctx %v) while it should wait", where(), r.named, r.err)
			case <-time.After(testutil.Scale(100 * time.Millisecond)):
			}
		case "holds":
			// A negative check until shortly before C expires.
			select {
			case r := <-waiters[f[1]]:
				t.Fatalf("%s: WaitSubscribed returned %v (ctx %v) before %s expired", where(), r.named, r.err, f[2])
			case <-time.After(time.Until(dialed[f[2]].Add(fresh * 3 / 4))):
			}
		case "after":
			// The expiry is the behaviour under test.
			time.Sleep(time.Until(dialed[f[1]].Add(fresh)))
		default:
			t.Fatalf("bad step %q", step)
		}
	}
}

// handshakeDone reports whether the connection numbered seq is through
// its handshake (or gone).
func handshakeDone(p *PubServer, seq uint64) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, pc := range p.pending[p.pendHead:] {
		if pc.seq == seq {
			return pc.done || !pc.expires.IsZero()
		}
	}
	return true
}

// idWaiters returns the callers of WaitSubscribed for id past their
// first look.
func idWaiters(p *PubServer, id string) int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.idWaiters[id])
}

package minion

import (
	"fmt"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// TestSwarmRekeyKeepsPublishOrder checks the swarm's publish delivery on
// the subscriber's goroutine across a session key change: the first
// publish under the new key waits for a re-authentication (which the fake
// master holds for a while) and the publishes sent right after it wait
// behind it in order, so every identity runs every job; none is dropped
// by the serial check as a replay.
func TestSwarmRekeyKeepsPublishOrder(t *testing.T) {
	const n, jobs = 3, 5
	fm, ms := startSwarm(t, n)
	for _, m := range ms {
		if !m.pushPublishes() {
			t.Fatalf("%s: publishes not delivered on the subscriber's goroutine", m.ID())
		}
	}
	auths := make(map[string]int, n)
	for _, m := range ms {
		auths[m.ID()] = fm.authCount(m.ID())
	}
	fm.mu.Lock()
	fm.authDelay = 300 * time.Millisecond
	fm.mu.Unlock()
	fm.rotate()
	want := map[string]bool{}
	for j := range jobs {
		jid := fmt.Sprintf("202611291800000000%02d", j)
		fm.publish(jobLoad(jid, "test.ping", []any{}, "tgt", "sw-*"))
		for _, m := range ms {
			want[m.ID()+" "+jid] = true
		}
	}
	timer := time.NewTimer(testutil.Scale(60 * time.Second))
	defer timer.Stop()
	for len(want) > 0 {
		select {
		case l := <-fm.reqCh:
			if l.Str("cmd") == "_return" {
				delete(want, l.Str("id")+" "+l.Str("jid"))
			}
		case <-timer.C:
			t.Fatalf("%d returns missing after the key change, e.g. %v", len(want), want)
		}
	}
	for _, m := range ms {
		if got := fm.authCount(m.ID()); got <= auths[m.ID()] {
			t.Errorf("%s did not re-authenticate after the key change", m.ID())
		}
	}
}

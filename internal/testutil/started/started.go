// Package started lets a test wait until a master is ready to reach a
// minion it just started: the master's start event for that minion.
//
// A minion (gsalt-minion, a gsalt-proxy device, Salt's salt-minion) fires
// its start event once it has sent its publish subscription, but a loaded
// master may read that subscription later, and a job published in between
// never reaches the minion (Salt's minion and master have the same race).
// The master fires a minion's start event (salt/minion/<id>/start), and
// answers the request that carried it, only once it applied the minion's
// subscription, or after at most 5 s (master.awaitSubscription). A gsalt
// minion closes Ready after that answer, so against gsalt-master Ready is
// enough (masterd's TestPublishRightAfterReady); a test that watches the
// bus, or whose minion says nothing (a real salt-minion's log), waits for
// the start event. Measured with a fresh in-process master and a
// one-device gsalt-proxy per try, -race, under stress-ng --cpu 4 on 2
// cores: before the master held its answer, a test.ping published right
// after Device.Ready was lost in 3 of 194 tries (the proxy's log shows
// the later find_job executed, the job never), and in 3 of 150 in a
// second run; published after the start event, in none of 160. With the
// held answer, right after Ready: none of 150 (run beside the second).
package started

import (
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/testutil"
)

// Timeout bounds Wait (scaled by testutil.Scale).
const Timeout = 90 * time.Second

// Watcher records the start events of one master's bus.
type Watcher struct {
	sub  *event.Subscription
	seen map[string]bool
}

// Watch records the start events bus carries from now on (call it before
// the minions start). The subscription ends with the test.
func Watch(t testing.TB, bus *event.Bus) *Watcher {
	t.Helper()
	w := &Watcher{seen: map[string]bool{}, sub: bus.Subscribe(event.MatchFunc(func(tag string) bool {
		return strings.HasPrefix(tag, "salt/minion/") && strings.HasSuffix(tag, "/start")
	}), 4096)}
	t.Cleanup(w.sub.Close)
	return w
}

// Wait waits for the start event of each of ids (each seen once since
// Watch; a test waits for a minion's first start only).
func (w *Watcher) Wait(t testing.TB, ids ...string) {
	t.Helper()
	deadline := time.NewTimer(testutil.Scale(Timeout))
	defer deadline.Stop()
	for _, id := range ids {
		for !w.seen[id] {
			select {
			case ev, ok := <-w.sub.C():
				if !ok {
					t.Fatalf("the master's bus closed before %s started", id)
				}
				w.seen[strings.TrimSuffix(strings.TrimPrefix(ev.Tag, "salt/minion/"), "/start")] = true
			case <-deadline.C:
				t.Fatalf("no start event from %s within %v", id, testutil.Scale(Timeout))
			}
		}
	}
}

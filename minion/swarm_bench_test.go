package minion

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/payload"
)

// BenchmarkSwarmPing is one `test.ping` glob job to a swarm of 100
// identities over real sockets, as bench-swarm.sh drives it at 1,000: the
// publish reaches every identity's subscription, is opened once for all,
// each identity target-checks it, runs test.ping and sends its encrypted
// _return on its own request connection. One op is one identity's job
// (the op waits until all 100 returns arrived). The fake master runs in
// the same process, so cpu-ns/op (the process's CPU time per identity
// per job, comparable on a loaded machine) includes its share: parsing,
// decrypting and answering each return.
func BenchmarkSwarmPing(b *testing.B) {
	const n = 100
	fm, _ := startSwarm(b, n)
	// The start-up requests (start events, pillar) are not part of a job.
	for len(fm.reqCh) > 0 {
		<-fm.reqCh
	}
	job := 0
	ping := func() {
		job++
		jid := fmt.Sprintf("2026112815%010d", job)
		fm.publish(payload.NewMap("fun", "test.ping", "arg", []any{}, "tgt", "sw-*", "jid", jid, "ret", "", "tgt_type", "glob", "user", "root"))
		got := 0
		timer := time.NewTimer(testutil.Scale(30 * time.Second))
		defer timer.Stop()
		for got < n {
			select {
			case l := <-fm.reqCh:
				if l.Str("cmd") == "_return" && l.Str("jid") == jid {
					got++
				}
			case <-timer.C:
				b.Fatalf("job %s: %d of %d returns", jid, got, n)
			}
		}
	}
	ping() // warm: connections open, buffers grown
	b.ReportAllocs()
	b.ResetTimer()
	c0 := testutil.ProcessCPU()
	jobs := (b.N + n - 1) / n
	for range jobs {
		ping()
	}
	b.StopTimer()
	cpu := testutil.ProcessCPU() - c0
	// Each op is one identity's job; the loop ran whole jobs.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(jobs*n), "cpu-ns/op")
}

// startSwarm runs a swarm of n identities sw-0000... against a new fake
// master until the test or benchmark ends, and returns once every
// identity is ready and subscribed.
func startSwarm(tb testing.TB, n int) (*fakeMaster, []*Minion) {
	tb.Helper()
	fm := newFakeMaster(tb, filepath.Join(vectorsPKI, "master", "master.pem"), 0, 0)
	cfg := swarmConfig(tb, fm, "sw", n)
	ready := make(chan *Minion, n)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunSwarm(ctx, SwarmOptions{Config: cfg, N: n, Logger: testLogger(tb), Started: func(m *Minion) { ready <- m }})
	}()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Error(err)
		}
	})
	deadline := time.After(testutil.Scale(60 * time.Second))
	ms := make([]*Minion, 0, n)
	for range n {
		var m *Minion
		select {
		case m = <-ready:
		case <-deadline:
			tb.Fatal("the swarm did not start")
		}
		select {
		case <-m.Ready():
		case <-deadline:
			tb.Fatalf("%s not ready: %v", m.ID(), m.LastAuthError())
		}
		ms = append(ms, m)
	}
	if !testutil.Poll(30*time.Second, func() bool { return fm.pub.Subscribers() >= n }) {
		tb.Fatalf("%d of %d subscribed", fm.pub.Subscribers(), n)
	}
	return fm, ms
}

package reactor_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/reactor"
	"github.com/gsalt/gsalt/wire/payload"
)

// BenchmarkEventsToLocalJobs measures the reactor alone: events read from
// the bus, matched, rendered (jinja|yaml), built and handed to a
// LocalClient that only counts them. "unique" renders a different
// reaction for every event (the template uses data['n']); "repeat" is
// scripts/bench-reactor.sh's reactor file, whose reaction depends only on
// which of 4 minions the event names. Besides jobs/s it reports the
// process's CPU time per job (user+system, all goroutines), which a
// loaded machine disturbs less than the wall clock.
func BenchmarkEventsToLocalJobs(b *testing.B) {
	for _, bc := range []struct{ name, sls string }{
		{"unique", "job:\n  local.test.arg:\n    - tgt: {{ data['id'] }}\n    - args:\n      - n: {{ data['n'] }}\n"},
		{"repeat", "bench-job:\n  local.test.ping:\n    - tgt: {{ data['id'] }}\n"},
	} {
		b.Run(bc.name, func(b *testing.B) { benchEventsToLocalJobs(b, bc.sls) })
	}
}

func benchEventsToLocalJobs(b *testing.B, sls string) {
	dir := b.TempDir()
	writeFile(b, filepath.Join(dir, "job.sls"), sls)
	bus := event.New(event.Options{Logger: testLogger()})
	defer bus.Close()
	local := &fakeLocal{}
	r := startReactor(b, reactor.Options{Bus: bus, Local: local, QueueSize: -1,
		Map: []any{map[string]any{"bench/*": []any{filepath.Join(dir, "job.sls")}}}})
	ids := []string{"sw-0000", "sw-0001", "sw-0002", "sw-0003"}
	b.ResetTimer()
	start, cpu0 := time.Now(), testutil.ProcessCPU()
	for i := 0; i < b.N; i++ {
		// Pace by what was published, not by what the reactor read: the
		// bus's queue for the reactor (16,384) must not overflow.
		for int64(i)-local.n.Load() > 4096 {
			time.Sleep(20 * time.Microsecond) // pace the benchmark producer (backpressure)
		}
		bus.Publish(event.Event{Tag: fmt.Sprintf("bench/%d", i), Data: payload.NewMap("id", ids[i%len(ids)], "n", int64(i))})
	}
	for local.n.Load() < int64(b.N) {
		if st := r.Stats(); st.Dropped+st.BusDropped+st.Failed+st.Suppressed > 0 {
			b.Fatalf("lost events: %+v", st)
		}
		time.Sleep(50 * time.Microsecond) // drain poll interval of the benchmark
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
	b.ReportMetric(float64((testutil.ProcessCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/job")
}

package reactor_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/reactor"
	"github.com/gsalt/gsalt/wire/payload"
)

// BenchmarkEventsToLocalJobs measures the reactor alone: events read from
// the bus, matched, rendered (jinja|yaml), built and handed to a
// LocalClient that only counts them.
func BenchmarkEventsToLocalJobs(b *testing.B) {
	dir := b.TempDir()
	writeFile(b, filepath.Join(dir, "job.sls"), "job:\n  local.test.arg:\n    - tgt: {{ data['id'] }}\n    - args:\n      - n: {{ data['n'] }}\n")
	bus := event.New(event.Options{Logger: testLogger()})
	defer bus.Close()
	local := &fakeLocal{}
	r := startReactor(b, reactor.Options{Bus: bus, Local: local, QueueSize: -1,
		Map: []any{map[string]any{"bench/*": []any{filepath.Join(dir, "job.sls")}}}})
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for r.Stats().Received-uint64(local.n.Load()) > 4096 {
			time.Sleep(20 * time.Microsecond) // pace the benchmark producer (backpressure)
		}
		bus.Publish(event.Event{Tag: fmt.Sprintf("bench/%d", i), Data: payload.NewMap("id", "m1", "n", int64(i))})
	}
	for local.n.Load() < int64(b.N) {
		if st := r.Stats(); st.Dropped+st.BusDropped+st.Failed+st.Suppressed > 0 {
			b.Fatalf("lost events: %+v", st)
		}
		time.Sleep(50 * time.Microsecond) // drain poll interval of the benchmark
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
}

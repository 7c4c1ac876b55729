package driver_test

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/proxy/driver"
)

// BenchmarkOpenSessionMemory opens one always-alive session to each of
// memSessions simulated devices (the simulator in this process too) and
// reports the live heap and goroutines per open session: what one
// gsalt-proxy device costs beyond its minion. GSALT_HEAPPROFILE=FILE writes
// the heap profile with every session open (driver frames are the client
// side, devsim frames the simulator).
func BenchmarkOpenSessionMemory(b *testing.B) {
	const memSessions = 200
	if os.Getenv("GSALT_HEAPPROFILE") != "" {
		old := runtime.MemProfileRate
		runtime.MemProfileRate = 1 // every allocation: an exact profile
		defer func() { runtime.MemProfileRate = old }()
	}
	for _, plat := range []string{"ios", "eos"} {
		b.Run(plat, func(b *testing.B) {
			f, err := devsim.Start(context.Background(), devsim.Options{Platform: plat, Devices: memSessions})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			for b.Loop() {
				before, st0 := liveHeap()
				g0 := runtime.NumGoroutine()
				drvs := make([]driver.Driver, memSessions)
				prompts := driver.NewPromptCache() // as the napalm proxytype shares one
				for i := range drvs {
					d, err := driver.Default().New(plat, driver.Options{Host: "127.0.0.1", Port: f.Port(i),
						Username: "admin", Password: "admin", Timeout: 20 * time.Second, Prompts: prompts})
					if err != nil {
						b.Fatal(err)
					}
					if err := d.Open(context.Background()); err != nil {
						b.Fatal(err)
					}
					if _, err := d.GetFacts(context.Background()); err != nil {
						b.Fatal(err)
					}
					drvs[i] = d
				}
				after, st1 := liveHeap()
				b.ReportMetric(float64(after-before)/memSessions/1024, "heap-KiB/session")
				b.ReportMetric(float64(int64(st1)-int64(st0))/memSessions/1024, "stack-KiB/session")
				b.ReportMetric(float64(runtime.NumGoroutine()-g0)/memSessions, "goroutines/session")
				if p := os.Getenv("GSALT_HEAPPROFILE"); p != "" {
					fh, err := os.Create(p + "-" + plat)
					if err != nil {
						b.Fatal(err)
					}
					_ = pprof.Lookup("heap").WriteTo(fh, 0)
					_ = fh.Close()
				}
				for _, d := range drvs {
					_ = d.Close(context.Background())
				}
			}
		})
	}
}

// liveHeap returns the live heap and the goroutine stacks in use after a
// collection.
func liveHeap() (heap, stacks uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.StackInuse
}

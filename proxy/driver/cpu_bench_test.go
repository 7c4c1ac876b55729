package driver_test

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/proxy/driver"
)

// BenchmarkLoadConfigTestFanout runs what net.load_config test=True does
// on each device (load a merge candidate, compare, discard) on
// cpuSessions simulated devices at once, over sessions opened before the
// timer starts: one op is one device's round. cpu-ms/op is the process's
// user+system CPU per device round, the simulator's included (it runs in
// this process; a CPU profile separates them).
func BenchmarkLoadConfigTestFanout(b *testing.B) {
	const cpuSessions = 64
	for _, plat := range []string{"ios", "eos"} {
		b.Run(plat, func(b *testing.B) {
			ctx := context.Background()
			f, err := devsim.Start(ctx, devsim.Options{Platform: plat, Devices: cpuSessions})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			drvs := make([]driver.Driver, cpuSessions)
			prompts := driver.NewPromptCache()
			for i := range drvs {
				d, err := driver.Default().New(plat, driver.Options{Host: "127.0.0.1", Port: f.Port(i),
					Username: "admin", Password: "admin", Timeout: 60 * time.Second, Prompts: prompts})
				if err != nil {
					b.Fatal(err)
				}
				if err := d.Open(ctx); err != nil {
					b.Fatal(err)
				}
				defer d.Close(ctx)
				drvs[i] = d
			}
			round := func(d driver.Driver) error {
				if err := d.LoadMergeCandidate(ctx, "ntp server 10.0.0.1"); err != nil {
					return err
				}
				if _, err := d.CompareConfig(ctx); err != nil {
					return err
				}
				return d.DiscardConfig(ctx)
			}
			cpu0 := processCPU()
			rounds := 0
			for b.Loop() {
				var wg sync.WaitGroup
				errs := make([]error, len(drvs))
				for i, d := range drvs {
					wg.Add(1)
					go func() { defer wg.Done(); errs[i] = round(d) }()
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						b.Fatal(err)
					}
				}
				rounds += len(drvs)
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Millisecond)/float64(rounds), "cpu-ms/op")
			b.ReportMetric(float64(b.Elapsed())/float64(time.Millisecond)/float64(rounds), "wall-ms/op")
		})
	}
}

// processCPU is the user+system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

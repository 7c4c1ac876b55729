package proxy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/wire/payload"
)

// BenchmarkFleetMemory serves N napalm devices (GSALT_BENCH_DEVICES,
// default 100) on simulated ios and eos switches from one Fleet against an
// in-process gsalt-master, waits until every device answered test.ping,
// and reports the live heap and the goroutines of the process per device
// (master and simulator included, so this is an upper bound of the
// proxy's share). GSALT_HEAPPROFILE=FILE writes the heap profile at that
// point (every allocation sampled: the proxy's frames can be told from
// the master's and the simulator's). The devices' key pairs are generated
// once per run; GSALT_BENCH_DIR keeps them between runs.
func BenchmarkFleetMemory(b *testing.B) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("GSALT_BENCH_DEVICES")); err == nil && v > 0 {
		n = v
	}
	if os.Getenv("GSALT_HEAPPROFILE") != "" {
		old := runtime.MemProfileRate
		runtime.MemProfileRate = 1
		defer func() { runtime.MemProfileRate = old }()
	}
	for _, plat := range []string{devsim.PlatformIOS, devsim.PlatformEOS} {
		b.Run(plat, func(b *testing.B) {
			for b.Loop() {
				fleetMemory(b, plat, n)
			}
		})
	}
}

func fleetMemory(b *testing.B, plat string, n int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim, err := devsim.Start(ctx, devsim.Options{Platform: plat, Devices: n})
	if err != nil {
		b.Fatal(err)
	}
	defer sim.Close()
	ids := make([]string, n)
	port := map[string]int64{}
	for i := range ids {
		ids[i] = fmt.Sprintf("sw%d", i+1)
		port[ids[i]] = int64(sim.Port(i))
	}
	pillar := func(_ context.Context, req master.PillarRequest) (*payload.Map, error) {
		return payload.NewMap("proxy", payload.NewMap("proxytype", "napalm", "driver", plat, "host", "127.0.0.1",
			"username", "admin", "password", "admin", "optional_args", payload.NewMap("port", port[req.ID]))), nil
	}
	dir := shortDir(b)
	if keep := os.Getenv("GSALT_BENCH_DIR"); keep != "" {
		// Key pairs of the master and of every device survive between runs.
		for _, sub := range []string{"mpki", "p/pki"} {
			src := filepath.Join(keep, sub)
			if err := os.MkdirAll(src, 0o700); err != nil {
				b.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, sub)), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.Symlink(src, filepath.Join(dir, sub)); err != nil {
				b.Fatal(err)
			}
		}
	}
	d := testMaster(b, dir, pillar)
	etc := proxyConf(b, dir, d, "")
	before := liveHeap()
	g0 := runtime.NumGoroutine()
	f, err := proxy.New(proxy.Options{ConfigDir: etc, IDs: ids, Logger: testLogger()})
	if err != nil {
		b.Fatal(err)
	}
	fctx, fcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Run(fctx) }()
	defer func() {
		fcancel()
		<-done
	}()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		inited := 0
		for _, dev := range f.Devices() {
			if dev.Initialized() {
				inited++
			}
		}
		if inited == n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d devices initialized", inited, n)
		}
		time.Sleep(200 * time.Millisecond) // poll interval of the benchmark setup
	}
	for _, dev := range f.Devices() {
		select {
		case <-dev.Ready():
		case <-time.After(time.Until(deadline)):
			b.Fatalf("%s never became ready", dev.ID())
		}
	}
	answered := map[string]bool{}
	for len(answered) < n {
		for id, v := range runJob(b, d, "*", "glob", "test.ping") {
			if v == true {
				answered[id] = true
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("test.ping: %d of %d answered", len(answered), n)
		}
	}
	after := liveHeap()
	b.ReportMetric(float64(after-before)/float64(n)/1024, "heap-KiB/device")
	b.ReportMetric(float64(runtime.NumGoroutine()-g0)/float64(n), "goroutines/device")
	if p := os.Getenv("GSALT_HEAPPROFILE"); p != "" {
		writeProfile(b, "heap", p+"-"+plat)
		writeProfile(b, "goroutine", p+"-"+plat+"-goroutine")
	}
}

func writeProfile(b *testing.B, name, path string) {
	fh, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	if err := pprof.Lookup(name).WriteTo(fh, 0); err != nil {
		b.Fatal(err)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

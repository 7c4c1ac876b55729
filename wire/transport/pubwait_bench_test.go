package transport

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// libzmqSubs opens argv[2] libzmq SUB sockets to argv[1] as fast as it
// can, each set up as a Salt 3006 minion sets its own (IDENTITY, which a
// libzmq SUB does not send, and SUBSCRIBE ""), says "connecting" and holds
// them until it is killed.
const libzmqSubs = `
import signal, sys, zmq
addr, n = sys.argv[1], int(sys.argv[2])
ctx = zmq.Context(io_threads=1)
ctx.set(zmq.MAX_SOCKETS, n + 16)
socks = []
for i in range(n):
    s = ctx.socket(zmq.SUB)
    s.setsockopt(zmq.IDENTITY, b"m%d" % i)
    s.setsockopt(zmq.SUBSCRIBE, b"")
    s.setsockopt(zmq.LINGER, 0)
    s.connect(addr)
    socks.append(s)
print("connecting", flush=True)
signal.pause()
`

// subsPerPython bounds the SUB sockets of one python process: libzmq
// takes two descriptors per socket (its mailbox and the TCP connection).
const subsPerPython = 4000

// BenchmarkWaitSubscribedColdStart is a cold start of N real Salt
// minions' publish side: N libzmq SUB sockets (no ZMTP identity) connect
// at once to a PubServer, and for each connection whose handshake began a
// start event calls WaitSubscribed for its minion as the master does
// (at most maxStartWaits at once, each bounded by 5 s; past the bound an
// event does not wait). Sizes: GSALT_BENCH_SUBS (comma-separated; default
// 1000); with GSALT_BENCH_NOWAIT set, no one waits (the cost of the
// connections alone). Metrics: CPU seconds of this process (the PubServer and the
// waiters; libzmq runs in python), seconds until every socket subscribed
// and every waiter returned, waiters that ran into the 5 s bound, events
// that found maxStartWaits waiting, the longest wait and the process's peak RSS.
func BenchmarkWaitSubscribedColdStart(b *testing.B) {
	needPython(b)
	sizes := []int{1000}
	if env := os.Getenv("GSALT_BENCH_SUBS"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n <= 0 {
				b.Fatalf("GSALT_BENCH_SUBS: %q", f)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("libzmq-%d", n), func(b *testing.B) {
			var cpu, all, longest time.Duration
			var timedOut, skipped int
			for range b.N {
				r := coldStart(b, n)
				cpu += r.cpu
				all += r.all
				longest = max(longest, r.longest)
				timedOut += r.timedOut
				skipped += r.skipped
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(all.Seconds()/float64(b.N), "all-returned-s/op")
			b.ReportMetric(float64(timedOut)/float64(b.N), "timed-out/op")
			b.ReportMetric(float64(skipped)/float64(b.N), "not-waited/op")
			b.ReportMetric(longest.Seconds(), "longest-wait-s")
			var ru syscall.Rusage
			if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
				b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MiB")
			}
		})
	}
}

type coldStartResult struct {
	cpu, all, longest time.Duration
	timedOut, skipped int
}

// coldStart runs one cold start of n libzmq subscribers (see
// BenchmarkWaitSubscribedColdStart).
func coldStart(b *testing.B, n int) coldStartResult {
	b.Helper()
	b.StopTimer()
	p, err := ListenPub(context.Background(), "127.0.0.1:0", PubOptions{Logger: testLogger(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	noWait := os.Getenv("GSALT_BENCH_NOWAIT") != ""
	const maxWaits, bound = 4096, 5 * time.Second // master's maxStartWaits, startSubscribeWait
	var (
		active            atomic.Int32
		timedOut, skipped atomic.Int32
		longest           atomic.Int64
		wg                sync.WaitGroup
	)
	cpu0 := processCPU(b)
	start := time.Now()
	b.StartTimer()
	var pys []*pyProc
	for left := n; left > 0; left -= subsPerPython {
		pys = append(pys, startPython(b, ctx, libzmqSubs, "tcp://"+p.Addr().String(), strconv.Itoa(min(left, subsPerPython))))
	}
	for launched := 0; launched < n; {
		p.mu.RLock()
		hs := int(p.hs)
		p.mu.RUnlock()
		for ; launched < hs && launched < n; launched++ {
			if noWait || active.Add(1) > maxWaits {
				active.Add(-1)
				skipped.Add(1)
				continue
			}
			wg.Add(1)
			go func(id string) {
				defer wg.Done()
				defer active.Add(-1)
				wctx, wcancel := context.WithTimeout(ctx, bound)
				defer wcancel()
				t0 := time.Now()
				p.WaitSubscribed(wctx, id)
				d := time.Since(t0)
				if wctx.Err() != nil {
					timedOut.Add(1)
				}
				for {
					old := longest.Load()
					if int64(d) <= old || longest.CompareAndSwap(old, int64(d)) {
						break
					}
				}
			}(fmt.Sprintf("m%d", launched))
		}
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("only %d of %d subscribers began their handshake", hs, n)
		}
		time.Sleep(time.Millisecond) // the launcher's poll interval (harness, not measured)
	}
	wg.Wait()
	for {
		if p.Subscribers() == n && allSubscribed(p) {
			break
		}
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("subscribers not all subscribed")
		}
		time.Sleep(time.Millisecond) // harness poll interval
	}
	all := time.Since(start)
	b.StopTimer()
	cpu := processCPU(b) - cpu0
	for _, py := range pys {
		py.kill()
	}
	return coldStartResult{cpu: cpu, all: all, longest: time.Duration(longest.Load()),
		timedOut: int(timedOut.Load()), skipped: int(skipped.Load())}
}

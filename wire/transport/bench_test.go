package transport

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkReqServerFreshREQ measures one request/reply round trip with a new
// REQ connection (TCP connect + ZMTP handshake) per request, as Salt does.
func BenchmarkReqServerFreshREQ(b *testing.B) {
	srv := listenReq(b, "127.0.0.1:0", echo, ReqOptions{})
	addr := srv.Addr().String()
	req := make([]byte, 512)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := Request(context.Background(), addr, req, 10*time.Second); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkPublish measures Publish of 512-byte messages to one subscriber
// that reads as fast as it can; deliveries and drops are reported.
func BenchmarkPublish(b *testing.B) {
	pub := listenPub(b, "127.0.0.1:0", PubOptions{})
	sub := dialSub(b, pub.Addr().String(), SubOptions{QueueSize: 10000})
	syncSub(b, func(f ...[]byte) { _ = pub.Publish(f...) }, sub, [][]byte{[]byte("probe")})
	var got atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if _, err := sub.Recv(ctx); err != nil {
				return
			}
			got.Add(1)
		}
	}()
	msg := make([]byte, 512)
	drops := pub.Dropped()
	b.SetBytes(int64(len(msg)))
	b.ResetTimer()
	for range b.N {
		if err := pub.Publish(msg); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	deadline := time.Now().Add(5 * time.Second)
	for got.Load()+int64(pub.Dropped()-drops)+int64(sub.Dropped()) < int64(b.N) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // drain poll interval of the benchmark
	}
	b.ReportMetric(float64(got.Load())/float64(b.N), "delivered/op")
}

// BenchmarkPublishFanout measures one 1 KiB publish delivered to 200
// subscribers (raw ZMTP SUB connections that discard what they read), the
// master's job fan-out; allocs/op are the server's.
func BenchmarkPublishFanout(b *testing.B) {
	const subs = 200
	pub := listenPub(b, "127.0.0.1:0", PubOptions{HWM: 1 << 20})
	var got atomic.Int64
	for range subs {
		c := rawDial(b, pub.Addr().String())
		c.handshake(b, "SUB")
		if _, err := c.Write(zFrame(0, []byte{1})); err != nil {
			b.Fatal(err)
		}
		go func() {
			buf := make([]byte, 64<<10)
			for {
				n, err := c.r.Read(buf)
				got.Add(int64(n))
				if err != nil {
					return
				}
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for pub.Subscribers() < subs || !allSubscribed(pub) {
		if time.Now().After(deadline) {
			b.Fatal("subscribers not ready")
		}
		time.Sleep(time.Millisecond) // setup poll interval of the benchmark
	}
	msg := make([]byte, 1024)
	per := int64(len(encodeMessage([][]byte{msg})))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := pub.Publish(msg); err != nil {
			b.Fatal(err)
		}
		want := int64(i+1) * subs * per
		for got.Load() < want {
			time.Sleep(50 * time.Microsecond) // wait for this publish to reach every subscriber
		}
	}
}

// allSubscribed reports whether every subscriber has a subscription.
func allSubscribed(p *PubServer) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for s := range p.subs {
		s.mu.RLock()
		n := len(s.topics)
		s.mu.RUnlock()
		if n == 0 {
			return false
		}
	}
	return true
}

// BenchmarkGCIdleReqConns measures one full GC cycle (runtime.GC) of a
// process whose ReqServer holds 2,000 idle request connections after a
// request each, as a master between jobs does: the GC scans the stack of
// every connection's waiting goroutine. stack-B/conn is the goroutine
// stack memory the connections added (runtime.MemStats.StackInuse after
// two collections), the part of a master's RSS its idle connections'
// waits hold.
func BenchmarkGCIdleReqConns(b *testing.B) {
	const conns = 2000
	srv := listenReq(b, "127.0.0.1:0", echo, ReqOptions{})
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	stack0 := ms.StackInuse
	for range conns {
		c := rawDial(b, srv.Addr().String())
		c.handshake(b, "REQ")
		if _, err := c.Write(append(zFrame(flagMore, nil), zFrame(0, []byte("hi"))...)); err != nil {
			b.Fatal(err)
		}
		if _, err := c.readMsg(); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	stackPerConn := float64(ms.StackInuse-stack0) / conns
	cpu0 := processCPU(b)
	b.ResetTimer()
	for range b.N {
		runtime.GC()
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(stackPerConn, "stack-B/conn")
}

// processCPU returns the user+system CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processReads is the read system calls this process made so far (syscr
// of /proc/self/io), or -1 where that file is missing.
func processReads(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	return -1
}

// BenchmarkReqPoolReuse is one request/reply round trip of 512 bytes on a
// ReqPool's reused connection, from 64 pools at once (a swarm's
// identities returning a job, each on its own kept connection), against
// a ReqServer that echoes. cpu-ns/op is the process's CPU per round trip
// (both sides: client and server run here), comparable on a loaded
// machine unlike ns/op; reads/op its read system calls (both sides: the
// server's read of the request and the one that finds no more, the
// client's of the reply: 3; 4 before the client waited for its reply
// without a first read).
func BenchmarkReqPoolReuse(b *testing.B) {
	const pools = 64
	srv := listenReq(b, "127.0.0.1:0", echo, ReqOptions{})
	addr := srv.Addr().String()
	req := make([]byte, 512)
	ps := make([]*ReqPool, pools)
	for i := range ps {
		ps[i] = &ReqPool{Addr: addr}
		defer ps[i].Close()
		if _, err := ps[i].Send(context.Background(), req, 1, 10*time.Second); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	b.ReportAllocs()
	reads0 := processReads(b)
	cpu0 := processCPU(b)
	b.ResetTimer()
	b.SetParallelism(pools / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		p := ps[int(next.Add(1)-1)%pools]
		for pb.Next() {
			if _, err := p.Send(context.Background(), req, 1, 10*time.Second); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
	if reads0 >= 0 {
		b.ReportMetric(float64(processReads(b)-reads0)/float64(b.N), "reads/op")
	}
}

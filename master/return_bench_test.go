package master

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/message"
)

// BenchmarkHandleReturn is the master's side of one test.ping return as
// bench-swarm.sh drives it: HandleRequest of an encrypted _return frame
// (decrypt, decode, accepted-key check, job cache write with group
// commit, the salt/job/<jid>/ret/<id> event on the bus, the encrypted
// reply), for a job published to 1,000 minions whose returns arrive on 16
// workers at once (the request server's default). The frames are made
// by the minions, outside the timing. cpu-ns/op is the process's CPU
// time per return (comparable on a loaded machine, unlike ns/op).
func BenchmarkHandleReturn(b *testing.B) {
	const n, workers = 1000, 16
	e := newEnv(b, "")
	tm := e.login("minion1", "m1")
	pub, err := os.ReadFile(filepath.Join(vectorsDir, "pki/minion1/minion.pub"))
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("sw-%04d", i)
		if err := os.WriteFile(filepath.Join(e.cfg.PKIDir, "minions", ids[i]), pub, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// The CLI's subscription: every event is read.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-e.events.C():
			case <-stop:
				return
			}
		}
	}()
	round := func() [][]byte {
		jid, minions, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "sw-*", Fun: "test.ping"})
		if err != nil || len(minions) != n {
			b.Fatalf("publish: %d minions, %v", len(minions), err)
		}
		frames := make([][]byte, n)
		for i, id := range ids {
			if frames[i], _, err = message.EncodeAESRequest(tm.sess, returnLoad(id, jid, true)); err != nil {
				b.Fatal(err)
			}
		}
		return frames
	}
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	for done := 0; done < b.N; {
		b.StopTimer()
		frames := round()
		if k := b.N - done; k < n {
			frames = frames[:k]
		}
		c0 := testutil.ProcessCPU()
		b.StartTimer()
		next := make(chan []byte, len(frames))
		for _, f := range frames {
			next <- f
		}
		close(next)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for f := range next {
					if _, ok := e.m.HandleRequest(context.Background(), f); !ok {
						b.Error("no reply to a _return")
					}
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		cpu += testutil.ProcessCPU() - c0
		b.StartTimer()
		done += len(frames)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

package saltcli

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/testutil"
)

// TestProbeDelay: the probe is sent again soon after a lost first one,
// then less and less often, never more than probeMaxRetry apart.
func TestProbeDelay(t *testing.T) {
	for _, c := range []struct {
		n    int
		want time.Duration
	}{
		{0, 2 * time.Millisecond},
		{1, 4 * time.Millisecond},
		{2, 8 * time.Millisecond},
		{5, 64 * time.Millisecond},
		{6, 128 * time.Millisecond},
		{7, 200 * time.Millisecond},
		{8, 200 * time.Millisecond},
		{1000, 200 * time.Millisecond},
	} {
		if got := probeDelay(c.n); got != c.want {
			t.Errorf("probeDelay(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}

// lossyPull is a master_event_pull.ipc that drops the first drop probe
// events it reads (as the bus does when a probe wins the race against the
// registration of the CLI's reader) and fires the rest into bus. It
// counts the connections and probes it saw.
type lossyPull struct {
	bus  *event.Bus
	drop int

	mu     sync.Mutex
	conns  int
	probes int
}

func (l *lossyPull) serve(t *testing.T, ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		l.mu.Lock()
		l.conns++
		l.mu.Unlock()
		go func() {
			defer c.Close()
			fr := event.NewFrameReader(c, event.DefaultMaxFrameSize)
			for {
				ev, err := fr.Next()
				if err != nil {
					return
				}
				l.mu.Lock()
				lost := false
				if strings.HasPrefix(ev.Tag, ProbeTagPrefix) {
					l.probes++
					lost = l.probes <= l.drop
				}
				l.mu.Unlock()
				if !lost {
					if err := l.bus.Fire(ev); err != nil && !errors.Is(err, event.ErrClosed) {
						t.Errorf("fire: %v", err)
					}
				}
			}
		}()
	}
}

func (l *lossyPull) counts() (conns, probes int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conns, l.probes
}

// TestSubscribeResendsLostProbes: Subscribe confirms its subscription
// when the first probes are lost, sending them again over the one pull
// connection it opened, and the events fired after it returns arrive.
func TestSubscribeResendsLostProbes(t *testing.T) {
	for _, drop := range []int{0, 1, 3} {
		dir := t.TempDir()
		bus := event.New(event.Options{Logger: slog.New(slog.DiscardHandler)})
		defer bus.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The bus's own pub socket; its pull socket goes elsewhere and the
		// lossy one takes the standard name.
		srv, err := event.ServeIPC(ctx, bus, filepath.Join(dir, event.MasterPubSocket), filepath.Join(dir, "unused_pull.ipc"))
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		ln, err := net.Listen("unix", filepath.Join(dir, event.MasterPullSocket))
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		lp := &lossyPull{bus: bus, drop: drop}
		go lp.serve(t, ln)

		c := &Client{Master: &config.Master{SockDir: dir}, Logger: slog.New(slog.DiscardHandler)}
		ev, err := c.Subscribe(ctx, func(tag string) bool { return strings.HasPrefix(tag, "salt/job/") }, 0)
		if err != nil {
			t.Fatalf("drop %d: %v", drop, err)
		}
		conns, probes := lp.counts()
		if probes < drop+1 {
			t.Errorf("drop %d: Subscribe returned after %d probes", drop, probes)
		}
		if conns != 1 {
			t.Errorf("drop %d: the probes used %d pull connections, want 1", drop, conns)
		}
		if err := bus.Fire(event.Event{Tag: "salt/job/1/ret/m1"}); err != nil {
			t.Fatal(err)
		}
		select {
		case e := <-ev.C():
			if e.Tag != "salt/job/1/ret/m1" {
				t.Errorf("drop %d: got %q", drop, e.Tag)
			}
		case <-time.After(testutil.Scale(10 * time.Second)):
			t.Errorf("drop %d: the event fired after Subscribe did not arrive", drop)
		}
		_ = ev.Close()
	}
}

package event

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newTestBus(opts Options) *Bus {
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixedNow }
	}
	return New(opts)
}

// recv reads one event or fails after a generous safety timeout.
func recv(t *testing.T, s *Subscription) Event {
	t.Helper()
	select {
	case ev, ok := <-s.C():
		if !ok {
			t.Fatal("subscription closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	return Event{}
}

func TestBusSlowSubscriberDoesNotBlock(t *testing.T) {
	b := newTestBus(Options{})
	defer b.Close()
	const n = 500
	var fast []*Subscription
	for i := 0; i < 8; i++ {
		fast = append(fast, b.Subscribe(nil, n)) // room for everything
	}
	slow := b.Subscribe(Prefix("t/"), 4) // never read while publishing

	// Fast consumers read concurrently, as real ones would.
	var wg sync.WaitGroup
	got := make([][]string, len(fast))
	for i, s := range fast {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for len(got[i]) < n {
				ev := <-s.C()
				got[i] = append(got[i], ev.Tag)
			}
		}()
	}
	for i := 0; i < n; i++ {
		b.Publish(Event{Tag: fmt.Sprintf("t/%d", i), Data: payload.NewMap("i", i)})
	}
	wg.Wait()
	for i, tags := range got {
		for j, tag := range tags {
			if want := fmt.Sprintf("t/%d", j); tag != want {
				t.Fatalf("subscriber %d event %d: got %q want %q", i, j, tag, want)
			}
		}
		if d := fast[i].Dropped(); d != 0 {
			t.Errorf("fast subscriber %d dropped %d", i, d)
		}
	}
	if d := slow.Dropped(); d != n-4 {
		t.Errorf("slow subscriber dropped %d, want %d", d, n-4)
	}
	// The slow subscriber kept the first events it had room for.
	for i := 0; i < 4; i++ {
		if ev := recv(t, slow); ev.Tag != fmt.Sprintf("t/%d", i) {
			t.Errorf("slow got %q", ev.Tag)
		}
	}
}

func TestBusConcurrentAccounting(t *testing.T) {
	b := newTestBus(Options{})
	const pubs, per = 4, 300
	type counted struct {
		s    *Subscription
		n    int
		done chan struct{}
	}
	var subs []*counted
	for i := 0; i < 6; i++ {
		c := &counted{s: b.Subscribe(Prefix("c/"), 1+i*3), done: make(chan struct{})}
		subs = append(subs, c)
		go func() {
			defer close(c.done)
			for range c.s.C() {
				c.n++
			}
		}()
	}
	// A subscription closed while events flow must not panic or block.
	early := b.Subscribe(nil, 2)
	var wg sync.WaitGroup
	for p := 0; p < pubs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				b.Publish(Event{Tag: "c/x", Data: payload.NewMap("p", p, "i", i)})
				if p == 0 && i == per/2 {
					early.Close()
				}
			}
		}()
	}
	wg.Wait()
	b.Close()
	for i, c := range subs {
		<-c.done
		if got := uint64(c.n) + c.s.Dropped(); got != pubs*per {
			t.Errorf("sub %d: received %d + dropped %d != %d", i, c.n, c.s.Dropped(), pubs*per)
		}
	}
	if b.Subscribers() != 0 {
		t.Errorf("subscribers after close: %d", b.Subscribers())
	}
}

func TestBusMatchingAndStamp(t *testing.T) {
	b := newTestBus(Options{})
	defer b.Close()
	jobs := b.Subscribe(Prefix("salt/job/"), 10)
	glob, _ := Glob("salt/*/ret/*")
	rets := b.Subscribe(glob, 10)

	orig := payload.NewMap("fun", "test.ping")
	b.Publish(Event{Tag: "salt/job/1/new", Data: orig})
	b.Publish(Event{Tag: "salt/auth", Data: payload.NewMap("act", "accept")})
	b.Publish(Event{Tag: "salt/job/1/ret/m1", Data: payload.NewMap("_stamp", "given", "return", true)})
	b.Publish(Event{Tag: "nil/data"})

	ev := recv(t, jobs)
	if ev.Tag != "salt/job/1/new" || ev.Data.Str("_stamp") != "2026-01-02T03:04:05.123456" || ev.Data.Str("fun") != "test.ping" {
		t.Errorf("first job event: %q %v", ev.Tag, ev.Data)
	}
	if orig.Has("_stamp") {
		t.Error("Publish modified the caller's map")
	}
	ev = recv(t, jobs)
	if ev.Tag != "salt/job/1/ret/m1" || ev.Data.Str("_stamp") != "given" {
		t.Errorf("second job event: %q %v", ev.Tag, ev.Data)
	}
	ev = recv(t, rets)
	if ev.Tag != "salt/job/1/ret/m1" {
		t.Errorf("glob subscriber got %q", ev.Tag)
	}
	select {
	case ev := <-jobs.C():
		t.Errorf("unexpected event %q", ev.Tag)
	case ev := <-rets.C():
		t.Errorf("unexpected event %q", ev.Tag)
	default:
	}
}

func TestBusFireErrors(t *testing.T) {
	b := newTestBus(Options{})
	s := b.Subscribe(nil, 10)
	tests := []struct {
		ev   Event
		want error
	}{
		{Event{Tag: ""}, ErrEmptyTag},
		{Event{Tag: "a\n\nb"}, ErrBadTag},
		{Event{Tag: "x", Data: payload.NewMap("c", make(chan int))}, payload.ErrUnsupportedType},
	}
	for _, tc := range tests {
		if err := b.Fire(tc.ev); !errors.Is(err, tc.want) {
			t.Errorf("Fire(%q): %v, want %v", tc.ev.Tag, err, tc.want)
		}
	}
	if err := b.Fire(Event{Tag: "nil/data"}); err != nil {
		t.Fatal(err)
	}
	if ev := recv(t, s); ev.Tag != "nil/data" || ev.Data.Len() != 1 || !ev.Data.Has("_stamp") {
		t.Errorf("nil data event: %q %v", ev.Tag, ev.Data)
	}
	select {
	case ev := <-s.C():
		t.Errorf("refused event delivered: %q", ev.Tag)
	default:
	}
	b.Close()
	if err := b.Fire(Event{Tag: "late"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Fire after Close: %v", err)
	}
	b.Publish(Event{Tag: "late"}) // no panic, no effect
}

func TestBusClose(t *testing.T) {
	b := newTestBus(Options{})
	s1 := b.Subscribe(nil, 10)
	s2 := b.Subscribe(nil, 10)
	b.Publish(Event{Tag: "before"})
	s2.Close()
	s2.Close() // idempotent
	if b.Subscribers() != 1 {
		t.Errorf("subscribers = %d, want 1", b.Subscribers())
	}
	if ev, ok := <-s2.C(); !ok || ev.Tag != "before" {
		t.Errorf("queued event lost on Close: %v %v", ev.Tag, ok)
	}
	if _, ok := <-s2.C(); ok {
		t.Error("closed subscription still open")
	}
	b.Close()
	b.Close()
	if ev, ok := <-s1.C(); !ok || ev.Tag != "before" {
		t.Errorf("queued event lost on bus Close: %v %v", ev.Tag, ok)
	}
	if _, ok := <-s1.C(); ok {
		t.Error("subscription open after bus Close")
	}
	select {
	case <-b.Done():
	default:
		t.Error("Done not closed")
	}
	s3 := b.Subscribe(nil, 1)
	if _, ok := <-s3.C(); ok {
		t.Error("subscription on closed bus is open")
	}
	s3.Close()
}

func TestBusTrimsLargeEvents(t *testing.T) {
	b := newTestBus(Options{MaxEventSize: 1000})
	defer b.Close()
	s := b.Subscribe(nil, 10)
	big := strings.Repeat("y", 2000)
	in := payload.NewMap("small", "x", "big", big)
	b.Publish(Event{Tag: "big", Data: in})
	ev := recv(t, s)
	if ev.Data.Str("big") != TrimmedValue || ev.Data.Str("small") != "x" || !ev.Data.Has("_stamp") {
		t.Errorf("trimmed event: %v", ev.Data)
	}
	if in.Str("big") != big {
		t.Error("caller's map was trimmed in place")
	}

	// Trimming disabled.
	b2 := newTestBus(Options{MaxEventSize: -1})
	defer b2.Close()
	s2 := b2.Subscribe(nil, 10)
	b2.Publish(Event{Tag: "big", Data: payload.NewMap("big", strings.Repeat("y", 2*DefaultMaxEventSize))})
	if ev := recv(t, s2); len(ev.Data.Str("big")) != 2*DefaultMaxEventSize {
		t.Error("event trimmed although trimming is disabled")
	}
}

func TestPrepareEncoding(t *testing.T) {
	ev, packed, err := prepare(Event{Tag: "t", Data: payload.NewMap("b", []byte{0xff}, "s", "é")}, fixedNow, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := payload.MarshalBin(ev.Data)
	if !bytes.Equal(packed, want) {
		t.Error("packed bytes differ from the delivered data")
	}
	// bin for bytes, str for text, as Salt's event bus requires.
	if !bytes.Contains(packed, []byte{0xc4, 0x01, 0xff}) || !bytes.Contains(packed, []byte{0xa2, 0xc3, 0xa9}) {
		t.Errorf("unexpected encoding % x", packed)
	}
}

func BenchmarkPublish10Subscribers(b *testing.B) {
	bus := New(Options{Logger: quietLogger()})
	defer bus.Close()
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		s := bus.Subscribe(nil, 4096)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range s.C() {
			}
		}()
	}
	data := payload.NewMap("jid", "20260102030405123456", "id", "minion-1", "fun", "test.ping",
		"return", true, "retcode", int64(0), "_stamp", "2026-01-02T03:04:05.123456")
	ev := Event{Tag: "salt/job/20260102030405123456/ret/minion-1", Data: data}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bus.Publish(ev)
	}
	b.StopTimer()
	bus.Close()
	wg.Wait()
}

// TestFireOwned: FireOwned delivers the event Fire delivers (same data,
// same _stamp from the bus clock, same position) and sets the stamp on
// the caller's map, where Fire leaves it untouched; a map that has a
// _stamp keeps it either way.
func TestFireOwned(t *testing.T) {
	for _, tc := range []struct {
		name  string
		data  func() *payload.Map
		stamp string // the caller's map's _stamp after FireOwned
	}{
		{"no stamp", func() *payload.Map { return payload.NewMap("id", "m1", "return", true) }, Stamp(fixedNow)},
		{"own stamp", func() *payload.Map { return payload.NewMap("id", "m1", StampKey, "2020-01-01T00:00:00.000000") }, "2020-01-01T00:00:00.000000"},
		{"nil data", func() *payload.Map { return nil }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newTestBus(Options{})
			defer b.Close()
			s := b.Subscribe(nil, 10)
			viaFire := tc.data()
			if err := b.Fire(Event{Tag: "salt/job/1/ret/m1", Data: viaFire}); err != nil {
				t.Fatal(err)
			}
			owned := tc.data()
			if err := b.FireOwned(Event{Tag: "salt/job/1/ret/m1", Data: owned}); err != nil {
				t.Fatal(err)
			}
			a, o := recv(t, s), recv(t, s)
			pa, _ := payload.MarshalBin(a.Data)
			po, _ := payload.MarshalBin(o.Data)
			if !bytes.Equal(pa, po) {
				t.Errorf("FireOwned delivered % x, Fire % x", po, pa)
			}
			if viaFire != nil && viaFire.Str(StampKey) != tc.data().Str(StampKey) {
				t.Errorf("Fire changed the caller's map: %v", viaFire)
			}
			if owned != nil && owned.Str(StampKey) != tc.stamp {
				t.Errorf("FireOwned left _stamp %q on the caller's map, want %q", owned.Str(StampKey), tc.stamp)
			}
		})
	}
}

package minion

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsalt/gsalt/beacons"
	bbuiltin "github.com/gsalt/gsalt/beacons/builtin"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestVerifiedPubs checks the swarm's shared publish signature checks: a
// good signature verifies (and again from memory), a bad one fails every
// time and is not remembered, and the memory stays bounded.
func TestVerifiedPubs(t *testing.T) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	blob := []byte("encrypted publish load")
	sig, err := crypt.Sign(priv, blob)
	if err != nil {
		t.Fatal(err)
	}
	v := newVerifiedPubs()
	tests := []struct {
		name    string
		pub     *rsa.PublicKey
		blob    []byte
		sig     []byte
		wantErr bool
	}{
		{"good", &priv.PublicKey, blob, sig, false},
		{"good again", &priv.PublicKey, blob, sig, false},
		{"other key", &other.PublicKey, blob, sig, true},
		{"other key again", &other.PublicKey, blob, sig, true},
		{"changed load", &priv.PublicKey, []byte("encrypted publish loaD"), sig, true},
		{"empty sig", &priv.PublicKey, blob, nil, true},
	}
	for _, tc := range tests {
		if err := v.verify(tc.pub, tc.blob, tc.sig); (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, want error %v", tc.name, err, tc.wantErr)
		}
	}
	if len(v.seen) != 1 {
		t.Errorf("%d signatures remembered, want 1 (failures are not kept)", len(v.seen))
	}
	for i := range maxVerified + 10 {
		b := []byte(fmt.Sprintf("publish %d", i))
		s, err := crypt.Sign(priv, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.verify(&priv.PublicKey, b, s); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	if len(v.seen) != maxVerified || len(v.ring) != maxVerified {
		t.Errorf("remembered %d/%d signatures, want the bound %d", len(v.seen), len(v.ring), maxVerified)
	}
}

// TestOpenedPubs checks the swarm's shared opened publishes: the same
// frame under the same session key and master key is opened once, any
// difference (frame, session key, master key, signature setting) opens
// again, failures are not remembered, and the memory stays bounded.
func TestOpenedPubs(t *testing.T) {
	k1, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	o := newOpenedPubs()
	opens := 0
	fail := errors.New("bad hmac")
	tests := []struct {
		name      string
		key       string
		pub       *rsa.PublicKey
		body      string
		err       error
		wantOpens int // opens after this call
		wantErr   bool
	}{
		{"first", "s1", &k1.PublicKey, "frame A", nil, 1, false},
		{"same frame from memory", "s1", &k1.PublicKey, "frame A", nil, 1, false},
		{"equal master key, another pointer", "s1", &rsa.PublicKey{N: k1.N, E: k1.E}, "frame A", nil, 1, false},
		{"other frame", "s1", &k1.PublicKey, "frame B", nil, 2, false},
		{"other session key", "s2", &k1.PublicKey, "frame A", nil, 3, false},
		{"other master key", "s1", &k2.PublicKey, "frame A", nil, 4, false},
		{"unsigned", "s1", nil, "frame A", nil, 5, false},
		{"failure", "s1", &k1.PublicKey, "frame C", fail, 6, true},
		{"failure again", "s1", &k1.PublicKey, "frame C", fail, 7, true},
	}
	for _, tc := range tests {
		load, serial, proc, err := o.open(tc.key, tc.pub, []byte(tc.body), func() (*payload.Map, int64, error) {
			opens++
			if tc.err != nil {
				return nil, 0, tc.err
			}
			return payload.NewMap("body", tc.body, "key", tc.key), int64(opens), nil
		})
		if (err != nil) != tc.wantErr || opens != tc.wantOpens {
			t.Errorf("%s: err %v, %d opens; want error %v, %d opens", tc.name, err, opens, tc.wantErr, tc.wantOpens)
			continue
		}
		if (proc == nil) != tc.wantErr {
			t.Errorf("%s: shared proc encoding %p, want one exactly when the opening succeeded", tc.name, proc)
		}
		if err == nil && (load.Str("body") != tc.body || load.Str("key") != tc.key || serial == 0) {
			t.Errorf("%s: got the load %v (serial %d) of another publish", tc.name, load, serial)
		}
	}
	for i := range maxOpened + 10 {
		body := []byte(fmt.Sprintf("publish %d", i))
		if _, _, _, err := o.open("s1", nil, body, func() (*payload.Map, int64, error) { return payload.NewMap(), 1, nil }); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, l := range o.m {
		n += len(l)
	}
	if n != maxOpened || len(o.ring) != maxOpened {
		t.Errorf("remembered %d/%d publishes, want the bound %d", n, len(o.ring), maxOpened)
	}
}

// TestBeaconClock: the swarm's one beacon clock ticks every identity
// that has a beacon configured, none that has none, never starts a
// second loop of an identity whose loop still runs, and leaves an
// identity that left alone.
func TestBeaconClock(t *testing.T) {
	c := newBeaconClock(time.Hour) // ticked by hand below
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	fired := make(chan string, 16)
	release := make(chan struct{})
	ids := map[string]*Minion{}
	for _, tc := range []struct {
		id   string
		opts *payload.Map
	}{
		// The status beacon needs nothing from the host.
		{"busy", payload.NewMap("id", "busy", "beacons", payload.NewMap("status", []any{}))},
		{"idle", payload.NewMap("id", "idle")},
	} {
		mgr := beacons.New(beacons.Options{Opts: tc.opts, Modules: bbuiltin.All(bbuiltin.Options{}), Logger: quiet})
		ids[tc.id] = &Minion{id: tc.id}
		c.join(ids[tc.id], mgr, func(_ context.Context, evs []beacons.Event) {
			fired <- tc.id
			<-release // the loop runs until the test lets it end
		})
	}
	started := c.tick(ctx, time.Now(), nil)
	if len(started) != 1 {
		t.Fatalf("one tick started %d loops, want 1 (the identity with a beacon)", len(started))
	}
	select {
	case id := <-fired:
		if id != "busy" {
			t.Fatalf("%s fired", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the started loop never fired")
	}
	if n := len(c.tick(ctx, time.Now(), nil)); n != 0 {
		t.Errorf("a tick started %d loops while the identity's loop still runs", n)
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for started[0].busy.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the loop did not end")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.leave(ids["busy"])
	if n := len(c.tick(ctx, time.Now(), nil)); n != 0 {
		t.Errorf("a tick started %d loops after the identity left", n)
	}
}

// TestOpenedPubsOnceUnderConcurrency has many identities receive the same
// frame at the same moment: it is opened once and every identity gets that
// load; when the opening fails, every identity opens the frame itself.
func TestOpenedPubsOnceUnderConcurrency(t *testing.T) {
	for _, failing := range []bool{false, true} {
		o := newOpenedPubs()
		gate := make(chan struct{})
		var opens atomic.Int64
		const n = 500
		var wg sync.WaitGroup
		loads := make([]*payload.Map, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				loads[i], _, _, errs[i] = o.open("s1", nil, []byte("the same frame"), func() (*payload.Map, int64, error) {
					if opens.Add(1) == 1 {
						<-gate // the first opening is slow: the others arrive meanwhile
					}
					if failing {
						return nil, 0, errors.New("bad hmac")
					}
					return payload.NewMap("jid", "1"), 0, nil
				})
			}()
		}
		// Let the first opening finish once some identities wait on it.
		for opens.Load() == 0 {
			runtime.Gosched()
		}
		close(gate)
		wg.Wait()
		switch {
		case !failing && opens.Load() != 1:
			t.Errorf("opened %d times, want once", opens.Load())
		case failing && opens.Load() != n:
			t.Errorf("failing: opened %d times, want %d (each identity meets the failure)", opens.Load(), n)
		}
		for i := range n {
			if failing != (errs[i] != nil) || (!failing && loads[i] != loads[0]) {
				t.Fatalf("failing=%v identity %d: load %p err %v", failing, i, loads[i], errs[i])
			}
		}
		if len(o.m) != 0 && failing {
			t.Errorf("a failed opening stayed in the cache")
		}
	}
}

// TestInternFrames: identical large publish bodies received by different
// identities end up sharing one copy; small or different bodies are left
// alone, and the memory kept is bounded.
func TestInternFrames(t *testing.T) {
	o := newOpenedPubs()
	big := func(b byte) []byte { return bytes.Repeat([]byte{b}, internMin) }
	a1 := o.intern([][]byte{[]byte("broadcast"), big('a')})
	a2 := o.intern([][]byte{[]byte("broadcast"), big('a')})
	if &a1[1][0] != &a2[1][0] {
		t.Errorf("identical bodies not shared")
	}
	if !bytes.Equal(a2[0], []byte("broadcast")) || !bytes.Equal(a2[1], big('a')) {
		t.Errorf("interned frames changed content")
	}
	b := o.intern([][]byte{big('b')})
	if &b[0][0] == &a1[1][0] || !bytes.Equal(b[0], big('b')) {
		t.Errorf("a different body was replaced")
	}
	small1, small2 := []byte("small"), []byte("small")
	if s := o.intern([][]byte{small2}); &s[0][0] != &small2[0] || &s[0][0] == &small1[0] {
		t.Errorf("a small body was interned")
	}
	for i := range 3 * maxInterned {
		o.intern([][]byte{bytes.Repeat([]byte{byte(i)}, internMin+i)})
	}
	if len(o.frames) > maxInterned || len(o.fring) > maxInterned {
		t.Errorf("kept %d bodies (%d in the ring), want at most %d", len(o.frames), len(o.fring), maxInterned)
	}
}

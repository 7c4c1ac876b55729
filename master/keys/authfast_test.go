package keys

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// treeSnapshot maps every file under dir (relative path) but the lock
// file to its content; directories map to "<dir>".
func treeSnapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == lockName {
			return nil
		}
		if fi.IsDir() {
			out[rel] = "<dir>"
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// treeDiff names the paths whose content differs between two snapshots.
func treeDiff(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestAuthKnownAgreesWithExclusivePath checks the shared-lock fast path
// against the exclusive decision procedure on twin stores: whenever
// authKnown decides, its decision equals authLocked's and authLocked
// changed no file (so deciding without the exclusive lock lost nothing),
// and it decides exactly the cases it is meant to.
func TestAuthKnownAgreesWithExclusivePath(t *testing.T) {
	pubA := testPub(t, "minion1")
	pubB := testPub(t, "proxy1")
	pubA2 := append(append([]byte(nil), pubA...), '\n')
	type files map[State][]byte
	cases := []struct {
		name  string
		opts  func(*Options)
		setup files
		stubs []string // minions_autosign entries
		pub   []byte
		fast  bool
	}{
		{name: "accepted same key", setup: files{StateAccepted: pubA}, pub: pubA, fast: true},
		{name: "accepted equal after strip", setup: files{StateAccepted: pubA}, pub: pubA2, fast: true},
		{name: "stored key has trailing white space", setup: files{StateAccepted: pubA2}, pub: pubA, fast: true},
		{name: "accepted and pending", setup: files{StateAccepted: pubA, StatePending: pubB}, pub: pubA, fast: true},
		{name: "accepted different key", setup: files{StateAccepted: pubA}, pub: pubB},
		{name: "rejected and accepted", setup: files{StateAccepted: pubA, StateRejected: pubA}, pub: pubA},
		{name: "new key", pub: pubA},
		{name: "pending key", setup: files{StatePending: pubA}, pub: pubA},
		{name: "own autosign stub", setup: files{StateAccepted: pubA}, stubs: []string{"m"}, pub: pubA},
		{name: "expired stub of another id", setup: files{StateAccepted: pubA}, stubs: []string{"other"}, pub: pubA},
		{
			name: "auto_accept never looks at stubs",
			opts: func(o *Options) { o.AutoAccept = true }, setup: files{StateAccepted: pubA},
			stubs: []string{"m", "other"}, pub: pubA, fast: true,
		},
		{
			name: "max_minions full",
			opts: func(o *Options) {
				o.MaxMinions = 1
				o.ConnectedMinions = func(string) (int, bool) { return 2, false }
			},
			setup: files{StateAccepted: pubA}, pub: pubA,
		},
		{
			name: "max_minions already connected",
			opts: func(o *Options) {
				o.MaxMinions = 1
				o.ConnectedMinions = func(string) (int, bool) { return 2, true }
			},
			setup: files{StateAccepted: pubA}, pub: pubA, fast: true,
		},
		{name: "open mode", opts: func(o *Options) { o.OpenMode = true }, setup: files{StateAccepted: pubA}, pub: pubA},
		{name: "corrupt accepted key sent back", setup: files{StateAccepted: []byte("garbage")}, pub: []byte("garbage")},
		{name: "oversized key", setup: files{StateAccepted: pubA}, pub: append(bytes.Repeat([]byte(" "), MaxPubSize), pubA...)},
	}
	old := time.Now().Add(-3 * time.Hour)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stores [2]*Store
			for i := range stores {
				s, _ := newTestStore(t, c.opts)
				for st, data := range c.setup {
					put(t, s, st, "m", data)
				}
				for _, stub := range c.stubs {
					p := filepath.Join(s.PKIDir(), "minions_autosign", stub)
					if err := os.WriteFile(p, nil, 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.Chtimes(p, old, old); err != nil {
						t.Fatal(err)
					}
				}
				stores[i] = s
			}
			req := AuthRequest{ID: "m", Pub: c.pub}
			before := treeSnapshot(t, stores[0].PKIDir())
			var (
				fast AuthDecision
				done bool
			)
			if err := stores[0].withLock(false, func() error {
				var err error
				fast, done, err = stores[0].authKnown(req)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if done != c.fast {
				t.Fatalf("fast path decided=%v, want %v", done, c.fast)
			}
			if got := treeSnapshot(t, stores[0].PKIDir()); !deepEqual(got, before) {
				t.Errorf("the fast path changed files: %v", treeDiff(before, got))
			}
			var slow AuthDecision
			if err := stores[1].withLock(true, func() error {
				var err error
				slow, err = stores[1].authLocked(req)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if !done {
				return
			}
			if after := treeSnapshot(t, stores[1].PKIDir()); !deepEqual(after, before) {
				t.Errorf("the exclusive path changed files where the fast path decided: %v", treeDiff(before, after))
			}
			if fast.Result != slow.Result || fast.Reason != slow.Reason || !deepEqual(fast.Event, slow.Event) {
				t.Errorf("fast %s %q %v, exclusive %s %q %v", fast.Result, fast.Reason, fast.Event, slow.Result, slow.Reason, slow.Event)
			}
			if fast.MinionPub == nil || slow.MinionPub == nil || !fast.MinionPub.Equal(slow.MinionPub) {
				t.Errorf("MinionPub differs: fast %v, exclusive %v", fast.MinionPub != nil, slow.MinionPub != nil)
			}
		})
	}
}

// TestAuthKnownRunsUnderSharedLock: an accepted minion is decided while
// another holder keeps the Store's shared lock (as other auth workers
// do); a new key, which writes minions_pre, waits for it.
func TestAuthKnownRunsUnderSharedLock(t *testing.T) {
	s, _ := newTestStore(t, nil)
	pub := testPub(t, "minion1")
	put(t, s, StateAccepted, "known", pub)
	s.mu.RLock()
	known := make(chan AuthResult, 1)
	go func() {
		d, _ := s.Authenticate(AuthRequest{ID: "known", Pub: pub})
		known <- d.Result
	}()
	select {
	case r := <-known:
		if r != AuthAccept {
			t.Errorf("known minion: %s", r)
		}
	case <-time.After(testutil.Scale(10 * time.Second)):
		s.mu.RUnlock()
		t.Fatal("the known minion waited for the shared lock to be released")
	}
	fresh := make(chan AuthResult, 1)
	go func() {
		d, _ := s.Authenticate(AuthRequest{ID: "new", Pub: pub})
		fresh <- d.Result
	}()
	// A negative check: the new key must still be waiting for the
	// exclusive lock a moment later.
	time.Sleep(50 * time.Millisecond)
	select {
	case r := <-fresh:
		t.Errorf("a new key was decided (%s) while the shared lock was held", r)
	default:
	}
	s.mu.RUnlock()
	if r := <-fresh; r != AuthPending {
		t.Errorf("new key: %s, want pending", r)
	}
}

// TestAuthConcurrent runs many authentications of accepted minions at
// once while one key is rejected and accepted again and another deleted
// and re-accepted (run with -race): the others are always accepted with
// their key, nothing is denied or errors, and the toggled ids end in the
// state the last change left.
func TestAuthConcurrent(t *testing.T) {
	s, _ := newTestStore(t, nil)
	pub := testPub(t, "minion1")
	const ids = 40
	for i := range ids {
		put(t, s, StateAccepted, fmt.Sprintf("m-%02d", i), pub)
	}
	want, err := parseMinionPub(pub)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var changer sync.WaitGroup
	changer.Add(1)
	toggles := 0
	go func() {
		defer changer.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.Reject("m-00"); err != nil {
				t.Error(err)
				return
			}
			if _, err := s.AcceptWith(Include{Rejected: true}, "m-00"); err != nil {
				t.Error(err)
				return
			}
			if _, err := s.Delete("m-01"); err != nil {
				t.Error(err)
				return
			}
			// Accepted again as an operator copying the key in would.
			if err := s.withLock(true, func() error {
				return writeFileAtomic(s.KeyPath(StateAccepted, "m-01"), pub, keyFileMode)
			}); err != nil {
				t.Error(err)
				return
			}
			toggles++
		}
	}()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		counts = map[string]map[AuthResult]int{}
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 150 {
				id := fmt.Sprintf("m-%02d", (w*7+n)%ids)
				d, err := s.Authenticate(AuthRequest{ID: id, Pub: pub})
				if err != nil {
					t.Errorf("%s: %v", id, err)
					return
				}
				mu.Lock()
				if counts[id] == nil {
					counts[id] = map[AuthResult]int{}
				}
				counts[id][d.Result]++
				mu.Unlock()
				switch {
				case d.Result == AuthAccept && !d.MinionPub.Equal(want):
					t.Errorf("%s accepted with another key", id)
				case d.Result != AuthAccept && id != "m-00" && id != "m-01":
					t.Errorf("%s: %s (%s)", id, d.Result, d.Reason)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	changer.Wait()
	if toggles == 0 {
		t.Fatal("the keys were never changed during the authentications")
	}
	for id, c := range counts {
		for r := range c {
			if r != AuthAccept && r != AuthReject && r != AuthPending {
				t.Errorf("%s: unexpected %s", id, r)
			}
		}
	}
	denied, err := s.ListState(StateDenied)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(denied)
	if len(denied) != 0 {
		t.Errorf("keys denied under concurrency: %v", denied)
	}
	// m-01 may also have been placed in pending by an authentication
	// between its deletion and its return.
	for _, id := range []string{"m-00", "m-01"} {
		if got := stateOf(s, id); len(got) == 0 || got[0] != StateAccepted || (id == "m-00" && len(got) != 1) {
			t.Errorf("%s ends in %v, want accepted", id, got)
		}
	}
}

package keys

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/wire/crypt"
)

func TestOpenLayout(t *testing.T) {
	root := t.TempDir()
	pki := filepath.Join(root, "etc", "pki", "master")
	cache := filepath.Join(root, "cache")
	s, err := Open(Options{PKIDir: pki, CacheDir: cache, KeySize: 1024, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	mode := func(p string) os.FileMode {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	if m := mode(pki); m != 0o700 {
		t.Errorf("pki_dir mode %o, want 700", m)
	}
	for _, d := range []string{"minions", "minions_pre", "minions_rejected", "minions_denied", "minions_autosign"} {
		if m := mode(filepath.Join(pki, d)); m != 0o755 {
			t.Errorf("%s mode %o, want 755", d, m)
		}
	}
	if m := mode(s.MasterKeyPath()); m != 0o400 {
		t.Errorf("master.pem mode %o", m)
	}
	if m := mode(s.MasterPubPath()); m != 0o644 {
		t.Errorf("master.pub mode %o", m)
	}
	priv, err := s.LoadMasterKey()
	if err != nil {
		t.Fatal(err)
	}
	if priv.N.BitLen() != 1024 {
		t.Errorf("master key has %d bits", priv.N.BitLen())
	}
	pub, err := s.MasterPub()
	if err != nil {
		t.Fatal(err)
	}
	if string(pub) != string(crypt.MarshalPublicKeyPEM(&priv.PublicKey)) {
		t.Error("master.pub does not hold master.pem's public key")
	}
	if !isDir(cache) {
		t.Error("cachedir not created")
	}

	// A missing master.pub is rebuilt from master.pem; the key is kept.
	if err := os.Remove(s.MasterPubPath()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(pki, 0o750); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(Options{PKIDir: pki, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	pub2, err := s2.MasterPub()
	if err != nil || string(pub2) != string(pub) {
		t.Fatalf("master.pub rebuilt as %q, %v", pub2, err)
	}
	if m := mode(pki); m != 0o750 {
		t.Errorf("pki_dir mode 750 changed to %o", m)
	}
	// SkipMasterKey creates nothing.
	bare := filepath.Join(root, "bare")
	if _, err := Open(Options{PKIDir: bare, SkipMasterKey: true, Logger: quietLogger()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bare, "master.pem")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SkipMasterKey still created master.pem: %v", err)
	}
	if _, err := Open(Options{}); !errors.Is(err, ErrNoPKIDir) {
		t.Errorf("Open without pki_dir: %v", err)
	}
}

func TestListAndMatch(t *testing.T) {
	s, _ := newTestStore(t, nil)
	pub := testPub(t, "minion1")
	put(t, s, StateAccepted, "web2", pub)
	put(t, s, StateAccepted, "Web1", pub)
	put(t, s, StateAccepted, "db1", pub)
	put(t, s, StateAccepted, ".hidden", pub)
	put(t, s, StateAccepted, ".key_cache", pub)
	if err := os.Mkdir(s.KeyPath(StateAccepted, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	put(t, s, StatePending, "web3", pub)
	put(t, s, StateRejected, "web4", pub)
	put(t, s, StateDenied, "web2", pub)

	got, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	want := map[State][]string{
		StateAccepted: {"db1", "Web1", "web2"},
		StatePending:  {"web3"},
		StateRejected: {"web4"},
		StateDenied:   {"web2"},
	}
	if !deepEqual(got, want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
	local, err := s.ListState(StateLocal)
	if err != nil || !deepEqual(local, []string{"master.pem", "master.pub"}) {
		t.Fatalf("local = %v, %v", local, err)
	}
	if _, err := s.ListState("bogus"); !errors.Is(err, ErrBadState) {
		t.Fatalf("ListState(bogus) = %v", err)
	}

	cases := []struct {
		local    bool
		patterns []string
		want     Listing
	}{
		{false, []string{"web*"}, Listing{
			{State: StateAccepted, IDs: []string{"web2"}},
			{State: StatePending, IDs: []string{"web3"}},
			{State: StateRejected, IDs: []string{"web4"}},
			{State: StateDenied, IDs: []string{"web2"}},
		}},
		{false, []string{"[Ww]eb1"}, Listing{{State: StateAccepted, IDs: []string{"Web1"}}}},
		{false, []string{"web1"}, nil}, // case matters
		{false, []string{"db1,web3"}, Listing{
			{State: StateAccepted, IDs: []string{"db1"}},
			{State: StatePending, IDs: []string{"web3"}},
		}},
		// Two globs matching one id list it twice, as Salt does.
		{false, []string{"web2,w*"}, Listing{
			{State: StateAccepted, IDs: []string{"web2", "web2"}},
			{State: StatePending, IDs: []string{"web3"}},
			{State: StateRejected, IDs: []string{"web4"}},
			{State: StateDenied, IDs: []string{"web2", "web2"}},
		}},
		{true, []string{"master.p*"}, Listing{{State: StateLocal, IDs: []string{"master.pem", "master.pub"}}}},
		{false, []string{"master.p*"}, nil},
		{false, nil, nil},
	}
	for _, c := range cases {
		got, err := s.Match(c.local, c.patterns...)
		if err != nil {
			t.Fatal(err)
		}
		if !deepEqual(got, c.want) {
			t.Errorf("Match(%v, %q) = %v, want %v", c.local, c.patterns, got, c.want)
		}
	}

	data, st, err := s.ReadPub("web3")
	if err != nil || st != StatePending || string(data) != string(pub) {
		t.Fatalf("ReadPub(web3) = %q, %s, %v", data, st, err)
	}
	if _, _, err := s.ReadPub("nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ReadPub(nobody) = %v", err)
	}
	if _, _, err := s.ReadPub("../master.pem"); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("ReadPub(../master.pem) = %v", err)
	}
}

// keySetup describes which states hold which ids before an operation.
type keySetup map[State][]string

func applySetup(t *testing.T, s *Store, setup keySetup, pub []byte) {
	t.Helper()
	for st, ids := range setup {
		for _, id := range ids {
			put(t, s, st, id, pub)
		}
	}
}

func TestGlobOperations(t *testing.T) {
	base := keySetup{
		StateAccepted: {"acc1", "web-acc"},
		StatePending:  {"web1", "web2", "db1"},
		StateRejected: {"web-rej"},
		StateDenied:   {"web-den"},
	}
	type op func(s *Store) (Outcome, error)
	cases := []struct {
		name    string
		op      op
		changes []Change
		after   Listing
		final   keySetup // ids whose states must be exactly these
		rotated bool
	}{
		{
			name: "accept glob pending only",
			op:   func(s *Store) (Outcome, error) { return s.Accept("web*") },
			changes: []Change{
				{ActAccept, "web1", StatePending}, {ActAccept, "web2", StatePending},
			},
			after: Listing{{State: StateAccepted, IDs: []string{"web1", "web2"}}},
			final: keySetup{StateAccepted: {"web1", "web2", "web-acc"}, StatePending: {"db1"},
				StateRejected: {"web-rej"}, StateDenied: {"web-den"}},
		},
		{
			name: "accept include rejected and denied",
			op: func(s *Store) (Outcome, error) {
				return s.AcceptWith(Include{Rejected: true, Denied: true, Accepted: true}, "web*")
			},
			changes: []Change{
				{ActAccept, "web1", StatePending}, {ActAccept, "web2", StatePending},
				{ActAccept, "web-rej", StateRejected}, {ActAccept, "web-den", StateDenied},
			},
			after: Listing{{State: StateAccepted, IDs: []string{"web1", "web2", "web-rej", "web-den"}}},
			final: keySetup{StateAccepted: {"web1", "web2", "web-rej", "web-den", "web-acc"}},
		},
		{
			name: "accept all",
			op:   func(s *Store) (Outcome, error) { return s.AcceptAll() },
			changes: []Change{
				{ActAccept, "db1", StatePending}, {ActAccept, "web1", StatePending}, {ActAccept, "web2", StatePending},
			},
			after: Listing{{State: StateAccepted, IDs: []string{"db1", "web1", "web2"}}},
			final: keySetup{StateAccepted: {"db1", "web1", "web2"}, StateRejected: {"web-rej"}},
		},
		{
			name:    "reject glob pending only",
			op:      func(s *Store) (Outcome, error) { return s.Reject("web?") },
			changes: []Change{{ActReject, "web1", StatePending}, {ActReject, "web2", StatePending}},
			after:   Listing{{State: StateRejected, IDs: []string{"web1", "web2"}}},
			final:   keySetup{StateRejected: {"web1", "web2", "web-rej"}, StateAccepted: {"web-acc"}},
			rotated: true,
		},
		{
			name: "reject include accepted",
			op:   func(s *Store) (Outcome, error) { return s.RejectWith(Include{Accepted: true}, "*acc*") },
			changes: []Change{
				{ActReject, "acc1", StateAccepted}, {ActReject, "web-acc", StateAccepted},
			},
			after:   Listing{{State: StateRejected, IDs: []string{"acc1", "web-acc"}}},
			final:   keySetup{StateRejected: {"acc1", "web-acc"}},
			rotated: true,
		},
		{
			name:    "reject all",
			op:      func(s *Store) (Outcome, error) { return s.RejectAll() },
			changes: []Change{{ActReject, "db1", StatePending}, {ActReject, "web1", StatePending}, {ActReject, "web2", StatePending}},
			after:   Listing{{State: StateRejected, IDs: []string{"db1", "web1", "web2"}}},
			final:   keySetup{StateRejected: {"db1", "web1", "web2", "web-rej"}, StateAccepted: {"acc1"}},
			rotated: true,
		},
		{
			name: "delete glob every state",
			op:   func(s *Store) (Outcome, error) { return s.Delete("web-*") },
			changes: []Change{
				{ActDelete, "web-acc", StateAccepted}, {ActDelete, "web-rej", StateRejected}, {ActDelete, "web-den", StateDenied},
			},
			final:   keySetup{StateAccepted: {"acc1"}, StatePending: {"web1", "web2"}},
			rotated: true,
		},
		{
			name: "delete all",
			op:   func(s *Store) (Outcome, error) { return s.DeleteAll() },
			changes: []Change{
				{ActDelete, "acc1", StateAccepted}, {ActDelete, "web-acc", StateAccepted},
				{ActDelete, "db1", StatePending}, {ActDelete, "web1", StatePending}, {ActDelete, "web2", StatePending},
				{ActDelete, "web-rej", StateRejected}, {ActDelete, "web-den", StateDenied},
			},
			rotated: true,
		},
		{
			name:    "no match",
			op:      func(s *Store) (Outcome, error) { return s.Accept("nothing*") },
			changes: nil,
			final:   keySetup{StatePending: {"web1"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, ev := newTestStore(t, nil)
			applySetup(t, s, base, testPub(t, "minion1"))
			out, err := c.op(s)
			if err != nil {
				t.Fatal(err)
			}
			if !deepEqual(out.Changes, c.changes) {
				t.Errorf("changes = %v, want %v", out.Changes, c.changes)
			}
			if !deepEqual(out.After, c.after) {
				t.Errorf("after = %v, want %v", out.After, c.after)
			}
			if out.Rotated != c.rotated {
				t.Errorf("rotated = %v, want %v", out.Rotated, c.rotated)
			}
			for st, ids := range c.final {
				for _, id := range ids {
					if got := stateOf(s, id); !deepEqual(got, []State{st}) {
						t.Errorf("%s is in %v, want only %s", id, got, st)
					}
				}
			}
			// One salt/key event per change, with Salt's data.
			evs := ev.all()
			if len(evs) != len(c.changes) {
				t.Fatalf("%d events for %d changes", len(evs), len(c.changes))
			}
			for i, e := range evs {
				want := map[string]any{"result": true, "act": string(c.changes[i].Act), "id": c.changes[i].ID}
				if e.Tag != "salt/key" || !deepEqual(e.Data, want) {
					t.Errorf("event %d = %s %v, want salt/key %v", i, e.Tag, e.Data, want)
				}
			}
			dfn := filepath.Join(s.opts.CacheDir, ".dfn")
			fi, err := os.Stat(dfn)
			if c.rotated {
				if err != nil {
					t.Fatalf("dropfile missing: %v", err)
				}
				if fi.Mode().Perm() != 0o400 || fi.Size() != 0 {
					t.Errorf("dropfile mode %o size %d", fi.Mode().Perm(), fi.Size())
				}
			} else if err == nil {
				t.Error("dropfile created by a non-rotating operation")
			}
		})
	}
}

func TestAcceptInvalidKey(t *testing.T) {
	s, ev := newTestStore(t, nil)
	put(t, s, StatePending, "good", testPub(t, "minion1"))
	put(t, s, StatePending, "bad", []byte("junk\n"))
	m, err := s.Match(false, "*")
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.AcceptMatches(m.Filter(ActAccept, Include{}), Include{})
	if err != nil {
		t.Fatal(err)
	}
	if !deepEqual(out.Invalid, []Change{{ActAccept, "bad", StatePending}}) {
		t.Errorf("invalid = %v", out.Invalid)
	}
	if !deepEqual(out.Changes, []Change{{ActAccept, "good", StatePending}}) {
		t.Errorf("changes = %v", out.Changes)
	}
	if !deepEqual(out.After, Listing{{State: StateAccepted, IDs: []string{"good"}}}) {
		t.Errorf("after = %v", out.After)
	}
	if got := stateOf(s, "bad"); !deepEqual(got, []State{StatePending}) {
		t.Errorf("bad key moved to %v", got)
	}
	if len(ev.all()) != 1 {
		t.Errorf("events: %v", ev.all())
	}
	if FormatInvalid("bad") != "Unable to accept invalid key for bad.\n" {
		t.Error("FormatInvalid")
	}
}

func TestRotationOptions(t *testing.T) {
	t.Run("disabled", func(t *testing.T) {
		s, _ := newTestStore(t, func(o *Options) { o.NoRotateAESKey = true })
		put(t, s, StatePending, "m", testPub(t, "minion1"))
		out, err := s.Delete("m")
		if err != nil || out.Rotated {
			t.Fatalf("rotated=%v err=%v", out.Rotated, err)
		}
		if _, err := os.Stat(filepath.Join(s.opts.CacheDir, ".dfn")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("dropfile exists: %v", err)
		}
	})
	t.Run("existing dropfile kept", func(t *testing.T) {
		s, _ := newTestStore(t, nil)
		dfn := filepath.Join(s.opts.CacheDir, ".dfn")
		if err := os.WriteFile(dfn, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := s.Reject("nobody")
		if err != nil || !out.Rotated {
			t.Fatalf("rotated=%v err=%v", out.Rotated, err)
		}
		fi, _ := os.Stat(dfn)
		if fi.Mode().Perm() != 0o600 || fi.Size() != 1 {
			t.Errorf("existing dropfile changed: %o %d", fi.Mode().Perm(), fi.Size())
		}
	})
	t.Run("no cachedir", func(t *testing.T) {
		s, _ := newTestStore(t, func(o *Options) { o.CacheDir = "" })
		out, err := s.Reject("x")
		if err != nil || out.Rotated {
			t.Fatalf("rotated=%v err=%v", out.Rotated, err)
		}
	})
}

func TestMinionCacheCleanup(t *testing.T) {
	for _, c := range []struct {
		name            string
		preserveCache   bool
		preserveMinions bool
		wantGone        []string
		wantKept        []string
	}{
		{"default", false, false, []string{"gone", "stale"}, []string{"kept"}},
		{"preserve_minion_cache", true, false, nil, []string{"gone", "stale", "kept"}},
		{"preserve_minions", false, true, []string{"stale"}, []string{"gone", "kept"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newTestStore(t, func(o *Options) { o.PreserveMinionCache = c.preserveCache })
			put(t, s, StateAccepted, "gone", testPub(t, "minion1"))
			put(t, s, StatePending, "kept", testPub(t, "minion1"))
			for _, id := range []string{"gone", "stale", "kept"} {
				d := filepath.Join(s.opts.CacheDir, "minions", id)
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, "data.p"), []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			m, err := s.Match(false, "gone")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.DeleteMatches(m, c.preserveMinions); err != nil {
				t.Fatal(err)
			}
			for _, id := range c.wantGone {
				if isDir(filepath.Join(s.opts.CacheDir, "minions", id)) {
					t.Errorf("cache of %s kept", id)
				}
			}
			for _, id := range c.wantKept {
				if !isDir(filepath.Join(s.opts.CacheDir, "minions", id)) {
					t.Errorf("cache of %s removed", id)
				}
			}
		})
	}
}

func TestFingerAndPrint(t *testing.T) {
	s, _ := newTestStore(t, func(o *Options) { o.HashType = "md5" })
	pub := testPub(t, "minion1")
	put(t, s, StatePending, "m1", pub)
	fp, err := crypt.Fingerprint(pub, "md5")
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Finger("m1,m1*")
	if err != nil {
		t.Fatal(err)
	}
	want := Listing{{State: StatePending, IDs: []string{"m1"}, Values: []string{fp}}}
	if !deepEqual(l, want) {
		t.Fatalf("Finger = %v, want %v", l, want)
	}
	p, err := s.Print("m1")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := p.Value(StatePending, "m1"); !ok || v != string(pub) {
		t.Fatalf("Print = %v", p)
	}
	all, err := s.FingerAll()
	if err != nil {
		t.Fatal(err)
	}
	if !all.Has(StateLocal) || !all.Has(StatePending) || all.Has(StateAccepted) {
		t.Fatalf("FingerAll groups = %v", all)
	}
}

// TestConcurrentStores runs two Stores on one pki_dir (each with its own
// flock file descriptor, as two processes would have) accepting, rejecting,
// deleting and authenticating at once, and checks that every key ends in
// exactly one place, that each key was moved at most once per operation
// kind and that no temporary files remain.
func TestConcurrentStores(t *testing.T) {
	s1, ev1 := newTestStore(t, nil)
	ev2 := &eventLog{}
	s2, err := Open(Options{PKIDir: s1.PKIDir(), CacheDir: s1.opts.CacheDir, Event: ev2.fire, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	pub := testPub(t, "minion1")
	const n = 60
	for i := 0; i < n; i++ {
		put(t, s1, StatePending, fmt.Sprintf("m%02d", i), pub)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	run := func(f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				errs <- err
			}
		}()
	}
	for round := 0; round < 5; round++ {
		run(func() error { _, err := s1.AcceptAll(); return err })
		run(func() error { _, err := s2.AcceptAll(); return err })
		run(func() error { _, err := s2.Reject("m1*"); return err })
		run(func() error { _, err := s1.Delete("m2*"); return err })
		run(func() error {
			for i := 0; i < 10; i++ {
				if _, err := s2.Authenticate(AuthRequest{ID: fmt.Sprintf("new%d", i), Pub: pub}); err != nil {
					return err
				}
			}
			return nil
		})
		run(func() error {
			for i := 0; i < 10; i++ {
				if _, err := s1.Authenticate(AuthRequest{ID: fmt.Sprintf("new%d", i), Pub: pub}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, e := range append(ev1.all(), ev2.all()...) {
		counts[e.Data["act"].(string)+" "+e.Data["id"].(string)]++
	}
	for k, c := range counts {
		if c > 1 {
			t.Errorf("%s happened %d times", k, c)
		}
	}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("m%02d", i)
		st := stateOf(s1, id)
		deleted := counts["delete "+id] == 1
		if deleted && len(st) != 0 || !deleted && len(st) != 1 {
			t.Errorf("%s is in %v (deleted=%v)", id, st, deleted)
		}
	}
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("new%d", i)
		if st := stateOf(s1, id); len(st) != 1 {
			t.Errorf("%s is in %v", id, st)
		}
	}
	for _, st := range ManagedStates() {
		ents, _ := os.ReadDir(filepath.Join(s1.PKIDir(), st.Dir()))
		for _, e := range ents {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Errorf("temporary file left: %s/%s", st.Dir(), e.Name())
			}
		}
	}
}

// TestHelperProcess is not a test: TestConcurrentProcesses runs the test
// binary with GSALT_KEYS_HELPER set to act on a shared pki_dir from
// another process. It reports its salt/key events on stdout.
func TestHelperProcess(t *testing.T) {
	pki := os.Getenv("GSALT_KEYS_HELPER")
	if pki == "" {
		t.Skip("helper process for TestConcurrentProcesses")
	}
	var mu sync.Mutex
	report := func(tag string, data map[string]any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf("EVENT %s %s\n", data["act"], data["id"])
	}
	s, err := Open(Options{PKIDir: pki, SkipMasterKey: true, Logger: quietLogger(), Event: report})
	if err != nil {
		t.Fatal(err)
	}
	if err := authAcceptLoop(s, testPub(t, "minion1")); err != nil {
		t.Fatal(err)
	}
}

// authAcceptLoop authenticates the shared ids and accepts pending keys,
// racing other processes doing the same.
func authAcceptLoop(s *Store, pub []byte) error {
	for round := 0; round < 3; round++ {
		for i := 0; i < 30; i++ {
			if _, err := s.Authenticate(AuthRequest{ID: fmt.Sprintf("p-%02d", i), Pub: pub}); err != nil {
				return err
			}
			if _, err := s.AcceptAll(); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestConcurrentProcesses runs two other processes and this one on the
// same pki_dir at once, all authenticating the same minions and accepting
// pending keys: every key must end accepted, in exactly one state, and be
// accepted exactly once over all processes (without the flock a key can
// be pended again while it is being accepted and so accepted twice).
func TestConcurrentProcesses(t *testing.T) {
	ev := &eventLog{}
	s, _ := newTestStore(t, func(o *Options) { o.Event = ev.fire })
	var procs []*exec.Cmd
	var outs []*bytes.Buffer
	for i := 0; i < 2; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "GSALT_KEYS_HELPER="+s.PKIDir())
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
		outs = append(outs, &out)
	}
	pub := testPub(t, "minion1")
	if err := authAcceptLoop(s, pub); err != nil {
		t.Fatal(err)
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, outs[i].String())
		}
	}
	// Whatever is still pending (pended after the last AcceptAll of every
	// process) gets accepted now.
	if _, err := s.AcceptAll(); err != nil {
		t.Fatal(err)
	}
	all, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(all[StateAccepted]) != 30 || len(all[StatePending])+len(all[StateRejected])+len(all[StateDenied]) != 0 {
		t.Errorf("final keys: %v", all)
	}
	for _, id := range all[StateAccepted] {
		if b, _ := os.ReadFile(s.KeyPath(StateAccepted, id)); string(b) != string(pub) {
			t.Errorf("accepted %s holds %q", id, b)
		}
	}
	accepted := map[string]int{}
	for _, e := range ev.all() {
		if e.Data["act"] == "accept" {
			accepted[e.Data["id"].(string)]++
		}
	}
	for _, out := range outs {
		for _, line := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "EVENT" && f[1] == "accept" {
				accepted[f[2]]++
			}
		}
	}
	for i := 0; i < 30; i++ {
		if id := fmt.Sprintf("p-%02d", i); accepted[id] != 1 {
			t.Errorf("%s accepted %d times over all processes", id, accepted[id])
		}
	}
}

package keys

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAuthenticate(t *testing.T) {
	pubA := testPub(t, "minion1")
	pubB := testPub(t, "proxy1")
	pubA2 := append(append([]byte(nil), pubA...), '\n') // equal to pubA after strip()
	ev := func(result bool, act string, id string, pub []byte) map[string]any {
		m := map[string]any{"result": result, "id": id, "pub": string(pub)}
		if act != "" {
			m["act"] = act
		}
		return m
	}
	type files map[State][]byte // content of the id's file per state (nil: absent)
	cases := []struct {
		name    string
		opts    func(*Options)
		setup   files
		pendDir bool // minions_pre/<id> is a directory
		id      string
		pub     []byte
		grains  map[string]any
		want    AuthResult
		event   map[string]any
		after   files
	}{
		{name: "1 invalid id dotdot", id: "..", pub: pubA, want: AuthReject},
		{name: "1 invalid id slash", id: "a/b", pub: pubA, want: AuthReject},
		{name: "1 invalid id empty", id: "", pub: pubA, want: AuthReject},
		{name: "oversized key", id: "m", pub: make([]byte, MaxPubSize+1), want: AuthReject},
		{
			name: "2 max_minions full",
			opts: func(o *Options) {
				o.MaxMinions = 2
				o.ConnectedMinions = func(string) (int, bool) { return 3, false }
			},
			id: "m", pub: pubA, want: AuthFull, event: ev(false, "full", "m", pubA), after: files{},
		},
		{
			name: "2 max_minions but already connected",
			opts: func(o *Options) {
				o.MaxMinions = 2
				o.ConnectedMinions = func(string) (int, bool) { return 3, true }
			},
			id: "m", pub: pubA, want: AuthPending, event: ev(true, "pend", "m", pubA),
			after: files{StatePending: pubA},
		},
		{
			name: "2 max_minions reached exactly is not full",
			opts: func(o *Options) {
				o.MaxMinions = 2
				o.ConnectedMinions = func(string) (int, bool) { return 2, false }
			},
			id: "m", pub: pubA, want: AuthPending, event: ev(true, "pend", "m", pubA),
			after: files{StatePending: pubA},
		},
		{
			name: "4 open mode new key",
			opts: func(o *Options) { o.OpenMode = true },
			id:   "m", pub: pubA, want: AuthAccept, event: ev(true, "accept", "m", pubA),
			after: files{StateAccepted: pubA},
		},
		{
			name:  "4 open mode replaces key and ignores rejected",
			opts:  func(o *Options) { o.OpenMode = true },
			setup: files{StateAccepted: pubA, StateRejected: pubA},
			id:    "m", pub: pubB, want: AuthAccept, event: ev(true, "accept", "m", pubB),
			after: files{StateAccepted: pubB, StateRejected: pubA},
		},
		{
			name:  "4 open mode empty key",
			opts:  func(o *Options) { o.OpenMode = true },
			setup: files{StateAccepted: pubA},
			id:    "m", pub: nil, want: AuthReject,
			after: files{StateAccepted: pubA},
		},
		{
			name:  "5 rejected",
			setup: files{StateRejected: pubA},
			id:    "m", pub: pubA, want: AuthReject, event: ev(false, "", "m", pubA),
			after: files{StateRejected: pubA},
		},
		{
			name:  "5 rejected wins over accepted",
			setup: files{StateRejected: pubA, StateAccepted: pubA},
			id:    "m", pub: pubA, want: AuthReject, event: ev(false, "", "m", pubA),
			after: files{StateRejected: pubA, StateAccepted: pubA},
		},
		{
			name:  "6 accepted same key",
			setup: files{StateAccepted: pubA},
			id:    "m", pub: pubA, want: AuthAccept, event: ev(true, "accept", "m", pubA),
			after: files{StateAccepted: pubA},
		},
		{
			name:  "6 accepted equal after strip",
			setup: files{StateAccepted: pubA},
			id:    "m", pub: pubA2, want: AuthAccept, event: ev(true, "accept", "m", pubA2),
			after: files{StateAccepted: pubA},
		},
		{
			name:  "6 accepted different key is denied",
			setup: files{StateAccepted: pubA},
			id:    "m", pub: pubB, want: AuthReject, event: ev(false, "denied", "m", pubB),
			after: files{StateAccepted: pubA, StateDenied: pubB},
		},
		{
			name: "7 new key pending",
			id:   "m", pub: pubA, want: AuthPending, event: ev(true, "pend", "m", pubA),
			after: files{StatePending: pubA},
		},
		{
			name:    "7 pending path is a directory",
			pendDir: true,
			id:      "m", pub: pubA, want: AuthReject, event: ev(false, "", "m", pubA),
			after: files{},
		},
		{
			name: "7 new key autorejected",
			opts: func(o *Options) { o.AutorejectFile = "REJECT:m*" },
			id:   "m", pub: pubA, want: AuthReject, event: ev(false, "reject", "m", pubA),
			after: files{StateRejected: pubA},
		},
		{
			name: "3 autoreject beats auto_accept",
			opts: func(o *Options) { o.AutorejectFile = "REJECT:m"; o.AutoAccept = true },
			id:   "m", pub: pubA, want: AuthReject, event: ev(false, "reject", "m", pubA),
			after: files{StateRejected: pubA},
		},
		{
			name: "7 new key auto_accept",
			opts: func(o *Options) { o.AutoAccept = true },
			id:   "m", pub: pubA, want: AuthAccept, event: ev(true, "accept", "m", pubA),
			after: files{StateAccepted: pubA},
		},
		{
			name:  "8 pending same key stays pending",
			setup: files{StatePending: pubA},
			id:    "m", pub: pubA, want: AuthPending, event: ev(true, "pend", "m", pubA),
			after: files{StatePending: pubA},
		},
		{
			name:  "8 pending compared exactly",
			setup: files{StatePending: pubA},
			id:    "m", pub: pubA2, want: AuthReject, event: ev(false, "denied", "m", pubA2),
			after: files{StatePending: pubA, StateDenied: pubA2},
		},
		{
			name:  "8 pending autorejected is moved",
			opts:  func(o *Options) { o.AutorejectFile = "REJECT:m" },
			setup: files{StatePending: pubA},
			id:    "m", pub: pubB, want: AuthReject, event: ev(false, "reject", "m", pubB),
			after: files{StateRejected: pubA},
		},
		{
			name:  "8 pending autosigned same key",
			opts:  func(o *Options) { o.AutoAccept = true },
			setup: files{StatePending: pubA},
			id:    "m", pub: pubA, want: AuthAccept, event: ev(true, "accept", "m", pubA),
			after: files{StateAccepted: pubA},
		},
		{
			name:  "8 pending autosigned different key",
			opts:  func(o *Options) { o.AutoAccept = true },
			setup: files{StatePending: pubA},
			id:    "m", pub: pubB, want: AuthReject, event: ev(false, "", "m", pubB),
			after: files{StatePending: pubA, StateDenied: pubB},
		},
		{
			// Salt writes the key, then fails to load it; gsalt checks it
			// first and writes nothing.
			name: "9 corrupt key autosigned",
			opts: func(o *Options) { o.AutoAccept = true },
			id:   "m", pub: []byte("not a key"), want: AuthReject,
			after: files{},
		},
		{
			name:  "9 existing accepted file is not rewritten",
			setup: files{StateAccepted: pubA2},
			id:    "m", pub: pubA, want: AuthAccept, event: ev(true, "accept", "m", pubA),
			after: files{StateAccepted: pubA2},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rejectFile string
			s, keyEvents := newTestStore(t, func(o *Options) {
				if c.opts != nil {
					c.opts(o)
				}
				if pat, ok := cutPrefix(o.AutorejectFile, "REJECT:"); ok {
					rejectFile = filepath.Join(t.TempDir(), "autoreject.conf")
					if err := os.WriteFile(rejectFile, []byte(pat+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					o.AutorejectFile = rejectFile
				}
			})
			for st, data := range c.setup {
				put(t, s, st, c.id, data)
			}
			if c.pendDir {
				if err := os.Mkdir(s.KeyPath(StatePending, c.id), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			d, err := s.Authenticate(AuthRequest{ID: c.id, Pub: c.pub, AutosignGrains: c.grains})
			if err != nil {
				t.Fatal(err)
			}
			if d.Result != c.want {
				t.Errorf("result %s (%s), want %s", d.Result, d.Reason, c.want)
			}
			if !deepEqual(d.Event, c.event) {
				t.Errorf("event %v, want %v", d.Event, c.event)
			}
			if (d.MinionPub != nil) != (c.want == AuthAccept) {
				t.Errorf("MinionPub set=%v for %s", d.MinionPub != nil, d.Result)
			}
			if c.after != nil {
				for _, st := range ManagedStates() {
					got := readOrNil(s.KeyPath(st, c.id))
					if string(got) != string(c.after[st]) || (got == nil) != (c.after[st] == nil) {
						t.Errorf("%s file = %q, want %q", st, got, c.after[st])
					}
				}
				for _, st := range ManagedStates() {
					if c.after[st] == nil || c.setup[st] != nil {
						continue
					}
					if fi, err := os.Stat(s.KeyPath(st, c.id)); err == nil && fi.Mode().Perm() != 0o644 {
						t.Errorf("written %s key has mode %o", st, fi.Mode().Perm())
					}
				}
			}
			if len(keyEvents.all()) != 0 {
				t.Errorf("Authenticate fired salt/key events: %v", keyEvents.all())
			}
		})
	}
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return "", false
}

func TestAuthResultRet(t *testing.T) {
	if AuthReject.Ret() != false || AuthPending.Ret() != true || AuthFull.Ret() != "full" || AuthAccept.Ret() != nil {
		t.Fatal("Ret values differ from Salt's ret")
	}
}

func TestAutosignFile(t *testing.T) {
	pub := testPub(t, "minion1")
	cases := []struct {
		name       string
		content    string
		mode       os.FileMode
		permissive bool
		id         string
		want       AuthResult
	}{
		{"glob", "web*\n", 0o644, false, "web1", AuthAccept},
		{"glob no match", "web*\n", 0o644, false, "db1", AuthPending},
		{"regex", "db\\d+\n", 0o644, false, "db12", AuthAccept},
		{"regex anchored at end", "db\\d+\n", 0o644, false, "db12x", AuthPending},
		{"comment ignored", "# db*\n#db1\n", 0o644, false, "db1", AuthPending},
		{"entry stripped", "   db1  \r\n", 0o600, false, "db1", AuthAccept},
		{"world writable refused", "*\n", 0o646, true, "db1", AuthPending},
		{"group writable refused", "*\n", 0o664, false, "db1", AuthPending},
		// Running as root, Salt also wants the file's group among the
		// master user's supplementary groups; the test file is owned by
		// our primary group, so root is refused and others allowed.
		{"group writable permissive", "*\n", 0o664, true, "db1", map[bool]AuthResult{true: AuthPending, false: AuthAccept}[os.Getuid() == 0]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "autosign.conf")
			if err := os.WriteFile(f, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(f, c.mode); err != nil {
				t.Fatal(err)
			}
			s, _ := newTestStore(t, func(o *Options) {
				o.AutosignFile = f
				o.PermissivePKIAccess = c.permissive
			})
			d, err := s.Authenticate(AuthRequest{ID: c.id, Pub: pub})
			if err != nil {
				t.Fatal(err)
			}
			if d.Result != c.want {
				t.Errorf("%s: got %s, want %s", c.id, d.Result, c.want)
			}
		})
	}
}

func TestAutosignStubs(t *testing.T) {
	pub := testPub(t, "minion1")
	old := time.Now().Add(-3 * time.Hour)
	cases := []struct {
		name     string
		timeout  time.Duration
		stubAge  time.Time
		setup    State // where the key is before
		want     AuthResult
		stubGone bool
	}{
		{"fresh stub autosigns", 0, time.Now(), "", AuthAccept, true},
		{"expired stub purged", 0, old, "", AuthPending, true},
		{"no purge when timeout negative", -1, old, "", AuthAccept, true},
		{"long timeout keeps old stub", 4 * time.Hour, old, "", AuthAccept, true},
		{"stub consumed by an accepted key", 0, time.Now(), StateAccepted, AuthAccept, true},
		{"stub consumed even when rejected", 0, time.Now(), StateRejected, AuthReject, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newTestStore(t, func(o *Options) { o.AutosignTimeout = c.timeout })
			stub := filepath.Join(s.PKIDir(), "minions_autosign", "m")
			if err := os.WriteFile(stub, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(stub, c.stubAge, c.stubAge); err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(s.PKIDir(), "minions_autosign", "other")
			if err := os.WriteFile(other, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(other, c.stubAge, c.stubAge); err != nil {
				t.Fatal(err)
			}
			if c.setup != "" {
				put(t, s, c.setup, "m", pub)
			}
			d, err := s.Authenticate(AuthRequest{ID: "m", Pub: pub})
			if err != nil {
				t.Fatal(err)
			}
			if d.Result != c.want {
				t.Errorf("got %s, want %s", d.Result, c.want)
			}
			if _, err := os.Stat(stub); (err != nil) != c.stubGone {
				t.Errorf("stub exists=%v", err == nil)
			}
			otherPurged := c.stubAge.Equal(old) && (c.timeout == 0 || c.timeout == DefaultAutosignTimeout)
			if _, err := os.Stat(other); (err != nil) != otherPurged {
				t.Errorf("other stub exists=%v, want purged=%v", err == nil, otherPurged)
			}
		})
	}
}

func TestAutosignGrains(t *testing.T) {
	pub := testPub(t, "minion1")
	dir := t.TempDir()
	for name, content := range map[string]string{
		"role":    "# web servers\n  web \ndb\n",
		"num":     "5\n",
		"flag":    "True\n",
		"list":    "['a', 'b']\n",
		"nothing": "None\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "open"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "open"), 0o666); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		grains map[string]any
		want   AuthResult
	}{
		{map[string]any{"role": "web"}, AuthAccept},
		{map[string]any{"role": "db"}, AuthAccept},
		{map[string]any{"role": "# web servers"}, AuthPending},
		{map[string]any{"role": "mail"}, AuthPending},
		{map[string]any{"num": int64(5)}, AuthAccept},
		{map[string]any{"flag": true}, AuthAccept},
		{map[string]any{"list": []any{"a", "b"}}, AuthAccept},
		{map[string]any{"nothing": nil}, AuthAccept},
		{map[string]any{"open": "x"}, AuthPending}, // world-writable file ignored
		{map[string]any{"absent": "web"}, AuthPending},
		{nil, AuthPending},
	}
	for i, c := range cases {
		s, _ := newTestStore(t, func(o *Options) { o.AutosignGrainsDir = dir })
		d, err := s.Authenticate(AuthRequest{ID: "m", Pub: pub, AutosignGrains: c.grains})
		if err != nil {
			t.Fatal(err)
		}
		if d.Result != c.want {
			t.Errorf("case %d %v: got %s, want %s", i, c.grains, d.Result, c.want)
		}
	}
}

// TestMalformedKeysNeverStored: under auto_accept (and without it) a key
// that is not an RSA public key of at least 2048 bits in one of Salt's PEM
// forms is refused with {ret: false} before any file is written, and the
// real minion of that id can still be accepted afterwards. Ids holding
// control characters are refused like path characters.
func TestMalformedKeysNeverStored(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, _ := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	smallDER, _ := x509.MarshalPKIXPublicKey(&small.PublicKey)
	real := testPub(t, "minion1")
	privPEM, err := os.ReadFile("../../testdata/vectors/pki/minion1/minion.pem")
	if err != nil {
		t.Fatal(err)
	}
	pemOf := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	bad := map[string][]byte{
		"not a key":          []byte("not a key"),
		"armoured garbage":   pemOf("PUBLIC KEY", []byte("garbage garbage garbage")),
		"ec key":             pemOf("PUBLIC KEY", ecDER),
		"rsa private key":    privPEM,
		"integer":            []byte("12345"),
		"1024-bit rsa":       pemOf("PUBLIC KEY", smallDER),
		"certificate type":   pemOf("CERTIFICATE", smallDER),
		"text after the key": append(append([]byte{}, real...), []byte("trailing\n")...),
		"empty":              {},
	}
	for _, autoAccept := range []bool{true, false} {
		for name, pub := range bad {
			t.Run(fmt.Sprintf("auto_accept=%v/%s", autoAccept, name), func(t *testing.T) {
				s, _ := newTestStore(t, func(o *Options) { o.AutoAccept = autoAccept })
				d, err := s.Authenticate(AuthRequest{ID: "m1", Pub: pub})
				if err != nil {
					t.Fatal(err)
				}
				if d.Result != AuthReject || d.Result.Ret() != false || d.Event != nil {
					t.Fatalf("decision %s %v event %v, want a refusal without event", d.Result, d.Reason, d.Event)
				}
				for _, st := range ManagedStates() {
					if b := readOrNil(s.KeyPath(st, "m1")); b != nil {
						t.Fatalf("%s file written: %q", st, b)
					}
				}
				// The genuine minion is not locked out.
				d, err = s.Authenticate(AuthRequest{ID: "m1", Pub: real})
				if err != nil {
					t.Fatal(err)
				}
				want := AuthPending
				if autoAccept {
					want = AuthAccept
				}
				if d.Result != want {
					t.Fatalf("the real minion got %s (%s), want %s", d.Result, d.Reason, want)
				}
			})
		}
	}
	for _, id := range []string{"a\nb", "a\rb", "\x1b[31mred", "del\x7f", "c1\u0085x", "tab\tid"} {
		t.Run(fmt.Sprintf("id %q", id), func(t *testing.T) {
			s, _ := newTestStore(t, func(o *Options) { o.AutoAccept = true })
			d, err := s.Authenticate(AuthRequest{ID: id, Pub: real})
			if err != nil {
				t.Fatal(err)
			}
			if d.Result != AuthReject {
				t.Fatalf("id %q: %s, want reject", id, d.Result)
			}
			ents, _ := os.ReadDir(filepath.Join(s.PKIDir(), "minions"))
			if len(ents) != 0 {
				t.Fatalf("files written for id %q: %v", id, ents)
			}
		})
	}
}

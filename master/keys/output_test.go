package keys

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/wire/crypt"
)

// TestSaltKeyVectors reproduces byte for byte the stdout recorded from a
// real salt-key against the reference pki (crypto.jsonl, kind
// salt_key_output).
func TestSaltKeyVectors(t *testing.T) {
	recs, err := vectors.ReadJSONL(filepath.Join(vectorsDir, "crypto.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	pki := filepath.Join(t.TempDir(), "pki")
	copyTree(t, filepath.Join(vectorsDir, "pki", "master"), pki)
	s, err := Open(Options{PKIDir: pki, SkipMasterKey: true, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	render := map[string]func() (string, error){
		"salt-key -F": func() (string, error) {
			l, err := s.FingerAll()
			return FormatKeys(l, false), err
		},
		"salt-key -F --out=json": func() (string, error) {
			l, err := s.FingerAll()
			return FormatJSON(l), err
		},
		"salt-key -f minion1": func() (string, error) {
			l, err := s.Finger("minion1")
			return FormatKeys(l, false), err
		},
	}
	seen := 0
	for _, r := range recs {
		if r.Str("kind") != "salt_key_output" {
			continue
		}
		seen++
		f, ok := render[r.Str("name")]
		if !ok {
			t.Errorf("no renderer for vector %q", r.Str("name"))
			continue
		}
		got, err := f()
		if err != nil {
			t.Fatal(err)
		}
		if want := r.Str("stdout"); got != want {
			t.Errorf("%s:\n got %q\nwant %q", r.Str("name"), got, want)
		}
	}
	if seen != len(render) {
		t.Fatalf("found %d salt_key_output vectors, want %d", seen, len(render))
	}
}

func TestFormatKeys(t *testing.T) {
	list := Listing{
		{State: StateAccepted, IDs: []string{"minion1", "Web2", "web1"}},
		{State: StatePending, IDs: []string{"bad1"}},
		{State: StateRejected, IDs: []string{}},
		{State: StateDenied, IDs: []string{}},
	}
	// Recorded from salt-key -L (3006) on the same key set.
	plain := "Accepted Keys:\nWeb2\nminion1\nweb1\nDenied Keys:\nUnaccepted Keys:\nbad1\nRejected Keys:\n"
	if got := FormatKeys(list, false); got != plain {
		t.Errorf("plain:\n got %q\nwant %q", got, plain)
	}
	colored := "\x1b[0;1;32mAccepted Keys:\x1b[0;0m\n\x1b[0;32mWeb2\x1b[0;0m\n\x1b[0;32mminion1\x1b[0;0m\n" +
		"\x1b[0;32mweb1\x1b[0;0m\n\x1b[0;1;35mDenied Keys:\x1b[0;0m\n\x1b[0;1;31mUnaccepted Keys:\x1b[0;0m\n" +
		"\x1b[0;31mbad1\x1b[0;0m\n\x1b[0;1;34mRejected Keys:\x1b[0;0m\n"
	if got := FormatKeys(list, true); got != colored {
		t.Errorf("colored:\n got %q\nwant %q", got, colored)
	}
	json := "{\n    \"minions\": [\n        \"minion1\",\n        \"Web2\",\n        \"web1\"\n    ],\n" +
		"    \"minions_pre\": [\n        \"bad1\"\n    ],\n    \"minions_rejected\": [],\n    \"minions_denied\": []\n}\n"
	if got := FormatJSON(list); got != json {
		t.Errorf("json:\n got %q\nwant %q", got, json)
	}
	if FormatKeys(nil, true) != "" || FormatJSON(nil) != "{}\n" {
		t.Error("empty listing output")
	}
	// salt-key -p: the key text is printed as is, the output right-stripped.
	p := Listing{{State: StateAccepted, IDs: []string{"m\x1b"}, Values: []string{"-----A-----\nxyz\n-----B-----\n"}}}
	if got, want := FormatKeys(p, false), "Accepted Keys:\nm?:  -----A-----\nxyz\n-----B-----\n"; got != want {
		t.Errorf("print:\n got %q\nwant %q", got, want)
	}
	if got, want := FormatJSON(p), "{\n    \"minions\": {\n        \"m\\u001b\": \"-----A-----\\nxyz\\n-----B-----\\n\"\n    }\n}\n"; got != want {
		t.Errorf("print json:\n got %q\nwant %q", got, want)
	}
	if got := jsonString("é\"\\\t\x01<>&\u2028"); got != "\"é\\\"\\\\\\t\\u0001<>&\u2028\"" {
		t.Errorf("jsonString = %q", got)
	}
}

func TestMessages(t *testing.T) {
	cases := []struct{ got, want string }{
		{FormatGoingTo(ActAccept), "The following keys are going to be accepted:\n"},
		{FormatGoingTo(ActReject), "The following keys are going to be rejected:\n"},
		{FormatGoingTo(ActDelete), "The following keys are going to be deleted:\n"},
		{FormatDone(ActAccept, Listing{{State: StateAccepted, IDs: []string{"web1", "Web2"}}}),
			"Key for minion web1 accepted.\nKey for minion Web2 accepted.\n"},
		{FormatDone(ActDelete, Listing{{State: StatePending, IDs: []string{"a"}}, {State: StateDenied, IDs: []string{"a"}}}),
			"Key for minion a deleted.\nKey for minion a deleted.\n"},
		{FormatNoMatch("nomatch", CLIInclude(ActReject, false, false, false, false)),
			"The key glob 'nomatch' does not match any unaccepted keys.\n"},
		{FormatNoMatch("x*", CLIInclude(ActAccept, true, true, false, true)),
			"The key glob 'x*' does not match any unaccepted, rejected or denied keys.\n"},
		{FormatNoMatch("x*", CLIInclude(ActReject, true, false, true, false)),
			"The key glob 'x*' does not match any unaccepted or accepted keys.\n"},
		{FormatNoMatch("x", CLIInclude(ActDelete, false, true, true, true)),
			"The key glob 'x' does not match any unaccepted, accepted, rejected or denied keys.\n"},
		{FormatGenKeys("ab:cd", false), "return:\n    ab:cd\n"},
		{FormatGenKeys("ab:cd", true), "\x1b[0;36mreturn\x1b[0;0m:\n    \x1b[0;32mab:cd\x1b[0;0m\n"},
		{FormatGenKeysJSON("ab:cd"), "{\n    \"return\": \"ab:cd\"\n}\n"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
	if p, yes := ProceedPrompt(ActDelete); p != "Proceed? [N/y] " || yes {
		t.Error("delete prompt")
	}
	if p, yes := ProceedPrompt(ActAccept); p != "Proceed? [n/Y] " || !yes {
		t.Error("accept prompt")
	}
}

func TestFilterOrder(t *testing.T) {
	m := Listing{
		{State: StateAccepted, IDs: []string{"a"}},
		{State: StatePending, IDs: []string{"p"}},
		{State: StateRejected, IDs: []string{"r"}},
		{State: StateDenied, IDs: []string{"d"}},
	}
	got := m.Filter(ActReject, Include{Accepted: true, Denied: true})
	want := Listing{m[1], m[0], m[3]}
	if !deepEqual(got, want) {
		t.Errorf("Filter(reject) = %v, want %v", got, want)
	}
	if got := m.Filter(ActDelete, Include{}); !deepEqual(got, m) {
		t.Errorf("Filter(delete) = %v", got)
	}
	if got := m.Filter(ActAccept, Include{}); !deepEqual(got, Listing{m[1]}) {
		t.Errorf("Filter(accept) = %v", got)
	}
	for _, c := range []struct {
		arg  string
		st   State
		all  bool
		fail bool
	}{{"acc", StateAccepted, false, false}, {"accepted", StateAccepted, false, false}, {"un", StatePending, false, false},
		{"pre", StatePending, false, false}, {"rej", StateRejected, false, false}, {"denied", StateDenied, false, false},
		{"all", "", true, false}, {"bogus", "", false, true}} {
		st, all, err := ParseListArg(c.arg)
		if st != c.st || all != c.all || (err != nil) != c.fail {
			t.Errorf("ParseListArg(%q) = %s, %v, %v", c.arg, st, all, err)
		}
	}
}

func TestGenKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	fp, err := GenKeys("foo", dir, 1024)
	if err != nil {
		t.Fatal(err)
	}
	want, err := crypt.FingerprintFile(filepath.Join(dir, "foo.pub"), "sha256")
	if err != nil || fp != want || fp == "" {
		t.Fatalf("fingerprint %q, want %q (%v)", fp, want, err)
	}
	for f, mode := range map[string]os.FileMode{"foo.pem": 0o400, "foo.pub": 0o644} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v mode %o", f, err, fi.Mode().Perm())
		}
	}
	// An existing key is kept, like Salt.
	before, _ := os.ReadFile(filepath.Join(dir, "foo.pem"))
	fp2, err := GenKeys("foo", dir, 1024)
	after, _ := os.ReadFile(filepath.Join(dir, "foo.pem"))
	if err != nil || fp2 != fp || string(before) != string(after) {
		t.Fatalf("second GenKeys: %q %v, key changed=%v", fp2, err, string(before) != string(after))
	}
	if _, err := GenKeys("../x", dir, 1024); err == nil {
		t.Fatal("GenKeys accepted a path as name")
	}
}

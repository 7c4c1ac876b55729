package keys

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/stringutils"
)

// saltKey runs the real salt-key from GSALT_SALT_SRC against confDir and
// returns its stdout.
type saltKey struct {
	t       *testing.T
	src     string
	pyPath  string
	confDir string
}

func (k *saltKey) run(args ...string) string {
	k.t.Helper()
	full := append([]string{filepath.Join(k.src, "scripts", "salt-key"), "-c", k.confDir}, args...)
	cmd := exec.Command("/usr/bin/python3", full...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+k.pyPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		k.t.Fatalf("salt-key %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// TestInteropSaltKey checks, against the real salt-key, that a pki_dir
// written by Store reads the same in both tools and that what each tool
// changes the other sees, with byte-identical listings and fingerprints.
func TestInteropSaltKey(t *testing.T) {
	src := os.Getenv("GSALT_SALT_SRC")
	if src == "" {
		t.Skip("interop with real salt-key skipped: set GSALT_SALT_SRC=/work/salt-src to run it")
	}
	if testing.Short() {
		t.Skip("interop with real salt-key skipped in -short mode")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("interop with real salt-key skipped: /usr/bin/python3 not found")
	}
	shim := saltpeer.Pyshim()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	pki := filepath.Join(root, "pki")
	cache := filepath.Join(root, "cache")
	conf := filepath.Join(root, "conf")
	for _, d := range []string{conf, filepath.Join(root, "sock")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyTree(t, filepath.Join(vectorsDir, "pki", "master"), pki)
	cfg := fmt.Sprintf("pki_dir: %s\ncachedir: %s\nsock_dir: %s\nlog_file: %s\nkey_logfile: %s\nuser: %s\n",
		pki, cache, filepath.Join(root, "sock"), filepath.Join(root, "master.log"), filepath.Join(root, "key.log"), u.Username)
	if err := os.WriteFile(filepath.Join(conf, "master"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	sk := &saltKey{t: t, src: src, pyPath: src + string(os.PathListSeparator) + shim, confDir: conf}

	ev := &eventLog{}
	s, err := Open(Options{PKIDir: pki, CacheDir: cache, Event: ev.fire, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	pubA, pubB := testPub(t, "minion1"), testPub(t, "proxy1")
	// Our side fills every state: pending web1 and Api2 via _auth, a denied
	// key for minion1 (accepted with another key), a rejected db1.
	for _, req := range []AuthRequest{
		{ID: "web1", Pub: pubA}, {ID: "Api2", Pub: pubB}, {ID: "db1", Pub: pubA}, {ID: "minion1", Pub: pubB},
	} {
		if _, err := s.Authenticate(req); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Reject("db1"); err != nil {
		t.Fatal(err)
	}

	compare := func(what, salt, ours string) {
		t.Helper()
		if salt != ours {
			t.Errorf("%s differs:\nsalt-key: %q\ngsalt:    %q", what, salt, ours)
		}
	}
	listing := func() Listing {
		t.Helper()
		l, err := s.ListAll()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	compare("-L", sk.run("-L"), FormatKeys(listing(), false))
	compare("-L --out json", sk.run("-L", "--out", "json"), FormatJSON(listing()))
	compare("-L --force-color", sk.run("-L", "--force-color"), FormatKeys(listing(), true))
	fingers, err := s.FingerAll()
	if err != nil {
		t.Fatal(err)
	}
	compare("-F", sk.run("-F"), FormatKeys(fingers, false))
	compare("-F --out json", sk.run("-F", "--out", "json"), FormatJSON(fingers))
	printed, err := s.Print("minion1")
	if err != nil {
		t.Fatal(err)
	}
	compare("-p minion1", sk.run("-p", "minion1"), FormatKeys(printed, false))

	// salt-key accepts what our _auth put in pending; we see it accepted.
	m, err := s.Match(false, "web*")
	if err != nil {
		t.Fatal(err)
	}
	inc := CLIInclude(ActAccept, false, false, false, false)
	shown := m.Filter(ActAccept, inc)
	out := sk.run("-a", "web*", "-y")
	after, err := s.DictMatch(shown)
	if err != nil {
		t.Fatal(err)
	}
	compare("-a web* -y", out, FormatGoingTo(ActAccept)+FormatKeys(shown, false)+FormatDone(ActAccept, after))
	if st := stateOf(s, "web1"); !deepEqual(st, []State{StateAccepted}) {
		t.Errorf("after salt-key -a, web1 is in %v", st)
	}
	compare("-r nomatch", sk.run("-r", "nomatch", "-y"), FormatNoMatch("nomatch", CLIInclude(ActReject, false, false, false, false)))

	// salt-key deletes; the dropfile it creates is the one we create.
	_ = os.Remove(filepath.Join(cache, ".dfn"))
	m, err = s.Match(false, "db1")
	if err != nil {
		t.Fatal(err)
	}
	out = sk.run("-d", "db1", "-y")
	compare("-d db1 -y", out, FormatGoingTo(ActDelete)+FormatKeys(m, false)+FormatDone(ActDelete, m))
	if st := stateOf(s, "db1"); len(st) != 0 {
		t.Errorf("after salt-key -d, db1 is in %v", st)
	}
	if fi, err := os.Stat(filepath.Join(cache, ".dfn")); err != nil || fi.Mode().Perm() != 0o400 {
		t.Errorf("salt-key dropfile: %v", err)
	}

	// Our changes are what salt-key then lists.
	if _, err := s.AcceptWith(Include{Denied: true}, "minion1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reject("Api2"); err != nil {
		t.Fatal(err)
	}
	compare("-L after gsalt changes", sk.run("-L"), FormatKeys(listing(), false))
	compare("-l rej", sk.run("-l", "rej"), FormatKeys(Listing{{State: StateRejected, IDs: mustState(t, s, StateRejected)}}, false))
	fingers, err = s.Finger("*1")
	if err != nil {
		t.Fatal(err)
	}
	compare("-f *1 --out json", sk.run("-f", "*1", "--out", "json"), FormatJSON(fingers))

	// A key pair from GenKeys has the fingerprint salt-key computes.
	gdir := filepath.Join(root, "gen")
	fp, err := GenKeys("gk", gdir, 2048)
	if err != nil {
		t.Fatal(err)
	}
	compare("--gen-keys on an existing key", sk.run("--gen-keys", "gk", "--gen-keys-dir", gdir), FormatGenKeys(fp, false))
}

func mustState(t *testing.T, s *Store, st State) []string {
	t.Helper()
	ids, err := s.ListState(st)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestInteropSaltHelpers compares ValidID, ExprMatch and the autosign
// grains check with Salt's own valid_id, expr_match and
// AutoKey.check_autosign_grains, run by the real Salt modules.
func TestInteropSaltHelpers(t *testing.T) {
	src := os.Getenv("GSALT_SALT_SRC")
	if src == "" {
		t.Skip("interop with Salt's valid_id/expr_match skipped: set GSALT_SALT_SRC=/work/salt-src to run it")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("interop skipped: /usr/bin/python3 not found")
	}
	shim := saltpeer.Pyshim()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newTestStore(t, nil)
	pki := s.PKIDir()
	outside := t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(pki, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("minions", filepath.Join(pki, "tominions")); err != nil {
		t.Fatal(err)
	}
	grainsDir := filepath.Join(t.TempDir(), "grains")
	if err := os.MkdirAll(grainsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"role": "# c\n web\r\ndb\n", "num": "5\n1.5\n", "flag": "True\n",
		"list": "['a', 1, None]\n", "map": "{'k': 'v'}\n", "float": "1e+21\n"} {
		if err := os.WriteFile(filepath.Join(grainsDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ids := []string{"minion1", "", ".", "..", "a/b", `a\b`, "a\x00", "escape", "tominions", "minions", "master.pem", "ünï"}
	exprs := [][2]string{{"web1", "web*"}, {"web1", `web\d`}, {"abc", "a|b"}, {"WEB1", "(?i)web1"}, {"x", "[!"},
		{"web1", `web1\Z`}, {"db-1", "db-[0-9]"}, {"a.b", "a.b"}, {"axb", "a.b"}, {"a", "(?P<n>a)"}, {"a]", "[]]]"}}
	grains := []any{
		map[string]any{"role": "web"}, map[string]any{"role": "# c"}, map[string]any{"role": "mail"},
		map[string]any{"num": 5}, map[string]any{"num": 1.5}, map[string]any{"flag": true},
		map[string]any{"list": []any{"a", 1, nil}}, map[string]any{"map": map[string]any{"k": "v"}},
		map[string]any{"float": 1e21}, map[string]any{"absent": "x"},
	}
	in, err := jsonMarshal(map[string]any{"pki": pki, "ids": ids, "exprs": exprs, "grains": grains,
		"grains_dir": grainsDir, "user": u.Username})
	if err != nil {
		t.Fatal(err)
	}
	script := `
import json, sys
import salt.utils.verify, salt.utils.stringutils, salt.daemons.masterapi
req = json.load(sys.stdin)
opts = {"pki_dir": req["pki"], "user": req["user"], "permissive_pki_access": False,
        "autosign_grains_dir": req["grains_dir"]}
ak = salt.daemons.masterapi.AutoKey(opts)
print(json.dumps({
  "ids": [salt.utils.verify.valid_id(opts, i) for i in req["ids"]],
  "exprs": [salt.utils.stringutils.expr_match(l, e) for l, e in req["exprs"]],
  "grains": [ak.check_autosign_grains(g) for g in req["grains"]],
}))
`
	cmd := exec.Command("/usr/bin/python3", "-c", script)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+src+string(os.PathListSeparator)+shim)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var got struct {
		IDs    []bool `json:"ids"`
		Exprs  []bool `json:"exprs"`
		Grains []bool `json:"grains"`
	}
	if err := jsonUnmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i, id := range ids {
		if ours := ValidID(pki, id); ours != got.IDs[i] {
			t.Errorf("ValidID(%q) = %v, Salt says %v", id, ours, got.IDs[i])
		}
	}
	for i, e := range exprs {
		if ours := stringutils.ExprMatch(e[0], e[1]); ours != got.Exprs[i] {
			t.Errorf("stringutils.ExprMatch(%q, %q) = %v, Salt says %v", e[0], e[1], ours, got.Exprs[i])
		}
	}
	gs, _ := newTestStore(t, func(o *Options) { o.AutosignGrainsDir = grainsDir })
	for i, g := range grains {
		// JSON numbers arrive in Python as int or float; give Go the same.
		m := g.(map[string]any)
		if ours := gs.checkAutosignGrains(m); ours != got.Grains[i] {
			t.Errorf("autosign grains %v: ours %v, Salt says %v", g, ours, got.Grains[i])
		}
	}
}

// Package salttest runs execution functions (and through state.single,
// state functions) beside real Salt 3006 and compares the returns and the
// files they leave, for golden and live tests of gsalt's modules. Test
// code only: the tests of modules/builtin and states/builtin use it.
package salttest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	_ "embed"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// saltCallsPy is the Python side: it runs the calls through Salt's loader.
//
//go:embed salt_calls.py
var saltCallsPy string

// updateGolden regenerates the golden files of the suites a test runs
// (testdata/golden/<suite>.json) with real Salt 3006's loader, through
// testdata/salt_calls.py:
//
//	GSALT_SALT_SRC=/work/salt-src go test ./modules/builtin -run TestSlsutil -update-golden
var updateGolden = flag.Bool("update-golden", false, "regenerate the golden files of the suites run, with real Salt (needs GSALT_SALT_SRC)")

// Call is one execution-function call of a golden suite. "{dir}" in
// arguments, options and file contents stands for the call's own
// temporary directory, "{srv}" for the suite's file_roots directory.
type Call struct {
	Name   string
	Fun    string
	Args   []any
	Kwargs []any // name, value pairs in order
	// files are written below {dir} before the call; every regular file
	// below {dir} is compared afterwards.
	Files map[string]string
	// Opts are minion options set for this call only.
	Opts []any
	// Sorted compares lists and maps sorted (results whose order comes
	// from the file system or a hash).
	Sorted bool
}

// Suite is a list of calls run with one set of grains, pillar and
// options, on one file_roots tree.
type Suite struct {
	Name           string
	Grains, Pillar *payload.Map
	Opts           []any
	Srv            map[string]string
	Calls          []Call
	// Live: the suite depends on this machine, so there is no golden
	// file; with GSALT_SALT_SRC the test runs Salt now and compares.
	Live bool
	// RealGrains: Salt computes its grains (live suites only) and gsalt
	// gets the same ones.
	RealGrains bool
	// FilesUnder restricts the file comparison to paths with this prefix.
	FilesUnder string
	// Parallel runs the calls concurrently (t.Parallel, so at most
	// -parallel at once). Only for suites whose calls are independent:
	// each works in its own {dir}, reads {srv} and does not fetch
	// salt:// files (the suite's file client cache is shared).
	Parallel bool
	// Normalize, when set, rewrites both returns before comparing
	// (volatile values such as uptime).
	Normalize func(name string, v any) any
	// AfterSalt, when set, runs after real Salt ran the calls (live
	// suites, -update-golden) and before gsalt runs them: it puts back
	// what Salt's run changed outside the calls' own folders.
	AfterSalt func()
}

// Pairs builds an ordered map from name/value pairs.
func Pairs(kv []any) *payload.Map {
	m := &payload.Map{}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Set(kv[i].(string), kv[i+1])
	}
	return m
}

// subst replaces {dir} and {srv} in every string of v.
func subst(v any, dir, srv string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(strings.ReplaceAll(x, "{dir}", dir), "{srv}", srv)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = subst(e, dir, srv)
		}
		return out
	case *payload.Map:
		out := &payload.Map{}
		for _, it := range x.Items() {
			out.SetKey(it.Key, subst(it.Value, dir, srv))
		}
		return out
	}
	return v
}

// unsubst puts {dir} and {srv} back.
func unsubst(v any, dir, srv string) any {
	switch x := v.(type) {
	case string:
		if dir != "" {
			x = strings.ReplaceAll(x, dir, "{dir}")
		}
		if srv != "" {
			x = strings.ReplaceAll(x, srv, "{srv}")
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = unsubst(e, dir, srv)
		}
		return out
	case *payload.Map:
		out := &payload.Map{}
		for _, it := range x.Items() {
			out.SetKey(unsubst(it.Key, dir, srv), unsubst(it.Value, dir, srv))
		}
		return out
	}
	return v
}

// sortedValue returns v with maps and lists sorted (by JSON text).
func sortedValue(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sortedValue(e)
		}
		sort.Slice(out, func(i, j int) bool { return anyJSON(out[i]) < anyJSON(out[j]) })
		return out
	case *payload.Map:
		keys := make([]payload.Item, 0, x.Len())
		keys = append(keys, x.Items()...)
		sort.Slice(keys, func(i, j int) bool { return payload.KeyString(keys[i].Key) < payload.KeyString(keys[j].Key) })
		out := &payload.Map{}
		for _, it := range keys {
			out.SetKey(it.Key, sortedValue(it.Value))
		}
		return out
	}
	return v
}

// plainValue passes v through JSON, as the golden values are.
func plainValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	out, err := vectors.Convert(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// SymlinkPrefix starts a WriteTree body that makes a symlink to the rest
// of the body instead of a file.
const SymlinkPrefix = "@symlink:"

// WriteTree creates files below dir (a body starting with SymlinkPrefix
// makes a symlink).
func WriteTree(t *testing.T, dir, srv string, files map[string]string) {
	t.Helper()
	for n, body := range files {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(n, "/") {
			continue
		}
		body = strings.ReplaceAll(strings.ReplaceAll(body, "{dir}", dir), "{srv}", srv)
		if target, ok := strings.CutPrefix(body, SymlinkPrefix); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ReadTree returns every regular file below dir (by relative path, in
// order), its text with dir put back as {dir} and srv (when not "") as
// {srv}.
func ReadTree(t *testing.T, dir, srv string) *payload.Map {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	out := &payload.Map{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out.Set(n, unsubst(strings.ToValidUTF8(string(b), "\ufffd"), dir, srv))
	}
	return out
}

// saltRun runs the suite's calls through real Salt and returns one entry
// per call: {return|error, files}, with the paths put back as {dir}/{srv}.
func saltRun(t *testing.T, src string, s Suite) (entries []*payload.Map, realGrains *payload.Map) {
	t.Helper()
	base := t.TempDir()
	srv := filepath.Join(base, "srv")
	WriteTree(t, srv, srv, s.Srv)
	if err := os.MkdirAll(srv, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(base, "minion")
	minion := "id: golden\nfile_client: local\nroot_dir: " + base + "/root\nenable_fqdns_grains: False\nipv6: False\nlog_level: error\n" +
		"file_roots:\n  base:\n    - " + srv + "\n"
	if err := os.WriteFile(conf, []byte(minion), 0o644); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	calls := []any{}
	for i, c := range s.Calls {
		dir := filepath.Join(base, "c", string(rune('a'+i/26)), string(rune('a'+i%26)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		WriteTree(t, dir, srv, c.Files)
		dirs = append(dirs, dir)
		args := subst(c.Args, dir, srv)
		if args == nil || len(c.Args) == 0 {
			args = []any{}
		}
		calls = append(calls, payload.NewMap("fun", c.Fun, "args", args,
			"kwargs", subst(Pairs(c.Kwargs), dir, srv), "opts", subst(Pairs(c.Opts), dir, srv)))
	}
	suite := payload.NewMap("grains", s.Grains, "pillar", s.Pillar, "opts", subst(Pairs(s.Opts), "", srv),
		"calls", calls, "real_grains", s.RealGrains)
	req, err := json.Marshal(payload.NewMap("conf", conf, "suites", []any{suite}))
	if err != nil {
		t.Fatal(err)
	}
	// Generous: a loaded machine runs Salt's loader and pip slowly.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := saltpeer.PythonCommand(ctx, src, saltCallsPy)
	cmd.Stdin = bytes.NewReader(req)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("salt: %v\n%s", err, stderr.String())
	}
	raw, err := vectors.Convert(stdout.Bytes())
	if err != nil {
		t.Fatalf("salt output: %v\n%s", err, stdout.String())
	}
	suiteOut := raw.([]any)[0].(*payload.Map)
	results := suiteOut.List("results")
	if g := suiteOut.Map("grains"); g != nil {
		realGrains = g
	}
	out := make([]*payload.Map, len(s.Calls))
	for i := range s.Calls {
		e := unsubst(results[i], dirs[i], srv).(*payload.Map)
		e.Set("files", ReadTree(t, dirs[i], srv))
		out[i] = e
	}
	return out, realGrains
}

// goldenPath is the suite's golden file.
func goldenPath(name string) string { return filepath.Join("testdata", "golden", name+".json") }

// loadSuite returns the expected entries: from Salt now (live suites or
// -update-golden, which also writes the golden file) or from the golden
// file.
func loadSuite(t *testing.T, s Suite) (map[string]*payload.Map, *payload.Map) {
	t.Helper()
	want := map[string]*payload.Map{}
	if s.Live || *updateGolden {
		src := saltpeer.Require(t)
		entries, grains := saltRun(t, src, s)
		if s.AfterSalt != nil {
			s.AfterSalt()
		}
		g := &payload.Map{}
		for i, c := range s.Calls {
			want[c.Name] = entries[i]
			g.Set(c.Name, entries[i])
		}
		if !s.Live {
			b, err := g.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, b, "", " "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			if err := os.MkdirAll(filepath.Dir(goldenPath(s.Name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(goldenPath(s.Name), pretty.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return want, grains
	}
	b, err := os.ReadFile(goldenPath(s.Name))
	if err != nil {
		t.Fatalf("%v (regenerate with -update-golden)", err)
	}
	raw, err := vectors.Convert(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range raw.(*payload.Map).Items() {
		want[payload.KeyString(it.Key)] = it.Value.(*payload.Map)
	}
	return want, nil
}

// Run runs every call of s through gsalt and compares the return
// (or error text) and the files with Salt's.
func Run(t *testing.T, s Suite, r *modules.Registry) {
	t.Helper()
	want, realGrains := loadSuite(t, s)
	if s.RealGrains && realGrains != nil {
		// gsalt runs with the grains Salt computed on this machine.
		s.Grains = realGrains
	}
	base := t.TempDir()
	srv := filepath.Join(base, "srv")
	if err := os.MkdirAll(srv, 0o755); err != nil {
		t.Fatal(err)
	}
	WriteTree(t, srv, srv, s.Srv)
	files := builtin.NewLocalFileClient(map[string][]string{"base": {srv}}, filepath.Join(base, "cache"), "sha256")
	for _, c := range s.Calls {
		t.Run(c.Name, func(t *testing.T) {
			if s.Parallel {
				t.Parallel()
			}
			w := want[c.Name]
			if w == nil {
				t.Fatalf("no golden entry for %q; regenerate with -update-golden", c.Name)
			}
			dir := t.TempDir()
			WriteTree(t, dir, srv, c.Files)
			opts := payload.NewMap("id", "golden", "file_client", "local", "file_roots", payload.NewMap("base", []any{srv}))
			for _, it := range subst(Pairs(s.Opts), dir, srv).(*payload.Map).Items() {
				opts.SetKey(it.Key, it.Value)
			}
			for _, it := range subst(Pairs(c.Opts), dir, srv).(*payload.Map).Items() {
				opts.SetKey(it.Key, it.Value)
			}
			grains, pillar := s.Grains, s.Pillar
			if grains == nil {
				grains = &payload.Map{}
			}
			if pillar == nil {
				pillar = &payload.Map{}
			}
			env := &modules.Env{ID: "golden", Registry: r, Opts: opts, Log: slog.New(slog.DiscardHandler),
				Grains: payload.DeepClone(grains).(*payload.Map), Pillar: payload.DeepClone(pillar).(*payload.Map),
				Services: map[string]any{"files": files}}
			var args []any
			if a, ok := subst(c.Args, dir, srv).([]any); ok {
				args = a
			}
			if len(c.Kwargs) > 0 {
				kw := subst(Pairs(c.Kwargs), dir, srv).(*payload.Map)
				kw.Set("__kwarg__", true)
				args = append(args, kw)
			}
			res := r.Execute(context.Background(), modules.Binder{}, env, c.Fun, args, nil)
			if msg, ok := w.Get("error"); ok {
				got := unsubst(plainValue(t, res.Return), dir, srv)
				gs, _ := got.(string)
				ws := payload.Text(msg)
				if strings.HasPrefix(ws, "Passed invalid arguments") {
					gs, _, _ = strings.Cut(gs, "\n")
				}
				if s.Normalize != nil {
					// Error texts carry the same volatile values (pids, paths).
					gs, _ = s.Normalize(c.Name, gs).(string)
					ws, _ = s.Normalize(c.Name, ws).(string)
				}
				if res.Retcode == 0 || gs != ws {
					t.Fatalf("got retcode %d %q\nwant error %q", res.Retcode, gs, ws)
				}
			} else {
				if res.Retcode != 0 && res.Out == "nested" {
					t.Fatalf("retcode %d: %v\nwant %s", res.Retcode, res.Return, anyJSON(w.Map("return")))
				}
				exp, _ := w.Get("return")
				got := unsubst(plainValue(t, res.Return), dir, srv)
				if s.Normalize != nil {
					got, exp = s.Normalize(c.Name, got), s.Normalize(c.Name, exp)
				}
				if c.Sorted {
					got, exp = sortedValue(got), sortedValue(exp)
				}
				if d := vectors.Equal(got, exp); d != "" {
					t.Fatalf("return differs: %s\ngot  %s\nwant %s", d, anyJSON(got), anyJSON(exp))
				}
			}
			if wf := w.Map("files"); wf != nil {
				gf := ReadTree(t, dir, srv)
				if s.FilesUnder != "" {
					gf, wf = filesWithPrefix(gf, s.FilesUnder), filesWithPrefix(wf, s.FilesUnder)
				}
				if d := vectors.Equal(gf, wf); d != "" {
					t.Fatalf("files differ: %s\ngot  %s\nwant %s", d, anyJSON(gf), anyJSON(wf))
				}
			}
		})
	}
}

// anyJSON is v as JSON text for messages.
func anyJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// filesWithPrefix keeps the entries of files whose path has prefix.
func filesWithPrefix(files *payload.Map, prefix string) *payload.Map {
	out := &payload.Map{}
	for _, it := range files.Items() {
		if strings.HasPrefix(payload.KeyString(it.Key), prefix) {
			out.SetKey(it.Key, it.Value)
		}
	}
	return out
}

// FakeCommands puts shell scripts named names, each doing nothing and
// exiting 0, first on PATH for the rest of the test (for Salt and gsalt
// alike), in place of daemons a golden call would start.
func FakeCommands(t *testing.T, names ...string) {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

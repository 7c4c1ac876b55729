package fileserver_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/fileserver"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/payload"
)

const goldenFile = "testdata/golden.json"

type request struct {
	Name string         `json:"name"`
	Cmd  string         `json:"cmd"`
	Load map[string]any `json:"load"`
}

type scenario struct {
	Name  string         `json:"name"`
	Opts  map[string]any `json:"opts"`
	Cases []request      `json:"cases"`
}

type goldenCase struct {
	request
	Want any    `json:"want"`
	Exc  string `json:"exc,omitempty"`
}

type goldenScenario struct {
	Name  string         `json:"name"`
	Opts  map[string]any `json:"opts"`
	Cases []goldenCase   `json:"cases"`
}

func kv(a ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i < len(a); i += 2 {
		m[a[i].(string)] = a[i+1]
	}
	return m
}

// listCases asks the four lists for each saltenv/prefix pair.
func listCases(pairs ...[2]any) []request {
	var out []request
	for _, cmd := range []string{"_file_list", "_dir_list", "_file_list_emptydirs", "_symlink_list"} {
		for _, p := range pairs {
			load := kv()
			name := cmd
			if p[0] != nil {
				load["saltenv"] = p[0]
				name += fmt.Sprintf(" saltenv=%v", p[0])
			}
			if p[1] != nil {
				load["prefix"] = p[1]
				name += fmt.Sprintf(" prefix=%v", p[1])
			}
			out = append(out, request{name, cmd, load})
		}
	}
	return out
}

// pathCases asks _file_find, _file_hash, _file_hash_and_stat and
// _serve_file (loc 0) about each path in saltenv.
func pathCases(saltenv any, paths ...any) []request {
	var out []request
	for _, p := range paths {
		for _, cmd := range []string{"_file_find", "_file_hash", "_file_hash_and_stat", "_serve_file"} {
			load := kv("path", p, "saltenv", saltenv)
			if cmd == "_serve_file" {
				load["loc"] = 0
			}
			out = append(out, request{fmt.Sprintf("%s %q in %v", cmd, p, saltenv), cmd, load})
		}
	}
	return out
}

func roots(m map[string][]string) map[string]any {
	out := map[string]any{}
	for env, dirs := range m {
		l := []any{}
		for _, d := range dirs {
			l = append(l, "@BASE@/srv/"+d)
		}
		out[env] = l
	}
	return out
}

var baseRoots = roots(map[string][]string{"base": {"base1", "base2"}, "dev": {"dev"}})

// scenarios are the requests the goldens answer.
func scenarios() []scenario {
	var def []request
	def = append(def,
		request{"envs", "_file_envs", kv()},
		request{"envs sources", "_file_envs", kv("sources", true)},
		request{"envs back gitfs", "_file_envs", kv("back", "gitfs")},
		request{"envs back roots sources", "_file_envs", kv("back", "roots", "sources", true)},
		request{"envs unexpected key", "_file_envs", kv("id", "m1")},
	)
	def = append(def, listCases(
		[2]any{"base", nil}, [2]any{"base", ""}, [2]any{"base", "sub"}, [2]any{"base", "/sub/"},
		[2]any{"base", "su"}, [2]any{"base", "nomatch"}, [2]any{"dev", ""}, [2]any{"nope", ""},
		[2]any{nil, ""}, [2]any{"base", nil}, [2]any{1, ""},
	)...)
	def = append(def,
		request{"_file_list prefix None", "_file_list", kv("saltenv", "base", "prefix", nil)},
		request{"_file_list prefix int", "_file_list", kv("saltenv", "base", "prefix", 5)},
		request{"_symlink_list prefix None", "_symlink_list", kv("saltenv", "base", "prefix", nil)},
		request{"_file_list fsbackend gitfs", "_file_list", kv("saltenv", "base", "fsbackend", "gitfs")},
		request{"_file_list fsbackend -roots", "_file_list", kv("saltenv", "base", "fsbackend", "-roots")},
		request{"_file_list fsbackend roots,gitfs", "_file_list", kv("saltenv", "base", "fsbackend", "gitfs,roots")},
		request{"_file_list fsbackend -gitfs", "_file_list", kv("saltenv", "base", "fsbackend", "-gitfs", "prefix", "sub")},
		request{"_dir_list fsbackend list", "_dir_list", kv("saltenv", "base", "fsbackend", []any{"roots"})},
		request{"_file_list_emptydirs fsbackend ignored", "_file_list_emptydirs", kv("saltenv", "base", "fsbackend", "gitfs")},
		request{"_symlink_list fsbackend gitfs", "_symlink_list", kv("saltenv", "base", "fsbackend", "gitfs")},
	)
	def = append(def, pathCases("base",
		"top.sls", "dup.txt", "only2.txt", "sub/b.txt", "inlink", "indir/b.txt", "sub/uplink", "outlink",
		"reloutlink", "outdir/secret", "reloutdir/secret", "broken", "leaklink", "emptydir", "sub", "", nil, 5,
		"../base2/only2.txt", "sub/../top.sls", "./top.sls", "sub//b.txt", "/etc/passwd", "@BASE@/srv/base1/top.sls",
		"top.sls?saltenv=dev", "dev.txt?saltenv=dev", "top.sls?index=1", "dup.txt?index=1", "dup.txt?index=-1",
		"dup.txt?index= 1 ", "dup.txt?index=x", "dup.txt?index=5", "dup.txt?index=0_1", "|top.sls", "|dev.txt?saltenv=dev",
		"top.sls?foo&saltenv=dev", "top.sls?saltenv=dev?saltenv=base", "..", ".", "sub/..", "ünï.txt", "with space.txt",
		"outlink?index=0", "top.sls\x00", "salt://top.sls", "empty.txt", "big.txt", "ignored.bak", ".git/config",
	)...)
	def = append(def, pathCases("nope", "top.sls", "dev.txt?saltenv=dev")...)
	def = append(def, pathCases(nil, "top.sls")...)
	def = append(def, pathCases(5, "top.sls")...)
	def = append(def,
		request{"_file_find without saltenv", "_file_find", kv("path", "top.sls")},
		request{"_file_hash without saltenv", "_file_hash", kv("path", "top.sls")},
		request{"_file_hash without path", "_file_hash", kv("saltenv", "base")},
		request{"_file_hash_and_stat without path", "_file_hash_and_stat", kv("saltenv", "base")},
		request{"_serve_file without loc", "_serve_file", kv("path", "top.sls", "saltenv", "base")},
		request{"_serve_file without path", "_serve_file", kv("loc", 0, "saltenv", "base")},
		request{"_serve_file without saltenv", "_serve_file", kv("path", "top.sls", "loc", 0)},
		request{"_serve_file dev in base", "_serve_file", kv("path", "dev.txt?saltenv=dev", "saltenv", "base", "loc", 0)},
	)
	for _, loc := range []any{0, 1000, 2000, 2499, 2500, 9999, true, false, -1, 1.5, "0", nil, 1 << 62} {
		def = append(def, request{fmt.Sprintf("_serve_file big.txt loc=%v", loc), "_serve_file", kv("path", "big.txt", "saltenv", "base", "loc", loc)})
	}
	for _, gz := range []any{1, true, 9, 0, -1, 10, "5", "", nil, 2.5, []any{}, []any{1}} {
		def = append(def, request{fmt.Sprintf("_serve_file big.txt gzip=%v", gz), "_serve_file", kv("path", "big.txt", "saltenv", "base", "loc", 1000, "gzip", gz)})
	}
	def = append(def,
		request{"_serve_file empty.txt gzip", "_serve_file", kv("path", "empty.txt", "saltenv", "base", "loc", 0, "gzip", 5)},
		request{"_serve_file top.sls loc 3 gzip 9", "_serve_file", kv("path", "top.sls", "saltenv", "base", "loc", 3, "gzip", 9)},
	)

	ignore := listCases([2]any{"base", ""})
	ignore = append(ignore, pathCases("base", "ignored.bak", "sub/x.bak", ".git/config", "secretdir/s.txt", "sub/deep/c.txt",
		"dup.txt", "sub/b.txt", "indir/b.txt", "with space.txt", "ünï.txt", "top.sls")...)

	symlinks := listCases([2]any{"base", ""}, [2]any{"base", "sub"})
	symlinks = append(symlinks, pathCases("base", "inlink", "indir/b.txt", "outdir/secret", "outlink", "sub/uplink")...)

	envs := []request{
		{"envs", "_file_envs", kv()},
		{"envs sources", "_file_envs", kv("sources", true)},
	}
	envs = append(envs, listCases([2]any{"base", ""}, [2]any{"qa", ""}, [2]any{"prod", ""}, [2]any{"nope", ""},
		[2]any{"", ""}, [2]any{"..", ""}, [2]any{"../envs/qa", ""}, [2]any{"__env__", ""})...)
	envs = append(envs, pathCases("qa", "qa.txt", "prod.txt", "top.sls", "qa.txt?index=0", "prod.txt?saltenv=prod",
		"qa/qa.txt?saltenv=")...)
	envs = append(envs, pathCases("prod", "prod.txt", "qa.txt")...)
	envs = append(envs, pathCases("base", "top.sls", "qa.txt?saltenv=qa")...)
	envs = append(envs, pathCases("../envs/qa", "qa.txt")...)
	envs = append(envs, pathCases("../../outside", "secret")...)
	envs = append(envs, pathCases("", "qa/qa.txt")...)

	hashes := func(ht string) scenario {
		return scenario{"hash_" + strings.ToLower(ht), kv("file_roots", baseRoots, "hash_type", ht),
			pathCases("base", "top.sls", "empty.txt", "missing")}
	}
	return []scenario{
		{"default", kv("file_roots", baseRoots, "file_buffer_size", 1000), def},
		{"ignore", kv("file_roots", baseRoots,
			"file_ignore_regex", []any{`\.git($|/)`, `^secretdir`, `/deep/`, `dup\.txt\Z`, `(`},
			"file_ignore_glob", []any{"*.bak", "*emptyd", "with?space.txt", "*sub/[bc].txt", "*/[!a-z]nï.txt", "sub/[b-a]*", "[z-a]*", "[]e]*", "[!]a-z./]*"}), ignore},
		{"ignore_string", kv("file_roots", baseRoots, "file_ignore_regex", `\.txt$`, "file_ignore_glob", "*.sls"),
			append(listCases([2]any{"base", ""}), pathCases("base", "top.sls", "dup.txt", "a.sls")...)},
		{"nofollow", kv("file_roots", baseRoots, "fileserver_followsymlinks", false), symlinks},
		{"ignoresymlinks", kv("file_roots", baseRoots, "fileserver_ignoresymlinks", true), symlinks},
		{"ignoresymlinks_nofollow", kv("file_roots", baseRoots, "fileserver_ignoresymlinks", true, "fileserver_followsymlinks", false), symlinks},
		{"envroots", kv("file_roots", kv("base", []any{"@BASE@/srv/base1"}, "__env__", []any{"@BASE@/srv/envs/__env__"}), "hash_type", "md5"), envs},
		{"trailing_slash_root", kv("file_roots", kv("base", []any{"@BASE@/srv/base1/", "@BASE@/srv//base2"})),
			append(listCases([2]any{"base", ""}), pathCases("base", "top.sls", "only2.txt")...)},
		{"missing_root", kv("file_roots", kv("base", []any{"@BASE@/srv/none", "@BASE@/srv/dev"}, "empty", []any{})),
			append(listCases([2]any{"base", ""}, [2]any{"empty", ""}), pathCases("base", "dev.txt")...)},
		hashes("SHA1"), hashes("sha224"), hashes("sha384"), hashes("sha512"), hashes("sha3_256"),
		hashes("blake2b"), hashes("blake2s"), hashes("bogus"),
	}
}

// deviations are the cases where gsalt answers differently from Salt on
// purpose (see the package documentation), with gsalt's answer.
var deviations = map[string]string{
	// Salt's clean_path compares strings: srv/base1x/leak.txt "is under"
	// srv/base1.
	`default/_file_find "leaklink" in base`:          `{"path":"","rel":""}`,
	`default/_file_hash "leaklink" in base`:          `""`,
	`default/_file_hash_and_stat "leaklink" in base`: `["",null]`,
	`default/_serve_file "leaklink" in base`:         `{"data":"","dest":""}`,
	// Salt's ?index= lookups do not check where links lead.
	`default/_file_find "outlink?index=0" in base`:          `{"path":"","rel":""}`,
	`default/_file_hash "outlink?index=0" in base`:          `""`,
	`default/_file_hash_and_stat "outlink?index=0" in base`: `["",null]`,
	`default/_serve_file "outlink?index=0" in base`:         `{"data":"","dest":""}`,
	// Salt substitutes any saltenv for __env__, reaching outside the roots.
	`envroots/_file_list saltenv= prefix=`:                    `[]`,
	`envroots/_dir_list saltenv= prefix=`:                     `[]`,
	`envroots/_file_list saltenv=.. prefix=`:                  `[]`,
	`envroots/_dir_list saltenv=.. prefix=`:                   `[]`,
	`envroots/_file_list_emptydirs saltenv=.. prefix=`:        `[]`,
	`envroots/_file_list saltenv=../envs/qa prefix=`:          `[]`,
	`envroots/_symlink_list saltenv=.. prefix=`:               `{}`,
	`envroots/_file_find "qa/qa.txt?saltenv=" in qa`:          `{"path":"","rel":""}`,
	`envroots/_file_hash "qa/qa.txt?saltenv=" in qa`:          `""`,
	`envroots/_file_hash_and_stat "qa/qa.txt?saltenv=" in qa`: `["",null]`,
	`envroots/_serve_file "qa/qa.txt?saltenv=" in qa`:         `{"data":"","dest":""}`,
	`envroots/_file_find "qa.txt" in ../envs/qa`:              `{"path":"","rel":""}`,
	`envroots/_file_hash "qa.txt" in ../envs/qa`:              `""`,
	`envroots/_file_hash_and_stat "qa.txt" in ../envs/qa`:     `["",null]`,
	`envroots/_serve_file "qa.txt" in ../envs/qa`:             `{"data":"","dest":""}`,
	`envroots/_file_find "secret" in ../../outside`:           `{"path":"","rel":""}`,
	`envroots/_file_hash "secret" in ../../outside`:           `""`,
	`envroots/_file_hash_and_stat "secret" in ../../outside`:  `["",null]`,
	`envroots/_serve_file "secret" in ../../outside`:          `{"data":"","dest":""}`,
	`envroots/_file_find "qa/qa.txt" in `:                     `{"path":"","rel":""}`,
	`envroots/_file_hash "qa/qa.txt" in `:                     `""`,
	`envroots/_file_hash_and_stat "qa/qa.txt" in `:            `["",null]`,
	`envroots/_serve_file "qa/qa.txt" in `:                    `{"data":"","dest":""}`,
}

// TestGolden answers every golden request and compares with real Salt's
// answers (regenerate with -update when GSALT_SALT_SRC is set).
func TestGolden(t *testing.T) {
	base := t.TempDir()
	buildTree(t, base)
	if testutil.Update() {
		src := saltpeer.Require(t)
		regenerate(t, src, base)
	}
	raw, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	var golden []goldenScenario
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&golden); err != nil {
		t.Fatal(err)
	}
	checkUpToDate(t, golden)
	used := map[string]bool{}
	for _, sc := range golden {
		t.Run(sc.Name, func(t *testing.T) {
			opts := fromJSON(subst(sc.Opts, base)).(*payload.Map)
			o := fileserver.OptionsFrom(getter{opts})
			o.Logger = quietLogger()
			r := fileserver.New(o)
			for _, c := range sc.Cases {
				key := sc.Name + "/" + c.Name
				load := fromJSON(subst(c.Load, base)).(*payload.Map)
				load.Set("cmd", c.Cmd)
				got, err := r.Handle(context.Background(), c.Cmd, load)
				var norm any = map[string]any{"$error": true}
				if err == nil {
					norm = normalize(t, got, base)
				}
				gotJSON := mustJSON(t, norm)
				wantJSON := mustJSON(t, c.Want)
				if dev, ok := deviations[key]; ok {
					used[key] = true
					if gotJSON != dev {
						t.Errorf("%s (deviation): got %s, want %s", c.Name, gotJSON, dev)
					}
					if wantJSON == dev {
						t.Errorf("%s: Salt now answers like gsalt (%s); drop the deviation", c.Name, wantJSON)
					}
					continue
				}
				if gotJSON != wantJSON {
					t.Errorf("%s: load %s\n got %s\nwant %s (salt exc %s)", c.Name, mustJSON(t, c.Load), gotJSON, wantJSON, c.Exc)
				}
			}
		})
	}
	for k := range deviations {
		if !used[k] {
			t.Errorf("deviation %q matches no golden case", k)
		}
	}
}

// checkUpToDate fails when the requests in scenarios() differ from the
// ones the goldens answer.
func checkUpToDate(t *testing.T, golden []goldenScenario) {
	t.Helper()
	want := scenarios()
	if len(want) != len(golden) {
		t.Fatalf("golden has %d scenarios, the test %d: regenerate with -update", len(golden), len(want))
	}
	for i, sc := range want {
		g := golden[i]
		var gotReqs, wantReqs []any
		for _, c := range g.Cases {
			gotReqs = append(gotReqs, []any{c.Name, c.Cmd, c.Load})
		}
		for _, c := range sc.Cases {
			wantReqs = append(wantReqs, []any{c.Name, c.Cmd, c.Load})
		}
		if g.Name != sc.Name || mustJSON(t, g.Opts) != mustJSON(t, sc.Opts) || mustJSON(t, gotReqs) != mustJSON(t, wantReqs) {
			t.Fatalf("scenario %s: golden requests are out of date: regenerate with -update", sc.Name)
		}
	}
}

func regenerate(t *testing.T, src, base string) {
	t.Helper()
	reqs := filepath.Join(base, "requests.json")
	out := filepath.Join(base, "golden.json")
	b, err := json.Marshal(scenarios())
	must(t, err)
	must(t, os.WriteFile(reqs, b, 0o644))
	script, err := filepath.Abs("testdata/golden.py")
	must(t, err)
	cmd := exec.Command(saltpeer.Python(), script, base, reqs, out)
	cmd.Env = saltpeer.Env(src)
	if outp, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("golden.py: %v\n%s", err, outp)
	}
	b, err = os.ReadFile(out)
	must(t, err)
	must(t, os.WriteFile(goldenFile, b, 0o644))
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// getter serves options from a payload map.
type getter struct{ m *payload.Map }

func (g getter) Get(k string) (any, bool) { return g.m.Get(k) }

// subst replaces @BASE@ in every string of v.
func subst(v any, base string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "@BASE@", base)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = subst(e, base)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = subst(e, base)
		}
		return out
	}
	return v
}

// fromJSON converts decoded JSON into payload values (integers as int64,
// objects as maps with sorted keys).
func fromJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
		return x
	case int:
		return int64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fromJSON(e)
		}
		return out
	case map[string]any:
		m := payload.NewMap()
		for _, k := range sortedMapKeys(x) {
			m.Set(k, fromJSON(x[k]))
		}
		return m
	}
	return v
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// normalize renders an answer like golden.py does.
func normalize(t *testing.T, v any, base string) any {
	switch x := v.(type) {
	case []byte:
		return map[string]any{"$bytes": string(x)}
	case string:
		return strings.ReplaceAll(x, base, "@BASE@")
	case []any:
		if len(x) == 10 {
			ints := true
			for _, e := range x {
				if _, ok := e.(int64); !ok {
					ints = false
				}
			}
			if ints {
				return map[string]any{"$stat": []any{x[0], x[6]}}
			}
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(t, e, base)
		}
		return out
	case *payload.Map:
		out := map[string]any{}
		for _, it := range x.Items() {
			k := payload.KeyString(it.Key)
			if b, ok := it.Value.([]byte); ok && k == "data" && x.Has("gzip") {
				zr, err := gzip.NewReader(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("gzip chunk: %v", err)
				}
				plain, err := io.ReadAll(zr)
				if err != nil {
					t.Fatalf("gzip chunk: %v", err)
				}
				out[k] = map[string]any{"$gunzip": string(plain)}
				continue
			}
			out[k] = normalize(t, it.Value, base)
		}
		return out
	}
	return v
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	// Re-decode so json.Number and int64 render alike.
	var any0 any
	dec := json.NewDecoder(&b)
	dec.UseNumber()
	if err := dec.Decode(&any0); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	enc = json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(any0); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

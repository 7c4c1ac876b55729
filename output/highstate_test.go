package output

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/wire/payload"
)

// The highstate goldens: testdata/highstate/<case>.json holds {"data": ...}
// (JSON in the testdata/vectors convention), <case>.golden the text Salt's
// try_printout(data, "highstate", opts) printed for every variant below, as
// sections "=== <variant> <n>\n" + n bytes + "\n" ("=== <variant> crash <n>"
// when Salt's outputter raised an exception try_printout does not catch).
// With GSALT_SALT_SRC set the real Salt is run as well and compared; -update
// rewrites the .golden files:
//
//	GSALT_SALT_SRC=/path/to/salt go test ./output -run Highstate -update

const highstateDir = "testdata/highstate"

type hsVariant struct {
	id      string
	color   bool
	keep    bool // strip_colors: False
	retcode int
	hs      HighstateOptions
}

func hsVar(id string, color bool, edit func(*HighstateOptions)) hsVariant {
	v := hsVariant{id: id, color: color, hs: DefaultHighstateOptions()}
	if edit != nil {
		edit(&v.hs)
	}
	return v
}

func hsVariants() []hsVariant {
	out := func(s string) func(*HighstateOptions) { return func(h *HighstateOptions) { h.Output = s } }
	vs := []hsVariant{
		hsVar("full", false, nil),
		hsVar("full_color", true, nil),
		hsVar("terse", false, out("terse")),
		hsVar("terse_color", true, out("terse")),
		hsVar("mixed", false, out("mixed")),
		hsVar("changes", true, out("changes")),
		hsVar("full_id", false, out("full_id")),
		hsVar("terse_id", false, out("terse_id")),
		hsVar("filter_exclude", false, func(h *HighstateOptions) { h.Output, h.Exclude = "filter", []any{"True"} }),
		hsVar("filter_terse", false, func(h *HighstateOptions) { h.Output, h.Terse = "filter", "True,None" }),
		hsVar("filter_cli", false, func(h *HighstateOptions) {
			h.Output, h.Terse = "filter", []any{"True"}
			h.Args = []any{"web", payload.NewMap("__kwarg__", true, "exclude", "False,")}
		}),
		hsVar("verbose_false", true, func(h *HighstateOptions) { h.Verbose = false }),
		hsVar("output_diff", false, func(h *HighstateOptions) { h.OutputDiff = true }),
		hsVar("tabular", false, func(h *HighstateOptions) { h.Output, h.Tabular = "terse", true }),
		hsVar("tabular_color", true, func(h *HighstateOptions) { h.Output, h.Tabular = "mixed", true }),
		hsVar("tabular_custom", false, func(h *HighstateOptions) {
			h.Output, h.TabularFormat = "terse", "{0}{4:>8}|{2:^9}.{3!r:<12.8}|{1[0]}{6[__run_num__]:03d} {6[result]!s:*^7}{{x}}{5}"
		}),
		hsVar("pct", true, func(h *HighstateOptions) { h.Pct = true }),
		hsVar("compress", false, func(h *HighstateOptions) { h.CompressIDs = true }),
		hsVar("compress_terse_id", true, func(h *HighstateOptions) { h.CompressIDs, h.Output = true, "terse_id" }),
		hsVar("no_profile", false, func(h *HighstateOptions) { h.Profile = false }),
		hsVar("no_profile_terse", false, func(h *HighstateOptions) { h.Profile, h.Output = false, "TERSE" }),
	}
	keep := hsVar("keep_colors", true, nil)
	keep.keep = true
	rc := hsVar("color_rc1", true, nil)
	rc.retcode = 1
	return append(vs, keep, rc)
}

func (v hsVariant) options() Options {
	h := v.hs
	return Options{Color: v.color, KeepColors: v.keep, Retcode: v.retcode, Highstate: &h}
}

// pyOpts is the variant as Salt opts.
func (v hsVariant) pyOpts() map[string]any {
	o := map[string]any{
		"color":                v.color,
		"state_output":         v.hs.Output,
		"state_verbose":        v.hs.Verbose,
		"state_output_diff":    v.hs.OutputDiff,
		"state_output_profile": v.hs.Profile,
		"state_output_pct":     v.hs.Pct,
		"state_compress_ids":   v.hs.CompressIDs,
		"state_tabular":        v.hs.Tabular,
	}
	if v.hs.TabularFormat != "" {
		o["state_tabular"] = v.hs.TabularFormat
	}
	if v.hs.Exclude != nil {
		o["state_output_exclude"] = v.hs.Exclude
	}
	if v.hs.Terse != nil {
		o["state_output_terse"] = v.hs.Terse
	}
	if v.hs.Args != nil {
		o["arg"] = v.hs.Args
	}
	if v.keep {
		o["strip_colors"] = false
	}
	return o
}

type hsCase struct {
	name string
	data any
}

func loadHighstateCases(t *testing.T) []hsCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(highstateDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no highstate cases in %s: %v", highstateDir, err)
	}
	sort.Strings(files)
	var cases []hsCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		v, err := vectors.Convert(doc.Data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cases = append(cases, hsCase{strings.TrimSuffix(filepath.Base(f), ".json"), v})
	}
	return cases
}

// hsResult is one rendering by Salt: the text, or the exception that
// escaped try_printout.
type hsResult struct {
	Text  string `json:"text"`
	Crash bool   `json:"crash"`
}

const pyHighstate = `
import copy, json, sys, traceback
import salt.config, salt.output, salt.payload
req = json.load(sys.stdin)
base = copy.deepcopy(salt.config.DEFAULT_MASTER_OPTS)
base.pop("output", None)
res = []
for job in req:
    data = salt.payload.loads(bytes.fromhex(job["hex"]), encoding="utf-8")
    opts = copy.deepcopy(base)
    opts.update(job["opts"])
    kw = {"_retcode": job["retcode"]} if job["retcode"] else {}
    try:
        text = salt.output.try_printout(data, "highstate", opts, **kw)
        res.append({"text": text, "crash": False})
    except Exception as exc:
        res.append({"text": type(exc).__name__ + ": " + str(exc), "crash": True})
json.dump(res, sys.stdout)
`

type hsJob struct {
	data    any
	variant hsVariant
}

// runSaltHighstate renders every job with Salt's own outputter.
func runSaltHighstate(t *testing.T, src string, jobs []hsJob) []hsResult {
	t.Helper()
	type pyJob struct {
		Hex     string         `json:"hex"`
		Opts    map[string]any `json:"opts"`
		Retcode int            `json:"retcode"`
	}
	req := make([]pyJob, 0, len(jobs))
	for _, j := range jobs {
		b, err := payload.MarshalBin(j.data)
		if err != nil {
			t.Fatal(err)
		}
		req = append(req, pyJob{hex.EncodeToString(b), j.variant.pyOpts(), j.variant.retcode})
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := saltpeer.PythonCommand(ctx, src, pyHighstate)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("running Salt's highstate outputter: %v\n%s", err, stderr.String())
	}
	var res []hsResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != len(jobs) {
		t.Fatalf("Salt rendered %d of %d jobs", len(res), len(jobs))
	}
	return res
}

func encodeGolden(ids []string, res map[string]hsResult) []byte {
	var b bytes.Buffer
	for _, id := range ids {
		r := res[id]
		if r.Crash {
			fmt.Fprintf(&b, "=== %s crash %d\n%s\n", id, len(r.Text), r.Text)
		} else {
			fmt.Fprintf(&b, "=== %s %d\n%s\n", id, len(r.Text), r.Text)
		}
	}
	return b.Bytes()
}

func decodeGolden(b []byte) (map[string]hsResult, error) {
	res := map[string]hsResult{}
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 || !bytes.HasPrefix(b, []byte("=== ")) {
			return nil, fmt.Errorf("bad section header %q", b[:min(len(b), 40)])
		}
		f := strings.Fields(string(b[4:nl]))
		b = b[nl+1:]
		if len(f) < 2 {
			return nil, fmt.Errorf("bad section header %q", f)
		}
		n, err := strconv.Atoi(f[len(f)-1])
		if err != nil || n > len(b)-1 || b[n] != '\n' {
			return nil, fmt.Errorf("section %s: bad length", f[0])
		}
		res[f[0]] = hsResult{Text: string(b[:n]), Crash: len(f) == 3 && f[1] == "crash"}
		b = b[n+1:]
	}
	return res, nil
}

// TestHighstateGolden compares the highstate outputter with Salt's text
// for every case × variant, byte for byte.
func TestHighstateGolden(t *testing.T) {
	cases := loadHighstateCases(t)
	variants := hsVariants()
	want := map[string]map[string]hsResult{}
	if src := saltpeer.Src(); src != "" {
		var jobs []hsJob
		for _, c := range cases {
			for _, v := range variants {
				jobs = append(jobs, hsJob{c.data, v})
			}
		}
		res := runSaltHighstate(t, src, jobs)
		for i, j := range jobs {
			c := cases[i/len(variants)]
			if want[c.name] == nil {
				want[c.name] = map[string]hsResult{}
			}
			want[c.name][j.variant.id] = res[i]
		}
		if testutil.Update() {
			var ids []string
			for _, v := range variants {
				ids = append(ids, v.id)
			}
			for _, c := range cases {
				if err := os.WriteFile(filepath.Join(highstateDir, c.name+".golden"), encodeGolden(ids, want[c.name]), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	} else {
		for _, c := range cases {
			b, err := os.ReadFile(filepath.Join(highstateDir, c.name+".golden"))
			if err != nil {
				t.Fatalf("%v (regenerate with GSALT_SALT_SRC=... go test -run Highstate -update)", err)
			}
			if want[c.name], err = decodeGolden(b); err != nil {
				t.Fatalf("%s.golden: %v", c.name, err)
			}
		}
	}
	for _, c := range cases {
		for _, v := range variants {
			key := c.name + "/" + v.id
			w, ok := want[c.name][v.id]
			if !ok {
				t.Errorf("%s: no golden entry (run with -update)", key)
				continue
			}
			var logs bytes.Buffer
			o := v.options()
			o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			got, present := Format("highstate", c.data, o)
			if !present {
				t.Errorf("%s: nothing printed", key)
				continue
			}
			if w.Crash {
				// Salt's CLI dies with a traceback; gsalt warns and
				// prints nested.
				if got == "" || !strings.Contains(logs.String(), "level=WARN") {
					t.Errorf("%s: Salt raised %s; got %q, logs %s", key, w.Text, got, logs.String())
				}
				continue
			}
			if got != w.Text {
				t.Errorf("%s:\n got: %q\nwant: %q", key, got, w.Text)
			}
		}
	}
}

// TestHighstateSummaryText pins a few lines of the plain output so a
// regression reads clearly without the golden files.
func TestHighstateSummaryText(t *testing.T) {
	data := payload.NewMap("m1", payload.NewMap(
		"test_|-a_|-a_|-nop", payload.NewMap("result", true, "comment", "ok", "changes", payload.NewMap(), "__run_num__", int64(0), "start_time", "10:00:00.000001", "duration", 1.5, "name", "a"),
		"test_|-b_|-bee_|-nop", payload.NewMap("result", false, "comment", "bad\nline", "changes", payload.NewMap("x", int64(1)), "__run_num__", int64(1), "start_time", "10:00:00.1", "duration", int64(2), "name", "bee"),
	))
	want := `m1:
----------
          ID: a
    Function: test.nop
      Result: True
     Comment: ok
     Started: 10:00:00.000001
    Duration: 1.5 ms
     Changes:   
----------
          ID: b
    Function: test.nop
        Name: bee
      Result: False
     Comment: bad
              line
     Started: 10:00:00.1
    Duration: 2 ms
     Changes:   
              ----------
              x:
                  1

Summary for m1
------------
Succeeded: 1 (changed=1)
Failed:    1
------------
Total states run:     2
Total run time:   3.500 ms`
	if got := Highstate(data, Options{}); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// The caller's data is not modified (Salt edits it in place).
	st, _ := data.Map("m1").Map("test_|-a_|-a_|-nop").Get("duration")
	if st != 1.5 {
		t.Errorf("input modified: duration %v", st)
	}
	terse := Highstate(data, Options{Highstate: &HighstateOptions{Output: "terse"}})
	if !strings.Contains(terse, "m1:\n  Name: bee - Function: test.nop - Result: Failed\n") {
		t.Errorf("terse: %q", terse)
	}
}

func TestStateRetcode(t *testing.T) {
	ok := payload.NewMap("a", payload.NewMap("result", true))
	tests := []struct {
		name string
		ret  any
		want int
	}{
		{"ok", ok, 0},
		{"none result", payload.NewMap("a", payload.NewMap("result", nil)), 0},
		{"failed", payload.NewMap("a", payload.NewMap("result", true), "b", payload.NewMap("result", false)), 2},
		{"compile errors", []any{"boom"}, 1},
		{"empty", payload.NewMap(), 2},
		{"not a dict", "text", 2},
		{"non-dict state", payload.NewMap("a", "x"), 2},
		{"nested ok", payload.NewMap("m", payload.NewMap("a", payload.NewMap("result", true))), 0},
		{"nested failure", payload.NewMap("m", payload.NewMap("a", payload.NewMap("result", false))), 2},
		{"extend list", payload.NewMap("__extend__", []any{}, "a", payload.NewMap("result", true)), 0},
	}
	for _, tc := range tests {
		if got := StateRetcode(tc.ret); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestPyTextFill(t *testing.T) {
	ind := strings.Repeat(" ", 14)
	tests := []struct{ in, want string }{
		{"short", ind + "short"},
		{"", ""},
		{"a  b\tc\nd", ind + "a  b    c d"},
		{strings.Repeat("x", 70), ind + strings.Repeat("x", 66) + "\n" + ind + "xxxx"},
		{"well-known over-the-top", ind + "well-known over-the-top"},
	}
	for _, tc := range tests {
		if got := py.Fill(tc.in, 80, ind, ind); got != tc.want {
			t.Errorf("fill(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// randomReturn builds a random, often malformed, state run for the live
// comparison.
func randomReturn(r *rand.Rand) any {
	words := []string{"alpha", "beta-gamma", "x", "", "long " + strings.Repeat("word-", 30), "multi\nline\n", "tab\there", "{braces}", "ünïcode ☃", "  pad  ", "esc \x1b[0m", "a--b c-d-e", "state.orch"}
	pick := func() string { return words[r.Intn(len(words))] }
	var value func(depth int) any
	value = func(depth int) any {
		switch n := r.Intn(10); {
		case n == 0:
			return nil
		case n == 1:
			return r.Intn(2) == 0
		case n == 2:
			return int64(r.Intn(2000) - 100)
		case n == 3:
			return float64(r.Intn(100000)) / 1000
		case n == 4:
			return []byte{0xff, 'b'}
		case n <= 6 || depth > 2:
			return pick()
		case n == 7:
			l := []any{}
			for i := r.Intn(3); i > 0; i-- {
				l = append(l, value(depth+1))
			}
			return l
		default:
			m := payload.NewMap()
			for i := r.Intn(3); i > 0; i-- {
				m.Set(pick(), value(depth+1))
			}
			if r.Intn(10) == 0 {
				m.SetKey(int64(r.Intn(5)), value(depth+1))
			}
			return m
		}
	}
	oneOf := func(vs ...any) any { return vs[r.Intn(len(vs))] }
	var states func(depth int) *payload.Map
	states = func(depth int) *payload.Map {
		st := payload.NewMap()
		ids := []string{"one", "two", "three"}
		for s := r.Intn(6); s >= 0; s-- {
			id := ids[r.Intn(len(ids))]
			name := id
			if r.Intn(3) == 0 {
				name = pick()
			}
			mod := []string{"file", "pkg", "cmd", "test"}[r.Intn(4)]
			tag := mod + "_|-" + id + "_|-" + name + "_|-" + []string{"managed", "run", "nop"}[r.Intn(3)]
			if r.Intn(40) == 0 {
				tag = oneOf(mod+"_|-"+id+"_|-"+name, tag+"_|-extra", "plain").(string)
			}
			one := payload.NewMap("name", name, "__id__", id, "__sls__", oneOf("sls", "other"), "__run_num__", int64(r.Intn(10)))
			if r.Intn(30) == 0 {
				one.Set("__run_num__", oneOf(nil, "7", 2.5, true))
			}
			if r.Intn(30) == 0 {
				one.Delete("__run_num__")
			}
			one.Set("result", oneOf(true, false, nil, true, true, true, false))
			if r.Intn(25) == 0 {
				one.Set("result", oneOf("yes", int64(1), int64(0), 1.0, "", []any{"x"}))
			}
			one.Set("comment", pick())
			if r.Intn(15) == 0 {
				one.Set("comment", value(1))
			}
			switch r.Intn(5) {
			case 0:
				one.Set("changes", payload.NewMap())
			case 1:
				one.Set("changes", payload.NewMap("diff", "--- \n+++ \n@@ -1 +1 @@\n-a\n+b\n"))
			case 2:
				if depth < 2 && r.Intn(3) == 0 {
					one.Set("name", oneOf("state.orch", "state.sls"))
					one.Set("changes", payload.NewMap("m-"+pick(), states(depth+1)))
				} else if depth < 2 && r.Intn(2) == 0 {
					one.Set("changes", payload.NewMap("ret", payload.NewMap("inner", states(depth+1)), "out", "highstate"))
				} else {
					one.Set("changes", value(1))
				}
			default:
				one.Set("changes", value(1))
			}
			one.Set("start_time", fmt.Sprintf("10:%02d:%02d.%06d", r.Intn(60), r.Intn(60), r.Intn(1000000)))
			one.Set("duration", float64(r.Intn(900000))/1000)
			if r.Intn(20) == 0 {
				one.Set("duration", oneOf("12.5 ms", "abc", int64(3), " 4_0.5 ", "inf"))
			}
			if r.Intn(30) == 0 {
				one.Delete(oneOf("start_time", "duration", "comment").(string))
			}
			if r.Intn(6) == 0 {
				one.Set("warnings", []any{pick() + " " + pick() + " " + strings.Repeat("deprecated-option ", r.Intn(8))})
			}
			if r.Intn(8) == 0 {
				one.Set("__parallel__", true)
			}
			if r.Intn(10) == 0 {
				one.Set("data", value(1))
			}
			st.Set(tag, one)
		}
		return st
	}
	top := payload.NewMap()
	for h := r.Intn(3) + 1; h > 0; h-- {
		host := fmt.Sprintf("minion-%d", r.Intn(100))
		switch r.Intn(14) {
		case 0:
			top.Set(host, []any{pick(), value(1)})
		case 1:
			top.Set(host, value(1))
		default:
			top.Set(host, states(0))
		}
	}
	switch r.Intn(20) {
	case 0:
		return payload.NewMap("return", payload.NewMap("data", top))
	case 1:
		top.Set("retcode", int64(1))
		top.Set("x_master", states(0))
	}
	return top
}

// randomVariant draws highstate options.
func randomVariant(r *rand.Rand, i int) hsVariant {
	outs := []string{"full", "terse", "mixed", "changes", "filter", "full_id", "terse_id", "mixed_id", "changes_id", "filter_id"}
	v := hsVar(fmt.Sprintf("random-%d", i), r.Intn(2) == 0, nil)
	v.keep = r.Intn(6) == 0
	v.retcode = r.Intn(2)
	h := &v.hs
	h.Output = outs[r.Intn(len(outs))]
	h.Verbose = r.Intn(4) != 0
	h.OutputDiff = r.Intn(6) == 0
	h.Profile = r.Intn(4) != 0
	h.Pct = r.Intn(3) == 0
	h.CompressIDs = r.Intn(4) == 0
	h.Tabular = r.Intn(4) == 0
	if r.Intn(10) == 0 {
		h.TabularFormat = []string{"{0}{1}|{2:>6}|{3:<6}|{4:^9}{5}", "{0}{6[duration]!s:>10}{5} {1!r}", "{}{}", "{0}{6[result]:>5}{5}", "{0}{6[__run_num__]:+05d}{5}"}[r.Intn(5)]
	}
	lists := []any{nil, []any{"True"}, "False,None", []any{"None", "False"}, "True,"}
	h.Exclude = lists[r.Intn(len(lists))]
	h.Terse = lists[r.Intn(len(lists))]
	if r.Intn(4) == 0 {
		h.Args = []any{"x", payload.NewMap("__kwarg__", true, "terse", lists[1+r.Intn(len(lists)-1)])}
	}
	return v
}

var (
	hsRandomN    = flag.Int("highstate-random", 400, "number of random state runs TestHighstateLiveRandom compares with Salt")
	hsRandomSeed = flag.Int64("highstate-seed", 3006, "seed of TestHighstateLiveRandom")
)

// TestHighstateLiveRandom compares random state runs under random options
// with the real Salt (skipped without GSALT_SALT_SRC).
func TestHighstateLiveRandom(t *testing.T) {
	src := saltpeer.Require(t)
	r := rand.New(rand.NewSource(*hsRandomSeed))
	n := *hsRandomN
	if testing.Short() {
		n = 80
	}
	jobs := make([]hsJob, n)
	for i := range jobs {
		jobs[i] = hsJob{randomReturn(r), randomVariant(r, i)}
	}
	res := runSaltHighstate(t, src, jobs)
	fails := 0
	for i, j := range jobs {
		var logs bytes.Buffer
		o := j.variant.options()
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		got, _ := Format("highstate", j.data, o)
		if res[i].Crash {
			if !strings.Contains(logs.String(), "level=WARN msg=\"Salt's highstate outputter raises") {
				fails++
				if fails <= 5 {
					t.Errorf("job %d: Salt raised %s, gsalt logged %s", i, res[i].Text, logs.String())
				}
			}
			continue
		}
		if got == res[i].Text {
			continue
		}
		fails++
		if fails <= 5 {
			t.Errorf("job %d (%+v): data %s\n got: %q\nwant: %q", i, j.variant, PyRepr(j.data), got, res[i].Text)
		}
	}
	if fails > 0 {
		t.Errorf("%d of %d random jobs differ", fails, n)
	}
}

// FuzzHighstate: any decodable payload renders under every state_output
// mode without panicking (seeded with the golden cases).
func FuzzHighstate(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(highstateDir, "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		var doc struct {
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal(b, &doc) != nil {
			continue
		}
		v, err := vectors.Convert(doc.Data)
		if err != nil {
			continue
		}
		if p, err := payload.MarshalBin(v); err == nil {
			f.Add(p, uint8(0))
		}
	}
	variants := hsVariants()
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		v, err := payload.UnmarshalLimits(data, payload.Limits{MaxDepth: 64, MaxSize: 1 << 16})
		if err != nil {
			return
		}
		o := variants[int(pick)%len(variants)].options()
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		Format("highstate", v, o)
	})
}

func TestHighstateOptionsFrom(t *testing.T) {
	opts := map[string]any{
		"state_output": "terse_id", "state_verbose": false, "state_output_pct": int64(1),
		"state_tabular": "{0}{1}{5}", "state_output_exclude": "True,", "arg": []any{"x"},
	}
	got := HighstateOptionsFrom(func(k string) (any, bool) { v, ok := opts[k]; return v, ok })
	if got.Output != "terse_id" || got.Verbose || !got.Pct || !got.Profile || got.TabularFormat != "{0}{1}{5}" || got.Tabular ||
		got.Exclude != "True," || got.Terse != nil || len(got.Args) != 1 {
		t.Errorf("%+v", got)
	}
	none := HighstateOptionsFrom(func(string) (any, bool) { return nil, false })
	if d := DefaultHighstateOptions(); none.Output != d.Output || none.Verbose != d.Verbose || none.Profile != d.Profile {
		t.Errorf("defaults: %+v", none)
	}
}

package target

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/internal/saltpeer"
)

// The cross-check runs Salt's own Python code (GSALT_SALT_SRC) on generated
// cases and compares the answers with this package.

type oracleResult struct {
	R   json.RawMessage `json:"r"`
	Err string          `json:"err"`
}

// tagJSON encodes values the oracle's JSON hook turns back into Python
// floats, bytes and dicts with non-string keys.
func tagJSON(v any) any {
	switch t := v.(type) {
	case float64:
		return map[string]any{"$f": strconv.FormatFloat(t, 'g', -1, 64)}
	case []byte:
		return map[string]any{"$b": hex.EncodeToString(t)}
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = tagJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = tagJSON(e)
		}
		return out
	case []string:
		return t
	}
	if d, ok := asDict(v); ok {
		var pairs [][2]any
		d.rangeKV(func(k, e any) bool {
			pairs = append(pairs, [2]any{tagJSON(k), tagJSON(e)})
			return true
		})
		if pairs == nil {
			pairs = [][2]any{}
		}
		return map[string]any{"$d": pairs}
	}
	return v
}

func runOracle(t *testing.T, cases []map[string]any) []oracleResult {
	t.Helper()
	src := os.Getenv("GSALT_SALT_SRC")
	if src == "" {
		t.Skip("GSALT_SALT_SRC not set: skipping cross-check against Salt's Python implementation")
	}
	shim := saltpeer.Pyshim()
	python := saltpeer.Python()
	var in bytes.Buffer
	for _, c := range cases {
		for k, v := range c {
			c[k] = tagJSON(v)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("marshal case: %v", err)
		}
		in.Write(b)
		in.WriteByte('\n')
	}
	script, err := filepath.Abs("testdata/salt_oracle.py")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, script)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+src+string(os.PathListSeparator)+shim, "PYTHONDONTWRITEBYTECODE=1")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle failed: %v\n%s", err, stderr.String())
	}
	var res []oracleResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r oracleResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("oracle output %q: %v", sc.Text(), err)
		}
		res = append(res, r)
	}
	if len(res) != len(cases) {
		t.Fatalf("oracle answered %d of %d cases\n%s", len(res), len(cases), stderr.String())
	}
	return res
}

func (r oracleResult) boolean(t *testing.T) bool {
	t.Helper()
	var b bool
	if err := json.Unmarshal(r.R, &b); err != nil {
		t.Fatalf("oracle result %s is not a bool", r.R)
	}
	return b
}

// crossSeed lets GSALT_CROSSCHECK_SEED vary the generated cases; the
// default keeps runs reproducible.
func crossSeed() uint64 {
	v, _ := strconv.ParseUint(os.Getenv("GSALT_CROSSCHECK_SEED"), 10, 64)
	return v
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func randString(r *rand.Rand, alphabet []string, maxLen int) string {
	n := r.IntN(maxLen + 1)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(pick(r, alphabet))
	}
	return b.String()
}

func TestCrossCheckFnmatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(crossSeed()+1, 2))
	nameAlpha := []string{"a", "b", "c", "z", "-", "/", ".", "!", "^", "[", "]", "\\", "é", "\n", "A", "&"}
	patAlpha := []string{"a", "b", "c", "z", "-", "/", "*", "?", "[", "]", "!", "^", "\\", "é", "A", "&", "|", "~"}
	var cases []map[string]any
	type pair struct{ name, pat string }
	var pairs []pair
	fixed := []pair{{"web01", "web*"}, {"a/b/c", "a*c"}, {"x", "[!x]"}, {"]", "[]]"}, {"[", "["}, {"-", "[a-]"},
		{"b", "[b-a]"}, {"c", "[!b-a]"}, {"\\", "[\\]"}, {"^", "[^]"}, {"a", "[z-a-c]"}, {"b", "[a-c-e]"}, {"-", "[--a]"}}
	pairs = append(pairs, fixed...)
	for i := 0; i < 400; i++ {
		pairs = append(pairs, pair{randString(rng, nameAlpha, 5), randString(rng, patAlpha, 7)})
	}
	for _, p := range pairs {
		cases = append(cases, map[string]any{"op": "fnmatch", "name": p.name, "pat": p.pat})
	}
	res := runOracle(t, cases)
	m := New(Options{})
	for i, p := range pairs {
		if res[i].Err != "" {
			if m.Fnmatch(p.name, p.pat) {
				t.Errorf("fnmatch(%q, %q): Python raised %s, Go matched", p.name, p.pat, res[i].Err)
			}
			continue
		}
		if want, got := res[i].boolean(t), m.Fnmatch(p.name, p.pat); want != got {
			re, _ := py.FnmatchTranslate(p.pat)
			t.Errorf("fnmatch(%q, %q) = %v, Python %v (re %s)", p.name, p.pat, got, want, re)
		}
	}
}

func TestCrossCheckPCRE(t *testing.T) {
	rng := rand.New(rand.NewPCG(crossSeed()+3, 4))
	pieces := []string{"a", "b", "A", "1", ".", `\d`, `\w`, `\s`, `\W`, `\D`, `\S`, "[a-c]", "[^a]", "(ab|c)", "*", "+", "?",
		"{1,2}", "{,2}", "{2}", "{", "}", "$", "^", `\Z`, "(?i)", "(?:b)", `\b`, `[\w-]`, `\x41`, `\101`, `\0`, "(?s)",
		"(?m)", `\n`, "|", ")", "(", `\z`, `\A`, "[]a]", "[[:a]", `\.`, " ", "é", `\é`, "*?", "_",
		"(?x)", "(?a)", "(?P<n>a)", "(?#c)", `[\d]`, `[^\s]`, `[\S]`, `[\D_]`, "{1,}", "(?i:a)", "(?-i:b)", "(?=a)",
		`\1`, "[a-", `\u00e9`, `\U0001F600`, `[\x41-\x43]`, "# c", "(?u)", "(?L)", "(?ai)", `\p`, "a{,}", "[\\]"}
	strAlpha := []string{"a", "A", "b", "1", " ", "_", "-", "\n", "é", "c", ":", "٣"}
	type pair struct{ pat, s string }
	var pairs []pair
	for i := 0; i < 600; i++ {
		var b strings.Builder
		for n := rng.IntN(5) + 1; n > 0; n-- {
			b.WriteString(pick(rng, pieces))
		}
		pairs = append(pairs, pair{b.String(), randString(rng, strAlpha, 5)})
	}
	var cases []map[string]any
	for _, p := range pairs {
		cases = append(cases, map[string]any{"op": "pcre", "pat": p.pat, "s": p.s})
	}
	res := runOracle(t, cases)
	m := New(Options{})
	unsupported, compared, trues := 0, 0, 0
	for i, p := range pairs {
		got, err := m.PCREMatch(p.pat, p.s)
		if errors.Is(err, ErrUnsupportedRegex) {
			unsupported++
			continue
		}
		if res[i].Err != "" {
			if err == nil {
				src, _ := TranslatePCRE(p.pat)
				t.Errorf("re.match(%q, %q): Python raised %s, Go gave %v (re %s)", p.pat, p.s, res[i].Err, got, src)
			}
			continue
		}
		compared++
		if err != nil {
			t.Errorf("re.match(%q, %q): Go error %v, Python %s", p.pat, p.s, err, res[i].R)
			continue
		}
		want := res[i].boolean(t)
		if want {
			trues++
		}
		if want != got {
			src, _ := TranslatePCRE(p.pat)
			t.Errorf("re.match(%q, %q) = %v, Python %v (re %s)", p.pat, p.s, got, want, src)
		}
	}
	t.Logf("pcre: %d compared (%d true), %d unsupported by RE2", compared, trues, unsupported)
	if compared < 100 {
		t.Errorf("only %d PCRE cases compared", compared)
	}
}

// randTree builds a grains/pillar-like tree.
func randTree(r *rand.Rand, depth int) any {
	keys := []string{"a", "b", "c", "os", "1", "0", "roles", "*", "x:y", "Web"}
	scalars := []any{"Debian", "web", "WEB01", "b:c", "True", "1", "", "*", "a*b", int64(1), int64(0), int64(-3),
		float64(1), 1.5, 1e16, 0.0001, 1e-05, true, false, nil, []byte("by"), "é", "Σa"}
	switch k := r.IntN(10); {
	case depth <= 0 || k < 4:
		return pick(r, scalars)
	case k < 7:
		n := r.IntN(4)
		if r.IntN(6) == 0 {
			om := &orderedMap{}
			for i := 0; i < n; i++ {
				var key any = pick(r, keys)
				if r.IntN(3) == 0 {
					key = pick(r, []any{int64(1), int64(80), true, nil, 1.5})
				}
				om.set(key, randTree(r, depth-1))
			}
			return om
		}
		mm := map[string]any{}
		for i := 0; i < n; i++ {
			mm[pick(r, keys)] = randTree(r, depth-1)
		}
		return mm
	default:
		n := r.IntN(4)
		l := make([]any, n)
		for i := range l {
			l[i] = randTree(r, depth-1)
		}
		return l
	}
}

// pathTo walks a random path into a tree and returns key parts plus a value
// pattern, sometimes mangled, so that a good share of cases match.
func pathTo(r *rand.Rand, data any) []string {
	var ps []string
	cur := data
	for depth := 0; depth < 5; depth++ {
		if d, ok := asDict(cur); ok {
			var keys []any
			var vals []any
			d.rangeKV(func(k, v any) bool { keys = append(keys, k); vals = append(vals, v); return true })
			if len(keys) == 0 {
				break
			}
			i := r.IntN(len(keys))
			if r.IntN(6) == 0 {
				ps = append(ps, "*")
			} else {
				ps = append(ps, pyfmt.Str(keys[i]))
			}
			cur = vals[i]
			continue
		}
		if l, ok := asList(cur); ok && len(l) > 0 {
			i := r.IntN(len(l))
			if r.IntN(2) == 0 {
				ps = append(ps, strconv.Itoa(i))
			}
			cur = l[i]
			continue
		}
		break
	}
	leaf := pyfmt.Str(cur)
	switch r.IntN(5) {
	case 0:
		leaf = strings.ToUpper(leaf)
	case 1:
		if len(leaf) > 1 {
			leaf = leaf[:len(leaf)/2] + "*"
		}
	case 2:
		leaf = "*"
	}
	if len(ps) == 0 {
		ps = append(ps, "a")
	}
	return append(ps, leaf)
}

func TestCrossCheckSubdict(t *testing.T) {
	rng := rand.New(rand.NewPCG(crossSeed()+5, 6))
	parts := []string{"a", "b", "c", "os", "1", "0", "-1", "roles", "*", "deb*", "web", "true", "none", "1.0", "1.5",
		"1e+16", "80", "x", "y", "web01", "[wd]*", "b'by'", "é", "σa", "{'a': 1}*", " 1", "0x1", "yes"}
	rparts := []string{"a", "b.*", "deb", "w.b", `\d`, "1", "(x", "[a-z]+", "^w", "tru", "n.ne"}
	var cases []map[string]any
	type sc struct {
		data  any
		expr  string
		delim string
		mode  MatchMode
	}
	var scs []sc
	for i := 0; i < 800; i++ {
		data := randTree(rng, 3)
		delim := ":"
		if rng.IntN(5) == 0 {
			delim = "|"
		}
		mode := MatchMode(rng.IntN(3))
		var ps []string
		if rng.IntN(3) != 0 {
			ps = pathTo(rng, data)
		} else {
			n := rng.IntN(4) + 1
			ps = make([]string, n)
			for j := range ps {
				if mode == ModeRegex && j == n-1 {
					ps[j] = pick(rng, rparts)
				} else {
					ps[j] = pick(rng, parts)
				}
			}
		}
		scs = append(scs, sc{data, strings.Join(ps, delim), delim, mode})
	}
	for _, c := range scs {
		cases = append(cases, map[string]any{"op": "subdict", "data": c.data, "expr": c.expr, "delim": c.delim,
			"regex": c.mode == ModeRegex, "exact": c.mode == ModeExact})
	}
	res := runOracle(t, cases)
	m := New(Options{})
	hits := 0
	for i, c := range scs {
		got, err := m.SubdictMatch(c.data, c.expr, c.delim, c.mode)
		if res[i].Err != "" {
			if got {
				t.Errorf("subdict_match(%s, %q, %q, mode %d): Python raised %s, Go matched", pyfmt.Repr(c.data), c.expr, c.delim, c.mode, res[i].Err)
			}
			continue
		}
		if err != nil {
			t.Errorf("subdict_match(%s, %q): Go error %v", pyfmt.Repr(c.data), c.expr, err)
			continue
		}
		want := res[i].boolean(t)
		if want {
			hits++
		}
		if want != got {
			t.Errorf("subdict_match(%s, %q, %q, mode %d) = %v, Python %v", pyfmt.Repr(c.data), c.expr, c.delim, c.mode, got, want)
		}
	}
	t.Logf("subdict: %d cases, %d true", len(scs), hits)
}

var crossGrains = map[string]any{
	"os": "Debian", "os_family": "Debian", "roles": []any{"web", "db"}, "num": int64(3), "virtual": true,
	"ipv4": []any{"10.1.2.3", "127.0.0.1"}, "ipv6": []any{"::1", "fe80::1"}, "kernel": "Linux",
	"nested": map[string]any{"a": map[string]any{"b": "c:d"}},
}

var crossPillar = map[string]any{
	"role": "web", "env": "Prod", "ports": []any{int64(80), int64(443)}, "deep": map[string]any{"k": "v"},
}

var crossNodegroups = map[string]any{
	"webs":   "web* or G@roles:web",
	"dbs":    []any{"db1", "db2"},
	"combo":  "N@webs and not N@dbs",
	"loop1":  "N@loop2",
	"loop2":  "N@loop1",
	"regexy": "web[0-9]",
	"hosts":  "web1 db1",
	"empty":  "",
}

func compoundWordsPool() []string {
	return []string{"web*", "db?", "*", "web1", "G@os:Debian", "G@os:deb*", "G@roles:web", "G@roles:nope",
		"P@os:(Deb|Red)", "P@os:^x", "I@role:web", "I@env:prod", "J@env:pr.d", "L@web1,db1", "L@x,y", "E@web\\d",
		"E@db", "S@10.0.0.0/8", "S@192.168.0.0/16", "S@10.1.2.3", "S@::1", "S@bad", "N@webs", "N@dbs", "N@combo",
		"N@loop1", "N@nope", "N@regexy", "N@hosts", "N@empty", "G|@nested|a|b|c:d", "G@nested:a:b:c:d", "I@ports:80",
		"G@num:3", "G@virtual:true", "R@x", "X@y", "G@", "web*\n", "(", ")", "and", "or", "not", "and", "or", "not"}
}

func TestCrossCheckCompound(t *testing.T) {
	rng := rand.New(rand.NewPCG(crossSeed()+7, 8))
	pool := compoundWordsPool()
	ids := []string{"web1", "db1", "web22", "other"}
	type cc struct {
		tgt string
		id  string
	}
	var ccs []cc
	for _, tgt := range []string{"web* and not G@os:Deb*", "not not web1", "( )", "not ( )", "( web* ) db*",
		"web* not db*", "and web*", "( or web* )", "N@loop1 or web*", "", "((web*))", "not", "S@bad or web*",
		"not S@bad", "( web* or ( db* and G@os:Debian ) )"} {
		ccs = append(ccs, cc{tgt, "web1"})
	}
	for i := 0; i < 400; i++ {
		n := rng.IntN(6) + 1
		ws := make([]string, n)
		for j := range ws {
			ws[j] = pick(rng, pool)
		}
		ccs = append(ccs, cc{strings.Join(ws, " "), pick(rng, ids)})
	}
	var cases []map[string]any
	for _, c := range ccs {
		cases = append(cases, map[string]any{"op": "match", "type": "compound", "tgt": c.tgt, "id": c.id,
			"grains": crossGrains, "pillar": crossPillar, "nodegroups": crossNodegroups})
	}
	// a few other minion-side matcher types through the same oracle
	others := []struct {
		typ, tgt, delim string
	}{
		{"glob", "web*", ""}, {"pcre", "web", ""}, {"list", "db1,web1", ""}, {"list", "web1", ""},
		{"grain", "os:Debian", ""}, {"grain", "os", ""}, {"grain", "nested|a|b|c:d", "|"}, {"grain_pcre", "os:deb", ""},
		{"pillar", "role:w*", ""}, {"pillar_pcre", "env:pro", ""}, {"pillar_exact", "env:prod", ""},
		{"pillar_exact", "env:pro*", ""}, {"ipcidr", "10.1.0.0/16", ""}, {"ipcidr", "10.1.2.3/16", ""},
		{"ipcidr", "fe80::/10", ""}, {"ipcidr", "10.1.2.3", ""}, {"ipcidr", "10.0.0.0/255.0.0.0", ""},
		{"ipcidr", "10.0.0.0/0.255.255.255", ""}, {"ipcidr", "::0:1", ""}, {"nodegroup", "webs", ""},
		{"nodegroup", "combo", ""}, {"nodegroup", "nope", ""}, {"nodegroup", "loop1", ""},
	}
	for _, o := range others {
		for _, id := range ids {
			cases = append(cases, map[string]any{"op": "match", "type": o.typ, "tgt": o.tgt, "delim": orColon(o.delim),
				"id": id, "grains": crossGrains, "pillar": crossPillar, "nodegroups": crossNodegroups})
		}
	}
	res := runOracle(t, cases)
	m := New(Options{})
	trues := 0
	for i, c := range cases {
		mn := Minion{ID: c["id"].(string), Grains: crossGrains, Pillar: crossPillar, Nodegroups: crossNodegroups}
		typ := c["type"].(string)
		tgt := c["tgt"]
		delim := c["delim"]
		d, _ := delim.(string)
		got, err := m.Match(tgt, typ, d, mn)
		if res[i].Err != "" {
			if got || err == nil {
				t.Errorf("%s %q on %s: Python raised %s, Go gave %v, %v", typ, tgt, mn.ID, res[i].Err, got, err)
			}
			continue
		}
		want := res[i].boolean(t)
		if want {
			trues++
		}
		if got != want {
			t.Errorf("%s %q on %s = %v (err %v), Python %v", typ, tgt, mn.ID, got, err, want)
		}
		if err != nil && got {
			t.Errorf("%s %q: error %v with a true result", typ, tgt, err)
		}
	}
	t.Logf("compound/matchers: %d cases, %d true", len(cases), trues)
}

func orColon(s string) string {
	if s == "" {
		return ":"
	}
	return s
}

func TestCrossCheckMaster(t *testing.T) {
	rng := rand.New(rand.NewPCG(crossSeed()+9, 10))
	accepted := []string{"web1", "Web2", "db1", "db2", "other", "nocache", "bad-ip"}
	cacheData := map[string]any{
		"web1":   map[string]any{"grains": crossGrains, "pillar": crossPillar},
		"Web2":   map[string]any{"grains": map[string]any{"os": "RedHat", "roles": []any{"web"}, "ipv4": []any{"192.168.1.5"}}, "pillar": map[string]any{"role": "web", "env": "dev"}},
		"db1":    map[string]any{"grains": map[string]any{"os": "Debian", "roles": []any{"db"}, "ipv4": []any{"10.9.9.9"}}, "pillar": map[string]any{"role": "db"}},
		"db2":    map[string]any{"grains": map[string]any{"os": "Ubuntu"}, "pillar": nil},
		"other":  map[string]any{"grains": nil, "pillar": map[string]any{"role": "x"}},
		"bad-ip": map[string]any{"grains": map[string]any{"ipv4": []any{"not-an-ip"}, "os": "Debian"}},
	}
	cacheFn := func(id string) (any, any, bool) {
		e, ok := cacheData[id]
		if !ok {
			return nil, nil, false
		}
		mm := e.(map[string]any)
		return mm["grains"], mm["pillar"], true
	}
	type mc struct {
		typ    string
		tgt    any
		delim  string
		greedy bool
		cache  bool
	}
	var mcs []mc
	simple := []mc{
		{typ: "glob", tgt: "*"}, {typ: "glob", tgt: "web*"}, {typ: "glob", tgt: "[!w]*"}, {typ: "pcre", tgt: "web"},
		{typ: "pcre", tgt: "(?i)web"}, {typ: "pcre", tgt: "(x"}, {typ: "list", tgt: "web1,ghost,db1,,web1"},
		{typ: "list", tgt: []any{"db2", "ghost"}}, {typ: "grain", tgt: "os:Debian"}, {typ: "grain", tgt: "roles:web"},
		{typ: "grain_pcre", tgt: "os:(deb|ubu)"}, {typ: "pillar", tgt: "role:web"}, {typ: "pillar_pcre", tgt: "role:w"},
		{typ: "pillar_exact", tgt: "role:web"}, {typ: "pillar_exact", tgt: "role:w*"}, {typ: "grain", tgt: "nested|a|b|c:d", delim: "|"},
		{typ: "ipcidr", tgt: "10.0.0.0/8"}, {typ: "ipcidr", tgt: "192.168.1.5"}, {typ: "ipcidr", tgt: "bogus"},
		{typ: "nodegroup", tgt: "webs"}, {typ: "nodegroup", tgt: "dbs"}, {typ: "nodegroup", tgt: "combo"},
		{typ: "nodegroup", tgt: "nope"}, {typ: "nodegroup", tgt: "loop1"}, {typ: "compound_pillar_exact", tgt: "I@role:web or web*"},
		{typ: "compound_pillar_exact", tgt: "I@role:w*"}, {typ: "compound", tgt: "R@foo or web*"},
		{typ: "compound", tgt: []any{"web*", "or", "db1"}}, {typ: "compound", tgt: "( web*"}, {typ: "compound", tgt: "not not web1"},
		{typ: "compound", tgt: "not L@ghost,db1"}, {typ: "compound", tgt: "L@ghost,db1 and not L@ghost2"},
		{typ: "compound", tgt: "( )"}, {typ: "compound", tgt: "S@10.0.0.0/8 or S@bad"},
	}
	for _, s := range simple {
		for _, g := range []bool{true, false} {
			for _, cch := range []bool{true, false} {
				s.greedy, s.cache = g, cch
				mcs = append(mcs, s)
			}
		}
	}
	pool := compoundWordsPool()
	for i := 0; i < 250; i++ {
		n := rng.IntN(6) + 1
		ws := make([]string, n)
		for j := range ws {
			ws[j] = pick(rng, pool)
		}
		mcs = append(mcs, mc{typ: "compound", tgt: strings.Join(ws, " "), greedy: rng.IntN(2) == 0, cache: rng.IntN(5) != 0})
	}
	var cases []map[string]any
	for _, c := range mcs {
		cs := map[string]any{"op": "check", "type": c.typ, "tgt": c.tgt, "delim": orColon(c.delim), "greedy": c.greedy,
			"accepted": accepted, "nodegroups": crossNodegroups}
		if c.cache {
			cs["cache"] = cacheData
		}
		cases = append(cases, cs)
	}
	res := runOracle(t, cases)
	m := New(Options{})
	for i, c := range mcs {
		var cf CacheFunc
		if c.cache {
			cf = cacheFn
		}
		mins, miss, err := m.CheckMinions(c.tgt, c.typ, c.delim, accepted, cf, crossNodegroups, c.greedy)
		if res[i].Err != "" {
			t.Fatalf("oracle raised for %v: %s", c, res[i].Err)
		}
		var want [2][]string
		if err := json.Unmarshal(res[i].R, &want); err != nil {
			t.Fatalf("oracle result %s: %v", res[i].R, err)
		}
		wantMins := append([]string(nil), want[0]...)
		if c.typ != "list" {
			wantMins = sortedIgnoreCase(wantMins)
			sort.SliceStable(wantMins, func(a, b int) bool { return pyLower(wantMins[a]) < pyLower(wantMins[b]) })
		}
		if fmt.Sprint(mins) != fmt.Sprint(wantMins) || fmt.Sprint(miss) != fmt.Sprint(want[1]) {
			t.Errorf("check_minions(%q, %s, greedy=%v, cache=%v) = %v missing %v (err %v); Salt %v missing %v",
				c.tgt, c.typ, c.greedy, c.cache, mins, miss, err, wantMins, want[1])
		}
	}
}

func TestCrossCheckNodegroupComp(t *testing.T) {
	names := []string{"webs", "dbs", "combo", "loop1", "nope", "regexy", "hosts", "empty"}
	var cases []map[string]any
	for _, n := range names {
		cases = append(cases, map[string]any{"op": "nodegroup_comp", "name": n, "nodegroups": crossNodegroups})
	}
	res := runOracle(t, cases)
	for i, n := range names {
		got, _ := NodegroupComp(n, crossNodegroups)
		var want any
		if err := json.Unmarshal(res[i].R, &want); err != nil {
			t.Fatal(err)
		}
		var wantList []string
		switch w := want.(type) {
		case string: // Salt returns "" on failure
		case []any:
			for _, e := range w {
				wantList = append(wantList, e.(string))
			}
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", wantList) {
			t.Errorf("nodegroup_comp(%q) = %q, Salt %q", n, got, wantList)
		}
	}
}

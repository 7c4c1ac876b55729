package render_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// The differential Jinja corpus (issue 11): testdata/corpus/cases.json
// (written by gen.py from hand/*.txt and generated families) holds
// templates with their extra salt:// files, variables and opts;
// golden.json holds what Salt 3006's own Jinja path (saltjinja.py) made of
// each: the text, or the error class and message. TestCorpus renders every
// case through gsalt and compares; known_differences.txt lists today's
// differences, so the test fails only on a regression.

const corpusDir = "testdata/corpus"

// corpusShow logs the cases whose id matches it, with both results
// (go test ./render -run 'TestCorpus$' -v -corpus.show 'errreport\.').
var corpusShow = flag.String("corpus.show", "", "TestCorpus: log the template and both results of the cases whose id matches this regexp")

// minCorpusCases is the size the issue asks of the corpus.
const minCorpusCases = 2000

// corpusCase is one case of cases.json.
type corpusCase struct {
	ID       string            `json:"id"`
	Category string            `json:"category"`
	Template string            `json:"template"`
	Files    map[string]string `json:"files,omitempty"`
	Name     string            `json:"name,omitempty"`
	Vars     json.RawMessage   `json:"vars,omitempty"`
	Opts     json.RawMessage   `json:"opts,omitempty"`
	Pillar   json.RawMessage   `json:"pillar,omitempty"`
}

// corpusResult is what one engine made of a case: Out, or an error Class
// (undefined, syntax, salt, notfound, error) with its message.
type corpusResult struct {
	ID    string  `json:"id,omitempty"`
	Out   *string `json:"out,omitempty"`
	Class string  `json:"class,omitempty"`
	Exc   string  `json:"exc,omitempty"`
	Error string  `json:"error,omitempty"`
}

func (r corpusResult) String() string {
	if r.Out != nil {
		return fmt.Sprintf("text %q", *r.Out)
	}
	return fmt.Sprintf("%s error %q", r.Class, firstLine(r.Error))
}

// corpusFixture is what every case sees unless it overrides it.
type corpusFixture struct {
	grains, pillar *payload.Map
}

func loadCorpusFixture(t testing.TB) corpusFixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, "grains.json"))
	if err != nil {
		t.Fatal(err)
	}
	gv, err := render.DecodeJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(corpusDir, "pillar.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pv, err := render.Default().Render(context.Background(), src, "yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	grains, _ := gv.(*payload.Map)
	pillar, _ := pv.(*payload.Map)
	if grains == nil || pillar == nil {
		t.Fatal("testdata/corpus: grains.json and pillar.yaml must hold mappings")
	}
	return corpusFixture{grains: grains, pillar: pillar}
}

func loadCorpusCases(t testing.TB) []corpusCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatalf("cases.json: %v", err)
	}
	return cases
}

func decodeMap(t testing.TB, raw json.RawMessage) *payload.Map {
	if len(raw) == 0 {
		return nil
	}
	v, err := render.DecodeJSON(raw)
	if err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	m, _ := v.(*payload.Map)
	return m
}

// corpusEngine renders cases through gsalt's public render API the way
// Salt's jinja renderer renders an SLS file: sls from the case name,
// salt:// imports from a scratch tree of the case's files.
type corpusEngine struct {
	fix  corpusFixture
	root string
}

// filesPrefix stands for the scratch tree in normalized error messages
// (saltjinja.py writes the same).
const filesPrefix = "<files>"

func (e *corpusEngine) render(t testing.TB, n int, c corpusCase) corpusResult {
	dir := filepath.Join(e.root, fmt.Sprint(n))
	name := c.Name
	if name == "" {
		name = "case.sls"
	}
	files := map[string]string{name: c.Template}
	for k, v := range c.Files {
		files[k] = v
	}
	for rel, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := payload.NewMap("id", "corpus", "file_client", "local")
	if o := decodeMap(t, c.Opts); o != nil {
		for _, it := range o.Items() {
			opts.SetKey(it.Key, it.Value)
		}
	}
	// fresh copies for every case: templates may change what they see
	grains, _ := deepCopy(e.fix.grains).(*payload.Map)
	pillar, _ := deepCopy(e.fix.pillar).(*payload.Map)
	if len(c.Pillar) > 0 {
		pillar = decodeMap(t, c.Pillar)
		if pillar == nil {
			pillar = payload.NewMap()
		}
	}
	sls := strings.TrimSuffix(name, ".sls")
	sls = strings.TrimSuffix(strings.ReplaceAll(sls, "/", "."), ".init")
	rc := &render.Context{
		Grains:  grains,
		Pillar:  pillar,
		Opts:    opts,
		Saltenv: "base",
		SLS:     sls,
		Source:  "salt://" + name,
		Path:    filepath.Join(dir, filepath.FromSlash(name)),
		Vars:    decodeMap(t, c.Vars),
		Salt:    &fakeCaller{grains: grains, pillar: pillar},
		Files:   dirFiles(dir),
	}
	r := renderWithDeadline(rc, c.Template, dir)
	normalizeResult(&r)
	return r
}

// deepCopy copies maps and lists of decoded data.
func deepCopy(v any) any {
	switch x := v.(type) {
	case *payload.Map:
		out := payload.NewMap()
		for _, it := range x.Items() {
			out.SetKey(it.Key, deepCopy(it.Value))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// renderWithDeadline renders src through the jinja renderer alone, giving
// up after 20 seconds (a hang is reported as an error class of its own).
func renderWithDeadline(rc *render.Context, src, dir string) corpusResult {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type res struct {
		out any
		err error
	}
	ch := make(chan res, 1)
	go func() {
		out, err := render.Default().Render(ctx, []byte(src), "jinja", rc)
		ch <- res{out, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return gsaltError(r.err, dir)
		}
		s, ok := r.out.(string)
		if !ok {
			return corpusResult{Class: "harness", Error: fmt.Sprintf("jinja returned %T", r.out)}
		}
		return corpusResult{Out: &s}
	case <-ctx.Done():
		return corpusResult{Class: "timeout", Error: "no result after 20s"}
	}
}

// gsaltError classifies a gsalt render error like saltjinja.py classifies
// Salt's: by the message prefix Salt's render_jinja_tmpl gives it.
func gsaltError(err error, dir string) corpusResult {
	msg := err.Error()
	for {
		m, ok := strings.CutPrefix(msg, render.ErrTemplate.Error()+": ")
		if !ok {
			break
		}
		msg = m
	}
	if dir != "" {
		msg = strings.ReplaceAll(msg, dir, filesPrefix)
	}
	r := corpusResult{Error: msg}
	switch {
	case errors.Is(err, render.ErrLimit):
		r.Class = "limit"
	case errors.Is(err, render.ErrNotFound):
		r.Class = "notfound"
	case strings.HasPrefix(msg, "Jinja variable"):
		r.Class = "undefined"
	case strings.HasPrefix(msg, "Jinja syntax error"):
		r.Class = "syntax"
	case strings.HasPrefix(msg, "Problem running salt function"):
		r.Class = "salt"
	default:
		r.Class = "error"
	}
	return r
}

var (
	reObjectAddr = regexp.MustCompile(` at 0x[0-9a-f]+(>|&gt;)`)
	// a 64-bit address a filter changed after repr (upper, replace):
	// twelve hex digits after 0x or 0X
	reBareAddr = regexp.MustCompile(`\b0[xX][0-9a-fA-F]{12}\b`)
)

// normalizeResult replaces object addresses ("<generator object f at
// 0x7f..>") that change from run to run; saltjinja.py does the same for
// the plain repr, the comparisons for both sides' addresses
// a filter changed.
func normalizeResult(r *corpusResult) {
	if r.Out != nil {
		s := reObjectAddr.ReplaceAllString(*r.Out, " at 0x...$1")
		s = reBareAddr.ReplaceAllString(s, "0x...")
		r.Out = &s
	}
	r.Error = reObjectAddr.ReplaceAllString(r.Error, " at 0x...$1")
	r.Error = reBareAddr.ReplaceAllString(r.Error, "0x...")
}

var reLineNo = regexp.MustCompile(`; line \d+`)

// errorReport is the part of an error message the errreport cases
// compare: the whole message (text, file, line, source excerpt) for
// undefined/syntax/salt errors; the first line and line number for other
// errors, whose Salt message also carries a Python traceback.
func errorReport(r corpusResult) string {
	switch r.Class {
	case "undefined", "syntax", "salt":
		return strings.TrimRight(r.Error, "\n")
	}
	rep := firstLine(r.Error)
	if l := reLineNo.FindString(r.Error); l != "" && !strings.Contains(rep, l) {
		rep += l
	}
	return rep
}

// sameResult reports whether gsalt's result matches Salt's: the same text,
// or the same error class (and, for errreport cases, the same report).
func sameResult(c corpusCase, want, got corpusResult) bool {
	if want.Out != nil || got.Out != nil {
		return want.Out != nil && got.Out != nil && *want.Out == *got.Out
	}
	if want.Class != got.Class {
		return false
	}
	if c.Category == "errreport" {
		return errorReport(want) == errorReport(got)
	}
	return true
}

// diffReason is the one-line reason written to known_differences.txt.
func diffReason(want, got corpusResult) string {
	var s string
	switch {
	case want.Out != nil && got.Out != nil:
		s = fmt.Sprintf("text: salt %q, gsalt %q", *want.Out, *got.Out)
	case want.Out != nil:
		s = fmt.Sprintf("gsalt %s error (%s), salt text %q", got.Class, firstLine(got.Error), *want.Out)
	case got.Out != nil:
		s = fmt.Sprintf("salt %s error %s (%s), gsalt text %q", want.Class, want.Exc, firstLine(want.Error), *got.Out)
	case want.Class != got.Class:
		s = fmt.Sprintf("class: salt %s %s (%s), gsalt %s (%s)", want.Class, want.Exc, firstLine(want.Error), got.Class, firstLine(got.Error))
	default:
		s = fmt.Sprintf("report: salt %q, gsalt %q", errorReport(want), errorReport(got))
	}
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

const knownDiffFile = "known_differences.txt"

// readKnown reads known_differences.txt: "<case id> <reason>" lines.
func readKnown(t testing.TB) map[string]string {
	t.Helper()
	known := map[string]string{}
	b, err := os.ReadFile(filepath.Join(corpusDir, knownDiffFile))
	if errors.Is(err, os.ErrNotExist) {
		return known
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, _ := strings.Cut(line, " ")
		known[id] = reason
	}
	return known
}

func writeKnown(t testing.TB, diffs map[string]string) {
	t.Helper()
	ids := make([]string, 0, len(diffs))
	for id := range diffs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	b.WriteString("# Corpus cases where gsalt differs from Salt 3006 today: \"<case id> <reason>\".\n")
	b.WriteString("# TestCorpus fails when a case not listed here differs; rewrite with\n")
	b.WriteString("# `go test ./render -run Corpus -update` (keeps the reasons of cases still listed;\n")
	b.WriteString("# each reason starts with its kind in brackets, then the measured difference).\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "%s %s\n", id, diffs[id])
	}
	if err := os.WriteFile(filepath.Join(corpusDir, knownDiffFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// saltJinja is a running saltjinja.py: one long-lived Python process
// rendering requests with Salt's Jinja environment, JSON lines both ways.
type saltJinja struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startSaltJinja starts saltjinja.py with Salt's source tree on PYTHONPATH.
func startSaltJinja(src string) (*saltJinja, error) {
	dir, err := filepath.Abs(corpusDir)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(saltpeer.Python(), filepath.Join(dir, "saltjinja.py"), dir)
	// a fixed hash seed: set iteration order (union, unique, ...) stays
	// the same between runs
	cmd.Env = append(saltpeer.Env(src), "PYTHONHASHSEED=0")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &saltJinja{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// render sends one case and reads Salt's answer.
func (s *saltJinja) render(c corpusCase) (corpusResult, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return corpusResult{}, err
	}
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		return corpusResult{}, fmt.Errorf("saltjinja.py: %w", err)
	}
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		return corpusResult{}, fmt.Errorf("saltjinja.py: %w", err)
	}
	var r corpusResult
	if err := json.Unmarshal(line, &r); err != nil {
		return corpusResult{}, fmt.Errorf("saltjinja.py answer %q: %w", line, err)
	}
	if r.ID != c.ID {
		return corpusResult{}, fmt.Errorf("saltjinja.py answered %q for %q", r.ID, c.ID)
	}
	r.ID = ""
	return r, nil
}

// kill stops a process that died or hangs.
func (s *saltJinja) kill() {
	_ = s.cmd.Process.Kill()
	_ = s.close()
}

func (s *saltJinja) close() error {
	_ = s.in.Close()
	return s.cmd.Wait()
}

// saltOracle is a saltjinja.py that outlives its own death: a case on
// which the process dies or gives no answer within deadline is retried
// once on a fresh process; a case that does so twice is answered with the
// class "limit" (the process could not bound it: a template allocating
// past the machine's memory brings the OOM killer) and named in killers.
type saltOracle struct {
	src      string
	deadline time.Duration
	logf     func(format string, args ...any)
	sj       *saltJinja
	killers  []string
}

// oracleStartDeadline bounds saltjinja.py's start (Salt's imports and
// loader take seconds, minutes at a load of 40).
const oracleStartDeadline = 180 * time.Second

func (o *saltOracle) start() error {
	sj, err := startSaltJinja(o.src)
	if err != nil {
		return err
	}
	if _, err := renderSaltDeadline(sj, corpusCase{ID: "warmup", Category: "warmup", Template: "x"}, oracleStartDeadline); err != nil {
		sj.kill()
		return fmt.Errorf("saltjinja.py did not start: %w", err)
	}
	o.sj = sj
	return nil
}

// render asks Salt for one case, restarting the process when it dies.
func (o *saltOracle) render(c corpusCase) (corpusResult, error) {
	var last error
	for attempt := 1; attempt <= 2; attempt++ {
		if o.sj == nil {
			if err := o.start(); err != nil {
				return corpusResult{}, err
			}
		}
		r, err := renderSaltDeadline(o.sj, c, o.deadline)
		if err == nil {
			return r, nil
		}
		last = err
		o.logf("saltjinja.py failed on case %s (attempt %d of 2, template %q): %v; restarting it", c.ID, attempt, c.Template, err)
		o.sj.kill()
		o.sj = nil
	}
	o.killers = append(o.killers, c.ID)
	return corpusResult{Class: "limit", Exc: "died", Error: fmt.Sprintf("saltjinja.py died or hung twice on this case: %v", last)}, nil
}

func (o *saltOracle) close() error {
	if o.sj == nil {
		return nil
	}
	err := o.sj.close()
	o.sj = nil
	return err
}

// corpusUpdate narrows -update to some cases (a family) so a new family
// does not cost a run of the whole corpus through Salt.
var corpusUpdate = flag.String("corpus.update", "", "TestCorpus -update with GSALT_SALT_SRC: ask Salt only for the cases whose id matches this regexp (and cases without a golden result); keep the other golden results")

// updateCorpusGolden regenerates cases.json (gen.py) and golden.json
// (every case, or those -corpus.update selects, through saltjinja.py).
func updateCorpusGolden(t *testing.T, src string) {
	gen := exec.Command(saltpeer.Python(), filepath.Join(corpusDir, "gen.py"), corpusDir)
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("gen.py: %v\n%s", err, out)
	}
	cases := loadCorpusCases(t)
	golden := map[string]corpusResult{}
	var only *regexp.Regexp
	if *corpusUpdate != "" {
		var err error
		if only, err = regexp.Compile(*corpusUpdate); err != nil {
			t.Fatalf("-corpus.update: %v", err)
		}
		golden = loadCorpusGolden(t)
	}
	o := &saltOracle{src: src, deadline: 120 * time.Second, logf: t.Logf}
	asked := 0
	for _, c := range cases {
		if _, have := golden[c.ID]; have && only != nil && !only.MatchString(c.ID) {
			continue
		}
		r, err := o.render(c)
		if err != nil {
			_ = o.close()
			t.Fatal(err)
		}
		if r.Class != "" && r.Class != "undefined" && r.Class != "syntax" && r.Class != "salt" {
			r.Error = errorReport(r) // drop Python's traceback
		}
		golden[c.ID] = r
		asked++
	}
	if err := o.close(); err != nil {
		t.Fatalf("saltjinja.py: %v", err)
	}
	t.Logf("golden.json: %d cases rendered by Salt, %d kept", asked, len(cases)-asked)
	if len(o.killers) > 0 {
		t.Logf("saltjinja.py died or hung twice on %d cases (golden class limit): %s", len(o.killers), strings.Join(o.killers, " "))
	}
	writeGolden(t, cases, golden) // only the cases of cases.json

}

func writeGolden(t *testing.T, cases []corpusCase, golden map[string]corpusResult) {
	var b strings.Builder
	b.WriteString("{\n")
	for i, c := range cases {
		k, _ := json.Marshal(c.ID)
		var vb strings.Builder
		enc := json.NewEncoder(&vb)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(golden[c.ID]); err != nil {
			t.Fatal(err)
		}
		v := strings.TrimSuffix(vb.String(), "\n")
		sep := ","
		if i == len(cases)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "%s: %s%s\n", k, v, sep)
	}
	b.WriteString("}\n")
	if err := os.WriteFile(filepath.Join(corpusDir, "golden.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func loadCorpusGolden(t testing.TB) map[string]corpusResult {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, "golden.json"))
	if err != nil {
		t.Fatalf("no golden.json (run with -update and GSALT_SALT_SRC): %v", err)
	}
	golden := map[string]corpusResult{}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatalf("golden.json: %v", err)
	}
	return golden
}

func TestCorpus(t *testing.T) {
	if testutil.Update() {
		if src := saltpeer.Src(); src != "" {
			updateCorpusGolden(t, src)
		} else {
			t.Log("GSALT_SALT_SRC unset: golden.json kept, only known_differences.txt is rewritten")
		}
	}
	cases := loadCorpusCases(t)
	if len(cases) < minCorpusCases {
		t.Fatalf("corpus has %d cases, want at least %d", len(cases), minCorpusCases)
	}
	golden := loadCorpusGolden(t)
	known := readKnown(t)
	eng := &corpusEngine{fix: loadCorpusFixture(t), root: t.TempDir()}
	var show *regexp.Regexp
	if *corpusShow != "" {
		var err error
		if show, err = regexp.Compile(*corpusShow); err != nil {
			t.Fatalf("-corpus.show: %v", err)
		}
	}

	type tally struct{ equal, total int }
	perCat := map[string]*tally{}
	var regressions, fixed []string
	diffs := map[string]string{}
	for n, c := range cases {
		want, ok := golden[c.ID]
		if !ok {
			t.Fatalf("case %s has no golden result: run `go test ./render -run Corpus -update` with GSALT_SALT_SRC", c.ID)
		}
		got := eng.render(t, n, c)
		normalizeResult(&want)
		if show != nil && show.MatchString(c.ID) {
			t.Logf("%s (equal: %v)\n template: %q\n files: %q\n salt:  %s\n gsalt: %s\n salt report:\n%s\n gsalt report:\n%s",
				c.ID, sameResult(c, want, got), c.Template, c.Files, want, got, errorReport(want), errorReport(got))
		}
		tl := perCat[c.Category]
		if tl == nil {
			tl = &tally{}
			perCat[c.Category] = tl
		}
		tl.total++
		if sameResult(c, want, got) {
			tl.equal++
			if _, listed := known[c.ID]; listed {
				fixed = append(fixed, c.ID)
			}
			continue
		}
		reason := diffReason(want, got)
		if old, listed := known[c.ID]; listed {
			diffs[c.ID] = old
			continue
		}
		diffs[c.ID] = reason
		regressions = append(regressions, fmt.Sprintf("%s: %s\n  template: %q", c.ID, reason, c.Template))
	}

	cats := make([]string, 0, len(perCat))
	for c := range perCat {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	var all tally
	var report strings.Builder
	fmt.Fprintf(&report, "%-18s %6s %6s %7s\n", "category", "equal", "cases", "agree")
	for _, c := range cats {
		tl := perCat[c]
		all.equal += tl.equal
		all.total += tl.total
		fmt.Fprintf(&report, "%-18s %6d %6d %6.1f%%\n", c, tl.equal, tl.total, 100*float64(tl.equal)/float64(tl.total))
	}
	fmt.Fprintf(&report, "%-18s %6d %6d %6.1f%%", "all", all.equal, all.total, 100*float64(all.equal)/float64(all.total))
	t.Logf("gsalt vs Salt 3006 Jinja: %d/%d cases equal\n%s", all.equal, all.total, report.String())

	if len(fixed) > 0 {
		sort.Strings(fixed)
		t.Logf("%d cases on %s now agree with Salt (shrink the list with -update): %s", len(fixed), knownDiffFile, strings.Join(fixed, " "))
	}
	if testutil.Update() {
		writeKnown(t, diffs)
		t.Logf("%s rewritten: %d cases", knownDiffFile, len(diffs))
		return
	}
	if len(regressions) > 0 {
		shown := regressions
		if len(shown) > 40 {
			shown = shown[:40]
		}
		t.Errorf("%d cases differ from Salt and are not on %s (regressions):\n%s", len(regressions), knownDiffFile, strings.Join(shown, "\n"))
	}
}

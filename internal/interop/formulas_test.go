package interop

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"

	"github.com/gsalt/gsalt/internal/saltpeer"
)

// With -update (testutil.Update) TestFormulas rewrites the status column
// of testdata/formulas.txt with what it found.

// formulaGrains pins the grains the formulas' map.jinja files branch on,
// so that both sides render for the same (Debian 12) machine.
const formulaGrains = `grains:
  os: Debian
  os_family: Debian
  osfinger: Debian-12
  osrelease: '12'
  osmajorrelease: 12
  oscodename: bookworm
  osarch: amd64
  cpuarch: x86_64
  kernel: Linux
  init: systemd
  virtual: physical
  num_cpus: 2
  mem_total: 4096
  fqdn: formulas.example.org
  host: formulas
  domain: example.org
  ipv4: [10.0.0.5, 127.0.0.1]
  ipv6: ['::1']
  fqdn_ip4: [10.0.0.5]
  saltversioninfo: [3006, 1]
  pythonversion: [3, 11, 2, final, 0]
`

// formula is one line of testdata/formulas.txt.
type formula struct {
	repo, commit, sls string
	// pillar, when set, is the pillar file the test serves instead of
	// the repository's pillar.example (the optional fifth field): a file
	// below testdata/ for repositories that ship none, or, prefixed with
	// formulaTreePrefix, a file inside the exported repository (its own
	// kitchen test pillar, for one whose pillar.example Salt cannot
	// render).
	pillar string
	// before are the comment and blank lines above it in the file (kept
	// in place by -update, e.g. a "# added by" block header)
	before []string
	// statuses are show_sls, show_lowstate and apply's "equal",
	// "differs", or one of formulaNotes (one comma-separated field in the
	// file).
	statuses [3]string
}

// formulaTreePrefix starts a fifth field of testdata/formulas.txt that
// names a pillar file inside the exported repository rather than below
// testdata/ ("tree:test/salt/pillar/default.sls").
const formulaTreePrefix = "tree:"

// formulaNotes are the statuses of a check that differs for a known reason
// outside gsalt, kept by -update for as long as the check still differs.
var formulaNotes = map[string]string{
	"network": "Salt's result needs the network (a source or source_hash on the internet)",
	"random":  "Salt's own result changes from run to run (the formula uses random values)",
	"saltbug": "Salt raises an exception of its own where gsalt returns the errors it found",
}

// readFormulas reads testdata/formulas.txt: the formulas, the comment
// lines above the first one and those after the last one.
func readFormulas(t *testing.T) (fs []formula, header, trailer []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "formulas.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var pending []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			pending = append(pending, line)
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 && len(f) != 5 {
			t.Fatalf("testdata/formulas.txt: want 4 or 5 fields, got %q", line)
		}
		var st [3]string
		copy(st[:], strings.Split(f[3], ","))
		fm := formula{repo: f[0], commit: f[1], sls: f[2], statuses: st}
		if len(f) == 5 {
			fm.pillar = f[4]
		}
		if len(fs) == 0 {
			header, pending = pending, nil
		}
		fm.before, pending = pending, nil
		fs = append(fs, fm)
	}
	return fs, header, pending
}

// formulaConfig writes a masterless minion configuration serving one
// formula tree with its pillar.example as the only pillar.
func formulaConfig(t *testing.T, dir, tree, pillar string) string {
	t.Helper()
	conf := filepath.Join(dir, "etc")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf(`id: formulas
file_client: local
root_dir: %s
file_roots: {base: [%s]}
pillar_roots: {base: [%s]}
enable_fqdns_grains: False
ipv6: False
log_level: error
%s`, filepath.Join(dir, "root"), tree, pillar, formulaGrains)
	if err := os.WriteFile(filepath.Join(conf, "minion"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// formulaError is a call that printed no result; last is the last
// non-empty line it wrote to stderr (salt-call's final message).
type formulaError struct {
	msg, last string
}

func (e *formulaError) Error() string { return e.msg }

// lastLine is the last non-empty line of text.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// sameFailure reports whether both errors are calls that failed with the
// same final message.
func sameFailure(a, b error) (string, bool) {
	var fa, fb *formulaError
	if errors.As(a, &fa) && errors.As(b, &fb) && fa.last != "" && fa.last == fb.last {
		return fa.last, true
	}
	return "", false
}

// showSLS runs CLI state.show_sls SLS --out json and returns the "local"
// value, or an error naming what went wrong.
func showSLS(cmd *exec.Cmd, replace map[string]string) (any, error) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run() // a failed render exits 1 and still prints its return
	text := out.String()
	for from, to := range replace {
		text = strings.ReplaceAll(text, from, to)
	}
	text = formulaVolatile(text)
	var wrapped map[string]any
	if err := json.Unmarshal([]byte(text), &wrapped); err != nil {
		msg := strings.TrimSpace(errb.String())
		if len(msg) > 300 {
			msg = msg[len(msg)-300:]
		}
		return nil, &formulaError{msg: fmt.Sprintf("no JSON output (%v): %s", err, msg), last: lastLine(errb.String())}
	}
	return wrapped["local"], nil
}

// statusTimeRe matches the clock time postgres-formula's pillar puts in
// config_backup through status.time('%y-%m-%d_%H:%M:%S'): it differs
// between any two runs.
var statusTimeRe = regexp.MustCompile(`backup@\d\d-\d\d-\d\d_\d\d:\d\d:\d\d`)

// formulaVolatile replaces what must differ between two renders (the
// current time) in a JSON output.
func formulaVolatile(text string) string { return statusTimeRe.ReplaceAllString(text, "backup@TIME") }

// firstDiff names the first place (keys sorted) where two decoded JSON
// values differ.
func firstDiff(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: salt %s, gsalt %s", path, short(want), short(got))
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			wv, wok := w[k]
			gv, gok := g[k]
			switch {
			case !wok:
				return fmt.Sprintf("%s/%s: only gsalt has it: %s", path, k, short(gv))
			case !gok:
				return fmt.Sprintf("%s/%s: only salt has it: %s", path, k, short(wv))
			}
			if d := firstDiff(path+"/"+k, wv, gv); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: salt %s, gsalt %s", path, short(want), short(got))
		}
		for i := range w {
			if d := firstDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("%s: salt %s, gsalt %s", path, short(want), short(got))
	}
	return ""
}

func short(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// formulaChecks are the three functions TestFormulas compares, in the
// order of formulas.txt's status column.
var formulaChecks = []string{"show_sls", "show_lowstate", "apply"}

// formulaSalt runs calls through testdata/formulas_salt.py (real Salt's
// salt-call caller, one process) and returns each call's "local" value
// with replace applied, or an error. With reuse, the results are read from
// and written to cacheDir/<name>.json.
func formulaSalt(ctx context.Context, t *testing.T, src, conf string, calls [][]string, names []string, replace map[string]string, cacheDir string, reuse bool) ([]any, []error) {
	t.Helper()
	out := make([]any, len(calls))
	errs := make([]error, len(calls))
	if reuse {
		cached := 0
		for i, n := range names {
			if b, err := os.ReadFile(filepath.Join(cacheDir, n+".json")); err == nil && json.Unmarshal([]byte(formulaVolatile(string(b))), &out[i]) == nil {
				cached++
			}
		}
		if cached == len(calls) {
			age := "of unknown age"
			if st, err := os.Stat(filepath.Join(cacheDir, names[0]+".json")); err == nil {
				age = "written " + time.Since(st.ModTime()).Round(time.Second).String() + " ago"
			}
			t.Logf("%s: Salt's outputs reused from %s (%s; same Salt tree, packages, formula commit and pillar)", filepath.Base(cacheDir), cacheDir, age)
			return out, errs
		}
	}
	cj, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, saltpeer.Python(), filepath.Join(repoRoot(t), "internal", "interop", "testdata", "formulas_salt.py"), conf, string(cj))
	cmd.Env = saltpeer.Env(src)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	for i := range calls {
		if i >= len(lines) || lines[i] == "" {
			msg := strings.TrimSpace(stderr.String())
			if len(msg) > 300 {
				msg = msg[len(msg)-300:]
			}
			errs[i] = fmt.Errorf("no JSON output (%v): %s", runErr, msg)
			continue
		}
		text := lines[i]
		for from, to := range replace {
			text = strings.ReplaceAll(text, from, to)
		}
		text = formulaVolatile(text)
		var wrapped map[string]any
		if err := json.Unmarshal([]byte(text), &wrapped); err != nil {
			errs[i] = fmt.Errorf("bad JSON output: %w", err)
			continue
		}
		if e, ok := wrapped["error"]; ok {
			last, _ := wrapped["last_line"].(string)
			errs[i] = &formulaError{msg: fmt.Sprintf("salt: %v", e), last: last}
			continue
		}
		out[i] = wrapped["local"]
		if reuse {
			if b, err := json.Marshal(out[i]); err == nil && os.MkdirAll(cacheDir, 0o755) == nil {
				_ = os.WriteFile(filepath.Join(cacheDir, names[i]+".json"), b, 0o644)
			}
		}
	}
	return out, errs
}

// normalizeApply drops what differs between two runs of the same states
// (start_time, duration) from a state.apply return, sorts what Salt
// lists in a set's order, and reduces Python tracebacks in comments to
// their stable parts.
func normalizeApply(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for tag, r := range m {
		if rm, ok := r.(map[string]any); ok {
			// file.recurse walks Python sets of directories and files:
			// its "#### path ####" sections come in a different order
			// from run to run in Salt
			if c, ok := rm["comment"].(string); ok && strings.HasSuffix(tag, "_|-recurse") && strings.HasPrefix(c, "#### ") {
				sections := strings.Split("\n\n"+c, "\n\n#### ")[1:]
				sort.Strings(sections)
				rm["comment"] = "#### " + strings.Join(sections, "\n\n#### ")
			}
			delete(rm, "start_time")
			delete(rm, "duration")
			// a Python traceback's frames (Salt's and Jinja's source
			// files and lines) have no counterpart in gsalt: compare the
			// exception and its message (saltpeer.StableTraceback)
			if c, ok := rm["comment"].(string); ok {
				rm["comment"] = saltpeer.StableTraceback(c)
			}
			// a refusing __virtual__ of salt.utils.napalm names the state
			// module's file, wherever Salt is installed
			if c, ok := rm["comment"].(string); ok {
				rm["comment"] = saltModuleFileRe.ReplaceAllString(c, "(SALT/$1)")
			}
			// file.directory's clean list comes from a Python set: its
			// order changes from run to run in Salt
			if c, ok := rm["comment"].(string); ok && strings.HasPrefix(c, cleanPrefix) {
				lines := strings.Split(strings.TrimSuffix(strings.TrimPrefix(c, cleanPrefix), "\n"), "\n")
				sort.Strings(lines)
				rm["comment"] = cleanPrefix + strings.Join(lines, "\n") + "\n"
			}
			// so is the list of failed requisites
			if c, ok := rm["comment"].(string); ok && strings.HasPrefix(c, failedPrefix) {
				ids := strings.Split(strings.TrimPrefix(c, failedPrefix), ", ")
				sort.Strings(ids)
				rm["comment"] = failedPrefix + strings.Join(ids, ", ")
			}
		}
	}
	return v
}

// normalizeErrors reduces the Python tracebacks in a list of render
// errors (what show_sls, show_lowstate and apply return when an SLS does
// not render: Salt's message carries the Jinja exception's traceback
// before "; line N") to their stable parts, as normalizeApply does for
// comments (saltpeer.StableTraceback).
func normalizeErrors(v any) any {
	l, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(l))
	for i, e := range l {
		if s, ok := e.(string); ok {
			e = saltpeer.StableTraceback(s)
		}
		out[i] = e
	}
	return out
}

// saltModuleFileRe matches a Salt module's file in parentheses
// ("(/usr/lib/python3/dist-packages/salt/states/netntp.py)").
var saltModuleFileRe = regexp.MustCompile(`\(/\S*/salt/((?:states|modules)/\w+\.py)\)`)

// cleanPrefix starts file.directory's comment listing what would change.
const cleanPrefix = "The following files will be changed:\n"

// failedPrefix starts the comment of a state whose requisites failed.
const failedPrefix = "One or more requisite failed: "

// TestFormulas runs the top SLS of each saltstack-formulas repository in
// testdata/formulas.txt (exported by scripts/formulas.sh into
// GSALT_FORMULAS_DIR), with its pillar.example as pillar (or the file below
// testdata/ its line's fifth field names, e.g. napalm-salt's examples/router,
// whose NAPALM states Salt without the NAPALM library and gsalt-call away
// from a napalm proxy both refuse in apply), through real
// Salt 3006's `salt-call --local` and through `gsalt-call --local`:
// state.show_sls SLS, state.show_lowstate (a top file assigning SLS) and
// state.apply SLS test=True (start_time and duration ignored; package and
// service states query this machine, the same for both sides; run it as
// root so that both sides can read what they query). It prints formula ×
// (show_sls, show_lowstate, apply) equal/different with the first
// difference. show_sls and apply get the pillar Salt compiled (as
// pillar=...), so that they compare the states; show_lowstate takes no
// pillar argument and uses each side's own pillar, and the pillar column
// says whether gsalt-call's pillar.items equals Salt's. Python tracebacks
// in apply's comments are compared by their stable parts (exception class,
// message, the text around them: saltpeer.StableTraceback). It fails when
// a check whose status in formulas.txt is "equal" differs now (-update
// rewrites the statuses, keeping a formulaNotes reason while the check
// still differs).
//
// With GSALT_FORMULAS_REUSE=1 Salt's outputs are kept in
// $GSALT_FORMULAS_DIR/.salt-out and reused by the next run (for working
// on gsalt's side), keyed by the formula commit, the pillar's name and
// content, the grains, the Salt driver script, every file of the Salt tree
// and the machine's package database (formulaCacheKey), and each reuse is
// logged with the age of the answer; other files of the machine the states
// read (under /etc) are not in the key. gsalt's outputs are written beside
// them in $GSALT_FORMULAS_DIR/.gsalt-out for comparing by hand.
// GSALT_FORMULAS_ONLY (comma-separated names such as "sudoers-formula")
// runs only those formulas; the others keep their recorded statuses.
func TestFormulas(t *testing.T) {
	root := os.Getenv("GSALT_FORMULAS_DIR")
	if root == "" {
		t.Skip("formulas: GSALT_FORMULAS_DIR is not set (export the formulas with scripts/formulas.sh); skipping the formula corpus")
	}
	src := saltpeer.Require(t)
	formulas, header, trailer := readFormulas(t)
	bin := proc.Build(t, "./cmd/gsalt-call")
	reuse := os.Getenv("GSALT_FORMULAS_REUSE") == "1"
	var saltStamp string
	if reuse {
		saltStamp = saltTreeStamp(t, src)
	}
	only := map[string]bool{}
	for _, n := range strings.Split(os.Getenv("GSALT_FORMULAS_ONLY"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			only[n] = true
		}
	}

	// Salt's pip module runs pip with the Python Salt itself runs on
	// (sys.executable); gsalt's runs the python3 found on PATH: put
	// Salt's interpreter first, so that both ask the same pip
	gsaltPath := append(os.Environ(), "PATH="+filepath.Dir(saltpeer.Python())+string(os.PathListSeparator)+os.Getenv("PATH"))

	type row struct {
		name, sls, pillar string
		// random counts the masked leaves of a pillar that draws
		// random values: "pillar+show_lowstate", or ""
		random  string
		results [3]string
		detail  string
	}
	var rows []row
	var equal [3]int
	for i, f := range formulas {
		name := f.repo[strings.IndexByte(f.repo, '/')+1:]
		if len(only) > 0 && !only[name] {
			continue
		}
		tree := filepath.Join(root, name)
		r := row{name: name, sls: f.sls}
		status := [3]string{"differs", "differs", "differs"}
		func() {
			examplePath := filepath.Join(tree, "pillar.example")
			if rel, ok := strings.CutPrefix(f.pillar, formulaTreePrefix); ok {
				examplePath = filepath.Join(tree, rel)
			} else if f.pillar != "" {
				examplePath = filepath.Join(repoRoot(t), "testdata", f.pillar)
			}
			if _, err := os.Stat(tree); err != nil {
				r.results = [3]string{"not exported", "-", "-"}
				r.detail = "run scripts/formulas.sh"
				return
			}
			work := t.TempDir()
			pillar := filepath.Join(work, "pillar")
			top := filepath.Join(work, "top")
			for _, d := range []string{pillar, top} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			example, err := os.ReadFile(examplePath)
			if err != nil {
				t.Fatal(err)
			}
			testutil.WriteFile(t, filepath.Join(pillar, "example.sls"), string(example), 0o644)
			testutil.WriteFile(t, filepath.Join(pillar, "top.sls"), "base:\n  '*':\n    - example\n", 0o644)
			testutil.WriteFile(t, filepath.Join(top, "top.sls"), "base:\n  '*':\n    - "+f.sls+"\n", 0o644)
			roots := tree + ", " + top
			saltDir, gsaltDir := filepath.Join(work, "salt"), filepath.Join(work, "gsalt")
			saltConf := formulaConfig(t, saltDir, roots, pillar)
			gsaltConf := formulaConfig(t, gsaltDir, roots, pillar)
			replace := func(dir string) map[string]string {
				return map[string]string{tree: "FORMULA", top: "TOP", dir: "ROOT"}
			}
			// Salt runs pillar.items and the three checks in one process
			// (testdata/formulas_salt.py: salt-call's caller, started once).
			// Its outputs, with GSALT_FORMULAS_REUSE=1, are cached under a
			// key of everything they depend on (formulaCacheKey), so that
			// a changed Salt tree, package set, pillar or formula commit
			// never reuses a stale answer
			cacheDir := filepath.Join(root, ".salt-out", name+"@"+f.commit+"@"+formulaCacheKey(t, saltStamp, f, example))
			// a second pillar.items (after the calls that take the first
			// one's pillar) shows whether the pillar draws random values
			names := append(append([]string{"pillar"}, formulaChecks...), "pillar_2")
			saltCalls := [][]string{
				{"pillar.items"},
				{"state.show_sls", f.sls, "pillar=@pillar.items"},
				{"state.show_lowstate"},
				{"state.apply", f.sls, "test=True", "pillar=@pillar.items"},
				{"pillar.items"},
			}
			// Salt's calls get one generous deadline (a loaded
			// machine makes Python slow); each gsalt call its own
			saltCtx, saltCancel := context.WithTimeout(context.Background(), 20*time.Minute)
			saltOut, saltErr := formulaSalt(saltCtx, t, src, saltConf, saltCalls, names, replace(saltDir), cacheDir, reuse)
			saltCancel()
			// A pillar that draws random values (findRandom): the pillar
			// column and show_lowstate, where each side compiles its own
			// pillar, are compared with the drawn leaves masked, those
			// found by running Salt's call twice (show_lowstate again, in
			// a second process, only for such a formula).
			var pillarMask, lowMask randomMask
			if saltErr[0] == nil && saltErr[4] == nil {
				pillarMask = findRandom(saltOut[0], saltOut[4])
			}
			if len(pillarMask) > 0 && saltErr[2] == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
				again, againErr := formulaSalt(ctx, t, src, saltConf, [][]string{{"state.show_lowstate"}}, []string{"show_lowstate_2"}, replace(saltDir), cacheDir, reuse)
				cancel()
				if againErr[0] == nil {
					lowMask = findRandom(saltOut[2], again[0])
				}
				r.random = fmt.Sprintf("%d+%d", len(pillarMask), len(lowMask))
			}
			gsalt := func(args ...string) (any, error) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, filepath.Join(bin, "gsalt-call"), append([]string{"-c", gsaltConf, "--local", "--out", "json"}, args...)...)
				cmd.Env = gsaltPath
				return showSLS(cmd, replace(gsaltDir))
			}
			// show_sls and apply render the states with the pillar Salt
			// compiled from pillar.example (pillar=...), so that the
			// comparison is about the states; whether gsalt compiles the
			// same pillar itself is reported on its own.
			var pillarArg []string
			wantPillar, perr := saltOut[0], saltErr[0]
			gotPillar, _ := gsalt("pillar.items")
			if perr == nil {
				if reflect.DeepEqual(pillarMask.apply(wantPillar), pillarMask.apply(gotPillar)) {
					r.pillar = "equal"
				} else {
					r.pillar = "different"
				}
				pj, err := json.Marshal(wantPillar)
				if err != nil {
					t.Fatal(err)
				}
				pillarArg = []string{"pillar=" + string(pj)}
			} else {
				r.pillar = "salt failed"
			}
			calls := [][]string{
				append([]string{"state.show_sls", f.sls}, pillarArg...),
				{"state.show_lowstate"},
				append([]string{"state.apply", f.sls, "test=True"}, pillarArg...),
			}
			for c, args := range calls {
				want, werr := saltOut[c+1], saltErr[c+1]
				got, gerr := gsalt(args...)
				want, got = normalizeErrors(want), normalizeErrors(got)
				if c == 2 {
					want, got = normalizeApply(want), normalizeApply(got)
				}
				if c == 1 {
					want, got = lowMask.apply(want), lowMask.apply(got)
				}
				if reuse && gerr == nil {
					dump := filepath.Join(root, ".gsalt-out", filepath.Base(cacheDir))
					if b, err := json.MarshalIndent(got, "", "  "); err == nil && os.MkdirAll(dump, 0o755) == nil {
						_ = os.WriteFile(filepath.Join(dump, formulaChecks[c]+".json"), b, 0o644)
					}
				}
				var result, detail string
				switch {
				case werr != nil && gerr != nil:
					result, detail = "both failed", "salt: "+werr.Error()+"; gsalt: "+gerr.Error()
					if last, ok := sameFailure(werr, gerr); ok {
						result, detail = "both failed", "same final message: "+last
						status[c] = "bothfail"
					}
				case werr != nil:
					result, detail = "salt failed", werr.Error()+"; gsalt returned "+short(got)
				case gerr != nil:
					result, detail = "gsalt failed", gerr.Error()
				default:
					if d := firstDiff("", want, got); d != "" {
						result, detail = "different", d
						if l, ok := want.([]any); ok && c != 1 {
							detail = "salt could not render it: " + short(l)
						}
					} else {
						result = "equal"
						status[c] = "equal"
						equal[c]++
					}
				}
				r.results[c] = result
				if detail != "" && r.detail == "" {
					r.detail = formulaChecks[c] + ": " + detail
				}
			}
		}()
		for c, check := range formulaChecks {
			was := f.statuses[c]
			switch {
			case was == "equal" && status[c] != "equal":
				t.Errorf("%s %s: was equal to Salt, now %s: %s", name, check, r.results[c], r.detail)
			case was == "bothfail" && status[c] != "bothfail" && status[c] != "equal":
				t.Errorf("%s %s: failed as in Salt, now %s: %s", name, check, r.results[c], r.detail)
			case was != "equal" && status[c] == "equal":
				t.Logf("%s %s: now equal to Salt (run with -update to record it)", name, check)
			}
		}
		for c := range status {
			if _, known := formulaNotes[f.statuses[c]]; known && status[c] != "equal" {
				status[c] = f.statuses[c]
			}
		}
		formulas[i].statuses = status
		rows = append(rows, r)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "gsalt-call vs salt-call --local, %d formulas: show_sls %d equal, show_lowstate %d equal, apply test=True %d equal\n",
		len(rows), equal[0], equal[1], equal[2])
	fmt.Fprintf(&b, "%-20s %-18s %-10s %-12s %-13s %-12s %s\n", "formula", "sls", "pillar", "show_sls", "show_lowstate", "apply test", "first difference")
	for _, r := range rows {
		detail := strings.ReplaceAll(r.detail, "\n", `\n`)
		if r.random != "" {
			detail = "(random leaves masked, pillar+show_lowstate: " + r.random + ") " + detail
		}
		fmt.Fprintf(&b, "%-20s %-18s %-10s %-12s %-13s %-12s %s\n", r.name, r.sls, r.pillar, r.results[0], r.results[1], r.results[2], detail)
	}
	t.Log("\n" + b.String())

	if testutil.Update() {
		// each formula's line is rewritten where it is: comments and
		// blocks of the file keep their places
		var out strings.Builder
		for _, h := range header {
			out.WriteString(h + "\n")
		}
		for _, f := range formulas {
			for _, l := range f.before {
				out.WriteString(l + "\n")
			}
			line := fmt.Sprintf("%s %s %s %s", f.repo, f.commit, f.sls, strings.Join(f.statuses[:], ","))
			if f.pillar != "" {
				line += " " + f.pillar
			}
			out.WriteString(line + "\n")
		}
		for _, l := range trailer {
			out.WriteString(l + "\n")
		}
		if err := os.WriteFile(filepath.Join(repoRoot(t), "testdata", "formulas.txt"), []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// saltTreeStamp identifies what Salt's answers for a formula depend on
// besides the formula and its pillar: the interpreter, every file of the
// Salt source tree and the shim (path, size, modification time), and the
// machine's package database (package and service states query it). A
// change to any of them changes formulaCacheKey.
func saltTreeStamp(t *testing.T, src string) string {
	t.Helper()
	h := sha256.New()
	fmt.Fprintf(h, "python %s\n", saltpeer.Python())
	for _, dir := range []string{filepath.Join(src, "salt"), saltpeer.Pyshim()} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			if d.IsDir() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s %d %d\n", path, info.Size(), info.ModTime().UnixNano())
			return nil
		})
		if err != nil {
			t.Fatalf("formulas: stamping the Salt tree: %v", err)
		}
	}
	if b, err := os.ReadFile("/var/lib/dpkg/status"); err == nil {
		fmt.Fprintf(h, "dpkg %x\n", sha256.Sum256(b))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// formulaCacheKey is the cache key of Salt's outputs for one corpus line:
// the Salt stamp (saltTreeStamp), the line's pillar name and content, the
// pinned grains and the Salt driver script. The formula commit is part of
// the directory name beside it.
func formulaCacheKey(t *testing.T, stamp string, f formula, pillar []byte) string {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(repoRoot(t), "internal", "interop", "testdata", "formulas_salt.py"))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s %s\n%s\n", stamp, f.commit, f.pillar, formulaGrains)
	h.Write(pillar)
	h.Write(script)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

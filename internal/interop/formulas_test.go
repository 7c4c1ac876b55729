package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
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
	repo, commit, sls, status string
}

func readFormulas(t *testing.T) ([]formula, []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "formulas.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var fs []formula
	var header []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			header = append(header, line)
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("testdata/formulas.txt: want 4 fields, got %q", line)
		}
		fs = append(fs, formula{f[0], f[1], f[2], f[3]})
	}
	return fs, header
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
	var wrapped map[string]any
	if err := json.Unmarshal([]byte(text), &wrapped); err != nil {
		msg := strings.TrimSpace(errb.String())
		if len(msg) > 300 {
			msg = msg[len(msg)-300:]
		}
		return nil, fmt.Errorf("no JSON output (%v): %s", err, msg)
	}
	return wrapped["local"], nil
}

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

// TestFormulas renders the top SLS of each saltstack-formulas repository
// in testdata/formulas.txt (exported by scripts/formulas.sh into
// GSALT_FORMULAS_DIR), with its pillar.example as pillar, through
// `salt-call --local state.show_sls` of real Salt 3006 and through
// `gsalt-call --local state.show_sls`, and prints formula × equal/different
// with the first difference. Both state renders get the pillar Salt
// compiled (as pillar=...); the pillar column says whether gsalt-call's own
// pillar.items is the same. It fails when a formula whose status in
// formulas.txt is "equal" differs now (-update rewrites the statuses).
func TestFormulas(t *testing.T) {
	root := os.Getenv("GSALT_FORMULAS_DIR")
	if root == "" {
		t.Skip("formulas: GSALT_FORMULAS_DIR is not set (export the formulas with scripts/formulas.sh); skipping the formula corpus")
	}
	src := saltpeer.Require(t)
	formulas, header := readFormulas(t)
	bin := proc.Build(t, "./cmd/gsalt-call")

	type row struct{ name, sls, pillar, result, detail string }
	var rows []row
	equal := 0
	for i, f := range formulas {
		name := f.repo[strings.IndexByte(f.repo, '/')+1:]
		tree := filepath.Join(root, name)
		r := row{name: name, sls: f.sls}
		status := "differs"
		func() {
			if _, err := os.Stat(filepath.Join(tree, "pillar.example")); err != nil {
				r.result, r.detail = "not exported", "run scripts/formulas.sh"
				return
			}
			work := t.TempDir()
			pillar := filepath.Join(work, "pillar")
			if err := os.MkdirAll(pillar, 0o755); err != nil {
				t.Fatal(err)
			}
			example, err := os.ReadFile(filepath.Join(tree, "pillar.example"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pillar, "example.sls"), example, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pillar, "top.sls"), []byte("base:\n  '*':\n    - example\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			saltDir, gsaltDir := filepath.Join(work, "salt"), filepath.Join(work, "gsalt")
			saltConf := formulaConfig(t, saltDir, tree, pillar)
			gsaltConf := formulaConfig(t, gsaltDir, tree, pillar)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			salt := func(args ...string) *exec.Cmd {
				return saltpeer.Command(ctx, src, "salt-call", append([]string{"-c", saltConf, "--local", "--out", "json"}, args...)...)
			}
			gsalt := func(args ...string) *exec.Cmd {
				return exec.CommandContext(ctx, filepath.Join(bin, "gsalt-call"), append([]string{"-c", gsaltConf, "--local", "--out", "json"}, args...)...)
			}
			// Both sides render the states with the pillar Salt compiled
			// from pillar.example (pillar=...), so that the comparison is
			// about the states; whether gsalt compiles the same pillar
			// itself is reported on its own.
			args := []string{"state.show_sls", f.sls}
			wantPillar, perr := showSLS(salt("pillar.items"), nil)
			gotPillar, _ := showSLS(gsalt("pillar.items"), nil)
			if perr == nil {
				if reflect.DeepEqual(wantPillar, gotPillar) {
					r.pillar = "equal"
				} else {
					r.pillar = "different"
				}
				pj, err := json.Marshal(wantPillar)
				if err != nil {
					t.Fatal(err)
				}
				args = append(args, "pillar="+string(pj))
			} else {
				r.pillar = "salt failed"
			}
			want, werr := showSLS(salt(args...), map[string]string{tree: "FORMULA", saltDir: "ROOT"})
			got, gerr := showSLS(gsalt(args...), map[string]string{tree: "FORMULA", gsaltDir: "ROOT"})
			switch {
			case werr != nil && gerr != nil:
				r.result, r.detail = "both failed", "salt: "+werr.Error()+"; gsalt: "+gerr.Error()
			case werr != nil:
				r.result, r.detail = "salt failed", werr.Error()+"; gsalt returned "+short(got)
			case gerr != nil:
				r.result, r.detail = "gsalt failed", gerr.Error()
			default:
				if d := firstDiff("", want, got); d != "" {
					r.result, r.detail = "different", d
					if l, ok := want.([]any); ok {
						r.detail = "salt could not render it: " + short(l)
					}
				} else {
					r.result = "equal"
					status = "equal"
					equal++
				}
			}
		}()
		if f.status == "equal" && status != "equal" {
			t.Errorf("%s: was equal to Salt, now %s: %s", name, r.result, r.detail)
		}
		if f.status != "equal" && status == "equal" {
			t.Logf("%s: now equal to Salt (run with -update to record it)", name)
		}
		formulas[i].status = status
		rows = append(rows, r)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "state.show_sls, gsalt-call vs salt-call: %d/%d formulas equal\n", equal, len(formulas))
	fmt.Fprintf(&b, "%-20s %-18s %-12s %-13s %s\n", "formula", "sls", "pillar", "show_sls", "first difference")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-20s %-18s %-12s %-13s %s\n", r.name, r.sls, r.pillar, r.result, strings.ReplaceAll(r.detail, "\n", `\n`))
	}
	t.Log("\n" + b.String())

	if testutil.Update() {
		var out strings.Builder
		for _, h := range header {
			out.WriteString(h + "\n")
		}
		for _, f := range formulas {
			fmt.Fprintf(&out, "%s %s %s %s\n", f.repo, f.commit, f.sls, f.status)
		}
		if err := os.WriteFile(filepath.Join(repoRoot(t), "testdata", "formulas.txt"), []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

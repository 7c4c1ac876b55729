package states

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// updateOnly limits -update to the named golden cases (comma-separated).
var updateOnly = flag.String("update-only", "", "with -update, regenerate only these golden cases (comma-separated names)")

// goldenCase is one salt-call command line (function and arguments),
// with optional extra minion configuration (YAML lines).
type goldenCase struct {
	name string
	args []string
	conf string
}

var goldenCases = []goldenCase{
	{"show_top", []string{"state.show_top"}, ""},
	{"show_lowstate", []string{"state.show_lowstate"}, ""},
	{"show_highstate", []string{"state.show_highstate"}, ""},
	{"show_states", []string{"state.show_states"}, ""},
	{"highstate", []string{"state.apply"}, ""},
	{"highstate_test", []string{"state.highstate", "test=True"}, ""},
	{"highstate_exclude", []string{"state.highstate", "exclude=pkg"}, ""},
	{"sls_main", []string{"state.sls", "main"}, ""},
	{"sls_two_mods", []string{"state.apply", "rt.order,rt.failhard"}, ""},
	{"show_sls_main", []string{"state.show_sls", "main"}, ""},
	{"show_low_sls_main", []string{"state.show_low_sls", "main"}, ""},
	{"show_sls_names", []string{"state.show_sls", "rt.names"}, ""},
	{"show_sls_kwstr", []string{"state.show_sls", "rt.kwstr"}, ""},
	{"show_low_sls_names", []string{"state.show_low_sls", "rt.names"}, ""},
	{"order", []string{"state.apply", "rt.order"}, ""},
	{"show_low_sls_order", []string{"state.show_low_sls", "rt.order"}, ""},
	{"checks", []string{"state.apply", "rt.checks"}, ""},
	{"checks_test", []string{"state.apply", "rt.checks", "test=True"}, ""},
	{"reqs", []string{"state.apply", "rt.reqs"}, ""},
	{"reqs_test", []string{"state.apply", "rt.reqs", "test=True"}, ""},
	{"prereq", []string{"state.apply", "rt.prereq"}, ""},
	{"prereq_test", []string{"state.apply", "rt.prereq", "test=True"}, ""},
	{"failhard", []string{"state.apply", "rt.failhard"}, ""},
	{"failhard_opt", []string{"state.apply", "rt.order,rt.failhard", "failhard=True"}, ""},
	{"failhard_test", []string{"state.apply", "rt.failhard", "test=True"}, ""},
	{"failhard_req", []string{"state.apply", "rt.failhard_req"}, ""},
	{"listen", []string{"state.apply", "rt.listen"}, ""},
	{"use", []string{"state.apply", "rt.use"}, ""},
	{"show_sls_use", []string{"state.show_sls", "rt.use"}, ""},
	{"extend", []string{"state.apply", "rt.extend"}, ""},
	{"show_sls_extend", []string{"state.show_sls", "rt.extend"}, ""},
	{"show_lowstate_extend", []string{"state.show_low_sls", "rt.extend"}, ""},
	{"retry", []string{"state.apply", "rt.retry"}, ""},
	{"retry_test", []string{"state.apply", "rt.retry", "test=True"}, ""},
	{"misc", []string{"state.apply", "rt.misc"}, ""},
	{"parallel", []string{"state.apply", "rt.parallel"}, ""},
	{"parallel_test", []string{"state.apply", "rt.parallel", "test=True"}, ""},
	{"template_str", []string{"state.template_str", "a:\n  test.succeed_with_changes\nb: test.succeed_without_changes\nc:\n  test.configurable_test_state:\n    - changes: False\n    - require:\n      - test: a\n"}, ""},
	{"template_str_errors", []string{"state.template_str", "include:\n  - x\na:\n  test.nop\n"}, ""},
	{"template_str_short", []string{"state.template_str", "a:\n  test.nop:\n"}, ""},
	{"template_file", []string{"state.template", templateFile}, ""},
	{"template_missing", []string{"state.template", "/nonexistent/x.sls"}, ""},
	{"top_fn", []string{"state.top", "match_top.sls"}, "nodegroups: {grp: golden}"},
	{"top_fn_test", []string{"state.top", "alt_top.sls", "test=True"}, ""},
	{"top_fn_alt", []string{"state.top", "alt_top.sls"}, ""},
	{"mock", []string{"state.apply", "rt.reqs", "mock=True"}, ""},
	{"recursive", []string{"state.apply", "rt.recursive"}, ""},
	{"exclude_sls", []string{"state.sls", "rt.reqs,rt.use", "exclude=rt.use"}, ""},
	{"exclude_all", []string{"state.sls", "rt.reqs", "exclude=rt.reqs"}, ""},
	{"sls_id", []string{"state.sls_id", "onch_yes", "rt.reqs"}, ""},
	{"single", []string{"state.single", "test.succeed_with_changes", "foo"}, ""},
	{"single_kw", []string{"state.single", "test.succeed_without_changes", "name=bar", "comment=hi"}, ""},
	{"single_bad", []string{"state.single", "testnop", "foo"}, ""},
	{"single_missing", []string{"state.single", "test.nope", "foo"}, ""},
	{"pillar_override", []string{"state.sls", "rt.misc", "pillar={a: 1}"}, ""},
	{"err_nofun", []string{"state.apply", "err.nofun"}, ""},
	{"err_nofun_show", []string{"state.show_sls", "err.nofun"}, ""},
	{"err_missing", []string{"state.apply", "err.missing"}, ""},
	{"err_notdict", []string{"state.apply", "err.notdict"}, ""},
	{"err_notdict_show", []string{"state.show_sls", "err.notdict"}, ""},
	{"err_trailing", []string{"state.apply", "err.trailing"}, ""},
	{"err_extend", []string{"state.apply", "err.extend"}, ""},
	{"err_extend_show", []string{"state.show_sls", "err.extend"}, ""},
	{"err_req", []string{"state.apply", "err.req"}, ""},
	{"err_inc", []string{"state.apply", "err.inc"}, ""},
	{"err_list", []string{"state.apply", "err.list"}, ""},
	{"err_verify", []string{"state.show_sls", "err.verify"}, ""},
	{"err_conflict", []string{"state.apply", "err.conflict"}, ""},
	{"err_recursive", []string{"state.show_sls", "err.recursive"}, ""},
	{"err_relative", []string{"state.apply", "err.relative"}, ""},
	{"err_badext", []string{"state.apply", "err.badext"}, ""},
	{"err_reqin_dot", []string{"state.apply", "err.reqin_dot"}, ""},
	{"err_nosls", []string{"state.sls", "nonexistent"}, ""},
	{"err_other_env", []string{"state.sls", "other", "saltenv=dev"}, ""},
	{"err_dotreq", []string{"state.apply", "err.dotreq"}, ""},
	{"runtime_loop", []string{"state.apply", "rt.runtime_loop"}, ""},
	{"sls_dev", []string{"state.sls", "devstate", "saltenv=dev"}, ""},
	{"show_top_dev", []string{"state.show_top", "saltenv=dev"}, ""},
	{"highstate_dev", []string{"state.apply", "saltenv=dev"}, ""},
	{"exclude_id", []string{"state.sls", "rt.reqs", "exclude=[{id: changes}, {sls: nothing}]"}, ""},
	{"sls_id_nochanges", []string{"state.sls_id", "nochanges", "rt.reqs"}, ""},
	{"sls_list_mods", []string{"state.sls", "[rt.order, rt.names]"}, ""},
	{"show_low_sls_reqs", []string{"state.show_low_sls", "rt.reqs"}, ""},
	{"slots", []string{"state.apply", "rt.slots"}, ""},
	{"slot_space", []string{"state.apply", "rt.slot_space"}, ""},
	{"top_same", []string{"state.show_top"}, "top_file_merging_strategy: same"},
	{"top_merge_all", []string{"state.show_top"}, "top_file_merging_strategy: merge_all"},
	{"top_env_order", []string{"state.show_top"}, "env_order: [dev, base]"},
	{"top_matchers", []string{"state.show_top"}, "state_top: match_top.sls\nnodegroups: {grp: golden}"},
	{"top_matchers_merge_all", []string{"state.show_top"}, "state_top: salt://match_top.sls\nnodegroups: {grp: golden}\ntop_file_merging_strategy: merge_all"},
	{"top_state_top_saltenv", []string{"state.show_top"}, "state_top_saltenv: dev"},
	{"lowstate_no_auto_order", []string{"state.show_lowstate"}, "state_auto_order: False"},
	{"failhard_conf", []string{"state.apply", "rt.reqs"}, "failhard: True"},
	{"renderer_json", []string{"state.sls", "rt.json"}, "renderer: json"},
	{"disabled_requisites", []string{"state.apply", "rt.reqs"}, "disabled_requisites: [require_in, onchanges]"},
}

// goldenDir is where the goldens and the SLS tree live.
const goldenDir = "testdata/golden"

// golden is one stored expectation.
type golden struct {
	Args    []string        `json:"args"`
	Retcode int             `json:"retcode"`
	Return  json.RawMessage `json:"return"`
}

// saltConfig writes a masterless minion config serving the golden tree.
func saltConfig(t *testing.T, srv, dev, extra string) string {
	t.Helper()
	dir := t.TempDir()
	pillar := filepath.Join(dir, "pillar")
	if err := os.MkdirAll(pillar, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`id: golden
file_client: local
root_dir: %s
file_roots: {base: [%s], dev: [%s]}
pillar_roots: {base: [%s]}
enable_fqdns_grains: False
ipv6: False
log_level: error
%s
`, filepath.Join(dir, "root"), srv, dev, pillar, extra)
	if err := os.WriteFile(filepath.Join(dir, "minion"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// templateFile is the minion-side file of the state.template case, at a
// fixed path because __sls__ is the path.
const templateFile = "/tmp/gsalt-states-golden-tpl/t.sls"

// writeTemplateFile lays down templateFile.
func writeTemplateFile(t *testing.T) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(templateFile), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "{% set who = 'world' %}\nhello:\n  test.succeed_with_changes:\n    - name: hello {{ who }}\nafter:\n  test.succeed_without_changes:\n    - require:\n      - test: hello\nshort: test.nop\n"
	if err := os.WriteFile(templateFile, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// regenerate runs every case through real Salt and rewrites the goldens.
func regenerate(t *testing.T) {
	writeTemplateFile(t)
	src := saltpeer.Require(t)
	srv, err := filepath.Abs(filepath.Join(goldenDir, "srv"))
	if err != nil {
		t.Fatal(err)
	}
	dev, err := filepath.Abs(filepath.Join(goldenDir, "dev"))
	if err != nil {
		t.Fatal(err)
	}
	only := map[string]bool{}
	for _, n := range strings.Split(*updateOnly, ",") {
		if n != "" {
			only[n] = true
		}
	}
	for _, gc := range goldenCases {
		if len(only) > 0 && !only[gc.name] {
			continue
		}
		conf := saltConfig(t, srv, dev, gc.conf)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		args := append([]string{"-c", conf, "--local", "--retcode-passthrough", "--out", "json"}, gc.args...)
		cmd := saltpeer.Command(ctx, src, "salt-call", args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		runErr := cmd.Run()
		cancel()
		rc := 0
		if runErr != nil {
			if ee, ok := runErr.(interface{ ExitCode() int }); ok {
				rc = ee.ExitCode()
			} else {
				t.Fatalf("%s: %v", gc.name, runErr)
			}
		}
		var wrapped map[string]json.RawMessage
		if err := json.Unmarshal(out.Bytes(), &wrapped); err != nil {
			t.Fatalf("%s: salt-call printed no JSON (%v):\n%s\n%s", gc.name, err, out.String(), errb.String())
		}
		g := golden{Args: gc.args, Retcode: rc, Return: wrapped["local"]}
		data, err := json.MarshalIndent(g, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(goldenDir, gc.name+".json"), append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// yamlWord converts a command-line value the way salt-call's yamlify does
// for the simple values these cases use.
func yamlWord(t *testing.T, s string) any {
	t.Helper()
	if s == "" {
		return ""
	}
	// yamlify_arg keeps strings with tabs or line breaks as they are.
	if strings.ContainsAny(s, "\t\r\n") {
		return s
	}
	v, err := render.YAML{}.Render(context.Background(), s, nil)
	if err != nil {
		return s
	}
	if m, ok := v.(*payload.Map); ok && m.Len() == 0 && !strings.HasPrefix(s, "{") {
		return s
	}
	return v
}

// cliArgs turns salt-call words into positional args and kwargs.
func cliArgs(t *testing.T, words []string) ([]any, *payload.Map) {
	var args []any
	kw := &payload.Map{}
	for _, w := range words {
		if k, v, ok := modules.ParseKwarg(w); ok {
			kw.Set(k, yamlWord(t, v))
			continue
		}
		args = append(args, yamlWord(t, w))
	}
	return args, kw
}

// TestGolden compares state.* returns with real Salt's on the golden tree.
func TestGolden(t *testing.T) {
	if testutil.Update() {
		regenerate(t)
	}
	writeTemplateFile(t)
	srv := filepath.Join(goldenDir, "srv")
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(goldenDir, gc.name+".json"))
			if err != nil {
				t.Fatalf("missing golden (run with -update and GSALT_SALT_SRC): %v", err)
			}
			var g golden
			if err := json.Unmarshal(data, &g); err != nil {
				t.Fatal(err)
			}
			want, err := render.DecodeJSON(g.Return)
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, map[string]string{"base": srv, "dev": filepath.Join(goldenDir, "dev")})
			if gc.conf != "" {
				extra, err := render.YAML{}.Render(context.Background(), gc.conf, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range extra.(*payload.Map).Items() {
					h.opts.SetKey(it.Key, it.Value)
				}
			}
			args, kw := cliArgs(t, gc.args[1:])
			res := h.run(t, gc.args[0], args, kw)
			if res.Retcode != g.Retcode {
				t.Errorf("retcode = %d, want %d", res.Retcode, g.Retcode)
			}
			got := normalizeGot(res.Return)
			if diffs := diffValues("", want, got, false); len(diffs) > 0 {
				gj, _ := json.MarshalIndent(got, "", "  ")
				t.Errorf("differs from Salt:\n%s\ngot:\n%s", strings.Join(diffs, "\n"), gj)
			}
		})
	}
}

// normalizeGot makes a return comparable with decoded JSON (ints stay
// int64, []string become []any).
func normalizeGot(v any) any {
	switch x := v.(type) {
	case []string:
		return stringsToAny(x)
	case *payload.Map:
		out := &payload.Map{}
		for _, it := range x.Items() {
			out.SetKey(keyText(it.Key), normalizeGot(it.Value))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeGot(e)
		}
		return out
	case int:
		return int64(x)
	}
	return v
}

// isRet reports whether m is a state return (it has __run_num__).
func isRet(m *payload.Map) bool { return m.Has("__run_num__") && m.Has("comment") }

// exceptionTail is the last line of an "An exception occurred" comment.
func exceptionTail(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// diffValues compares want (from Salt) with got, key order included, except
// for the timing values of state returns, the traceback of exception
// comments and the key order of test.mod_watch returns (Go's Ret has one
// key order).
func diffValues(path string, want, got any, unordered bool) []string {
	switch w := want.(type) {
	case *payload.Map:
		g, ok := got.(*payload.Map)
		if !ok {
			return []string{fmt.Sprintf("%s: want dict, got %s", path, pyRepr(got))}
		}
		ret := isRet(w)
		if ret {
			if c, _ := w.Get("comment"); c == "Watch statement fired." {
				unordered = true
			}
		}
		var diffs []string
		if w.Len() != g.Len() {
			diffs = append(diffs, fmt.Sprintf("%s: keys %v, got %v", path, w.Keys(), g.Keys()))
			return diffs
		}
		for i, it := range w.Items() {
			k := keyText(it.Key)
			var gv any
			if unordered {
				v, ok := g.Get(k)
				if !ok {
					diffs = append(diffs, fmt.Sprintf("%s: missing key %q", path, k))
					continue
				}
				gv = v
			} else {
				gi := g.Items()[i]
				if keyText(gi.Key) != k {
					diffs = append(diffs, fmt.Sprintf("%s: key %d is %q, want %q (keys %v, want %v)", path, i, keyText(gi.Key), k, g.Keys(), w.Keys()))
					return diffs
				}
				gv = gi.Value
			}
			if ret && (k == "start_time" || k == "duration") {
				continue
			}
			if ret && k == "comment" {
				if ws, ok := it.Value.(string); ok && strings.HasPrefix(ws, "An exception occurred in this state: ") {
					gs, _ := gv.(string)
					if !strings.HasPrefix(gs, "An exception occurred in this state: ") || exceptionTail(gs) != exceptionTail(ws) {
						diffs = append(diffs, fmt.Sprintf("%s.comment: %q, want the exception of %q", path, gs, ws))
					}
					continue
				}
			}
			diffs = append(diffs, diffValues(path+"."+k, it.Value, gv, false)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %s, got %s", path, pyRepr(want), pyRepr(got))}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, diffValues(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], false)...)
		}
		return diffs
	case float64:
		if n, ok := orderValue(got); ok && n == w {
			return nil
		}
	default:
		if py.Equal(want, got) && fmt.Sprintf("%T", want) == fmt.Sprintf("%T", got) {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s: want %s, got %s", path, pyRepr(want), pyRepr(got))}
}

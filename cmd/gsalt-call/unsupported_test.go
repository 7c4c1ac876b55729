package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// TestUnsupportedFeaturesNamed is issue 11's check 4, tried as a new user
// would: `gsalt-call --local state.sls` over a small tree whose formulas
// use what gsalt cannot run. Each failure names the file (or SLS), the
// line, and what is not supported.
func TestUnsupportedFeaturesNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gsalt-call")
	}
	dir := t.TempDir()
	bin := filepath.Join(proc.Build(t, "./cmd/gsalt-call"), "gsalt-call")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := filepath.Join(dir, "srv")
	ext := filepath.Join(dir, "extmods")
	conf := filepath.Join(dir, "conf")
	write(filepath.Join(conf, "minion"), "id: unsupported\nfile_client: local\nroot_dir: "+filepath.Join(dir, "root")+
		"\ncachedir: "+filepath.Join(dir, "cache")+"\nextension_modules: "+ext+
		"\nfile_roots:\n  base:\n    - "+srv+"\npillar_roots:\n  base:\n    - "+filepath.Join(dir, "pillar")+"\n")
	write(filepath.Join(srv, "pyrend.sls"), "#!py\ndef run():\n    return {}\n")
	write(filepath.Join(srv, "makorend.sls"), "#!mako|yaml\na: 1\n")
	write(filepath.Join(srv, "trans.sls"), "line one\n{% trans %}Hello{% endtrans %}\n")
	write(filepath.Join(srv, "custmod.sls"), "a:\n  test.show_notification:\n    - text: {{ salt['mymod.hello']() }}\n")
	write(filepath.Join(srv, "_modules", "mymod.py"), "def hello():\n    return 'hi'\n")
	write(filepath.Join(srv, "custstate.sls"), "a:\n  mystate.present:\n    - value: 1\n")
	write(filepath.Join(srv, "_states", "mystate.py"), "def present(name, value):\n    return {'name': name, 'result': True, 'changes': {}, 'comment': ''}\n")
	write(filepath.Join(srv, "custrend.sls"), "#!myrend\na: 1\n")
	write(filepath.Join(srv, "_renderers", "myrend.py"), "def render(data, saltenv='base', sls='', **kwargs):\n    return {}\n")
	write(filepath.Join(srv, "brk.sls"), "{% from 'lib.jinja' import x %}\na: {{ x }}\n")
	write(filepath.Join(srv, "lib.jinja"), "{# lib #}\n{% set x = 1 %}\n{% break %}\n")

	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"-c", conf, "--local", "--out", "json"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "SALT_SALTFILE=")
		out, _ := cmd.Output()
		var ret struct {
			Local any `json:"local"`
		}
		if err := json.Unmarshal(out, &ret); err != nil {
			t.Fatalf("gsalt-call %v: output %q: %v", args, out, err)
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(ret.Local)
		return b.String()
	}
	// the custom modules are synced as Salt does; gsalt lists them, unloaded
	got := run("saltutil.sync_all")
	for _, w := range []string{"modules.mymod", "states.mystate", "renderers.myrend"} {
		if !strings.Contains(got, w+" (not loaded: gsalt does not run Python extension modules)") {
			t.Fatalf("saltutil.sync_all lacks %s: %s", w, got)
		}
	}
	for _, tc := range []struct {
		sls  string
		want []string // the file or SLS, the line, what is unsupported
	}{
		{"pyrend", []string{"salt://pyrend.sls, line 1", `the \"py\" renderer`, "not supported by gsalt"}},
		{"makorend", []string{"salt://makorend.sls, line 1", `the \"mako\" renderer`, "not supported by gsalt"}},
		{"trans", []string{"base:trans", "line 2", "Encountered unknown tag 'trans'", "{% trans %}Hello{% endtrans %}    <======================"}},
		{"custmod", []string{"base:custmod", "line 3", "mymod is a custom Python execution module", "mymod.py", "gsalt does not load Python extension modules"}},
		{"custstate", []string{"State 'mystate.present' was not found in SLS 'custstate'", "mystate is a custom Python state module", "mystate.py", "gsalt does not load Python extension modules"}},
		{"custrend", []string{"salt://custrend.sls, line 1", `unknown renderer \"myrend\"`, "myrend is a custom Python renderer", "myrend.py", "gsalt does not load Python extension modules"}},
		// the error is in the imported lib.jinja: Salt's report (which gsalt
		// matches, see render's errreport corpus) gives its line and excerpt
		{"brk", []string{"base:brk", "line 3", "'break' outside loop", "{% break %}    <======================"}},
	} {
		t.Run(tc.sls, func(t *testing.T) {
			got := run("state.sls", tc.sls)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("state.sls %s: %s\nlacks %q", tc.sls, got, w)
				}
			}
		})
	}
}

package interop

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
)

// jinjaRetcodeSLS calls execution functions from Jinja that return with a
// non-zero retcode without raising (cmd.run of a failing command,
// test.retcode) next to one that raises: devstack-formula tests a file's
// existence with salt['cmd.run']('test -f ...'), which Salt returns as "".
const jinjaRetcodeSLS = `{% set out = salt['cmd.run']('echo hi; exit 3', python_shell=True) %}
{% set missing = salt['cmd.run']('test -f /nonexistent/gsalt-retcode') %}
{% set rc = salt['test.retcode'](5) %}
{% set all = salt['cmd.run_all']('echo err >&2; exit 4', python_shell=True) %}
r:
  test.nop:
    - out: {{ out|json }}
    - missing: {{ missing|json }}
    - notmissing: {{ (not missing)|json }}
    - rc: {{ rc|json }}
    - all_rc: {{ all.retcode }}
    - all_err: {{ all.stderr|json }}
`

// TestJinjaCallRetcode: state.show_sls of jinjaRetcodeSLS through
// gsalt-call --local equals Salt 3006's salt-call --local
// (testdata/interop/jinja_retcode.golden.json, written by -update with
// GSALT_SALT_SRC; compared live too when Salt is there).
func TestJinjaCallRetcode(t *testing.T) {
	bin, ctx, cancel := startInterop(t)
	defer cancel()
	dir := t.TempDir()
	srv := filepath.Join(dir, "srv")
	testutil.WriteFile(t, filepath.Join(srv, "retcode.sls"), jinjaRetcodeSLS, 0o644)
	conf := localCallConf(t, dir, srv, "rcmin")
	decode := func(out []byte) any {
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("show_sls output %q: %v", out, err)
		}
		return v["local"]
	}
	got := decode(run(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-call"), "-c", conf, "--local", "--out", "json", "state.show_sls", "retcode"), true))
	golden := filepath.Join(repoRoot(t), "testdata", "interop", "jinja_retcode.golden.json")
	var want any
	if src := saltpeer.Src(); src != "" {
		want = decode(run(t, saltpeer.Command(ctx, src, "salt-call", "-c", conf, "--local", "--out", "json", "state.show_sls", "retcode"), true))
		if testutil.Update() {
			b, err := json.MarshalIndent(want, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			testutil.WriteFile(t, golden, string(b)+"\n", 0o644)
		}
	} else {
		b, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (regenerate with GSALT_SALT_SRC and -update)", err)
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("state.show_sls retcode: %s", firstDiff("", want, got))
	}
}

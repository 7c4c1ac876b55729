package interop

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
)

// unsupportedCases are formulas using something gsalt cannot run or the
// template gets wrong: state.show_sls must fail with a message naming the
// SLS, the line and what is wrong. salt: the Jinja cases fail in Salt too,
// and both messages must agree on the headline and the marked line.
var unsupportedCases = []struct {
	sls   string
	files map[string]string
	want  []string // substrings of gsalt-call's message
	salt  bool     // compare with salt-call --local
}{
	{
		sls:   "pyren",
		files: map[string]string{"pyren.sls": "#!py\n\ndef run():\n    return {'a': {'test.nop': []}}\n"},
		want:  []string{"Rendering SLS 'base:pyren' failed: salt://pyren.sls, line 1: ", `the "py" renderer`, "not supported by gsalt"},
	},
	{
		sls:   "impmissing",
		files: map[string]string{"impmissing.sls": "x:\n  test.nop: []\n{% import_yaml 'sub/missing.yaml' as m %}\ny:\n  test.nop:\n    - v: {{ m }}\n"},
		want:  []string{"Rendering SLS 'base:impmissing' failed: Jinja error: sub/missing.yaml; line 3", "{% import_yaml 'sub/missing.yaml' as m %}    <======================"},
		salt:  true,
	},
	{
		sls:   "unkfilter",
		files: map[string]string{"unkfilter.sls": "x:\n  test.nop: []\ny:\n  test.nop:\n    - v: {{ 'a'|nosuchfilter }}\n"},
		want:  []string{"Jinja syntax error: No filter named 'nosuchfilter'.; line 5", "- v: {{ 'a'|nosuchfilter }}    <======================"},
		salt:  true,
	},
	{
		sls:   "unkmod",
		files: map[string]string{"unkmod.sls": "x:\n  test.nop: []\ny:\n  test.nop:\n    - v: {{ salt['nope.fn']() }}\n"},
		want:  []string{"Jinja variable 'salt.utils.templates.AliasedLoader object' has no attribute 'nope.fn'; line 5", "{{ salt['nope.fn']() }}    <======================"},
		salt:  true,
	},
	{
		// moosefs-formula's pillar.example has such a line: yaml.v3
		// reports the line above the enclosing mapping; gsalt also names
		// the line where the text stops parsing (Salt's PyYAML message
		// names both marks, in its own words)
		sls:   "yamlflow",
		files: map[string]string{"yamlflow.sls": "mfs:\n  file.managed:\n    - name: /tmp/x\n    - mode: \"NEVER\",\"ALWAYS\"\n    - user: root\n"},
		want:  []string{"Rendering SLS 'base:yamlflow' failed: ", "did not find expected key", `the text stops parsing at line 4:     - mode: "NEVER","ALWAYS"`},
	},
	{
		sls: "libcaller",
		files: map[string]string{
			"libcaller.sls": "{% from 'sub/lib.jinja' import m %}\nx:\n  test.nop:\n    - v: {{ m() }}\n",
			"sub/lib.jinja": "{% macro m() %}\n{{ 'a'|nosuchfilter2 }}\n{% endmacro %}\n",
		},
		want: []string{"Jinja syntax error: No filter named 'nosuchfilter2'.", "sub/lib.jinja(2):", "{{ 'a'|nosuchfilter2 }}    <======================"},
		salt: true,
	},
}

// pyTraceback matches a Python traceback Salt puts in a render error
// (gsalt has no Python stack to show).
var pyTraceback = regexp.MustCompile(`(?m)^Traceback \(most recent call last\):\n(?:(?:  .*|\[\.\.\.\])\n)*(?:\w[\w.]*: .*\n)?`)

// errorParts is a render error's headline (with its "; line N") and the
// excerpt line carrying the marker, the parts gsalt and Salt must share.
func errorParts(msg string) (head, marked string) {
	msg = pyTraceback.ReplaceAllString(msg, "")
	head, rest, _ := strings.Cut(msg, "\n")
	if m := regexp.MustCompile(`(?m)^; line \d+$`).FindString(rest); m != "" && !strings.Contains(head, "; line ") {
		head += m
	}
	for _, l := range strings.Split(msg, "\n") {
		if strings.Contains(l, "<======================") {
			marked = l
			break
		}
	}
	// the cache path of an imported file differs between the two runs
	head = regexp.MustCompile(`/\S*/files/base/`).ReplaceAllString(head, "<files>/")
	return head, marked
}

// showSLSError runs state.show_sls and returns the one error string it
// must return.
func showSLSError(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out := run(t, cmd, true)
	var v map[string][]string
	if err := json.Unmarshal(out, &v); err != nil || len(v["local"]) != 1 {
		t.Fatalf("%s: want one error string, got %q (%v)", strings.Join(cmd.Args, " "), out, err)
	}
	return v["local"][0]
}

// TestLocalCallUnsupported: gsalt-call --local state.show_sls of formulas
// using a Python renderer, importing a missing file, an unknown filter, an
// unknown execution module, an unknown filter inside an imported macro
// fails naming the file, line and what; with GSALT_SALT_SRC the Jinja
// cases are compared with salt-call --local.
func TestLocalCallUnsupported(t *testing.T) {
	bin, ctx, cancel := startInterop(t)
	defer cancel()
	dir := t.TempDir()
	srv := filepath.Join(dir, "srv")
	for _, c := range unsupportedCases {
		for name, text := range c.files {
			p := filepath.Join(srv, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	conf := localCallConf(t, dir, srv, "errmin")
	src := saltpeer.Src()
	for _, c := range unsupportedCases {
		t.Run(c.sls, func(t *testing.T) {
			got := showSLSError(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-call"), "-c", conf, "--local", "--out", "json", "state.show_sls", c.sls))
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("gsalt-call state.show_sls %s: message lacks %q:\n%s", c.sls, w, got)
				}
			}
			if !c.salt || src == "" {
				return
			}
			want := showSLSError(t, saltpeer.Command(ctx, src, "salt-call", "-c", conf, "--local", "--out", "json", "state.show_sls", c.sls))
			wh, wm := errorParts(want)
			gh, gm := errorParts(got)
			if wm == "" || !strings.Contains(wh, c.sls) {
				t.Fatalf("salt-call's message has no headline or marked line: %q", want)
			}
			if wh != gh || wm != gm {
				t.Errorf("state.show_sls %s:\nsalt-call:  %q / %q\ngsalt-call: %q / %q", c.sls, wh, wm, gh, gm)
			}
		})
	}
}

// localCallConf writes a masterless minion configuration (id, file_roots
// srv, everything else below dir) into dir/conf and returns that folder,
// for gsalt-call and salt-call --local.
func localCallConf(t *testing.T, dir, srv, id string) string {
	t.Helper()
	root := filepath.Join(dir, "root")
	cfg := "id: " + id + "\nfile_client: local\nroot_dir: " + root + "\ncachedir: " + root + "/cache\npki_dir: " + root +
		"/pki\nlog_file: " + root + "/minion.log\nfile_roots:\n  base: [" + srv + "]\npillar_roots:\n  base: [" + dir +
		"/pillar]\nenable_fqdns_grains: False\nipv6: False\n"
	conf := filepath.Join(dir, "conf")
	testutil.WriteFile(t, filepath.Join(conf, "minion"), cfg, 0o644)
	return conf
}

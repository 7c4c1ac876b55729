package saltfile

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/gsalt/gsalt/internal/saltpeer"
)

// runFlags is the subset of gsalt-run's flags the tests use.
func runFlags() (*pflag.FlagSet, map[string]any) {
	fs := pflag.NewFlagSet("gsalt-run", pflag.ContinueOnError)
	v := map[string]any{}
	v["config-dir"] = fs.StringP("config-dir", "c", "/etc/salt", "")
	v["timeout"] = fs.IntP("timeout", "t", 0, "")
	v["out"] = fs.String("out", "", "")
	fs.StringVar(v["out"].(*string), "output", "", "")
	v["log-level"] = fs.StringP("log-level", "l", "warning", "")
	v["async"] = fs.Bool("async", false, "")
	v["batch"] = fs.StringP("batch", "b", "", "")
	AddFlag(fs)
	return fs, v
}

func values(v map[string]any) map[string]string {
	out := map[string]string{}
	for k, p := range v {
		switch x := p.(type) {
		case *string:
			out[k] = *x
		case *int:
			out[k] = itoa(*x)
		case *bool:
			if *x {
				out[k] = "true"
			} else {
				out[k] = "false"
			}
		}
	}
	return out
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		args    []string
		want    map[string]string
		applied []string
		ignored []string
		section string
		err     error
	}{
		{
			name:    "gsalt section wins over salt's",
			file:    "gsalt-run:\n  timeout: 9\nsalt-run:\n  timeout: 3\n",
			want:    map[string]string{"timeout": "9"},
			applied: []string{"timeout"},
			section: "gsalt-run",
		},
		{
			name:    "salt's section of an existing Saltfile",
			file:    "salt-run:\n  config_dir: /srv/conf\n  output: json\n  log_level: debug\n  async: true\n",
			want:    map[string]string{"config-dir": "/srv/conf", "out": "json", "log-level": "debug", "async": "true"},
			applied: []string{"async", "config-dir", "log-level", "out"},
			section: "salt-run",
		},
		{
			name:    "the command line wins, under any alias",
			file:    "salt-run:\n  timeout: 3\n  output: yaml\n",
			args:    []string{"-t", "5", "--output", "json"},
			want:    map[string]string{"timeout": "5", "out": "json"},
			section: "salt-run",
		},
		{
			name:    "unknown options are ignored and reported",
			file:    "salt-run:\n  roster_file: /x\n  batch: 10%\n",
			want:    map[string]string{"batch": "10%"},
			applied: []string{"batch"},
			ignored: []string{"roster_file"},
			section: "salt-run",
		},
		{
			name: "no section for this tool",
			file: "salt-ssh:\n  config_dir: /x\n",
			want: map[string]string{"config-dir": "/etc/salt"},
		},
		{name: "empty file", file: "", want: map[string]string{"timeout": "0"}},
		{name: "not a mapping", file: "- a\n- b\n", err: ErrInvalid},
		{name: "section not a mapping", file: "salt-run: [1]\n", err: ErrInvalid},
		{name: "bad value for the flag", file: "salt-run:\n  timeout: soon\n", err: ErrInvalid},
		{name: "bad yaml", file: "salt-run: {a: [\n", err: ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "Saltfile")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			fs, v := runFlags()
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			res, err := Apply(fs, path, "gsalt-run", "salt-run")
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := values(v)
			for k, want := range tc.want {
				if got[k] != want {
					t.Errorf("%s = %q, want %q", k, got[k], want)
				}
			}
			if !reflect.DeepEqual(res.Applied, tc.applied) || !reflect.DeepEqual(res.Ignored, tc.ignored) || res.Section != tc.section {
				t.Errorf("result = %+v, want applied %v ignored %v section %q", res, tc.applied, tc.ignored, tc.section)
			}
		})
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	cwd, home, other := filepath.Join(dir, "cwd"), filepath.Join(dir, "home"), filepath.Join(dir, "other", "Saltfile")
	for _, d := range []string{cwd, filepath.Join(home, ".salt"), filepath.Dir(other)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		if err := os.WriteFile(p, []byte("salt: {}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(other)
	homeFile := filepath.Join(home, ".salt", "Saltfile")
	cwdFile := filepath.Join(cwd, "Saltfile")
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name, explicit string
		env            map[string]string
		files          []string
		want           string
		err            error
	}{
		{name: "none", want: ""},
		{name: "home", files: []string{homeFile}, want: homeFile},
		{name: "cwd before home", files: []string{homeFile, cwdFile}, want: cwdFile},
		{name: "environment before cwd", files: []string{cwdFile}, env: map[string]string{"SALT_SALTFILE": other}, want: other},
		{name: "flag before environment", explicit: other, env: map[string]string{"SALT_SALTFILE": "/nonexistent"}, want: other},
		{name: "missing explicit file", explicit: filepath.Join(dir, "nope"), err: ErrNotFound},
		{name: "missing file in the environment", env: map[string]string{"SALT_SALTFILE": filepath.Join(dir, "nope")}, err: ErrNotFound},
		{name: "a directory is not a Saltfile", explicit: cwd, err: ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.Remove(homeFile)
			_ = os.Remove(cwdFile)
			for _, f := range tc.files {
				write(f)
			}
			got, err := Find(tc.explicit, Env{Getenv: env(tc.env), Cwd: cwd, Home: home})
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), "file does not exist.") {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Find = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestAgainstSalt feeds the same Saltfile to Salt 3006's salt-run option
// parser and to gsalt-run's flags, and compares the options that result.
// Salt's parser ends by copying every Saltfile value over the options,
// so there a Saltfile value beats one given on the command line; gsalt
// keeps the documented rule (the command line wins), checked by the
// last case.
func TestAgainstSalt(t *testing.T) {
	src := saltpeer.Require(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "conf")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "master"), []byte("root_dir: "+filepath.Join(dir, "root")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file string
		args       []string
		same, diff []string
	}{
		{name: "values", file: "salt-run:\n  config_dir: CONF\n  timeout: 7\n  output: json\n  log_level: debug\n", same: []string{"config-dir", "timeout", "out", "log-level"}},
		{name: "other tool's section", file: "salt:\n  config_dir: /nowhere\n  output: yaml\nsalt-run:\n  config_dir: CONF\n", same: []string{"config-dir", "out"}},
		{name: "command line", file: "salt-run:\n  config_dir: CONF\n  timeout: 7\n", args: []string{"-t", "3"}, same: []string{"config-dir"}, diff: []string{"timeout"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "Saltfile")
			if err := os.WriteFile(path, []byte(strings.ReplaceAll(tc.file, "CONF", conf)), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := append([]string{"--saltfile", path}, tc.args...)
			cmd := saltpeer.PythonCommand(ctx, src, `
import sys, json
sys.argv[0] = "salt-run"
from salt.utils.parsers import SaltRunOptionParser
opts, _ = SaltRunOptionParser().parse_args(sys.argv[1:] + ["jobs.list_jobs"])
print(json.dumps({"config-dir": opts.config_dir, "timeout": str(opts.timeout), "out": opts.output or "", "log-level": opts.log_level}))
`, args...)
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("salt: %v", err)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			var salt map[string]string
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &salt); err != nil {
				t.Fatalf("salt printed %q: %v", out, err)
			}
			fs, v := runFlags()
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(fs, "gsalt-run", "salt-run"); err != nil {
				t.Fatal(err)
			}
			got := values(v)
			for _, k := range tc.same {
				if got[k] != salt[k] {
					t.Errorf("%s: gsalt %q, Salt %q", k, got[k], salt[k])
				}
			}
			for _, k := range tc.diff {
				if got[k] == salt[k] {
					t.Errorf("%s: gsalt and Salt both %q; the known difference is gone", k, got[k])
				}
			}
		})
	}
}

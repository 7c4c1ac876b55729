package config

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
)

// clientLayout is a home directory and a config directory for LoadClient.
type clientLayout struct {
	name   string
	files  map[string]string // path relative to the test root -> content
	env    map[string]string // values relative to the root when they start with "/"
	option string            // option to compare
}

var clientLayouts = []clientLayout{
	{name: "no saltrc", files: map[string]string{"conf/master": "timeout: 4\n"}, option: "timeout"},
	{name: "home saltrc", files: map[string]string{"conf/master": "timeout: 4\n", "home/.saltrc": "timeout: 9\n"}, option: "timeout"},
	{name: "xdg saltrc", files: map[string]string{"conf/master": "timeout: 4\n", "home/.saltrc": "timeout: 9\n", "home/.config/salt/saltrc": "timeout: 11\n"}, option: "timeout"},
	{name: "xdg dir without saltrc", files: map[string]string{"conf/master": "timeout: 4\n", "home/.saltrc": "timeout: 9\n", "home/.config/salt/other": ""}, option: "timeout"},
	{name: "SALT_CLIENT_CONFIG", files: map[string]string{"conf/master": "timeout: 4\n", "home/.saltrc": "timeout: 9\n", "elsewhere/rc": "timeout: 13\n"}, env: map[string]string{"SALT_CLIENT_CONFIG": "/elsewhere/rc"}, option: "timeout"},
	{name: "SALT_CLIENT_CONFIG missing", files: map[string]string{"conf/master": "timeout: 4\n", "home/.saltrc": "timeout: 9\n"}, env: map[string]string{"SALT_CLIENT_CONFIG": "/elsewhere/none"}, option: "timeout"},
	{name: "includes", files: map[string]string{"conf/master": "include: extra/*.conf\n", "conf/extra/a.conf": "timeout: 6\n", "conf/extra/b.conf": "keep_jobs: 3\n", "conf/master.d/x.conf": "gather_job_timeout: 7\n"}, option: "timeout"},
	{name: "no master file", files: map[string]string{"home/.saltrc": "output: json\n"}, option: "output"},
}

func (c clientLayout) setup(t *testing.T) (root string, env map[string]string) {
	t.Helper()
	root = t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, content := range c.files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(strings.ReplaceAll(content, "ROOT", root)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env = map[string]string{"HOME": filepath.Join(root, "home"), "XDG_CONFIG_HOME": filepath.Join(root, "home", ".config"), "SALT_CLIENT_CONFIG": ""}
	for k, v := range c.env {
		if strings.HasPrefix(v, "/") {
			v = root + v
		}
		env[k] = v
	}
	return root, env
}

// gsaltClient loads the layout with LoadClient and returns the option and
// the debug lines LogSources writes, with the root replaced by ROOT.
func gsaltClient(t *testing.T, c clientLayout) (any, []string) {
	root, env := c.setup(t)
	for k, v := range env {
		t.Setenv(k, v)
	}
	cfg, err := LoadClient(filepath.Join(root, "conf"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	cfg.Opts.LogSources(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
				return slog.Attr{}
			}
			return a
		},
	})))
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		msg := strings.TrimPrefix(l, "msg=")
		if s, err := unquote(msg); err == nil {
			msg = s
		}
		lines = append(lines, strings.ReplaceAll(msg, root, "ROOT"))
	}
	v, _ := cfg.Opts.Get(c.option)
	return v, lines
}

func unquote(s string) (string, error) {
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	var out string
	err := json.Unmarshal([]byte(s), &out)
	return out, err
}

func TestLoadClient(t *testing.T) {
	want := map[string]any{
		"no saltrc": 4, "home saltrc": 9, "xdg saltrc": 11, "xdg dir without saltrc": 4,
		"SALT_CLIENT_CONFIG": 13, "SALT_CLIENT_CONFIG missing": 9, "includes": 6, "no master file": "json",
	}
	for _, c := range clientLayouts {
		t.Run(c.name, func(t *testing.T) {
			got, lines := gsaltClient(t, c)
			if !reflect.DeepEqual(got, want[c.name]) {
				t.Errorf("%s = %#v, want %#v", c.option, got, want[c.name])
			}
			if len(lines) < 2 {
				t.Errorf("LogSources wrote %q, want the master file and the client file", lines)
			}
		})
	}
}

// TestLoadClientAgainstSalt runs Salt 3006's client_config on the same
// layouts and compares the option and the configuration files Salt names
// in its debug log with what gsalt logs.
func TestLoadClientAgainstSalt(t *testing.T) {
	src := saltpeer.Require(t)
	for _, c := range clientLayouts {
		t.Run(c.name, func(t *testing.T) {
			root, env := c.setup(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := saltpeer.PythonCommand(ctx, src, `
import json, logging, sys
lines = []
class H(logging.Handler):
    def emit(self, r):
        m = r.getMessage()
        if m.startswith(("Reading configuration", "Including configuration", "Missing configuration")):
            lines.append(m)
logging.getLogger("salt.config").addHandler(H())
logging.getLogger("salt.config").setLevel(logging.DEBUG)
import salt.config
opts = salt.config.client_config(sys.argv[1] + "/conf/master")
print(json.dumps({"value": opts.get(sys.argv[2]), "lines": [l.replace(sys.argv[1], "ROOT") for l in lines]}))
`, root, c.option)
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("salt: %v", err)
			}
			var salt struct {
				Value any      `json:"value"`
				Lines []string `json:"lines"`
			}
			all := strings.Split(strings.TrimSpace(string(out)), "\n")
			if err := json.Unmarshal([]byte(all[len(all)-1]), &salt); err != nil {
				t.Fatalf("salt printed %q: %v", out, err)
			}
			got, lines := gsaltClient(t, c)
			if f, ok := salt.Value.(float64); ok {
				salt.Value = int(f)
			}
			if !reflect.DeepEqual(got, salt.Value) {
				t.Errorf("%s: gsalt %#v, Salt %#v", c.option, got, salt.Value)
			}
			if !reflect.DeepEqual(lines, salt.Lines) {
				t.Errorf("debug lines differ\ngsalt: %q\nSalt:  %q", lines, salt.Lines)
			}
		})
	}
}

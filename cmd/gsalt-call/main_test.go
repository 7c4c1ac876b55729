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

func TestMain(m *testing.M) { proc.Main(m) }

// TestSaltfileAndDebugLog runs the real gsalt-call binary in a directory
// holding a Saltfile written for salt-call: its config_dir, local and out
// options are used, and -l debug names the Saltfile and the configuration
// files read, as salt-call does.
func TestSaltfileAndDebugLog(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gsalt-call")
	}
	dir := t.TempDir()
	bin := filepath.Join(proc.Build(t, "./cmd/gsalt-call"), "gsalt-call")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conf := filepath.Join(dir, "conf")
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(conf, "minion"), "id: sf-test\nroot_dir: "+filepath.Join(dir, "root")+"\n")
	write(filepath.Join(conf, "minion.d", "extra.conf"), "grains: {role: saltfile}\n")
	work := filepath.Join(dir, "work")
	write(filepath.Join(work, "Saltfile"), "salt-call:\n  config_dir: "+conf+"\n  local: True\n  out: json\n")
	cmd := exec.CommandContext(ctx, bin, "-l", "debug", "grains.get", "role")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "SALT_SALTFILE=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gsalt-call: %v\n%s", err, stderr.String())
	}
	var ret map[string]any
	if err := json.Unmarshal(out, &ret); err != nil || ret["local"] != "saltfile" {
		t.Fatalf("output %q (%v), want {\"local\": \"saltfile\"} in JSON", out, err)
	}
	for _, want := range []string{
		"[INFO    ] Loading Saltfile from '" + filepath.Join(work, "Saltfile") + "'",
		"[DEBUG   ] Reading configuration from " + filepath.Join(conf, "minion"),
		"[DEBUG   ] Including configuration from '" + filepath.Join(conf, "minion.d", "extra.conf") + "'",
	} {
		if !strings.Contains(stderr.String(), want+"\n") {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}

	// A Saltfile named with --saltfile that does not exist is refused.
	cmd = exec.CommandContext(ctx, bin, "--saltfile", filepath.Join(dir, "missing"), "test.ping")
	cmd.Dir = work
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "file does not exist.") {
		t.Fatalf("missing --saltfile: err %v, output %q", err, msg)
	}
}

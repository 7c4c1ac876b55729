package virt

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
)

func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// localConf writes a masterless minion config serving the example's
// salt/ tree, with extra appended.
func localConf(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	text := "id: hv1\nfile_client: local\nroot_dir: " + dir + "/root\nfile_roots: {base: [" + filepath.Join(here(), "salt") + "]}\n" +
		"enable_fqdns_grains: False\nipv6: False\nlog_level: error\n" + extra
	minionD, err := os.ReadFile(filepath.Join(here(), "minion.d", "virt.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "minion.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "minion.d", "virt.conf"), minionD, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "minion"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// showSLS runs state.show_sls hypervisor and returns hv1's data with the
// per-run keys dropped.
func showSLS(t *testing.T, cmd *exec.Cmd) map[string]any {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	var res map[string]map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	data := res["local"]
	if data == nil {
		t.Fatalf("no local in %s", out)
	}
	return data
}

func gsaltCall(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gsalt-call")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/gsalt-call")
	cmd.Dir = filepath.Join(here(), "..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func packages(data map[string]any) []string {
	st, _ := data["hypervisor-packages"].(map[string]any)
	pkg, _ := st["pkg"].([]any)
	for _, a := range pkg {
		if m, ok := a.(map[string]any); ok {
			if l, ok := m["pkgs"].([]any); ok {
				var out []string
				for _, p := range l {
					out = append(out, p.(string))
				}
				return out
			}
		}
	}
	return nil
}

// TestHypervisorFormula: the formula renders on gsalt-call without
// python3-libvirt (gsalt-minion needs none), with it when the minion
// reports a Python (a Salt minion), and, when GSALT_SALT_SRC is set, to
// the same state data as Salt 3006's salt-call for the same grains.
func TestHypervisorFormula(t *testing.T) {
	bin := gsaltCall(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	plain := showSLS(t, exec.CommandContext(ctx, bin, "--local", "-c", localConf(t, ""), "state.show_sls", "hypervisor", "--out", "json"))
	if got := strings.Join(packages(plain), " "); got != "libvirt-daemon-system qemu-system-x86 qemu-utils" {
		t.Errorf("gsalt-minion packages: %q", got)
	}
	py := "grains:\n  pythonexecutable: /usr/bin/python3\n"
	withPy := showSLS(t, exec.CommandContext(ctx, bin, "--local", "-c", localConf(t, py), "state.show_sls", "hypervisor", "--out", "json"))
	if got := strings.Join(packages(withPy), " "); got != "libvirt-daemon-system qemu-system-x86 qemu-utils python3-libvirt" {
		t.Errorf("Salt minion packages: %q", got)
	}
	img, _ := withPy["hypervisor-images"].(map[string]any)
	if b, _ := json.Marshal(img); !strings.Contains(string(b), `"/srv/salt-images"`) {
		t.Errorf("images directory from minion.d/virt.conf: %s", b)
	}

	src := saltpeer.Require(t)
	salt := showSLS(t, saltpeer.Command(ctx, src, "salt-call", "--local", "-c", localConf(t, py), "state.show_sls", "hypervisor", "--out", "json"))
	gj, _ := json.Marshal(withPy)
	sj, _ := json.Marshal(salt)
	if string(gj) != string(sj) {
		t.Errorf("state.show_sls hypervisor differs\n gsalt: %s\n salt:  %s", gj, sj)
	}
}

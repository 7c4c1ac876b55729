package builtin_test

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// writeWheel writes a minimal pure-Python wheel of name==version into
// dir (no build tools, no network).
func writeWheel(t *testing.T, dir, name, version string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	info := name + "-" + version + ".dist-info"
	files := [][2]string{
		{name + "/__init__.py", fmt.Sprintf("__version__ = %q\n", version)},
		{info + "/METADATA", fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: gsalt test package\n", name, version)},
		{info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: gsalt-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var record strings.Builder
	for _, f := range files {
		sum := sha256.Sum256([]byte(f[1]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f[0], base64.RawURLEncoding.EncodeToString(sum[:]), len(f[1]))
	}
	record.WriteString(info + "/RECORD,,\n")
	files = append(files, [2]string{info + "/RECORD", record.String()})
	out, err := os.Create(filepath.Join(dir, name+"-"+version+"-py3-none-any.whl"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	for _, f := range files {
		w, err := zw.Create(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// PipLab is a virtualenv and a --find-links folder of test wheels, with
// pip kept off the network through its environment.
type pipLab struct{ venv, wheels, wheels2 string }

// newPipLab creates the venv with Debian's python3 (python3-venv) and the
// wheels gsalttestpkg 1.0 and 2.0 and gsalttestdep 0.1 (2.0 in a second
// folder, for upgrades).
func newPipLab(t *testing.T) pipLab {
	t.Helper()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("pip tests: no /usr/bin/python3")
	}
	base := t.TempDir()
	lab := pipLab{venv: filepath.Join(base, "gsalt-pipvenv"), wheels: filepath.Join(base, "gsalt-pipwheels"), wheels2: filepath.Join(base, "gsalt-pipwheels2")}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, py, "-m", "venv", lab.venv).CombinedOutput(); err != nil {
		t.Skipf("pip tests: python3 -m venv failed (install python3-venv): %v %s", err, out)
	}
	writeWheel(t, lab.wheels, "gsalttestpkg", "1.0")
	writeWheel(t, lab.wheels, "gsalttestdep", "0.1")
	writeWheel(t, lab.wheels2, "gsalttestpkg", "2.0")
	t.Setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
	t.Setenv("PIP_NO_INDEX", "1")
	t.Setenv("PIP_NO_CACHE_DIR", "1")
	t.Setenv("PIP_NO_INPUT", "1")
	return lab
}

var pipPathRe = regexp.MustCompile(`/[^\s'"]*/gsalt-pip(venv|wheels2|wheels)`)

// pipNormalize puts {venv} and {wheels} for the lab's paths and 0 for
// pids, in both returns.
func pipNormalize(_ string, v any) any {
	switch x := v.(type) {
	case string:
		return pipPathRe.ReplaceAllString(x, "{$1}")
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = pipNormalize("", e)
		}
		return out
	case *payload.Map:
		out := &payload.Map{}
		for _, it := range x.Items() {
			val := pipNormalize("", it.Value)
			if it.Key == "pid" {
				val = int64(0)
			}
			out.SetKey(pipNormalize("", it.Key), val)
		}
		return out
	}
	return v
}

// TestPipGolden installs, lists, upgrades and removes local test wheels
// in a fresh virtualenv through the pip module and compares each return
// with Salt 3006's on the same kind of venv (testdata/golden/pip.json;
// -update-golden regenerates it with Salt; the venv path and pids are
// normalised). The sequence leaves the venv as it found it, so Salt and
// gsalt run it on the same venv.
func TestPipGolden(t *testing.T) {
	lab := newPipLab(t)
	be := []any{"bin_env", lab.venv}
	kw := func(kv ...any) []any { return append(append([]any{}, be...), kv...) }
	calls := []salttest.Call{
		{Name: "version", Fun: "pip.version", Kwargs: be},
		{Name: "version bin", Fun: "pip.version", Kwargs: []any{"bin_env", lab.venv + "/bin/pip"}},
		{Name: "version missing venv", Fun: "pip.version", Kwargs: []any{"bin_env", lab.venv + "/nope"}},
		{Name: "is_installed before", Fun: "pip.is_installed", Args: []any{"gsalttestpkg"}, Kwargs: be},
		{Name: "install", Fun: "pip.install", Args: []any{"gsalttestpkg==1.0"}, Kwargs: kw("no_index", true, "find_links", lab.wheels)},
		{Name: "install nothing", Fun: "pip.install", Kwargs: be},
		{Name: "install bad find_links", Fun: "pip.install", Args: []any{"x"}, Kwargs: kw("find_links", "/nonexistent/gsalt")},
		{Name: "install index conflict", Fun: "pip.install", Args: []any{"x"}, Kwargs: kw("no_index", true, "index_url", "https://example.invalid/simple")},
		{Name: "install bad exists_action", Fun: "pip.install", Args: []any{"x"}, Kwargs: kw("exists_action", "q")},
		{Name: "install bad timeout", Fun: "pip.install", Args: []any{"x"}, Kwargs: kw("timeout", "abc")},
		{Name: "install missing", Fun: "pip.install", Args: []any{"gsalt-no-such-pkg"}, Kwargs: kw("no_index", true, "find_links", lab.wheels)},
		{Name: "install requirements", Fun: "pip.install", Kwargs: kw("requirements", "{dir}/req.txt", "find_links", lab.wheels, "no_index", true),
			Files: map[string]string{"req.txt": "gsalttestdep==0.1\n"}},
		{Name: "is_installed", Fun: "pip.is_installed", Args: []any{"GSaltTestPkg"}, Kwargs: be},
		{Name: "list prefix", Fun: "pip.list", Args: []any{"gsalttest"}, Kwargs: be},
		{Name: "freeze", Fun: "pip.freeze", Kwargs: be},
		{Name: "list_upgrades", Fun: "pip.list_upgrades", Kwargs: be, Opts: nil},
		{Name: "upgrade", Fun: "pip.install", Args: []any{"gsalttestpkg"}, Kwargs: kw("upgrade", true, "find_links", lab.wheels+","+lab.wheels2, "env_vars", payload.NewMap("GSALT_X", int64(1)))},
		{Name: "list after upgrade", Fun: "pip.list", Args: []any{"gsalttestpkg"}, Kwargs: be},
		{Name: "uninstall", Fun: "pip.uninstall", Args: []any{"gsalttestpkg,gsalttestdep"}, Kwargs: be},
		{Name: "uninstall absent", Fun: "pip.uninstall", Args: []any{"gsalttestpkg"}, Kwargs: be},
		{Name: "list after", Fun: "pip.list", Args: []any{"gsalttest"}, Kwargs: be},
	}
	runSuite(t, salttest.Suite{Name: "pip", Calls: calls, Grains: linuxGrains(), Normalize: pipNormalize})
}

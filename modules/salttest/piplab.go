package salttest

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

	"github.com/gsalt/gsalt/wire/payload"
)

// WriteWheel writes a minimal pure-Python wheel of name==version into
// dir (no build tools, no network).
func WriteWheel(t *testing.T, dir, name, version string) {
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
type PipLab struct{ Venv, Wheels, Wheels2 string }

// NewPipLab creates the venv with Debian's python3 (python3-venv) and the
// wheels gsalttestpkg 1.0 and 2.0 and gsalttestdep 0.1 (2.0 in a second
// folder, for upgrades).
func NewPipLab(t *testing.T) PipLab {
	t.Helper()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("pip tests: no /usr/bin/python3")
	}
	base := t.TempDir()
	lab := PipLab{Venv: filepath.Join(base, "gsalt-pipvenv"), Wheels: filepath.Join(base, "gsalt-pipwheels"), Wheels2: filepath.Join(base, "gsalt-pipwheels2")}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, py, "-m", "venv", lab.Venv).CombinedOutput(); err != nil {
		t.Skipf("pip tests: python3 -m venv failed (install python3-venv): %v %s", err, out)
	}
	WriteWheel(t, lab.Wheels, "gsalttestpkg", "1.0")
	WriteWheel(t, lab.Wheels, "gsalttestdep", "0.1")
	WriteWheel(t, lab.Wheels2, "gsalttestpkg", "2.0")
	t.Setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
	t.Setenv("PIP_NO_INDEX", "1")
	t.Setenv("PIP_NO_CACHE_DIR", "1")
	t.Setenv("PIP_NO_INPUT", "1")
	// No pip.conf of this machine (find-links, indexes) in the outputs.
	t.Setenv("PIP_CONFIG_FILE", os.DevNull)
	t.Setenv("PIP_FIND_LINKS", lab.Wheels2)
	return lab
}

var pipPathRe = regexp.MustCompile(`/[^\s'"]*/gsalt-pip(venv|wheels2|wheels)`)

// PipNormalize puts {venv} and {wheels} for the lab's paths and 0 for
// pids, in both returns.
func PipNormalize(_ string, v any) any {
	switch x := v.(type) {
	case string:
		return pipPathRe.ReplaceAllString(x, "{$1}")
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = PipNormalize("", e)
		}
		return out
	case *payload.Map:
		out := &payload.Map{}
		for _, it := range x.Items() {
			val := PipNormalize("", it.Value)
			if it.Key == "pid" {
				val = int64(0)
			}
			out.SetKey(PipNormalize("", it.Key), val)
		}
		return out
	}
	return v
}

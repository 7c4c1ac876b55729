// Package saltpeer runs a real Salt 3006 from source beside gsalt in
// interop tests. Tests call Require, which skips with one clear line when
// GSALT_SALT_SRC does not name a Salt source tree.
package saltpeer

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// Python is the interpreter Salt runs under: Debian's python3 (override
// with GSALT_PYTHON).
func Python() string {
	if p := os.Getenv("GSALT_PYTHON"); p != "" {
		return p
	}
	return "/usr/bin/python3"
}

// Src returns GSALT_SALT_SRC, or "" when unset or not a Salt tree.
func Src() string {
	src := os.Getenv("GSALT_SALT_SRC")
	if src == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(src, "salt", "__init__.py")); err != nil {
		return ""
	}
	return src
}

// Require returns the Salt source tree or skips the test.
func Require(t testing.TB) string {
	t.Helper()
	src := Src()
	if src == "" {
		t.Skip("interop: GSALT_SALT_SRC is not set to a Salt 3006 source tree; skipping the real-Salt test (see README)")
	}
	GuardHostPaths(t)
	return src
}

// HostSaltPaths are the host's default Salt paths (Salt's and gsalt's
// defaults with root_dir "/") that a test must never create or change: a
// salt-call, Salt module, gsalt-call or gsalt daemon run with a
// configuration lacking root_dir (or pki_dir/cachedir) writes its keys,
// cached minion id and cache there.
var HostSaltPaths = []string{
	"/etc/salt/pki",
	"/etc/salt/pki/minion",
	"/etc/salt/pki/minion/minion.pem",
	"/etc/salt/pki/proxy",
	"/etc/salt/pki/master",
	"/etc/salt/minion",
	"/etc/salt/minion_id",
	"/etc/salt/proxy",
	"/etc/salt/master",
	"/var/cache/salt/minion",
	"/var/cache/salt/minion/proc",
	"/var/cache/salt/master",
	"/var/cache/salt/master/git_pillar",
	"/var/cache/salt/proxy",
}

type hostStamp struct {
	ok  bool
	mod time.Time
}

func stampHostPaths(paths []string) map[string]hostStamp {
	m := make(map[string]hostStamp, len(paths))
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil {
			m[p] = hostStamp{true, fi.ModTime()}
		}
	}
	return m
}

// GuardHostPaths fails t when one of HostSaltPaths was created or
// modified while it ran (a few stats at the start and at the end).
// Require calls it for every real-Salt test. Another process on the host
// may be the writer: the message says so, and lists what changed.
func GuardHostPaths(t testing.TB) {
	t.Helper()
	paths := append([]string(nil), HostSaltPaths...)
	before := stampHostPaths(paths)
	t.Cleanup(func() {
		if changed := changedPaths(paths, before, stampHostPaths(paths)); len(changed) > 0 {
			t.Errorf("host Salt paths changed while %s ran (by this test, or by another process on the host): %v; a Salt or gsalt run lacks root_dir/pki_dir/cachedir under the test's temporary folder", t.Name(), changed)
		}
	})
}

// changedPaths lists the paths created or modified between two stamps.
func changedPaths(paths []string, before, after map[string]hostStamp) []string {
	var changed []string
	for _, p := range paths {
		b, a := before[p], after[p]
		switch {
		case a.ok && !b.ok:
			changed = append(changed, p+" (created)")
		case a.ok && !a.mod.Equal(b.mod):
			changed = append(changed, p+" (modified)")
		}
	}
	return changed
}

// Pyshim returns the folder holding the looseversion stand-in Salt needs
// (GSALT_PYSHIM, or ../shared/peer/pyshim beside the repository).
func Pyshim() string {
	if p := os.Getenv("GSALT_PYSHIM"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	beside := filepath.Clean(filepath.Join(repo, "..", "shared", "peer", "pyshim"))
	if _, err := os.Stat(filepath.Join(beside, "looseversion")); err == nil {
		return beside
	}
	// A clone elsewhere: write the one-line stand-in (Debian has no
	// looseversion package; setuptools carries the same class).
	dir := filepath.Join(os.TempDir(), "gsalt-pyshim")
	mod := filepath.Join(dir, "looseversion", "__init__.py")
	if _, err := os.Stat(mod); err != nil {
		_ = os.MkdirAll(filepath.Dir(mod), 0o755)
		_ = os.WriteFile(mod, []byte("from setuptools._distutils.version import LooseVersion  # noqa: F401\n"), 0o644)
	}
	return dir
}

// Env returns the environment for running Salt: PYTHONPATH set to the
// source tree and the shim.
func Env(src string) []string {
	return append(os.Environ(), "PYTHONPATH="+src+string(os.PathListSeparator)+Pyshim())
}

// Command builds a command running a Salt script (salt-master, salt-key,
// salt-call, ...) from the source tree.
func Command(ctx context.Context, src, script string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, Python(), append([]string{filepath.Join(src, "scripts", script)}, args...)...)
	cmd.Env = Env(src)
	return cmd
}

// PythonCommand builds a command running python3 -c CODE with Salt importable.
func PythonCommand(ctx context.Context, src, code string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, Python(), append([]string{"-c", code}, args...)...)
	cmd.Env = Env(src)
	return cmd
}

// RunScript runs the Python file script with Salt importable, input
// given as JSON on its stdin, and returns its stdout; the test fails with
// the script's stderr when it exits non-zero or outlives the deadline
// (10 minutes, stretched by GSALT_TEST_SLOWDOWN).
func RunScript(t testing.TB, src, script string, input any) []byte {
	t.Helper()
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(10*time.Minute))
	defer cancel()
	cmd := PythonCommand(ctx, src, string(code))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(script), err, stderr.String())
	}
	return out
}

// Golden returns the golden file at path; under -update (with
// GSALT_SALT_SRC, else the test skips) it first writes what gen makes
// from the Salt source tree there.
func Golden(t testing.TB, path string, gen func(src string) []byte) []byte {
	t.Helper()
	if testutil.Update() {
		if err := os.WriteFile(path, gen(Require(t)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with -update and GSALT_SALT_SRC)", err)
	}
	return b
}

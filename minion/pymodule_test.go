package minion

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallSyncedPythonModule: after saltutil.sync_modules copies a custom
// Python module from salt://_modules, calling one of its functions says
// that gsalt does not load Python modules instead of "is not available".
func TestCallSyncedPythonModule(t *testing.T) {
	dir := callConfigDir(t, nil)
	mod := filepath.Join(dir, "srv", "_modules", "foo.py")
	if err := os.MkdirAll(filepath.Dir(mod), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mod, []byte("def hello():\n    return 'hi'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCall(t, CallOptions{ConfigDir: dir, Local: true, Fun: "saltutil.sync_modules", Out: "json"})
	if code != 0 || !strings.Contains(out, "modules.foo (not loaded: gsalt does not run Python extension modules)") {
		t.Fatalf("sync_modules: %d %q %q", code, out, errs)
	}
	code, _, errs = runCall(t, CallOptions{ConfigDir: dir, Local: true, Fun: "foo.hello"})
	if code == 0 || !strings.Contains(errs, "'foo.hello' is not available: foo is a custom Python execution module") {
		t.Fatalf("foo.hello: %d %q", code, errs)
	}
	code, _, errs = runCall(t, CallOptions{ConfigDir: dir, Local: true, Fun: "bar.hello"})
	if code == 0 || !strings.Contains(errs, "'bar.hello' is not available.") {
		t.Fatalf("bar.hello: %d %q", code, errs)
	}
}

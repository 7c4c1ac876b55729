package minion

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/pyfmt"
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
	ctx := context.Background()
	res, err := Call(ctx, CallOptions{ConfigDir: dir, Local: true, Fun: "saltutil.sync_modules"})
	if err != nil || res.Retcode != 0 || !strings.Contains(pyfmt.Str(res.Return), "modules.foo (not loaded: gsalt does not run Python extension modules)") {
		t.Fatalf("sync_modules: %v %v", err, res)
	}
	res, err = Call(ctx, CallOptions{ConfigDir: dir, Local: true, Fun: "foo.hello"})
	if err != nil || !res.Missing || !strings.Contains(res.MissingNote, "'foo.hello' is not available: foo is a custom Python execution module") {
		t.Fatalf("foo.hello: %v %+v", err, res)
	}
	res, err = Call(ctx, CallOptions{ConfigDir: dir, Local: true, Fun: "bar.hello"})
	if err != nil || !res.Missing || res.MissingNote != "" {
		t.Fatalf("bar.hello: %v %+v", err, res)
	}
}

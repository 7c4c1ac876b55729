package py_test

import (
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
)

// testdata/shlex_golden.json is what CPython's shlex answers for
// testdata/shlex_cases.json (gen_shlex.py; `go test ./internal/py -update`
// regenerates it).
func TestShlexGolden(t *testing.T) {
	cases, golden := filepath.Join("testdata", "shlex_cases.json"), filepath.Join("testdata", "shlex_golden.json")
	if testutil.Update() {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(time.Minute))
		defer cancel()
		cmd := osexec.CommandContext(ctx, saltpeer.Python(), filepath.Join("testdata", "gen_shlex.py"), cases, golden)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gen_shlex.py: %v\n%s", err, out)
		}
	}
	var in struct{ Split, Quote []string }
	var want struct {
		Split []struct {
			Words []string `json:"words"`
			Error string   `json:"error"`
		}
		Quote []string
	}
	for file, v := range map[string]any{cases: &in, golden: &want} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	if len(want.Split) != len(in.Split) || len(want.Quote) != len(in.Quote) {
		t.Fatalf("golden has %d/%d answers for %d/%d cases: run with -update", len(want.Split), len(want.Quote), len(in.Split), len(in.Quote))
	}
	for i, s := range in.Split {
		got, err := py.ShlexSplit(s)
		w := want.Split[i]
		if w.Error != "" {
			if err == nil || err.Error() != w.Error {
				t.Errorf("ShlexSplit(%q) = %q, %v; CPython raises %q", s, got, err, w.Error)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, w.Words) && !(len(got) == 0 && len(w.Words) == 0) {
			t.Errorf("ShlexSplit(%q) = %q, %v; CPython %q", s, got, err, w.Words)
		}
	}
	for i, s := range in.Quote {
		if got := py.ShlexQuote(s); got != want.Quote[i] {
			t.Errorf("ShlexQuote(%q) = %q, CPython %q", s, got, want.Quote[i])
		}
	}
}

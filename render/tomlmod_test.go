package render_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/render"
)

// TestTOMLRendererGolden renders every SLS of testdata/toml/toml.golden.json
// with the toml renderer, alone and after jinja (`#!jinja|toml`), and
// compares the data or the error text with Salt 3006's toml renderer
// (testdata/toml/gen_toml.py, run under -update).
func TestTOMLRendererGolden(t *testing.T) {
	dir := filepath.Join("testdata", "toml")
	if testutil.Update() {
		src := saltpeer.Require(t)
		cmd := exec.Command(saltpeer.Python(), "-W", "ignore", filepath.Join(dir, "gen_toml.py"))
		cmd.Env = saltpeer.Env(src)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gen_toml.py: %v\n%s", err, out)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "toml.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name   string        `json:"name"`
		Input  string        `json:"input"`
		Render yamlexOutcome `json:"render"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 10 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	reg := render.Default()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			v, err := reg.Render(context.Background(), []byte(tc.Input), "toml", nil)
			checkYAMLEx(t, tc.Name, "render", tc.Render, v, err)
			v, err = reg.Render(context.Background(), []byte(tc.Input), "jinja|toml", &render.Context{})
			checkYAMLEx(t, tc.Name, "jinja|toml", tc.Render, v, err)
		})
	}
}

package stringutils_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/stringutils"
	"github.com/gsalt/gsalt/internal/testutil"
)

// testdata/golden.json holds Salt 3006's own answers (testdata/gen_golden.py
// importing salt.utils.stringutils) for testdata/cases.json;
// `GSALT_SALT_SRC=... go test ./internal/stringutils -update` rewrites it.

type cases struct {
	ExprMatch    [][2]string `json:"expr_match"`
	HumanToBytes [][3]any    `json:"human_to_bytes"`
}

type result struct {
	Int   string `json:"int"`
	Error string `json:"error"`
	Msg   string `json:"msg"`
}

type golden struct {
	ExprMatch    []bool   `json:"expr_match"`
	HumanToBytes []result `json:"human_to_bytes"`
}

func load(t *testing.T) (cases, golden) {
	t.Helper()
	if testutil.Update() {
		src := saltpeer.Require(t)
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(time.Minute))
		defer cancel()
		cmd := osexec.CommandContext(ctx, saltpeer.Python(), filepath.Join("testdata", "gen_golden.py"), filepath.Join("testdata", "cases.json"), filepath.Join("testdata", "golden.json"))
		cmd.Env = saltpeer.Env(src)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gen_golden.py: %v\n%s", err, out)
		}
	}
	var c cases
	var g golden
	for name, v := range map[string]any{"cases.json": &c, "golden.json": &g} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return c, g
}

func TestExprMatchLikeSalt(t *testing.T) {
	c, g := load(t)
	if len(g.ExprMatch) != len(c.ExprMatch) {
		t.Fatalf("golden has %d answers for %d cases: run with -update", len(g.ExprMatch), len(c.ExprMatch))
	}
	for i, tc := range c.ExprMatch {
		if got := stringutils.ExprMatch(tc[0], tc[1]); got != g.ExprMatch[i] {
			t.Errorf("ExprMatch(%q, %q) = %v, Salt %v", tc[0], tc[1], got, g.ExprMatch[i])
		}
	}
}

func TestHumanToBytesLikeSalt(t *testing.T) {
	c, g := load(t)
	if len(g.HumanToBytes) != len(c.HumanToBytes) {
		t.Fatalf("golden has %d answers for %d cases: run with -update", len(g.HumanToBytes), len(c.HumanToBytes))
	}
	for i, tc := range c.HumanToBytes {
		want := g.HumanToBytes[i]
		got, err := stringutils.HumanToBytes(tc[0].(string), tc[1].(string), tc[2].(bool))
		switch {
		case want.Error != "":
			if err == nil {
				t.Errorf("HumanToBytes(%q, %q, %v) = %v, Salt raised %s: %s", tc[0], tc[1], tc[2], got, want.Error, want.Msg)
			}
		case err != nil:
			t.Errorf("HumanToBytes(%q, %q, %v): %v, Salt %s", tc[0], tc[1], tc[2], err, want.Int)
		case fmt.Sprint(got) != want.Int:
			t.Errorf("HumanToBytes(%q, %q, %v) = %v, Salt %s", tc[0], tc[1], tc[2], got, want.Int)
		}
	}
}

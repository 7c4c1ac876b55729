package pyre

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"reflect"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil"
)

type reCase struct {
	Op    string   `json:"op"`
	Pat   string   `json:"pat"`
	S     string   `json:"s"`
	Repl  string   `json:"repl"`
	Count int      `json:"count"`
	Flags []string `json:"flags"`
}

type reResult struct {
	Groups []any  `json:"groups"`
	Out    string `json:"out"`
	Error  string `json:"error"`
}

// TestGolden runs every case of testdata/cases.json and compares with
// what Python 3's re module returned (testdata/golden.json).
func TestGolden(t *testing.T) {
	if testutil.Update() {
		if out, err := exec.Command("/usr/bin/python3", "testdata/gen.py").CombinedOutput(); err != nil {
			t.Fatalf("gen.py: %v\n%s", err, out)
		}
	}
	var cases []reCase
	var golden []json.RawMessage
	for path, dst := range map[string]any{"testdata/cases.json": &cases, "testdata/golden.json": &golden} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, dst); err != nil {
			t.Fatal(err)
		}
	}
	if len(cases) != len(golden) {
		t.Fatalf("%d cases, %d golden results (run with -update)", len(cases), len(golden))
	}
	for i, c := range cases {
		var want reResult
		if err := json.Unmarshal(golden[i], &want); err != nil {
			t.Fatal(err)
		}
		var raw map[string]any
		_ = json.Unmarshal(golden[i], &raw)
		_, wantGroups := raw["groups"]
		var flags Flags
		for _, f := range c.Flags {
			flags |= map[string]Flags{"I": IgnoreCase, "M": Multiline, "S": DotAll, "X": Verbose}[f]
		}
		name := c.Op + " " + c.Pat + " " + c.S
		if c.Op == "escape" {
			if got := Escape(c.S); got != want.Out {
				t.Errorf("%s: got %q want %q", name, got, want.Out)
			}
			continue
		}
		re, err := Compile(c.Pat, flags)
		var got reResult
		if err == nil {
			switch c.Op {
			case "compile":
				got.Out = "ok"
			case "search", "match":
				var m *Match
				if c.Op == "search" {
					m, err = re.Search(c.S)
				} else {
					m, err = re.MatchStart(c.S)
				}
				if m != nil {
					got.Groups = m.Groups()
				}
			case "split":
				got.Groups, err = re.Split(c.S)
			case "sub":
				got.Out, err = re.Sub(c.Repl, c.S, c.Count)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrPattern) {
				t.Errorf("%s: error %v is not ErrPattern", name, err)
			}
			got = reResult{Error: "pattern"}
		}
		if wantGroups && want.Groups == nil && got.Groups == nil && got.Error == "" {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v want %+v", name, got, want)
		}
	}
}

package render_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// yamlexOutcome is one result of testdata/yamlex/yamlex.golden.json: a
// typed value (ints, floats, bytes and datetimes tagged, maps as ordered
// pairs) or Salt's exception class and text.
type yamlexOutcome struct {
	Value   json.RawMessage `json:"value"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
}

// yamlexSyntaxCases are parser errors whose text is PyYAML's own layout
// (gsalt gives yaml.v3's); only the failure is compared.
var yamlexSyntaxCases = map[string]bool{"syntax_error": true}

// TestYAMLExGolden decodes every input of testdata/yamlex/yamlex.golden.json
// (hand-written documents with !aggregate, !reset, repeated keys, scalars,
// tags and errors, then generated pairs of value forms under a repeated
// key) with DecodeYAMLEx and the yamlex renderer, and compares them with
// what Salt 3006's yamlex serializer and renderer returned
// (testdata/yamlex/gen_yamlex.py, run under -update).
func TestYAMLExGolden(t *testing.T) {
	dir := filepath.Join("testdata", "yamlex")
	if testutil.Update() {
		src := saltpeer.Require(t)
		cmd := exec.Command(saltpeer.Python(), "-W", "ignore", filepath.Join(dir, "gen_yamlex.py"))
		cmd.Env = saltpeer.Env(src)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gen_yamlex.py: %v\n%s", err, out)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "yamlex.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name        string        `json:"name"`
		Input       string        `json:"input"`
		Deserialize yamlexOutcome `json:"deserialize"`
		Render      yamlexOutcome `json:"render"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	reg := render.Default()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			v, err := render.DecodeYAMLEx([]byte(tc.Input))
			checkYAMLEx(t, tc.Name, "deserialize", tc.Deserialize, v, err)
			v, err = reg.Render(context.Background(), []byte(tc.Input), "yamlex", nil)
			checkYAMLEx(t, tc.Name, "render", tc.Render, v, err)
		})
	}
}

func checkYAMLEx(t *testing.T, name, what string, want yamlexOutcome, got any, err error) {
	t.Helper()
	if want.Error != "" {
		if err == nil {
			t.Fatalf("%s: Salt raised %s: %s; gsalt returned %s", what, want.Error, want.Message, typedYAMLEx(t, got))
		}
		if !errors.Is(err, render.ErrData) {
			t.Errorf("%s: error %v is not ErrData", what, err)
		}
		if !yamlexSyntaxCases[name] && !strings.Contains(err.Error(), want.Message) {
			t.Errorf("%s: error text\n got: %s\nwant: %s", what, err, want.Message)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v (Salt returned %s)", what, err, want.Value)
	}
	var w any
	if err := json.Unmarshal(want.Value, &w); err != nil {
		t.Fatal(err)
	}
	wb, _ := json.Marshal(w)
	if g := typedYAMLEx(t, got); g != string(wb) {
		t.Errorf("%s differs from Salt's\n got: %s\nwant: %s", what, g, wb)
	}
}

// typedYAMLEx is the generator's typed(): JSON keeping Python's types.
func typedYAMLEx(t *testing.T, v any) string {
	t.Helper()
	var conv func(v any) any
	conv = func(v any) any {
		switch x := v.(type) {
		case nil, bool, string:
			return x
		case int64:
			return map[string]any{"int": strconv.FormatInt(x, 10)}
		case *big.Int:
			return map[string]any{"int": x.String()}
		case float64:
			return map[string]any{"float": pyfmt.FloatRepr(x)}
		case []byte:
			return map[string]any{"bytes": base64.StdEncoding.EncodeToString(x)}
		case time.Time:
			return map[string]any{"datetime": x.Format("20060102T15:04:05.000000")}
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = conv(e)
			}
			return out
		case *payload.Map:
			pairs := []any{}
			for _, it := range x.Items() {
				pairs = append(pairs, []any{conv(it.Key), conv(it.Value)})
			}
			return map[string]any{"map": pairs}
		}
		t.Fatalf("unexpected %T in a yamlex result", v)
		return nil
	}
	b, err := json.Marshal(conv(v))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzDecodeYAMLEx feeds arbitrary documents (seeded with the golden
// inputs) to DecodeYAMLEx: it returns a value or an ErrData error, never
// panics, and a document it accepts renders through the yamlex renderer
// to the same value (or {} for a false one).
func FuzzDecodeYAMLEx(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("testdata", "yamlex", "yamlex.golden.json"))
	if err != nil {
		f.Fatal(err)
	}
	var cases []struct {
		Input string `json:"input"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		f.Fatal(err)
	}
	for _, c := range cases {
		f.Add(c.Input)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		v, err := render.DecodeYAMLEx([]byte(doc))
		if err != nil {
			if !errors.Is(err, render.ErrData) {
				t.Fatalf("error %v is not ErrData", err)
			}
			return
		}
		r, err := render.YAMLEx{}.Render(context.Background(), doc, nil)
		if err != nil {
			t.Fatalf("decoded but the renderer failed: %v", err)
		}
		if payload.Truthy(v) && typedYAMLEx(t, v) != typedYAMLEx(t, r) {
			t.Fatalf("renderer gave %s, decoder %s", typedYAMLEx(t, r), typedYAMLEx(t, v))
		}
	})
}

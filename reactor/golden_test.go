package reactor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/reactor"
	"github.com/gsalt/gsalt/wire/payload"
)

const goldenFile = "testdata/golden.json"

type goldenCase struct {
	Name       string            `json:"name"`
	Tag        string            `json:"tag"`
	Data       json.RawMessage   `json:"data"`
	Files      map[string]string `json:"files"`
	Reactors   []string          `json:"reactors"`
	Chunks     json.RawMessage   `json:"chunks"`
	Outcomes   []goldenOutcome   `json:"outcomes"`
	CompileLog []string          `json:"compile_log"`
}

type goldenOutcome struct {
	Outcome  string          `json:"outcome"`
	Call     json.RawMessage `json:"call"`
	Warnings []string        `json:"warnings"`
	Log      []string        `json:"log"`
}

type goldenSig struct {
	Params []struct {
		Name     string `json:"name"`
		Default  any    `json:"default"`
		Required bool   `json:"required"`
	} `json:"params"`
	VarKw bool `json:"varkw"`
}

type golden struct {
	Signatures map[string]map[string]goldenSig `json:"signatures"`
	Cases      []goldenCase                    `json:"cases"`
}

// regenerate runs testdata/gen_golden.py with real Salt.
func regenerate(t *testing.T) {
	src := saltpeer.Require(t)
	cmd := exec.Command(saltpeer.Python(), "testdata/gen_golden.py", goldenFile)
	cmd.Env = saltpeer.Env(src)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gen_golden.py: %v\n%s", err, stderr.String())
	}
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// fromJSON decodes JSON into payload data (integers stay integers).
func fromJSON(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return toPayload(v)
}

func toPayload(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return payload.FromGo(func() map[string]any {
			out := map[string]any{}
			for k, e := range x {
				out[k] = toPayload(e)
			}
			return out
		}())
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = toPayload(x[i])
		}
		return out
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// canon renders payload data or golden JSON as comparable generic JSON.
func canon(t *testing.T, v any) any {
	t.Helper()
	var b []byte
	var err error
	if raw, ok := v.(json.RawMessage); ok {
		b = raw
	} else if b, err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func sigFunc(sigs map[string]goldenSig) reactor.SignatureFunc {
	return func(fun string) (reactor.Signature, bool) {
		s, ok := sigs[fun]
		if !ok {
			return reactor.Signature{}, false
		}
		var out reactor.Signature
		for _, p := range s.Params {
			out.Params = append(out.Params, reactor.Param{Name: p.Name, Default: payload.FromGo(p.Default), Required: p.Required})
		}
		out.VarKwargs = s.VarKw
		return out, true
	}
}

// fakeSalt answers salt['test.ping']() in templates.
type fakeSalt struct{}

func (fakeSalt) CallFunction(_ context.Context, fun string, _ []any, _ *payload.Map) (any, error) {
	if fun == "test.ping" {
		return true, nil
	}
	return nil, errors.New("not available: " + fun)
}

// callView renders a built reaction like the generator records Salt's.
func callView(rx *reactor.Reaction) any {
	switch rx.Type {
	case reactor.TypeLocal:
		p := rx.Publish
		return payload.NewMap("type", "local", "tgt", p.Tgt, "fun", p.Fun, "arg", p.Arg, "tgt_type", p.TgtType,
			"ret", p.Ret, "jid", p.JID, "timeout", int64(p.Timeout), "kwargs", p.Kwargs)
	case reactor.TypeCaller:
		return payload.NewMap("type", "caller", "fun", rx.Fun, "arg", rx.Arg, "kwarg", rx.Kwarg)
	}
	return payload.NewMap("type", rx.Type, "fun", rx.Fun, "arg", rx.Arg, "kwarg", rx.Kwarg, "user", rx.User)
}

// TestGolden renders Salt's documented reactor examples and edge cases and
// compares the low chunks and the client calls with what Salt 3006's
// Reactor.reactions and ReactWrap.run produce (testdata/golden.json).
func TestGolden(t *testing.T) {
	if testutil.Update() {
		regenerate(t)
	}
	g := loadGolden(t)
	if len(g.Cases) < 30 {
		t.Fatalf("only %d golden cases", len(g.Cases))
	}
	builder := reactor.Builder{Runners: sigFunc(g.Signatures["runner"]), Wheels: sigFunc(g.Signatures["wheel"]), Timeout: 5}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range c.Files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var reactors []string
			for _, r := range c.Reactors {
				reactors = append(reactors, strings.ReplaceAll(r, "$DIR", dir))
			}
			data, _ := fromJSON(t, c.Data).(*payload.Map)
			comp := &reactor.Compiler{Opts: payload.NewMap("id", "master", "renderer", "jinja|yaml"), Salt: fakeSalt{}}
			chunks, problems := comp.Reactions(context.Background(), c.Tag, data, reactors)
			if len(problems) != len(c.CompileLog) {
				t.Errorf("problems %v, Salt logged %q", problems, c.CompileLog)
			}
			gotChunks := make([]any, len(chunks))
			for i, ch := range chunks {
				gotChunks[i] = ch
			}
			got, _ := json.Marshal(gotChunks)
			want := json.RawMessage(strings.ReplaceAll(string(c.Chunks), "$DIR", dir))
			if !reflect.DeepEqual(canon(t, json.RawMessage(got)), canon(t, want)) {
				t.Fatalf("chunks\n got  %s\n want %s", got, want)
			}
			aborted := false
			for i, ch := range chunks {
				o := c.Outcomes[i]
				if aborted {
					if o.Outcome != "skipped" {
						t.Errorf("chunk %d: Salt %s after an abort", i, o.Outcome)
					}
					continue
				}
				rx, err := builder.Build(ch)
				switch o.Outcome {
				case "abort":
					if !errors.Is(err, reactor.ErrUnknownType) {
						t.Errorf("chunk %d: want ErrUnknownType, got %v", i, err)
					}
					aborted = true
				case "error":
					if !errors.Is(err, reactor.ErrReaction) {
						t.Errorf("chunk %d: Salt refused it (%q); gsalt built %+v (err %v)", i, o.Log, rx, err)
					}
				case "call":
					if err != nil {
						t.Fatalf("chunk %d: %v", i, err)
					}
					gotCall, _ := json.Marshal(callView(rx))
					wantCall := json.RawMessage(strings.ReplaceAll(string(o.Call), "$DIR", dir))
					if !reflect.DeepEqual(canon(t, json.RawMessage(gotCall)), canon(t, wantCall)) {
						t.Errorf("chunk %d call\n got  %s\n want %s", i, gotCall, wantCall)
					}
					if len(rx.Warnings) != len(o.Warnings) {
						t.Errorf("chunk %d warnings %q, Salt %q", i, rx.Warnings, o.Warnings)
					}
					for j := range min(len(rx.Warnings), len(o.Warnings)) {
						gp, _, _ := strings.Cut(rx.Warnings[j], " param ")
						wp, _, _ := strings.Cut(o.Warnings[j], " param ")
						if gp != wp {
							t.Errorf("chunk %d warning %q, Salt %q", i, rx.Warnings[j], o.Warnings[j])
						}
					}
				default:
					t.Fatalf("chunk %d: outcome %q", i, o.Outcome)
				}
			}
		})
	}
}

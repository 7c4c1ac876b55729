//go:build libvirt_dlopen

package virt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/virt"
	"github.com/gsalt/gsalt/wire/payload"
)

const (
	statesStepsFile  = "testdata/states_steps.json"
	statesGoldenFile = "testdata/states_golden.json"
)

// stateRetMap is a state return in Salt's dict shape.
func stateRetMap(r states.Ret) *payload.Map {
	res := any(nil)
	switch r.Result {
	case states.True:
		res = true
	case states.False:
		res = false
	}
	ch := r.Changes
	if ch == nil {
		ch = payload.NewMap()
	}
	return payload.NewMap("name", r.Name, "changes", ch, "result", res, "comment", r.Comment)
}

// TestStatesGolden runs virt states on test:///default and compares their
// returns (test=True included) with Salt 3006's virt state module.
func TestStatesGolden(t *testing.T) {
	if *update {
		src := saltpeer.Require(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := saltpeer.PythonCommand(ctx, src, "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
			filepath.Join("testdata", "states_golden.py"), statesStepsFile).Output()
		if err != nil {
			t.Fatalf("states_golden.py: %v", err)
		}
		if err := os.WriteFile(statesGoldenFile, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keep := requireLibvirt(t)
	defer func() { _ = keep.Close() }()
	data, err := os.ReadFile(statesStepsFile)
	if err != nil {
		t.Fatal(err)
	}
	var steps []map[string]any
	if err := json.Unmarshal(data, &steps); err != nil {
		t.Fatal(err)
	}
	golden, ok := loadJSON(t, statesGoldenFile).([]any)
	if !ok || len(golden) != len(steps) {
		t.Fatalf("%s: %d results for %d steps: regenerate with -update", statesGoldenFile, len(golden), len(steps))
	}
	env := testEnv(t, "test:///default", &virt.Module{})
	reg := states.NewRegistry()
	if err := reg.Register(virt.StateFunctions()...); err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		fn, ok := reg.Lookup(st["fun"].(string))
		if !ok {
			t.Fatalf("no state %v", st["fun"])
		}
		kw := payload.NewMap()
		for k, v := range st {
			if k != "fun" && k != "test" {
				kw.Set(k, toPayload(v))
			}
		}
		args, err := modules.BindKeywords(fn.Spec, kw)
		if err != nil {
			t.Fatal(err)
		}
		test, _ := st["test"].(bool)
		c := &states.Call{Name: payload.Text(st["name"]), Args: args, Test: test, Env: env}
		var got any
		r, err := fn.Fn(context.Background(), c)
		if err != nil {
			got = payload.NewMap("error", err.Error())
		} else {
			got = payload.NewMap("ret", stateRetMap(r))
		}
		got = normalize(got)
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(normalize(golden[i]))
		if !bytes.Equal(gj, wj) && !sameException(t, i, got, golden[i]) {
			t.Errorf("step %d %v:\n got  %s\n want %s", i, st, gj, wj)
		}
	}
}

// sameException accepts a gsalt state error carrying the message of the
// exception Salt's state raised ({"error": "EXCEPTION SaltInvocationError:
// msg"} in the golden file): Salt's state engine turns both into a failed
// state with that message.
func sameException(t *testing.T, i int, got, want any) bool {
	t.Helper()
	w, _ := want.(*payload.Map)
	g, _ := got.(*payload.Map)
	if w == nil || g == nil {
		return false
	}
	ws, gs := w.Str("error"), g.Str("error")
	_, msg, ok := strings.Cut(ws, ": ")
	if !strings.HasPrefix(ws, "EXCEPTION ") || !ok || gs == "" || !strings.HasSuffix(gs, msg) {
		return false
	}
	t.Logf("step %d: Salt raises (%s); gsalt: %s", i, ws, gs)
	return true
}

//go:build libvirt_dlopen

package virt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
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
	if testutil.Update() {
		out := runGoldenScript(t, 2*time.Minute, "states_golden.py", statesStepsFile)
		if err := os.WriteFile(statesGoldenFile, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keep := requireLibvirt(t)
	defer func() { _ = keep.Close() }()
	runStateSteps(t, statesStepsFile, statesGoldenFile, testEnv(t, "test:///default", &virt.Module{}), normalize)
}

// runStateSteps runs the state steps of stepsFile through gsalt's virt
// states on env and compares each return with goldenFile.
func runStateSteps(t *testing.T, stepsFile, goldenFile string, env *modules.Env, norm func(any) any) {
	t.Helper()
	data, err := os.ReadFile(stepsFile)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	all, err := decodeOrdered(d)
	if err != nil {
		t.Fatal(err)
	}
	var steps []*payload.Map
	list, _ := all.([]any)
	for _, e := range list {
		m, _ := e.(*payload.Map)
		steps = append(steps, m)
	}
	golden, ok := loadJSON(t, goldenFile).([]any)
	if !ok || len(golden) != len(steps) {
		t.Fatalf("%s: %d results for %d steps: regenerate with -update", goldenFile, len(golden), len(steps))
	}
	reg := states.NewRegistry()
	if err := reg.Register(virt.StateFunctions()...); err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		fn, ok := reg.Lookup(st.Str("fun"))
		if !ok {
			t.Fatalf("no state %v", st.Str("fun"))
		}
		kw := payload.NewMap()
		for _, it := range st.Items() {
			if k := payload.KeyString(it.Key); k != "fun" && k != "test" {
				kw.SetKey(it.Key, toPayload(it.Value))
			}
		}
		args, err := modules.BindKeywords(fn.Spec, kw)
		if err != nil {
			t.Fatal(err)
		}
		tv, _ := st.Get("test")
		test, _ := tv.(bool)
		nv, _ := st.Get("name")
		c := &states.Call{Name: payload.Text(nv), Args: args, Test: test, Env: env}
		var got any
		r, err := fn.Fn(context.Background(), c)
		if err != nil {
			got = payload.NewMap("error", err.Error())
		} else {
			got = payload.NewMap("ret", stateRetMap(r))
		}
		got = norm(got)
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(norm(golden[i]))
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
	kind, msg, ok := strings.Cut(strings.TrimPrefix(ws, "EXCEPTION "), ": ")
	if !strings.HasPrefix(ws, "EXCEPTION ") || !ok || gs == "" {
		return false
	}
	switch kind {
	case "SaltInvocationError", "CommandExecutionError", "libvirtError":
		if !strings.HasSuffix(gs, msg) {
			return false
		}
	default:
		// Salt crashes (a Python error): gsalt must fail with a clear error.
		if !strings.Contains(gs, "ERROR") {
			return false
		}
	}
	t.Logf("step %d: Salt raises (%s); gsalt: %s", i, ws, gs)
	return true
}

const (
	statesQemuStepsFile  = "testdata/states_qemu_steps.json"
	statesQemuGoldenFile = "testdata/states_qemu_golden.json"
)

// TestDomainStatesGolden runs virt.defined and virt.running (definition,
// update, live update, start, test=True) on a private libvirtd's QEMU
// driver and compares their returns with Salt 3006's state module on the
// same steps.
func TestDomainStatesGolden(t *testing.T) {
	t.Parallel() // its own private libvirtd, folders and ports
	f := newInitFixture(t)
	if testutil.Update() {
		out := runGoldenScript(t, 5*time.Minute, "states_golden.py", statesQemuStepsFile, f.d.URI, f.images, f.roots, f.cache)
		if err := os.WriteFile(statesQemuGoldenFile, []byte(f.normalize(string(out), fixedMACs)), 0o644); err != nil {
			t.Fatal(err)
		}
		f.removeAll(t)
		f.removePoolsAndSecrets()
	}
	env := f.env(t)
	norm := func(v any) any {
		x := asGolden(t, v, func(s string) string { return f.normalize(s, fixedMACs) })
		return sortDeletedVolumes(canonAll(normalize(x)))
	}
	runStateSteps(t, statesQemuStepsFile, statesQemuGoldenFile, env, norm)
	f.removeAll(t)
}

// sortDeletedVolumes orders pool_deleted's deleted_volumes, which follow
// the order libvirt lists a pool's volumes in (its directory's).
func sortDeletedVolumes(v any) any {
	m, _ := v.(*payload.Map)
	ret, _ := m.Get("ret")
	rm, _ := ret.(*payload.Map)
	ch, _ := rm.Get("changes")
	cm, _ := ch.(*payload.Map)
	if l, ok := cm.Get("deleted_volumes"); ok {
		if list, ok := l.([]any); ok {
			sort.Slice(list, func(i, j int) bool { return payload.Text(list[i]) < payload.Text(list[j]) })
		}
	}
	return v
}

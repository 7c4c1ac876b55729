package states

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// gate is a state module whose calls block until released, recording
// which ran at the same time.
type gate struct {
	mu      sync.Mutex
	running map[string]bool
	peak    int
	order   []string
	release chan struct{}
}

func (g *gate) functions() []Function {
	spec := modules.Spec{Params: []modules.Param{{Name: "name", Required: true}}, Kwargs: true}
	return []Function{{Name: "gate.wait", Spec: spec, Fn: func(ctx context.Context, c *Call) (Ret, error) {
		g.mu.Lock()
		g.running[c.Name] = true
		g.peak = max(g.peak, len(g.running))
		g.order = append(g.order, "start "+c.Name)
		g.mu.Unlock()
		select {
		case <-g.release:
		case <-time.After(30 * time.Second):
		}
		g.mu.Lock()
		delete(g.running, c.Name)
		g.order = append(g.order, "end "+c.Name)
		g.mu.Unlock()
		return Ret{Name: c.Name, Result: True, Comment: "passed " + c.Name, Changes: payload.NewMap("gate", c.Name)}, nil
	}}, {Name: "gate.note", Spec: spec, Fn: func(ctx context.Context, c *Call) (Ret, error) {
		g.mu.Lock()
		g.order = append(g.order, "note "+c.Name)
		g.mu.Unlock()
		return Ret{Name: c.Name, Result: True, Comment: "noted"}, nil
	}}}
}

// TestParallelStates: parallel: True states really run at the same time
// (both block until the other started), a state requiring them waits for
// both, and the results carry __parallel__.
func TestParallelStates(t *testing.T) {
	g := &gate{running: map[string]bool{}, release: make(chan struct{})}
	sls := "a:\n  gate.wait:\n    - parallel: True\nb:\n  gate.wait:\n    - parallel: True\n" +
		"c:\n  gate.note\nd:\n  gate.note:\n    - require:\n      - gate: a\n      - gate: b\n"
	dir := writeTree(t, map[string]string{"t.sls": sls})
	h := newHarness(t, map[string]string{"base": dir}, g.functions()...)
	// Release the gates once both are running: if the states ran one after
	// the other this would never happen and the calls would time out.
	go func() {
		if testutil.Poll(20*time.Second, func() bool {
			g.mu.Lock()
			defer g.mu.Unlock()
			return len(g.running) == 2
		}) {
			close(g.release)
		}
	}()
	res := h.run(t, "state.sls", []any{"t"}, payload.NewMap())
	if res.Retcode != 0 {
		t.Fatalf("retcode %d: %s", res.Retcode, jsonText(res.Return))
	}
	g.mu.Lock()
	peak, order := g.peak, append([]string(nil), g.order...)
	g.mu.Unlock()
	if peak != 2 {
		t.Errorf("%d parallel states ran at once, want 2 (order %v)", peak, order)
	}
	// c runs while a and b still block; d only after both ended.
	pos := map[string]int{}
	for i, s := range order {
		pos[s] = i
	}
	if pos["note c"] > pos["end a"] || pos["note d"] < pos["end a"] || pos["note d"] < pos["end b"] {
		t.Errorf("order %v: c must not wait for the parallel states, d must", order)
	}
	for _, tag := range []string{"gate_|-a_|-a_|-wait", "gate_|-b_|-b_|-wait"} {
		r := retOf(t, res.Return, tag)
		if r.Str("comment") != "passed "+r.Str("name") || !r.Bool("__parallel__") || r.Bool("result") != true {
			t.Errorf("%s: %s", tag, jsonText(r))
		}
	}
}

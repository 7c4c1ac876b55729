package builtin_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

func TestPillarFunctions(t *testing.T) {
	r := registry(t)
	mem := payload.NewMap("role", "web", "pkg", payload.NewMap("apache", "httpd", "list", []any{"a"}),
		"abc:def", "colon", "num", int64(3))
	st := &fakePillar{fresh: payload.NewMap("fresh", true)}
	env := &modules.Env{ID: "m1", Registry: r, Pillar: mem, Opts: payload.NewMap("pillarenv", nil),
		Services: map[string]any{"pillar": st}}
	kw := func(kv ...any) *payload.Map { return payload.NewMap(append([]any{"__kwarg__", true}, kv...)...) }
	tests := []struct {
		name string
		fun  string
		args []any
		want any
	}{
		{"get top", "pillar.get", []any{"role"}, "web"},
		{"get nested", "pillar.get", []any{"pkg:apache"}, "httpd"},
		{"get missing", "pillar.get", []any{"nope"}, ""},
		{"get default", "pillar.get", []any{"nope", "dflt"}, "dflt"},
		{"get delimiter", "pillar.get", []any{"pkg|apache", kw("delimiter", "|")}, "httpd"},
		{"get merge dict", "pillar.get", []any{"pkg", kw("default", payload.NewMap("apache", "x", "other", int64(1)), "merge", true)},
			payload.NewMap("apache", "httpd", "other", int64(1), "list", []any{"a"})},
		{"get merge list", "pillar.get", []any{"pkg:list", kw("default", []any{"b"}, "merge", true)}, []any{"b", "a"}},
		{"item", "pillar.item", []any{"role", "pkg:apache", "nope"}, payload.NewMap("role", "web", "pkg:apache", "httpd", "nope", "")},
		{"item default", "pillar.item", []any{"nope", kw("default", "d")}, payload.NewMap("nope", "d")},
		{"raw", "pillar.raw", nil, mem},
		{"raw key", "pillar.raw", []any{kw("key", "num")}, int64(3)},
		{"raw missing key", "pillar.raw", []any{kw("key", "zzz")}, &payload.Map{}},
		{"items fresh", "pillar.items", nil, payload.NewMap("fresh", true)},
		{"items override", "pillar.items", []any{kw("pillar", payload.NewMap("o", int64(1)))}, payload.NewMap("fresh", true, "o", int64(1))},
		{"items with args is item", "pillar.items", []any{"role"}, payload.NewMap("role", "web")},
		{"ls", "pillar.ls", nil, []any{"fresh"}},
		{"obfuscate", "pillar.obfuscate", nil, payload.NewMap("fresh", "<bool>")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := r.Execute(context.Background(), modules.Binder{}, env, tc.fun, tc.args, nil)
			if res.Retcode != 0 || !equalPayload(res.Return, tc.want) {
				t.Fatalf("%s%v = %+v, want %v", tc.fun, tc.args, res, tc.want)
			}
		})
	}
	if len(st.compiled) == 0 {
		t.Error("pillar.items did not ask the master")
	}
	env.Opts = payload.NewMap("pillar_raise_on_missing", true)
	res := r.Execute(context.Background(), modules.Binder{}, env, "pillar.get", []any{"nope"}, nil)
	if s, _ := res.Return.(string); res.Retcode != 1 || !strings.Contains(s, "Pillar key not found: nope") {
		t.Errorf("raise on missing: %+v", res)
	}
	// Without a pillar store (gsalt-call --local) items is the in-memory pillar.
	env.Services = nil
	if res = r.Execute(context.Background(), modules.Binder{}, env, "pillar.items", nil, nil); res.Return != mem {
		t.Errorf("items without store: %+v", res)
	}
}

// equalPayload compares decoded values, maps in order.
func equalPayload(a, b any) bool {
	am, aok := a.(*payload.Map)
	bm, bok := b.(*payload.Map)
	if aok || bok {
		if !aok || !bok || am.Len() != bm.Len() {
			return false
		}
		for i, it := range am.Items() {
			o := bm.Items()[i]
			if !reflect.DeepEqual(it.Key, o.Key) || !equalPayload(it.Value, o.Value) {
				return false
			}
		}
		return true
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok || bok {
		if !aok || !bok || len(al) != len(bl) {
			return false
		}
		for i := range al {
			if !equalPayload(al[i], bl[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

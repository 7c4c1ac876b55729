package builtin

import (
	"context"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

func TestSysModule(t *testing.T) {
	r := grainsTestRegistry(t)
	// A module whose name is a prefix of another ("sys" vs "sysctl").
	if err := r.Register(modules.Function{Name: "sysctl.get", Doc: "sysctl\n\n.. versionadded:: 2015.5.0\n\n.. code-block:: bash\n\n    salt '*' sysctl.get x\n",
		Spec: modules.Spec{Params: []modules.Param{req("name")}},
		Fn:   func(context.Context, *modules.Call) (any, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	env := &modules.Env{ID: "m1", Registry: r}
	tests := []struct {
		name string
		fun  string
		args []any
		want any
	}{
		{"list_functions module", "sys.list_functions", []any{"sys"},
			[]any{"sys.argspec", "sys.doc", "sys.list_functions", "sys.list_modules", "sys.reload_modules"}},
		{"list_functions glob", "sys.list_functions", []any{"sys.list_*"}, []any{"sys.list_functions", "sys.list_modules"}},
		{"list_functions exact name", "sys.list_functions", []any{"test.ping"}, []any{"test.ping"}},
		{"list_functions two modules", "sys.list_functions", []any{"sysctl", "nope"}, []any{"sysctl.get"}},
		{"list_modules glob", "sys.list_modules", []any{"sys*"}, []any{"sys", "sysctl"}},
		{"list_modules exact", "sys.list_modules", []any{"sys", "nope"}, []any{"sys"}},
		{"argspec module", "sys.argspec", []any{"sysctl"}, payload.NewMap("sysctl.get",
			payload.NewMap("args", []any{"name"}, "defaults", nil, "varargs", nil, "kwargs", nil))},
		{"argspec function", "sys.argspec", []any{"grains.get"}, payload.NewMap("grains.get",
			payload.NewMap("args", []any{"key", "default", "delimiter", "ordered"}, "defaults", []any{"", ":", true}, "varargs", nil, "kwargs", nil))},
		{"argspec varargs", "sys.argspec", []any{"test.arg"}, payload.NewMap("test.arg",
			payload.NewMap("args", nil, "defaults", nil, "varargs", true, "kwargs", true))},
		{"argspec none", "sys.argspec", nil, payload.NewMap()},
		{"doc strips rst", "sys.doc", []any{"sysctl.get"}, payload.NewMap("sysctl.get", "sysctl\n\nNew in version 2015.5.0\n\n    salt '*' sysctl.get x\n")},
		{"doc module", "sys.doc", []any{"sysctl"}, payload.NewMap("sysctl.get", "sysctl\n\nNew in version 2015.5.0\n\n    salt '*' sysctl.get x\n")},
		{"reload_modules", "sys.reload_modules", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := r.Execute(context.Background(), modules.Binder{}, env, tc.fun, tc.args, nil)
			if res.Retcode != 0 {
				t.Fatalf("retcode %d: %v", res.Retcode, res.Return)
			}
			if d := vectors.Equal(res.Return, tc.want); d != "" {
				t.Fatal(d)
			}
		})
	}
	all := r.Execute(context.Background(), modules.Binder{}, env, "sys.list_functions", nil, nil).Return.([]any)
	if len(all) != len(r.Names()) {
		t.Errorf("list_functions: %d of %d", len(all), len(r.Names()))
	}
	mods := r.Execute(context.Background(), modules.Binder{}, env, "sys.list_modules", nil, nil).Return
	if d := vectors.Equal(mods, []any{"grains", "sys", "sysctl", "test"}); d != "" {
		t.Error(d)
	}
	docs := r.Execute(context.Background(), modules.Binder{}, env, "sys.doc", []any{"sys.*"}, nil).Return.(*payload.Map)
	if docs.Len() != 5 || !strings.Contains(docs.Str("sys.doc"), "docstrings") {
		t.Errorf("sys.doc sys.*: %v", docs.Keys())
	}
	// sys.doc "sys" must not pick up sysctl.
	docs = r.Execute(context.Background(), modules.Binder{}, env, "sys.doc", []any{"sys"}, nil).Return.(*payload.Map)
	if docs.Has("sysctl.get") || docs.Len() != 5 {
		t.Errorf("sys.doc sys: %v", docs.Keys())
	}
	alldocs := r.Execute(context.Background(), modules.Binder{}, env, "sys.doc", nil, nil).Return.(*payload.Map)
	if alldocs.Len() != len(r.Names()) {
		t.Errorf("sys.doc: %d docs", alldocs.Len())
	}
}

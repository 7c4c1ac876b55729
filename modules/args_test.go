package modules

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestBindDirect checks the two ways Salt passes arguments to a function:
// a job or the command line parses "name=value" strings into keyword
// arguments (salt.utils.args.load_args_and_kwargs), a Python call from a
// template or a state (__salt__['fun'](...)) passes them as they are.
func TestBindDirect(t *testing.T) {
	get := &Function{Name: "pillar.get", Spec: Spec{Params: []Param{{Name: "key", Required: true}, {Name: "default", Default: ""}}}}
	arg := &Function{Name: "test.arg", Spec: Spec{Varargs: true, Kwargs: true}}
	for _, tc := range []struct {
		name    string
		fn      *Function
		direct  bool
		args    []any
		named   map[string]any
		varargs []any
		kwargs  map[string]any
		invalid bool
	}{
		{"job: default=... is a keyword", get, false, []any{"a:b", "default=x"}, map[string]any{"key": "a:b", "default": "x"}, nil, nil, false},
		{"job: an unknown name is not valid", get, false, []any{"a:b", "cn=Manager,dc=x"}, nil, nil, nil, true},
		{"direct: a string with = is positional", get, true, []any{"a:b", "cn=Manager,dc=x"}, map[string]any{"key": "a:b", "default": "cn=Manager,dc=x"}, nil, nil, false},
		{"direct: varargs keep their =", arg, true, []any{"a=b", "x"}, nil, []any{"a=b", "x"}, map[string]any{}, false},
		{"job: varargs' = becomes a keyword", arg, false, []any{"a=b", "x"}, nil, []any{"x"}, map[string]any{"a": "b"}, false},
		{"direct: real keywords still bind", arg, true, []any{"x", payload.NewMap("__kwarg__", true, "c", "d=e")}, nil, []any{"x"}, map[string]any{"c": "d=e"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Binder{Direct: tc.direct}.Bind(tc.fn, tc.args, nil)
			if tc.invalid {
				if !errors.Is(err, ErrInvocation) {
					t.Fatalf("err = %v, want ErrInvocation", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.named {
				if got := a.Get(k); got != v {
					t.Errorf("%s = %#v, want %#v", k, got, v)
				}
			}
			if !reflect.DeepEqual(a.Varargs, tc.varargs) {
				t.Errorf("varargs = %#v, want %#v", a.Varargs, tc.varargs)
			}
			if tc.kwargs != nil {
				got := map[string]any{}
				for _, it := range a.CleanKwargs().Items() {
					got[payload.KeyString(it.Key)] = it.Value
				}
				if !reflect.DeepEqual(got, tc.kwargs) {
					t.Errorf("kwargs = %#v, want %#v", got, tc.kwargs)
				}
			}
		})
	}
}

package returners

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

func TestNames(t *testing.T) {
	tests := []struct {
		in   any
		want []string
	}{
		{"pgjsonb", []string{"pgjsonb"}},
		{"a, b,a,,", []string{"a", "b"}},
		{[]any{"x", " y "}, []string{"x", "y"}},
		{nil, nil},
		{"", nil},
	}
	for _, tc := range tests {
		if got := Names(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Names(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestOptions(t *testing.T) {
	cfg := map[string]any{
		"returner.x.host":             "flat",
		"returner.x.port":             int64(1),
		"returner.x":                  payload.NewMap("user", "fromdict", "port", int64(2)),
		"alt.returner.x.host":         "althost",
		"alt.returner.x.db":           "",
		"alt.returner.x":              payload.NewMap("user", "altdict"),
		"returner.x.pass":             false,
		"other.returner.x.irrelevant": "z",
	}
	opt := Option(func(k string) (any, bool) { v, ok := cfg[k]; return v, ok })
	attrs := map[string]string{"host": "host", "user": "user", "port": "port", "db": "db", "pass": "pass"}
	defaults := map[string]any{"db": "defdb", "pass": "defpass"}
	tests := []struct {
		name string
		ret  *payload.Map
		want map[string]any
	}{
		// The dict wins over the flat key; false-like values take defaults.
		{"default", nil, map[string]any{"host": "flat", "user": "fromdict", "port": int64(2), "db": "defdb", "pass": "defpass"}},
		{"ret_config", payload.NewMap("ret_config", "alt"), map[string]any{"host": "althost", "user": "altdict", "port": int64(2), "db": "defdb", "pass": "defpass"}},
		{"ret_kwargs", payload.NewMap("ret_kwargs", payload.NewMap("db", "kwdb")), map[string]any{"host": "flat", "user": "fromdict", "port": int64(2), "db": "kwdb", "pass": "defpass"}},
	}
	for _, tc := range tests {
		if got := Options(opt, "returner.x", tc.ret, attrs, defaults); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestJSON(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{payload.NewMap("b", int64(1), "a", []any{1.0, "x", nil, true}), `{"b": 1, "a": [1.0, "x", null, true]}`},
		{[]byte("ok"), `"ok"`},
		{[]byte("\xff"), "\"\ufffd\""},
		{payload.NewMap("é", "ü"), "{\"é\": \"ü\"}"},
	}
	for _, tc := range tests {
		got, err := JSON(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("JSON(%v) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		back, err := ParseJSON([]byte(got))
		if err != nil {
			t.Errorf("ParseJSON(%q): %v", got, err)
		}
		if again, _ := JSON(back); again != got {
			t.Errorf("round trip %q -> %q", got, again)
		}
	}
	for _, bad := range []string{"", "{", "[1,]", "{} x", strings.Repeat("[", 600) + strings.Repeat("]", 600)} {
		if _, err := ParseJSON([]byte(bad)); err == nil {
			t.Errorf("ParseJSON(%q) accepted", bad)
		}
	}
}

type nopReturner struct{}

func (nopReturner) Return(context.Context, *payload.Map) error { return nil }
func (nopReturner) Close() error                               { return nil }

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	f := func(Env) (Returner, error) { return nopReturner{}, nil }
	if err := r.Register("a", f); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"a", "", "x.y"} {
		if err := r.Register(bad, f); err == nil {
			t.Errorf("Register(%q) accepted", bad)
		}
	}
	if _, err := r.Open("a", Env{}); err != nil {
		t.Fatal(err)
	}
	_, err := r.Open("nosuch", Env{})
	if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "'nosuch.returner' is not available.") {
		t.Fatalf("unknown: %v", err)
	}
	if got := r.Names(); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("Names: %v", got)
	}
}

package builtin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/beacons"
	bbuiltin "github.com/gsalt/gsalt/beacons/builtin"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// beaconsRegistry is the core registry with the beacons module (added
// here until builtin.Register includes it).
func beaconsRegistry(t *testing.T) *modules.Registry {
	t.Helper()
	r := registry(t)
	if _, ok := r.Lookup("beacons.list"); !ok {
		if err := r.Register(builtin.BeaconsFunctionsForTest()...); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestBeaconsModuleGolden replays module_calls.json: the returns of Salt's
// beacons module functions, in sequence, against a real
// salt.beacons.Beacon (see beacons/testdata/gen_goldens.py), here against
// beacons.Manager through the "beacons" service.
func TestBeaconsModuleGolden(t *testing.T) {
	v, err := goldenLoad("../../beacons/testdata/module_calls.json")
	if err != nil {
		t.Fatal(err)
	}
	g := v.(*payload.Map)
	conf := t.TempDir()
	if err := os.Mkdir(filepath.Join(conf, "minion.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	ob, _ := g.Get("opts_beacons")
	pillar := g.Map("pillar")
	mgr := beacons.New(beacons.Options{
		Opts:    payload.NewMap("id", "golden", "beacons", ob),
		Pillar:  func() *payload.Map { return pillar },
		Modules: bbuiltin.All(bbuiltin.Options{}),
		Logger:  slog.New(slog.DiscardHandler),
	})
	if got, want := pyJSON(toList(mgr.Modules())), pyJSON(g.List("available")); got != want {
		t.Fatalf("available %s, want %s", got, want)
	}
	r := beaconsRegistry(t)
	env := &modules.Env{ID: "golden", Registry: r, Pillar: pillar,
		Opts:     payload.NewMap("conf_file", filepath.Join(conf, "minion"), "default_include", "minion.d/*.conf"),
		Services: map[string]any{"beacons": mgr}}
	for i, cv := range g.List("calls") {
		call := cv.(*payload.Map)
		args := append([]any{}, call.List("args")...)
		if kwargs := call.Map("kwargs"); kwargs.Len() > 0 {
			k := kwargs.Clone()
			k.Set("__kwarg__", true)
			args = append(args, k)
		}
		res := r.Execute(context.Background(), modules.Binder{}, env, call.Str("fun"), payload.DeepClone(args).([]any), nil)
		wantRet, _ := call.Get("return")
		want := strings.ReplaceAll(pyJSON(wantRet), "$CONF", conf)
		if got := pyJSON(res.Return); got != want {
			t.Errorf("%d %s %s:\n got %s\nwant %s", i, call.Str("fun"), pyJSON(call.List("args")), got, want)
		}
		if call.Has("file") {
			data, err := os.ReadFile(filepath.Join(conf, "minion.d", "beacons.conf"))
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != call.Str("file") {
				t.Errorf("%d beacons.conf:\n got %q\nwant %q", i, data, call.Str("file"))
			}
		}
	}
}

func toList(s []string) []any {
	out := make([]any, len(s))
	for i := range s {
		out[i] = s[i]
	}
	return out
}

// TestBeaconsNoManager: without the "beacons" service the functions
// answer as Salt's do without the event module.
func TestBeaconsNoManager(t *testing.T) {
	r := beaconsRegistry(t)
	env := &modules.Env{ID: "m1", Registry: r, Opts: payload.NewMap("conf_file", filepath.Join(t.TempDir(), "nope", "minion"))}
	cases := []struct {
		fun  string
		args []any
		want string
	}{
		{"beacons.list", nil, `{"result": false, "comment": "Event module not available. Beacon list failed."}`},
		{"beacons.list_available", nil, `{"result": false, "comment": "Event module not available. Beacon list_available failed."}`},
		{"beacons.delete", []any{"x"}, `{"comment": "Event module not available. Beacon delete failed.", "result": false}`},
		{"beacons.enable", nil, `{"comment": "Event module not available. Beacons enable job failed.", "result": false}`},
		{"beacons.disable", nil, `{"comment": "Event module not available. Beacons disable job failed.", "result": false}`},
		{"beacons.reset", nil, `{"comment": "Event module not available. Beacon reset job failed.", "result": false}`},
		{"beacons.enable_beacon", []any{"x"}, `{"comment": "Beacon x is not currently configured.", "result": false}`},
		{"beacons.add", []any{"load", []any{}}, `{"comment": "Beacon \"load\" is not available.", "result": false}`},
		{"beacons.add", []any{"load"}, "Passed invalid arguments"},
	}
	for _, c := range cases {
		res := r.Execute(context.Background(), modules.Binder{}, env, c.fun, c.args, nil)
		got := pyJSON(res.Return)
		if s, ok := res.Return.(string); ok {
			got = s
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: got %s, want %s", c.fun, got, c.want)
		}
	}
	// save cannot write into a missing directory.
	res := r.Execute(context.Background(), modules.Binder{}, env, "beacons.save", nil, nil)
	if m, ok := res.Return.(*payload.Map); !ok || m.Bool("result") || !strings.HasPrefix(m.Str("comment"), "Unable to write to beacons file at ") {
		t.Errorf("save: %v", pyJSON(res.Return))
	}
}

// goldenLoad reads a JSON golden keeping key order and ints apart from
// floats (beacons/internal/golden does the same for the beacons packages).
func goldenLoad(path string) (any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return goldenValue(dec)
}

func goldenValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			m := &payload.Map{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := goldenValue(dec)
				if err != nil {
					return nil, err
				}
				m.Set(k.(string), v)
			}
			_, err := dec.Token()
			return m, err
		}
		list := []any{}
		for dec.More() {
			v, err := goldenValue(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token()
		return list, err
	case json.Number:
		if !strings.ContainsAny(t.String(), ".eE") {
			return strconv.ParseInt(t.String(), 10, 64)
		}
		return strconv.ParseFloat(t.String(), 64)
	}
	return tok, nil
}

// pyJSON renders a value as Python's json.dumps does.
func pyJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case string:
		return pyfmt.JSONString(x, true)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return pyfmt.FloatRepr(x)
	case *payload.Map:
		parts := make([]string, 0, x.Len())
		for _, it := range x.Items() {
			parts = append(parts, pyfmt.JSONString(payload.KeyString(it.Key), true)+": "+pyJSON(it.Value))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i := range x {
			parts[i] = pyJSON(x[i])
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}

package builtin

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/beacons"
	bbuiltin "github.com/gsalt/gsalt/beacons/builtin"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// beaconGoldenStep is one step of testdata/beacon/golden.json.
type beaconGoldenStep struct {
	SLS     string         `json:"sls"`
	Test    bool           `json:"test"`
	Ret     [][2]any       `json:"ret"`
	Beacons map[string]any `json:"beacons"`
	Saved   *string        `json:"saved"`
}

// excPrefix starts the comment of a state that raised.
const excPrefix = "An exception occurred in this state: "

// TestBeaconStatesGolden replays testdata/beacon/golden.json: Salt 3006's
// state system applying beacon.present/absent/enabled/disabled, file.managed
// and file.directory with beacon: True (State.call_beacons and
// file.mod_beacon) and service/pkg/file.mod_beacon, in sequence, plainly
// and with test=True, against a real salt.beacons.Beacon (gen.py). Here the
// same SLS run through state.template_str against beacons.Manager; the
// running dicts (in run order), the beacons listed after each step and
// beacons.conf must be equal.
func TestBeaconStatesGolden(t *testing.T) {
	dir := "../testdata/beacon"
	saltpeer.Golden(t, filepath.Join(dir, "golden.json"), func(src string) []byte {
		return saltpeer.RunScript(t, src, filepath.Join(dir, "gen.py"), json.RawMessage(testutil.ReadFile(t, filepath.Join(dir, "steps.json"))))
	})
	raw, err := os.ReadFile(filepath.Join(dir, "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []beaconGoldenStep
	if err := json.Unmarshal(raw, &steps); err != nil {
		t.Fatal(err)
	}
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	conf, work := filepath.Join(tmp, "conf"), filepath.Join(tmp, "work")
	for _, d := range []string{filepath.Join(conf, "minion.d"), work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mgr := beacons.New(beacons.Options{
		Opts:    payload.NewMap("id", "golden", "beacons", payload.NewMap()),
		Modules: bbuiltin.All(bbuiltin.Options{}),
		Logger:  slog.New(slog.DiscardHandler),
	})
	reg := suiteRegistry(t)
	env := &modules.Env{ID: "golden", Registry: reg, Grains: payloadLinuxGrains(), Pillar: payload.NewMap(),
		Log: slog.New(slog.DiscardHandler),
		Opts: payload.NewMap("id", "golden", "conf_file", filepath.Join(conf, "minion"), "default_include", "minion.d/*.conf",
			"file_client", "local", "cachedir", filepath.Join(tmp, "cache"), "file_roots", payload.NewMap("base", []any{conf})),
		Services: map[string]any{"beacons": mgr}}
	unDir := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, work, "$DIR"), conf, "$CONF")
	}
	for i, st := range steps {
		args := []any{strings.ReplaceAll(st.SLS, "$DIR", work)}
		if st.Test {
			args = append(args, payload.NewMap("__kwarg__", true, "test", true))
		}
		res := reg.Execute(context.Background(), modules.Binder{}, env, "state.template_str", args, nil)
		first, _, _ := strings.Cut(st.SLS, "\n")
		name := first
		if st.Test {
			name += " (test)"
		}
		running, ok := res.Return.(*payload.Map)
		if !ok {
			t.Fatalf("%d %s: state.template_str returned %v", i, name, res.Return)
		}
		got := beaconRunning(t, running, unDir)
		want := []any{}
		for _, e := range st.Ret {
			want = append(want, []any{e[0], e[1]})
		}
		if !reflect.DeepEqual(got, want) {
			gb, _ := json.MarshalIndent(got, "", " ")
			wb, _ := json.MarshalIndent(want, "", " ")
			t.Errorf("%d %s:\ngsalt %s\nSalt  %s", i, name, gb, wb)
		}
		lr := reg.Execute(context.Background(), modules.Binder{}, env, "beacons.list", []any{payload.NewMap("__kwarg__", true, "return_yaml", false)}, nil)
		if g, w := beaconJSON(t, lr.Return, unDir), beaconJSON(t, st.Beacons, nil); !reflect.DeepEqual(g, w) {
			t.Errorf("%d %s: beacons\ngsalt %v\nSalt  %v", i, name, g, w)
		}
		b, err := os.ReadFile(filepath.Join(conf, "minion.d", "beacons.conf"))
		switch {
		case st.Saved == nil && err == nil:
			t.Errorf("%d %s: beacons.conf written, Salt wrote none", i, name)
		case st.Saved != nil && unDir(string(b)) != *st.Saved:
			t.Errorf("%d %s: beacons.conf\ngsalt %q\nSalt  %q", i, name, b, *st.Saved)
		}
	}
}

// beaconJSON is v as generic JSON, paths made $DIR.
func beaconJSON(t *testing.T, v any, unDir func(string) string) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if unDir != nil {
		s = unDir(s)
	}
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// beaconRunning is the running dict as gen.py keeps it: [tag, ret] in run
// order, without start_time, duration and __run_num__, an exception
// comment reduced to its last line.
func beaconRunning(t *testing.T, running *payload.Map, unDir func(string) string) []any {
	t.Helper()
	type entry struct {
		n   int64
		tag string
		ret *payload.Map
	}
	var es []entry
	for _, it := range running.Items() {
		r := it.Value.(*payload.Map).Clone()
		n, _ := r.Int("__run_num__")
		for _, k := range []string{"start_time", "duration", "__run_num__"} {
			r.Delete(k)
		}
		if c := r.Str("comment"); strings.HasPrefix(c, excPrefix) {
			lines := strings.Split(strings.TrimSpace(c), "\n")
			r.Set("comment", excPrefix+strings.TrimPrefix(lines[len(lines)-1], excPrefix))
		}
		es = append(es, entry{n, payload.KeyString(it.Key), r})
	}
	sort.Slice(es, func(a, b int) bool { return es[a].n < es[b].n })
	out := []any{}
	for _, e := range es {
		out = append(out, []any{unDir(e.tag), beaconJSON(t, e.ret, unDir)})
	}
	return out
}

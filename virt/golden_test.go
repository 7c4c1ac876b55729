//go:build libvirt_dlopen

package virt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/virt"
	"github.com/gsalt/gsalt/wire/payload"
)

// update regenerates testdata/golden.json with real Salt:
//
//	GSALT_SALT_SRC=/work/salt-src go test -tags libvirt_dlopen ./virt -run TestGoldenTestDriver -update

const (
	stepsFile  = "testdata/golden_steps.json"
	goldenFile = "testdata/golden.json"
)

// step is one call of a golden steps file. Args and Kwargs keep the
// file's key order (Python dicts do, and gsalt writes XML elements in the
// order it is given them), so they are decoded with decodeOrdered.
type step struct {
	Fun    string
	Args   []any
	Kwargs *payload.Map
}

// UnmarshalJSON decodes {"fun", "args", "kwargs"} keeping key order.
func (s *step) UnmarshalJSON(data []byte) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeOrdered(d)
	if err != nil {
		return err
	}
	m, ok := v.(*payload.Map)
	if !ok {
		return fmt.Errorf("step: %s is not an object", data)
	}
	s.Fun = m.Str("fun")
	args, _ := m.Get("args")
	s.Args, _ = args.([]any)
	kw, _ := m.Get("kwargs")
	s.Kwargs, _ = kw.(*payload.Map)
	return nil
}

// requireLibvirt opens test:///default or skips the test with one line.
func requireLibvirt(t *testing.T) virt.Conn {
	t.Helper()
	c, err := virt.Libvirt().Open("test:///default", nil)
	if errors.Is(err, virt.ErrNoLibvirt) {
		t.Skip("virt: libvirt.so.0 is not installed; skipping the libvirt test-driver tests")
	}
	if err != nil {
		t.Fatalf("open test:///default: %v", err)
	}
	return c
}

// testEnv is a minion environment whose virt:connection:uri is uri.
func testEnv(t *testing.T, uri string, m *virt.Module) *modules.Env {
	t.Helper()
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(m.Functions()...); err != nil {
		t.Fatal(err)
	}
	return &modules.Env{
		ID:       "golden",
		Registry: reg,
		Opts:     payload.NewMap("virt", payload.NewMap("connection", payload.NewMap("uri", uri))),
		Grains:   payload.NewMap("fqdn", "golden.example"),
		Pillar:   payload.NewMap(),
	}
}

// call runs fun like the minion does and returns its return in the golden
// form: {"ret": ...} or {"error": ...}.
func call(ctx context.Context, env *modules.Env, st step) any {
	args := append([]any{}, st.Args...)
	if st.Kwargs.Len() > 0 {
		kw := payload.NewMap("__kwarg__", true)
		for _, it := range st.Kwargs.Items() {
			kw.SetKey(it.Key, toPayload(it.Value))
		}
		args = append(args, kw)
	}
	res := env.Registry.Execute(ctx, modules.Binder{}, env, st.Fun, toPayload(args).([]any), nil)
	if res.Retcode != 0 {
		if s, ok := res.Return.(string); ok {
			const exc = "The minion function caused an exception: "
			if strings.HasPrefix(s, exc) {
				s = "EXCEPTION " + strings.TrimPrefix(s, exc)
			}
			return payload.NewMap("error", s)
		}
	}
	return payload.NewMap("ret", tag(res.Return))
}

func toPayload(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toPayload(e)
		}
		return out
	case *payload.Map:
		m := payload.NewMap()
		for _, it := range x.Items() {
			m.SetKey(it.Key, toPayload(it.Value))
		}
		return m
	}
	return v
}

// tag marks floats and bytes the way testdata/golden.py does.
func tag(v any) any {
	switch x := v.(type) {
	case float64:
		return payload.NewMap("__float__", x)
	case []byte:
		return payload.NewMap("__bytes__", string(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = tag(e)
		}
		return out
	case *payload.Map:
		m := payload.NewMap()
		for _, it := range x.Items() {
			m.SetKey(it.Key, tag(it.Value))
		}
		return m
	}
	return v
}

// varying are the keys whose values follow the clock on the test driver.
var varying = map[string]bool{"cputime": true, "cputime_percent": true, "rx_bytes": true, "rx_packets": true,
	"rx_errs": true, "rx_drop": true, "tx_bytes": true, "tx_packets": true, "tx_errs": true, "tx_drop": true,
	"rd_req": true, "rd_bytes": true, "wr_req": true, "wr_bytes": true, "errs": true, "created": true}

var uuidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// fixedUUIDs are the test driver's built-in objects, whose UUIDs are
// compared; the UUIDs libvirt makes up for new objects are not.
var fixedUUIDs = map[string]bool{"6695eb01-f6a4-8304-79aa-97f2502e193f": true, "dfe224cb-28fb-8dd0-c4b2-64eb3f0f4566": true,
	"dd8fe884-6c02-601e-7551-cca97df1c5df": true, "5a1c9e3e-0c55-4d6b-9a0e-2b9a3f0d7c11": true}

// sortLists orders the lists of names whose order libvirt's test driver
// does not fix (hash tables).
func sortLists(fun string, v any) any {
	if fun == "virt.volume_infos" {
		// libvirt lists a pool's volumes in no fixed order (Salt's dict
		// follows it): compare each pool's volumes by name.
		if m, ok := v.(*payload.Map); ok {
			if pools, ok := m.Get("ret"); ok {
				if pm, ok := pools.(*payload.Map); ok {
					for _, it := range pm.Items() {
						if vols, ok := it.Value.(*payload.Map); ok {
							sorted := &payload.Map{}
							keys := vols.Keys()
							sort.Strings(keys)
							for _, k := range keys {
								x, _ := vols.Get(k)
								sorted.Set(k, x)
							}
							pm.SetKey(it.Key, sorted)
						}
					}
				}
			}
		}
		return v
	}
	if !strings.HasPrefix(fun, "virt.list_") && fun != "virt.pool_list_volumes" {
		return v
	}
	if m, ok := v.(*payload.Map); ok {
		if l, ok := m.Get("ret"); ok {
			if list, ok := l.([]any); ok {
				sort.Slice(list, func(i, j int) bool { return payload.Text(list[i]) < payload.Text(list[j]) })
			}
		}
	}
	return v
}

func normalize(v any) any {
	switch x := v.(type) {
	case string:
		return uuidRe.ReplaceAllStringFunc(x, func(u string) string {
			if fixedUUIDs[u] {
				return u
			}
			return "UUID"
		})
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	case *payload.Map:
		for _, it := range x.Items() {
			k := payload.KeyString(it.Key)
			if varying[k] {
				x.Set(k, "<varies>")
				continue
			}
			x.SetKey(it.Key, normalize(it.Value))
		}
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	}
	return v
}

// decodeOrdered decodes JSON keeping object key order.
func decodeOrdered(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := payload.NewMap()
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeOrdered(d)
				if err != nil {
					return nil, err
				}
				m.Set(kt.(string), v)
			}
			_, err := d.Token()
			return m, err
		case '[':
			out := []any{}
			for d.More() {
				v, err := decodeOrdered(d)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			_, err := d.Token()
			return out, err
		}
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return n, nil
		}
		f, err := t.Float64()
		return f, err
	}
	return tok, nil
}

func loadJSON(t *testing.T, path string) any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeOrdered(d)
	if err != nil && err != io.EOF {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// readStepsFile decodes a golden steps file (a JSON list of T).
func readStepsFile[T any](t *testing.T, path string) []T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var steps []T
	if err := json.Unmarshal(data, &steps); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return steps
}

func readSteps(t *testing.T) []step { return readStepsFile[step](t, stepsFile) }

// runGoldenScript runs testdata/<script> with real Salt 3006 (the test is
// skipped with one line when GSALT_SALT_SRC is unset) and returns what it
// printed.
func runGoldenScript(t *testing.T, timeout time.Duration, script string, args ...string) []byte {
	t.Helper()
	src := saltpeer.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := saltpeer.PythonCommand(ctx, src, "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
		append([]string{filepath.Join("testdata", script)}, args...)...).Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return out
}

// asGolden turns a gsalt result into the golden files' form: JSON as
// Python's json wrote it (XML unescaped), the fixture's per-run names
// replaced (norm), decoded keeping key order.
func asGolden(t *testing.T, res any, norm func(string) string) any {
	t.Helper()
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		t.Fatal(err)
	}
	// payload.Map escapes <, > and & in its JSON: undo it so that the
	// normalization sees the XML as Python's json wrote it.
	text := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(raw.String())
	d := json.NewDecoder(strings.NewReader(norm(text)))
	d.UseNumber()
	v, err := decodeOrdered(d)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestGoldenTestDriver runs the same steps through gsalt's virt module as
// testdata/golden.py ran through Salt 3006's, on libvirt's test:///default
// driver, and compares every return.
func TestGoldenTestDriver(t *testing.T) {
	if testutil.Update() {
		out := runGoldenScript(t, 2*time.Minute, "golden.py", stepsFile)
		if err := os.WriteFile(goldenFile, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keep := requireLibvirt(t)
	defer func() { _ = keep.Close() }()
	steps := readSteps(t)
	golden, ok := loadJSON(t, goldenFile).([]any)
	if !ok || len(golden) != len(steps) {
		t.Fatalf("%s holds %d results for %d steps: regenerate with -update", goldenFile, len(golden), len(steps))
	}
	env := testEnv(t, "test:///default", &virt.Module{})
	ctx := context.Background()
	for i, st := range steps {
		got := sortLists(st.Fun, normalize(call(ctx, env, st)))
		want := sortLists(st.Fun, normalize(golden[i]))
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if !bytes.Equal(gj, wj) && !cleanErrorForCrash(t, i, got, want) {
			t.Errorf("step %d %s %v:\n got  %s\n want %s", i, st.Fun, st.Args, gj, wj)
		}
	}
	fmt.Fprintf(io.Discard, "%d steps\n", len(steps))
}

// cleanErrorForCrash accepts a clear gsalt error where Salt crashes with a
// Python exception (not a libvirt error): {"error": "EXCEPTION ValueError:
// ..."} in the golden file, {"error": "ERROR..."} from gsalt.
func cleanErrorForCrash(t *testing.T, i int, got, want any) bool {
	t.Helper()
	w, _ := want.(*payload.Map)
	g, _ := got.(*payload.Map)
	if w == nil || g == nil {
		return false
	}
	ws, gs := w.Str("error"), g.Str("error")
	if !strings.HasPrefix(ws, "EXCEPTION ") || strings.HasPrefix(ws, "EXCEPTION libvirtError") || !strings.HasPrefix(gs, "ERROR") {
		return false
	}
	t.Logf("step %d: Salt crashes (%s); gsalt: %s", i, ws, gs)
	return true
}

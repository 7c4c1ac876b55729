package builtin

import (
	"sort"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/modules"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// suiteRegistry is a minion registry: the built-in execution modules and
// state.* over this package's state modules.
func suiteRegistry(t *testing.T) *modules.Registry {
	t.Helper()
	reg := modules.NewRegistry()
	if err := mbuiltin.Register(reg); err != nil {
		t.Fatal(err)
	}
	st := states.NewRegistry()
	if err := Register(st); err != nil {
		t.Fatal(err)
	}
	if err := states.RegisterExec(reg, st, render.Default()); err != nil {
		t.Fatal(err)
	}
	return reg
}

// stateRet keeps, of a state.single return ({tag: ret}), the ret's keys
// but those that differ between runs or name the call (start_time,
// duration, __run_num__, __id__, __sls__): name, result, changes,
// comment, warnings and the keys a state module adds of its own
// (alternatives.install's link, path and priority). A Python traceback in
// the comment is reduced to its stable parts (saltpeer.StableTraceback):
// gsalt's has one frame.
func stateRet(_ string, v any) any {
	m, ok := v.(*payload.Map)
	if !ok || m.Len() != 1 {
		return v
	}
	r, ok := m.Items()[0].Value.(*payload.Map)
	if !ok || !r.Has("__run_num__") {
		return v
	}
	// the usual keys in this order, then the others sorted
	keys := []string{"name", "result", "changes", "comment", "warnings"}
	var extra []string
	for _, it := range r.Items() {
		switch k := payload.KeyString(it.Key); k {
		case "name", "result", "changes", "comment", "warnings", "start_time", "duration", "__run_num__", "__id__", "__sls__":
		default:
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	out := &payload.Map{}
	for _, k := range append(keys, extra...) {
		x, ok := r.Get(k)
		if !ok {
			continue
		}
		if c, ok := x.(string); ok && k == "comment" {
			x = saltpeer.StableTraceback(c)
		}
		out.Set(k, x)
	}
	return out
}

// single is a state.single call of fun with kwargs, test=True when test.
func single(name, fun string, test bool, kwargs ...any) salttest.Call {
	if test {
		kwargs = append(kwargs, "test", true)
	}
	return salttest.Call{Name: name, Fun: "state.single", Args: []any{fun}, Kwargs: kwargs}
}

// runStateSuite runs a suite of state.single calls, comparing rets.
func runStateSuite(t *testing.T, s salttest.Suite) {
	t.Helper()
	s.Normalize = stateRet
	salttest.Run(t, s, suiteRegistry(t))
}

// payloadLinuxGrains are the grains Salt's Linux-only modules need.
func payloadLinuxGrains() *payload.Map {
	return payload.NewMap("kernel", "Linux", "os", "Debian", "os_family", "Debian", "osrelease", "12", "osmajorrelease", int64(12), "init", "systemd", "id", "golden")
}

package builtin_test

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestDataGolden compares the data module (and match.data) on a
// temporary cachedir with Salt 3006 (testdata/golden/data.json); each
// call starts from the datastore an earlier Salt run wrote.
func TestDataGolden(t *testing.T) {
	// A datastore as salt.payload.dump writes {"spam": "eggs", "n": [1, 2]}.
	store, err := payload.MarshalBin(payload.NewMap("spam", "eggs", "n", []any{int64(1), int64(2)}))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"cache/datastore": string(store)}
	opts := []any{"cachedir", "{dir}/cache"}
	calls := []salttest.Call{
		{Name: "load", Fun: "data.load"},
		{Name: "load missing", Fun: "data.load", Files: map[string]string{"cache/": ""}},
		{Name: "get", Fun: "data.get", Args: []any{"spam"}},
		{Name: "get default", Fun: "data.get", Args: []any{"nope", "dflt"}},
		{Name: "get list", Fun: "data.get", Args: []any{[]any{"spam", "nope", "n"}}},
		{Name: "get list default", Fun: "data.get", Args: []any{[]any{"spam", "nope"}, "d"}},
		{Name: "keys", Fun: "data.keys"},
		{Name: "values", Fun: "data.values"},
		{Name: "items", Fun: "data.items"},
		{Name: "has_key", Fun: "data.has_key", Args: []any{"n"}},
		{Name: "update", Fun: "data.update", Args: []any{"new", payload.NewMap("a", int64(1))}},
		{Name: "cas ok", Fun: "data.cas", Args: []any{"spam", "ham", "eggs"}},
		{Name: "cas wrong", Fun: "data.cas", Args: []any{"spam", "ham", "x"}},
		{Name: "cas missing", Fun: "data.cas", Args: []any{"nope", "ham", "x"}},
		{Name: "pop", Fun: "data.pop", Args: []any{"spam"}},
		{Name: "pop default", Fun: "data.pop", Args: []any{"nope", "d"}},
		{Name: "dump", Fun: "data.dump", Args: []any{payload.NewMap("x", "y")}},
		{Name: "dump not dict", Fun: "data.dump", Args: []any{[]any{int64(1)}}},
		{Name: "dump literal", Fun: "data.dump", Args: []any{"{'a': 1, 'b': [1, 'x']}"}},
		{Name: "dump literal list", Fun: "data.dump", Args: []any{"[1, 2]"}},
		{Name: "clear", Fun: "data.clear"},
		{Name: "match.data", Fun: "match.data", Args: []any{"spam:eggs"}},
	}
	for i := range calls {
		calls[i].Opts = opts
		if calls[i].Files == nil {
			calls[i].Files = files
		}
	}
	runSuite(t, salttest.Suite{Name: "data", Calls: calls, Grains: linuxGrains()})
}

package reactor_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestReactorCompiler checks the parts of salt.state.Compiler (the
// compiler Salt's reactor inherits) that differ from State's, which the
// reactor takes from the states package. The expectations are what Salt
// 3006 gives: salt.state.Compiler({}, {}).verify_high(high), and
// order_chunks(compile_high_data(high)) for the chunks.
func TestReactorCompiler(t *testing.T) {
	body := func(state string, run any) *payload.Map {
		return payload.NewMap("r", payload.NewMap("__sls__", "s", state, run))
	}
	verify := []struct {
		name string
		high *payload.Map
		want []string
	}{
		{"illegal requisite", body("local", []any{payload.NewMap("require", []any{payload.NewMap("id", []any{int64(1)})}), "cmd.run"}),
			[]string{"Illegal requisite \"[1]\", is SLS s\n"}},
		{"none is not a list", body("local", nil), []string{"State 'r' in SLS 's' is not formed as a list"}},
		{"two functions", body("local.cmd", []any{"run"}), []string{"Too many functions declared in state 'local.cmd' in SLS 's'"}},
		{"whitespace", body("local", []any{"echo hi"}),
			[]string{"The function \"echo hi\" in state \"r\" in SLS \"s\" has whitespace, a function with whitespace is not supported, perhaps this is an argument that is missing a \":\""}},
		{"requisite not a list", body("local", []any{payload.NewMap("watch", "x"), "run"}),
			[]string{"The watch statement in state 'r' in SLS 's' needs to be formed as a list"}},
		{"no function", body("local", []any{payload.NewMap("tgt", "m1")}), []string{"No function declared in state 'local' in SLS 's'"}},
		{"names need not be a list", body("local", []any{payload.NewMap("names", "ab"), "run"}), []string{}},
	}
	for _, tc := range verify {
		t.Run(tc.name, func(t *testing.T) {
			if got := states.ReactorCompiler.VerifyHigh(tc.high); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("VerifyHigh = %q, Salt %q", got, tc.want)
			}
		})
	}

	// Compiler merges an argument dict whole (a "state" override too) and
	// iterates a string of names.
	high := body("local", []any{payload.NewMap("names", "ab"), payload.NewMap("state", "runner", "tgt", "m1"), "cmd.run"})
	got, _ := json.Marshal(states.OrderChunks(states.ReactorCompiler.CompileHigh(high)))
	want := `[{"state":"runner","name":"a","__sls__":"s","__id__":"r","tgt":"m1","fun":"cmd.run","order":1.0001},` +
		`{"state":"runner","name":"b","__sls__":"s","__id__":"r","tgt":"m1","fun":"cmd.run","order":1.0002}]`
	if string(got) != want {
		t.Errorf("chunks\n got  %s\n want %s", got, want)
	}
}

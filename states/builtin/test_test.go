package builtin

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// testScenarios are the test state runs compared with Salt.
func testScenarios() []ctemScenario {
	var out []ctemScenario
	for _, mode := range []struct {
		prefix string
		test   bool
	}{{"", false}, {"t_", true}} {
		for _, sc := range []ctemScenario{
			{ID: "nop", Fun: "test.nop"},
			{ID: "nop_comment", Fun: "test.nop", Args: ctemKV("comment", "ignored")},
			{ID: "swoc", Fun: "test.succeed_without_changes"},
			{ID: "swoc_comment", Fun: "test.succeed_without_changes", Args: ctemKV("name", "other", "comment", "custom")},
			{ID: "swc", Fun: "test.succeed_with_changes", Args: ctemKV("comment", "yay")},
			{ID: "fwoc", Fun: "test.fail_without_changes", Args: ctemKV("comment", "boo")},
			{ID: "fwc", Fun: "test.fail_with_changes"},
			{ID: "cts_default", Fun: "test.configurable_test_state"},
			{ID: "cts_false", Fun: "test.configurable_test_state", Args: ctemKV("changes", false, "result", false, "comment", "c", "warnings", "w")},
			{ID: "cts_warn_list", Fun: "test.configurable_test_state", Args: ctemKV("changes", true, "result", true, "warnings", []any{"a", "b"})},
			{ID: "cts_bad_changes", Fun: "test.configurable_test_state", Args: ctemKV("changes", "maybe")},
			{ID: "cts_bad_result", Fun: "test.configurable_test_state", Args: ctemKV("result", "maybe")},
			{ID: "cts_bad_warnings", Fun: "test.configurable_test_state", Args: ctemKV("warnings", int64(5))},
			{ID: "cts_random_result_nochange", Fun: "test.configurable_test_state", Args: ctemKV("changes", false, "result", true, "comment", "")},
			{ID: "notify", Fun: "test.show_notification", Args: ctemKV("text", "Hello there")},
			{ID: "notify_missing", Fun: "test.show_notification"},
			{ID: "mw_swoc", Fun: "test.succeed_without_changes", Watch: true},
			{ID: "mw_nop", Fun: "test.nop", Watch: true},
			{ID: "mw_fwoc", Fun: "test.fail_without_changes", Watch: true},
			{ID: "mw_direct", Fun: "test.mod_watch", Args: ctemKV("sfun", "nop")},
		} {
			sc.ID = mode.prefix + sc.ID
			sc.Test = mode.test
			if sc.Args == nil {
				sc.Args = ctemKV()
			}
			out = append(out, sc)
		}
	}
	return out
}

func TestTestGolden(t *testing.T) { ctemRunGolden(t, "test", testScenarios()) }

func TestConfigurableRandom(t *testing.T) {
	env := ctemEnv(t, nil)
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		ret, err := ctemDirect(t, env, "test.configurable_test_state", ctemKV("name", "r", "changes", "Random", "result", "RANDOM"), false, false)
		if err != nil {
			t.Fatal(err)
		}
		if ret.Result != states.True && ret.Result != states.False {
			t.Fatalf("result %v", ret.Result)
		}
		seen[fmt.Sprintf("changes=%v result=%v", ret.Changes != nil, ret.Result)] = true
	}
	if len(seen) != 4 {
		t.Errorf("200 random runs gave only %v", seen)
	}
	// In test mode the result is None whenever changes is not False.
	ret, err := ctemDirect(t, env, "test.configurable_test_state", ctemKV("name", "r", "changes", "random", "result", false), false, true)
	if err != nil || ret.Result != states.None || ret.Comment != "This is a test" {
		t.Fatalf("test mode: %+v %v", ret, err)
	}
}

func TestTestModWatchRunning(t *testing.T) {
	req := func(id string) *payload.Map {
		return ctemKV("state", "test", "__id__", id, "name", id, "fun", "succeed_with_changes")
	}
	low := ctemKV("name", "w", "sfun", "nop", "__reqs__", ctemKV("watch", []any{req("a"), req("b")}))
	for _, tc := range []struct {
		name     string
		services map[string]any
		want     string
	}{
		{name: "no running view", want: `{"Requisites with changes":["test: a","test: b"]}`},
		{name: "only b changed", services: map[string]any{runningServiceName: ctemRunning{changed: map[string]bool{"test_|-b_|-b_|-succeed_with_changes": true}}},
			want: `{"Requisites with changes":["test: b"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ret, err := ctemDirect(t, ctemEnv(t, tc.services), "test.nop", low, true, false)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := json.Marshal(ret.Changes); string(b) != tc.want || ret.Comment != "Watch statement fired." || ret.Result != states.True {
				t.Errorf("got %s %+v, want %s", b, ret, tc.want)
			}
		})
	}
	// result, comment and changes in the low chunk override the defaults.
	ret, err := ctemDirect(t, ctemEnv(t, nil), "test.mod_watch", ctemKV("name", "w", "result", false, "comment", "c", "changes", ctemKV("x", int64(1))), false, false)
	if b, _ := json.Marshal(ret.Changes); err != nil || ret.Result != states.False || ret.Comment != "c" || string(b) != `{"x":1}` {
		t.Errorf("overrides: %+v %s %v", ret, b, err)
	}
}

package schedule

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/wire/payload"
)

// scenario is one entry of testdata/eval_scenarios.json: a schedule (and
// pillar) evaluated once a second for steps seconds from start (default
// 2026-11-22T10:00:00), but not at the offsets in skip (evaluations that
// came late, as on a loaded machine), with the runs expected as [offset,
// name, fun].
type scenario struct {
	Name     string           `json:"name"`
	Start    string           `json:"start"`
	Steps    int              `json:"steps"`
	Skip     []int            `json:"skip"`
	Running  map[string]int   `json:"running"`
	Schedule json.RawMessage  `json:"schedule"`
	Pillar   json.RawMessage  `json:"pillar"`
	Want     [][3]interface{} `json:"want"`
	// Salt and SaltDiffers record where Salt 3006's scheduler does
	// otherwise, and why gsalt does not follow it.
	Salt        [][3]interface{} `json:"salt"`
	SaltDiffers string           `json:"salt_differs"`
}

func loadScenarios(t *testing.T) []scenario {
	t.Helper()
	b, err := os.ReadFile("testdata/eval_scenarios.json")
	if err != nil {
		t.Fatal(err)
	}
	var out []scenario
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// decode reads JSON into the payload model, keeping the document's order.
func decode(t *testing.T, raw json.RawMessage) *payload.Map {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	v, err := config.DecodeYAMLPayload(raw)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := v.(*payload.Map)
	return m
}

// runScenario evaluates a scenario with gsalt's scheduler and returns the
// runs as [offset, name, fun] rows.
func runScenario(t *testing.T, sc scenario) [][3]interface{} {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if sc.Start != "" {
		var err error
		if start, err = time.Parse("2006-01-02T15:04:05", sc.Start); err != nil {
			t.Fatal(err)
		}
	}
	pillar := decode(t, sc.Pillar)
	now := start
	got := [][3]interface{}{}
	m := New(Options{
		Opts:    payload.NewMap("schedule", decode(t, sc.Schedule), "conf_file", t.TempDir()+"/minion"),
		Pillar:  func() *payload.Map { return pillar },
		Running: func(name string) int { return sc.Running[name] },
		Now:     func() time.Time { return now },
		Logger:  quiet(),
		Run: func(_ context.Context, j Job) {
			got = append(got, [3]interface{}{float64(now.Sub(start) / time.Second), j.Name, j.Fun})
		},
	})
	for i := 0; i <= sc.Steps; i++ {
		if slices.Contains(sc.Skip, i) {
			continue
		}
		now = start.Add(time.Duration(i) * time.Second)
		m.Eval(context.Background(), now)
	}
	return got
}

func TestEvalScenarios(t *testing.T) {
	for _, sc := range loadScenarios(t) {
		t.Run(sc.Name, func(t *testing.T) {
			got := runScenario(t, sc)
			if !reflect.DeepEqual(got, sc.Want) {
				t.Errorf("runs %v, want %v", got, sc.Want)
			}
		})
	}
}

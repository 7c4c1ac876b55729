package netmod

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// jsonToPayload decodes JSON into payload values (objects as *payload.Map,
// integral numbers as int64), as Python's json module gives dicts and ints.
func jsonToPayload(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var conv func(any) any
	conv = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			m := &payload.Map{}
			for k, e := range x {
				m.Set(k, conv(e))
			}
			return m
		case []any:
			for i := range x {
				x[i] = conv(x[i])
			}
			return x
		case json.Number:
			if i, err := x.Int64(); err == nil && !strings.ContainsAny(x.String(), ".eE") {
				return i
			}
			f, _ := x.Float64()
			return f
		}
		return v
	}
	return conv(v), nil
}

// TestNAPALMValidateFixtures runs NAPALM's own validate cases
// (test/base/validate/mocked_data/<case>: validate.yml, the getters'
// results as JSON, the expected report.yml) through gsalt's compliance
// report; gated on GSALT_NAPALM_TESTS (scripts/napalm-fixtures.sh).
func TestNAPALMValidateFixtures(t *testing.T) {
	root := os.Getenv("GSALT_NAPALM_TESTS")
	if root == "" {
		t.Skip("GSALT_NAPALM_TESTS unset: run scripts/napalm-fixtures.sh DIR and set it to DIR")
	}
	base := filepath.Join(root, "base", "validate", "mocked_data")
	dirs, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	yamlOf := func(t *testing.T, path string) any {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b = lastTopKeyWins(b)
		v, err := render.Default().Render(ctx, b, "yaml", nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return v
	}
	n := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(base, d.Name())
		t.Run(d.Name(), func(t *testing.T) {
			n++
			src := yamlOf(t, filepath.Join(dir, "validate.yml"))
			want := yamlOf(t, filepath.Join(dir, "report.yml"))
			got, err := validateSource(src, func(getter string, _ *payload.Map) (any, error) {
				if getter == "method_not_implemented" {
					return nil, fmt.Errorf("%w: %s", driver.ErrNotSupported, getter)
				}
				b, err := os.ReadFile(filepath.Join(dir, getter+".json"))
				if errors.Is(err, os.ErrNotExist) {
					return nil, fmt.Errorf("%w: %s", driver.ErrNotSupported, getter)
				}
				if err != nil {
					return nil, err
				}
				return jsonToPayload(b)
			})
			if err != nil {
				t.Fatal(err)
			}
			if !pyEqual(got, want) {
				gj, _ := json.MarshalIndent(got, "", " ")
				wj, _ := json.MarshalIndent(want, "", " ")
				t.Errorf("report differs\n got %s\nwant %s", gj, wj)
			}
		})
	}
	if n == 0 {
		t.Fatal("no validate cases found")
	}
}

// lastTopKeyWins drops the earlier one-line occurrences of a repeated
// top-level "key: value" line: one of NAPALM's report.yml files repeats
// "skipped: []", which PyYAML reads as the last one and Salt's YAML
// loader refuses.
func lastTopKeyWins(b []byte) []byte {
	lines := strings.Split(string(b), "\n")
	last := map[string]int{}
	for i, l := range lines {
		if k, v, ok := strings.Cut(l, ":"); ok && l != "" && l[0] != ' ' && l[0] != '-' && strings.TrimSpace(v) != "" {
			last[k] = i
		}
	}
	var out []string
	for i, l := range lines {
		if k, v, ok := strings.Cut(l, ":"); ok && l != "" && l[0] != ' ' && l[0] != '-' && strings.TrimSpace(v) != "" && last[k] != i {
			continue
		}
		out = append(out, l)
	}
	return []byte(strings.Join(out, "\n"))
}

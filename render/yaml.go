package render

import (
	"context"
	"fmt"
	"sync"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/wire/payload"
)

// YAML is Salt's yaml renderer: PyYAML (YAML 1.1) semantics as Salt's
// loader applies them (see config.DecodeYAML), ordered maps, duplicate keys
// an error. An empty document renders as an empty dict, like Salt.
type YAML struct{}

// Render decodes input.
func (YAML) Render(_ context.Context, input any, _ *Context) (any, error) {
	text, err := inputText("yaml", input)
	if err != nil {
		return nil, err
	}
	v, err := config.DecodeYAMLPayload([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	if v == nil {
		return emptyMap(), nil
	}
	return v, nil
}

// Bounds of the memo a registry's yaml renderer keeps.
const (
	// yamlMemoEntries is how many distinct documents are remembered.
	yamlMemoEntries = 64
	// yamlMemoMaxInput is the largest document remembered, in bytes.
	// Small documents are remembered too: a copy of a reactor's few-line
	// reaction costs 1/30 of decoding it again (BenchmarkSmallYAML:
	// yaml.v3 sets up a parser per document), and a render repeating an
	// earlier output is common (a reactor file reacting to the same
	// minion again).
	yamlMemoMaxInput = 1 << 20
)

// memoYAML is the yaml renderer Default registers: YAML with a bounded
// memo of the trees of the last documents it decoded, keyed by their exact
// text. A second state run renders the same SLS text (Jinja ran again, with
// fresh grains and pillar, and produced the same bytes), and decoding
// thousands of YAML lines was most of the render; a deep copy of the
// remembered tree is handed out, so callers may change what they get. Any
// different byte is a different key, so the result is always what YAML
// would decode now.
type memoYAML struct {
	mu    sync.Mutex
	trees map[string]any
	order []string // oldest first
}

func newMemoYAML() *memoYAML { return &memoYAML{trees: map[string]any{}} }

// Render decodes input as YAML does, through the memo.
func (y *memoYAML) Render(ctx context.Context, input any, rc *Context) (any, error) {
	text, ok := input.(string)
	if !ok || len(text) > yamlMemoMaxInput {
		return YAML{}.Render(ctx, input, rc)
	}
	y.mu.Lock()
	tree, hit := y.trees[text]
	y.mu.Unlock()
	if hit {
		return payload.DeepClone(tree), nil
	}
	v, err := YAML{}.Render(ctx, input, rc)
	if err != nil {
		return nil, err
	}
	y.mu.Lock()
	if _, dup := y.trees[text]; !dup {
		if len(y.order) >= yamlMemoEntries {
			delete(y.trees, y.order[0])
			y.order = append(y.order[:0], y.order[1:]...)
		}
		y.trees[text] = payload.DeepClone(v)
		y.order = append(y.order, text)
	}
	y.mu.Unlock()
	return v, nil
}

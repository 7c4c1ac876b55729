package render

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/internal/pytoml"
)

// TOML is Salt's toml renderer (salt/renderers/tomlmod.py): the text read
// by python3-toml 0.10.2's toml.loads (internal/pytoml), with its quirks
// and error texts; an empty document renders {}.
type TOML struct{}

// Render decodes input.
func (TOML) Render(_ context.Context, input any, _ *Context) (any, error) {
	text, err := inputText("toml", input)
	if err != nil {
		return nil, err
	}
	v, err := pytoml.Loads(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	if v.Len() == 0 {
		return emptyMap(), nil
	}
	return v, nil
}

package render

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/config"
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

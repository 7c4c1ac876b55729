package returners

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/gsalt/gsalt/render"
)

// ParseJSON decodes JSON text (a jsonb column) into payload values as the
// json renderer does: objects as *payload.Map in the text's key order,
// integers as int64 (uint64 or float64 when larger), other numbers as
// float64.
func ParseJSON(text []byte) (any, error) {
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, errors.New("returners: bad JSON: empty")
	}
	v, err := render.DecodeJSON(text)
	if err != nil {
		return nil, fmt.Errorf("returners: bad JSON: %w", err)
	}
	return v, nil
}

package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/gsalt/gsalt/wire/payload"
)

// maxJSONDepth bounds nesting of rendered JSON.
const maxJSONDepth = 256

// JSON is Salt's json renderer: objects become ordered maps, integers int64
// (uint64 above int64, floats when they have a fraction or exponent or do
// not fit).
type JSON struct{}

// Render decodes input.
func (JSON) Render(_ context.Context, input any, _ *Context) (any, error) {
	text, err := inputText("json", input)
	if err != nil {
		return nil, err
	}
	v, err := DecodeJSON([]byte(text))
	if err != nil {
		return nil, err
	}
	if v == nil {
		return emptyMap(), nil
	}
	return v, nil
}

// DecodeJSON decodes one JSON document into payload data, keeping object
// key order.
func DecodeJSON(src []byte) (any, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	v, err := jsonValue(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: extra data after the JSON document", ErrData)
	}
	return v, nil
}

func jsonValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := payload.NewMap()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := jsonValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				m.Set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return m, nil
		case '[':
			l := []any{}
			for dec.More() {
				v, err := jsonValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return l, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return n, nil
		}
		if u, err := strconv.ParseUint(t.String(), 10, 64); err == nil {
			return u, nil
		}
		f, err := t.Float64()
		if err != nil {
			return nil, err
		}
		return f, nil
	default:
		return t, nil // string, bool, nil
	}
}

func emptyMap() *payload.Map { return payload.NewMap() }

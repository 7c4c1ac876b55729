package jinja

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// decodeJSONOrdered decodes a JSON object keeping key order and big ints.
func decodeJSONOrdered(data []byte) (*payload.Map, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := jsonValue(dec)
	if err != nil {
		return nil, err
	}
	m, ok := v.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("not an object")
	}
	return m, nil
}

func jsonValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := &payload.Map{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := jsonValue(dec)
				if err != nil {
					return nil, err
				}
				m.Set(k.(string), v)
			}
			_, err := dec.Token()
			return m, err
		case '[':
			var l []any
			for dec.More() {
				v, err := jsonValue(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token()
			if l == nil {
				l = []any{}
			}
			return l, err
		}
	case json.Number:
		s := t.String()
		if strings.ContainsAny(s, ".eE") {
			return t.Float64()
		}
		v, _ := parseBigInt(s, 10)
		return v, nil
	}
	return tok, nil
}

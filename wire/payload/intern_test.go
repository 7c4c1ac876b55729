package payload

import (
	"bytes"
	"strings"
	"testing"
)

// TestInterned: every interned word is found (fits maxInternLen) and is
// the word itself.
func TestInterned(t *testing.T) {
	for k, v := range interned {
		if len(k) > maxInternLen {
			t.Errorf("%q is longer than maxInternLen %d: never looked up", k, maxInternLen)
		}
		if s, ok := v.(string); !ok || s != k {
			t.Errorf("interned[%q] = %#v", k, v)
		}
	}
}

// TestDecodeShortStrings: interned words, slab strings, invalid UTF-8
// bytes and long strings decode to the values encoded, whatever decoded
// before with the same pooled state, and a decoded []byte written by its
// reader changes nothing else.
func TestDecodeShortStrings(t *testing.T) {
	long := strings.Repeat("x", maxSlabString+1)
	huge := strings.Repeat("y", slabSize+10)
	mk := func(i int) *Map {
		return NewMap("cmd", "_return", "id", "sw-000"+string(rune('0'+i)), "return", true,
			"bin", []byte{0xff, byte(i), 0xfe}, "short", "ab"+string(rune('a'+i)), "long", long, "huge", huge,
			"test.ping", []any{"glob", "not-interned-" + string(rune('a'+i))}, "", "")
	}
	var got []*Map
	for i := range 5 {
		for _, mode := range []Mode{Wire, Bin} {
			b, err := MarshalMode(mk(i), mode)
			if err != nil {
				t.Fatal(err)
			}
			m, err := UnmarshalMap(b)
			if err != nil {
				t.Fatal(err)
			}
			clear(b) // the input is not kept by the values
			got = append(got, m)
		}
	}
	for j, m := range got {
		i := j / 2
		want, _ := MarshalBin(mk(i))
		have, _ := MarshalBin(m)
		if !bytes.Equal(have, want) {
			t.Fatalf("decode %d: %s, want %s", j, mapJSON(t, m), mapJSON(t, mk(i)))
		}
	}
	// Writing a decoded []byte changes only itself.
	bin := got[0].Bytes("bin")
	bin[0] = 0
	if got[0].Str("short") != "aba" || got[1].Bytes("bin")[0] != 0xff {
		t.Fatalf("a write to one decoded value changed another: %s", mapJSON(t, got[0]))
	}
}

func mapJSON(t *testing.T, m *Map) string {
	b, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

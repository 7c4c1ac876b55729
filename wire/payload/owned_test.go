package payload_test

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestUnmarshalOwned: UnmarshalOwned gives the same values as Unmarshal;
// a large string or bin value (a file chunk) shares the input's memory,
// small ones and values much smaller than the input are copies.
func TestUnmarshalOwned(t *testing.T) {
	big := bytes.Repeat([]byte("abcdefgh"), 16<<10) // 128 KiB of text
	bin := make([]byte, 128<<10)
	for i := range bin {
		bin[i] = byte(i*7) | 0x80 // not UTF-8
	}
	for _, tc := range []struct {
		name    string
		v       any
		aliased string // the key whose value must share the input, or ""
	}{
		{"text chunk", payload.NewMap("data", big, "dest", "a/b"), "data"},
		{"binary chunk", payload.NewMap("data", bin, "dest", "a/b"), "data"},
		{"small values", payload.NewMap("data", []byte("hello"), "dest", "a/b"), ""},
		{"chunk beside more data", payload.NewMap("data", big[:70<<10], "other", bin), "other"},
		{"value under 64 KiB", payload.NewMap("data", big[:60<<10]), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := payload.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			want, err := payload.Unmarshal(enc)
			if err != nil {
				t.Fatal(err)
			}
			in := bytes.Clone(enc)
			got, err := payload.UnmarshalOwned(in, payload.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatal("UnmarshalOwned differs from Unmarshal")
			}
			lo := uintptr(unsafe.Pointer(&in[0]))
			hi := lo + uintptr(len(in))
			for _, it := range got.(*payload.Map).Items() {
				var p uintptr
				switch x := it.Value.(type) {
				case string:
					p = uintptr(unsafe.Pointer(unsafe.StringData(x)))
				case []byte:
					p = uintptr(unsafe.Pointer(unsafe.SliceData(x)))
				}
				shared := p >= lo && p < hi
				if k := payload.KeyString(it.Key); shared != (k == tc.aliased) {
					t.Errorf("%s: shares the input = %v", k, shared)
				}
			}
		})
	}
	// Truncated input fails as Unmarshal does, without reading past it.
	enc, _ := payload.Marshal(payload.NewMap("data", bin))
	if _, err := payload.UnmarshalOwned(enc[:len(enc)-1], payload.DefaultLimits); err == nil {
		t.Fatal("truncated input decoded")
	}
}

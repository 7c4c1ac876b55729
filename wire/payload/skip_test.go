package payload

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestSkip: on generated trees (and values of every header size), Skip
// measures exactly the bytes the decoder takes, and refuses every
// truncated prefix.
func TestSkip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var vals []any
	for range 500 {
		vals = append(vals, genTree(r, 0))
	}
	big := make([]any, 70000)
	vals = append(vals, int64(-1), int64(-200), int64(1<<40), uint64(1<<63), 1.5,
		string(make([]byte, 40)), string(make([]byte, 300)), string(make([]byte, 70000)),
		make([]byte, 300), make([]byte, 70000), big, time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		Ext{Type: 5, Data: []byte{1}}, Ext{Type: 5, Data: make([]byte, 16)}, Ext{Type: 5, Data: make([]byte, 17)},
		Ext{Type: 5, Data: make([]byte, 300)})
	for i, v := range vals {
		data, err := Marshal(v)
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		_, want, err := UnmarshalPrefix(append(data, 0xc0)) // a tail is not counted
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		if n, ok := Skip(append(data, 0xc0)); !ok || n != want {
			t.Fatalf("value %d: Skip = %d, %v, want %d", i, n, ok, want)
		}
		for cut := range min(len(data), 64) {
			if _, ok := Skip(data[:cut]); ok {
				t.Fatalf("value %d: Skip accepts a truncated prefix of %d bytes", i, cut)
			}
		}
	}
	if _, ok := Skip([]byte{0xc1}); ok {
		t.Error("Skip accepts the reserved code 0xc1")
	}
	if _, ok := Skip([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}); ok {
		t.Error("Skip accepts an array longer than its data")
	}
}

// TestMapAt: MapAt hands over each entry's raw key and value in order.
func TestMapAt(t *testing.T) {
	m := NewMap("enc", "clear", "load", NewMap("cmd", "_auth"), "n", int64(7))
	data, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	ok := MapAt(data, func(k, v []byte) bool {
		text, n, ok := TextAt(k)
		if !ok || n != len(k) {
			t.Errorf("key %x is not one str", k)
		}
		keys = append(keys, string(text))
		want, _ := Marshal(m.Items()[len(keys)-1].Value)
		if string(v) != string(want) {
			t.Errorf("value of %s = %x, want %x", text, v, want)
		}
		return true
	})
	if !ok || len(keys) != 3 || keys[0] != "enc" || keys[2] != "n" {
		t.Fatalf("MapAt = %v, keys %v", ok, keys)
	}
	list, _ := Marshal([]any{"a"})
	if MapAt(list, func(k, v []byte) bool { return true }) {
		t.Error("MapAt accepts a list")
	}
	if MapAt(data[:len(data)-1], func(k, v []byte) bool { return true }) {
		t.Error("MapAt accepts a truncated map")
	}
}

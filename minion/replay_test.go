package minion

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestAppendReplayGuardMatchesMarshalBin: the hand-written guard encoding
// is byte for byte payload.MarshalBin of the same map, across the size
// classes of msgpack strings, arrays and integers.
func TestAppendReplayGuardMatchesMarshalBin(t *testing.T) {
	jids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("2026010100000%07d", i)
		}
		return out
	}
	cases := []struct {
		key    string
		serial int64
		jids   []string
	}{
		{"", 0, nil},
		{sessionKeyHash("k"), 1, jids(1)},
		{sessionKeyHash("k"), 127, jids(15)},
		{sessionKeyHash("k"), 128, jids(16)},
		{strings.Repeat("h", 31), 255, jids(100)},
		{strings.Repeat("h", 256), 256, jids(65535)},
		{strings.Repeat("h", 70000), 65536, jids(65536)},
		{"x", math.MaxUint32 + 1, []string{"", strings.Repeat("j", 300)}},
		{"x", -1, nil},
		{"x", -33, nil},
		{"x", -200, nil},
		{"x", -40000, nil},
		{"x", math.MinInt64, nil},
	}
	for i, c := range cases {
		l := make([]any, len(c.jids))
		for k, j := range c.jids {
			l[k] = j
		}
		want, err := payload.MarshalBin(payload.NewMap("key", c.key, "serial", c.serial, "jids", l))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendReplayGuard(nil, c.key, c.serial, c.jids); !bytes.Equal(got, want) {
			t.Errorf("case %d: encoding differs from MarshalBin", i)
		}
	}
}

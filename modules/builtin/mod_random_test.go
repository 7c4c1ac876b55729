package builtin_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestModRandomGolden compares Salt's random module (mod_random) with Salt
// 3006 (testdata/golden/mod_random.json): hashes, base64, seeded rand_int,
// seed, sample and shuffle give Salt's exact values (CPython's Mersenne
// Twister seeded as Salt seeds it); the random ones are compared by what
// does not change between runs: get_str by the set of characters a long
// string uses, unseeded numbers by their range, a shadow hash without a
// salt by its method and length; the errors by their text.
func TestModRandomGolden(t *testing.T) {
	calls := []salttest.Call{
		{Name: "hash default", Fun: "random.hash", Args: []any{"I am a string"}},
		{Name: "hash md5", Fun: "random.hash", Args: []any{"I am a string", "md5"}},
		{Name: "hash sha256 unicode", Fun: "random.hash", Args: []any{"héllo wörld", "sha256"}},
		{Name: "hash sha3_256", Fun: "random.hash", Args: []any{"x", "sha3_256"}},
		{Name: "hash blake2b", Fun: "random.hash", Args: []any{"x", "blake2b"}},
		{Name: "hash unknown", Fun: "random.hash", Args: []any{"x", "nope"}},
		{Name: "hash int value", Fun: "random.hash", Args: []any{int64(5)}},
		{Name: "str_encode", Fun: "random.str_encode", Args: []any{"I am a new string"}},
		{Name: "str_encode unicode", Fun: "random.str_encode", Args: []any{"é€"}},
		{Name: "str_encode other encoder", Fun: "random.str_encode", Args: []any{"x", "utf-8"}},
		{Name: "str_encode int", Fun: "random.str_encode", Args: []any{int64(5)}},
		{Name: "rand_int seeded", Fun: "random.rand_int", Args: []any{int64(1), int64(10)}, Kwargs: []any{"seed", int64(42)}},
		{Name: "rand_int seeded str", Fun: "random.rand_int", Args: []any{int64(-5), int64(1000000)}, Kwargs: []any{"seed", "minion-1"}},
		{Name: "rand_int seeded big range", Fun: "random.rand_int", Args: []any{int64(0), int64(1) << 62}, Kwargs: []any{"seed", int64(7)}},
		{Name: "rand_int seeded negative seed", Fun: "random.rand_int", Args: []any{int64(1), int64(100)}, Kwargs: []any{"seed", int64(-3)}},
		{Name: "rand_int same bounds", Fun: "random.rand_int", Args: []any{int64(4), int64(4)}, Kwargs: []any{"seed", int64(1)}},
		{Name: "rand_int unseeded", Fun: "random.rand_int"},
		{Name: "seed default", Fun: "random.seed"},
		{Name: "seed range", Fun: "random.seed", Args: []any{int64(3600)}},
		{Name: "seed hash", Fun: "random.seed", Args: []any{int64(60)}, Kwargs: []any{"hash", "web01.example.org"}},
		{Name: "seed int hash", Fun: "random.seed", Args: []any{int64(1000)}, Kwargs: []any{"hash", int64(12345)}},
		{Name: "sample seeded", Fun: "random.sample", Args: []any{[]any{"one", "two", "three", "four", "five"}, int64(3)}, Kwargs: []any{"seed", "something"}},
		{Name: "sample seeded all", Fun: "random.sample", Args: []any{[]any{int64(1), int64(2), int64(3)}, int64(3)}, Kwargs: []any{"seed", "x"}},
		{Name: "sample too large", Fun: "random.sample", Args: []any{[]any{"a"}, int64(2)}, Kwargs: []any{"seed", "x"}},
		{Name: "sample unseeded one of one", Fun: "random.sample", Args: []any{[]any{"only"}, int64(1)}},
		{Name: "shuffle seeded", Fun: "random.shuffle", Args: []any{[]any{"a", "b", "c", "d", "e", "f", "g"}}, Kwargs: []any{"seed", "something"}},
		{Name: "shuffle seeded long", Fun: "random.shuffle", Args: []any{[]any{int64(0), int64(1), int64(2), int64(3), int64(4), int64(5), int64(6), int64(7), int64(8), int64(9), int64(10), int64(11), int64(12), int64(13), int64(14), int64(15), int64(16), int64(17), int64(18), int64(19), int64(20), int64(21), int64(22), int64(23), int64(24), int64(25)}}, Kwargs: []any{"seed", "k"}},
		{Name: "get_str default chars", Fun: "random.get_str", Args: []any{int64(4000)}},
		{Name: "get_str chars", Fun: "random.get_str", Args: []any{int64(600)}, Kwargs: []any{"chars", "abc123.!()"}},
		{Name: "get_str no punctuation", Fun: "random.get_str", Args: []any{int64(3000)}, Kwargs: []any{"punctuation", false}},
		{Name: "get_str digits only", Fun: "random.get_str", Args: []any{int64(500)}, Kwargs: []any{"lowercase", false, "uppercase", false, "punctuation", false}},
		{Name: "get_str whitespace", Fun: "random.get_str", Args: []any{int64(3000)}, Kwargs: []any{"lowercase", false, "uppercase", false, "digits", false, "whitespace", true}},
		{Name: "get_str printable", Fun: "random.get_str", Args: []any{int64(5000)}, Kwargs: []any{"printable", true}},
		{Name: "get_str length text", Fun: "random.get_str", Args: []any{"12"}, Kwargs: []any{"chars", "z"}},
		{Name: "get_str zero", Fun: "random.get_str", Args: []any{int64(0)}},
		{Name: "get_str nothing chosen", Fun: "random.get_str", Args: []any{int64(5)}, Kwargs: []any{"lowercase", false, "uppercase", false, "digits", false, "punctuation", false}},
		{Name: "shadow_hash salted sha512", Fun: "random.shadow_hash", Args: []any{"My5alT", "MyP@asswd"}},
		{Name: "shadow_hash salted md5", Fun: "random.shadow_hash", Args: []any{"My5alT", "MyP@asswd", "md5"}},
		{Name: "shadow_hash salted sha256", Fun: "random.shadow_hash", Args: []any{"abcdefgh", "pw", "sha256"}},
		{Name: "shadow_hash unsalted", Fun: "random.shadow_hash", Kwargs: []any{"password", "pw"}},
	}
	runSuite(t, salttest.Suite{Name: "mod_random", Calls: calls, Normalize: randomNormalize, Grains: payload.NewMap("id", "golden")})
}

// randomNormalize reduces the returns that change from run to run to what
// does not: a random string to its sorted distinct characters, an
// unseeded rand_int to whether it is within 1..10, an unsalted shadow hash
// to its method and length.
func randomNormalize(name string, v any) any {
	switch {
	case strings.HasPrefix(name, "get_str"):
		s, ok := v.(string)
		if !ok {
			return v
		}
		chars := strings.Split(s, "")
		sort.Strings(chars)
		return fmt.Sprintf("len %d, chars %q", len(s), strings.Join(dedup(chars), ""))
	case name == "rand_int unseeded":
		if n, ok := v.(int64); ok {
			return n >= 1 && n <= 10
		}
	case name == "shadow_hash unsalted":
		if s, ok := v.(string); ok && len(s) > 3 {
			return fmt.Sprintf("%s... len %d", s[:3], len(s))
		}
	}
	return v
}

func dedup(sorted []string) []string {
	var out []string
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

package render

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"math/big"

	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/blake2s"
	"golang.org/x/crypto/sha3"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// randomFilters are Salt's random filters: random_sample and
// random_shuffle (salt.utils.data.sample/shuffle: Python's random.sample,
// seeded as Salt seeds it when a seed is given, so that a seeded call
// gives Salt's exact output), random_hash and
// rand_str (salt.utils.hashutils.random_hash) and random_str
// (salt.utils.stringutils.random).
func randomFilters() map[string]jinja.FilterFunc {
	return map[string]jinja.FilterFunc{
		"random_sample": func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
			a, err := pyArgs("sample", []string{"size", "seed"}, 1, args, kw)
			if err != nil {
				return nil, err
			}
			return randomSample(v, a[0], a[1])
		},
		"random_shuffle": func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
			a, err := pyArgs("shuffle", []string{"seed"}, 0, args, kw)
			if err != nil {
				return nil, err
			}
			n, err := jinja.Len(v)
			if err != nil {
				return nil, err
			}
			return randomSample(v, int64(n), a[0])
		},
		"random_hash": randomHashFilter,
		"rand_str":    randomHashFilter,
		"random_str": func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
			if len(args) > 0 || (kw != nil && kw.Len() > 0) {
				return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("random() takes from 0 to 1 positional arguments but %d were given", len(args)+1)}
			}
			n, ok := pyIndex(v)
			if !ok {
				return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("'%s' object cannot be interpreted as an integer", jinja.TypeName(v))}
			}
			if n < 0 {
				return nil, &jinja.Error{Kind: "ValueError", Msg: "negative argument not allowed"}
			}
			if n > 1<<20 {
				return nil, &jinja.Error{Kind: "MemoryError", Msg: "random_str: size too large"}
			}
			b := make([]byte, n)
			_, _ = rand.Read(b)
			return base64.StdEncoding.EncodeToString(b)[:n], nil
		},
	}
}

// pyArgs binds a Python function's optional parameters (after the value)
// from positional and keyword arguments; the first required of them are
// required.
func pyArgs(fn string, names []string, required int, args []any, kw *payload.Map) ([]any, error) {
	if len(args) > len(names) {
		return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("%s() takes from %d to %d positional arguments but %d were given", fn, required+1, len(names)+1, len(args)+1)}
	}
	out := make([]any, len(names))
	set := make([]bool, len(names))
	for i, a := range args {
		out[i], set[i] = a, true
	}
	if kw != nil {
		for _, it := range kw.Items() {
			found := false
			for i, n := range names {
				if it.Key == n {
					if set[i] {
						return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("%s() got multiple values for argument '%s'", fn, n)}
					}
					out[i], set[i], found = it.Value, true, true
				}
			}
			if !found {
				return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("%s() got an unexpected keyword argument %s", fn, jinja.Repr(it.Key))}
			}
		}
	}
	for i := 0; i < required; i++ {
		if !set[i] {
			return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("%s() missing 1 required positional argument: '%s'", fn, names[i])}
		}
	}
	return out, nil
}

// pyIndex is operator.index(v) for the int-like values (int, bool).
func pyIndex(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case *big.Int:
		if x.IsInt64() {
			return x.Int64(), true
		}
	}
	return 0, false
}

// saltSeed is the int random.Random(seed) starts from in Salt's
// random_sample: salt.utils.data's own hash(seed) (which shadows Python's
// hash there) is the sha512 hex digest of a str or bytes seed, and
// random.seed(str) takes the int of that text's bytes followed by their
// sha512 digest. Other seeds fail in hashlib as in Salt.
func saltSeed(seed any) (*big.Int, error) {
	var b []byte
	switch x := seed.(type) {
	case string:
		b = []byte(x)
	case []byte:
		b = x
	default:
		return nil, &jinja.Error{Kind: "TypeError", Msg: "object supporting the buffer API required"}
	}
	sum := sha512.Sum512(b)
	text := []byte(hex.EncodeToString(sum[:]))
	digest := sha512.Sum512(text)
	return new(big.Int).SetBytes(append(text, digest[:]...)), nil
}

// randomSample is salt.utils.data.sample: random.sample(value, size),
// from random.Random(hash(seed)) when a seed is given.
func randomSample(v, size, seed any) (any, error) {
	switch v.(type) {
	case *jinja.List, jinja.Tuple, string, []byte:
	default:
		if jinja.TypeName(v) != "range" {
			return nil, &jinja.Error{Kind: "TypeError", Msg: "Population must be a sequence.  For dicts or sets, use sorted(d)."}
		}
	}
	pop, err := jinja.Iterate(v)
	if err != nil {
		return nil, err
	}
	k, ok := pyIndex(size)
	if !ok {
		if _, isFloat := size.(float64); isFloat {
			return nil, &jinja.Error{Kind: "TypeError", Msg: "can't multiply sequence by non-int of type 'float'"}
		}
		return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("'<=' not supported between instances of 'int' and '%s'", jinja.TypeName(size))}
	}
	var rnd *py.Random
	if seed == nil {
		rnd = py.NewRandom(nil)
	} else {
		n, err := saltSeed(seed)
		if err != nil {
			return nil, err
		}
		rnd = py.NewRandom(n)
	}
	if k > math.MaxInt32 {
		k = -1 // larger than any population here
	}
	idx, err := rnd.SampleIndexes(len(pop), int(k))
	if err != nil {
		return nil, &jinja.Error{Kind: "ValueError", Msg: err.Error()}
	}
	out := make([]any, len(idx))
	for i, j := range idx {
		out[i] = pop[j]
	}
	return &jinja.List{Items: out}, nil
}

// randomHashFilter is salt.utils.hashutils.random_hash(size=9999999999,
// hash_type=None): the hex digest (md5 by default) of str() of a random
// int in [0, size].
func randomHashFilter(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := pyArgs("random_hash", []string{"hash_type"}, 0, args, kw)
	if err != nil {
		return nil, err
	}
	var size *big.Int
	switch x := v.(type) {
	case *big.Int:
		size = x
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, &jinja.Error{Kind: "ValueError", Msg: "non-integer stop for randrange()"}
		}
		size, _ = big.NewFloat(x).Int(nil)
	case string:
		return nil, &jinja.Error{Kind: "TypeError", Msg: `can only concatenate str (not "int") to str`}
	case *jinja.List:
		return nil, &jinja.Error{Kind: "TypeError", Msg: `can only concatenate list (not "int") to list`}
	case jinja.Tuple:
		return nil, &jinja.Error{Kind: "TypeError", Msg: `can only concatenate tuple (not "int") to tuple`}
	default:
		n, ok := pyIndex(v)
		if !ok {
			return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("unsupported operand type(s) for +: '%s' and 'int'", jinja.TypeName(v))}
		}
		size = big.NewInt(n)
	}
	stop := new(big.Int).Add(size, big.NewInt(1))
	if stop.Sign() <= 0 {
		return nil, &jinja.Error{Kind: "ValueError", Msg: fmt.Sprintf("empty range for randrange() (0, %s, %s)", stop, stop)}
	}
	hashType := "md5"
	if a[0] != nil {
		if t, _ := jinja.Truthy(a[0]); t {
			s, ok := a[0].(string)
			if !ok {
				return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("attribute name must be string, not '%s'", jinja.TypeName(a[0]))}
			}
			hashType = s
		}
	}
	h := newHash(hashType)
	if h == nil {
		return nil, &jinja.Error{Kind: "AttributeError", Msg: fmt.Sprintf("module 'hashlib' has no attribute '%s'", hashType)}
	}
	n, err := rand.Int(rand.Reader, stop)
	if err != nil {
		return nil, err
	}
	h.Write([]byte(n.String()))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// newHash returns hashlib's constructor of that name (those with a fixed
// digest size).
func newHash(name string) hash.Hash {
	switch name {
	case "md5":
		return md5.New()
	case "sha1":
		return sha1.New()
	case "sha224":
		return sha256.New224()
	case "sha256":
		return sha256.New()
	case "sha384":
		return sha512.New384()
	case "sha512":
		return sha512.New()
	case "sha3_224":
		return sha3.New224()
	case "sha3_256":
		return sha3.New256()
	case "sha3_384":
		return sha3.New384()
	case "sha3_512":
		return sha3.New512()
	case "blake2b":
		h, _ := blake2b.New512(nil)
		return h
	case "blake2s":
		h, _ := blake2s.New256(nil)
		return h
	}
	return nil
}

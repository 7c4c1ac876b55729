package builtin

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/internal/pyhash"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's random module (salt/modules/mod_random.py, loaded
// as "random"): hashes and base64 of strings (salt.utils.data.hash),
// random strings (salt.utils.pycrypto.secure_password), shadow hashes
// (salt.utils.pycrypto.gen_hash, as shadow.gen_password), and Python's
// random module for rand_int, seed, sample and shuffle, so that a seeded
// call gives the number or list Salt gives (CPython's Mersenne Twister,
// internal/py).

// maxRandomStr bounds random.get_str's length.
const maxRandomStr = 1 << 20

// Python's string module character classes, as secure_password joins
// them.
const (
	pyLowercase   = "abcdefghijklmnopqrstuvwxyz"
	pyUppercase   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	pyDigits      = "0123456789"
	pyPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	pyWhitespace  = " \t\n\r\x0b\x0c"
	pyPrintable   = pyDigits + pyLowercase + pyUppercase + pyPunctuation + pyWhitespace
)

func modRandomFunctions() []modules.Function {
	return []modules.Function{
		{Name: "random.hash", Spec: modules.Spec{Params: []modules.Param{req("value"), opt("algorithm", "sha512")}},
			Doc: "Encodes a value with the specified encoder.\n\nvalue\n    The value to be hashed.\n\nalgorithm : sha512\n    The algorithm to use. May be any valid algorithm supported by\n    hashlib.\n\nCLI Example:\n\n    salt '*' random.hash 'I am a string' md5",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return randomHash(c.Args.Get("value"), c.Args.Get("algorithm"))
			}},
		{Name: "random.str_encode", Spec: modules.Spec{Params: []modules.Param{req("value"), opt("encoder", "base64")}},
			Doc: "value\n    The value to be encoded.\n\nencoder : base64\n    The encoder to use on the subsequent string.\n\nCLI Example:\n\n    salt '*' random.str_encode 'I am a new string' base64",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				// a str is encoded to bytes first; base64 is the one
				// encoder bytes have, anything else fails as Salt's
				// value.encode(encoder) on bytes does
				s, ok := c.Args.Get("value").(string)
				if !ok || c.Args.Get("encoder") != "base64" {
					return nil, fmt.Errorf("%w: Value must be an encode-able string", modules.ErrInvocation)
				}
				return base64.StdEncoding.EncodeToString([]byte(s)), nil
			}},
		{Name: "random.get_str", Spec: modules.Spec{Params: []modules.Param{opt("length", int64(20)), opt("chars", nil), opt("lowercase", true), opt("uppercase", true), opt("digits", true), opt("punctuation", true), opt("whitespace", false), opt("printable", false)}},
			Doc: "Returns a random string of the specified length.\n\nlength : 20\n    Any valid number of bytes.\n\nchars : None\n    String with any character that should be used to generate random string.\n    This argument supersedes all other character controlling arguments.\n\nCLI Example:\n\n    salt '*' random.get_str 128\n    salt '*' random.get_str 128 chars='abc123.!()'\n    salt '*' random.get_str 128 lowercase=False whitespace=True",
			Fn:  randomGetStr},
		{Name: "random.shadow_hash", Spec: modules.Spec{Params: []modules.Param{opt("crypt_salt", nil), opt("password", nil), opt("algorithm", "sha512")}},
			Doc: "Generates a salted hash suitable for /etc/shadow.\n\ncrypt_salt : None\n    Salt to be used in the generation of the hash. If one is not\n    provided, a random salt will be generated.\n\npassword : None\n    Value to be salted and hashed. If one is not provided, a random\n    password will be generated.\n\nalgorithm : sha512\n    Hash algorithm to use.\n\nCLI Example:\n\n    salt '*' random.shadow_hash 'My5alT' 'MyP@asswd' md5",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return shadowGenPassword(c.Args.Get("password"), c.Args.Get("crypt_salt"), c.Args.Str("algorithm"))
			}},
		{Name: "random.rand_int", Spec: modules.Spec{Params: []modules.Param{opt("start", int64(1)), opt("end", int64(10)), opt("seed", nil)}},
			Doc: "Returns a random integer number between the start and end number.\n\nstart : 1\n    Any valid integer number\n\nend : 10\n    Any valid integer number\n\nseed :\n    Optional hashable object\n\nCLI Example:\n\n    salt '*' random.rand_int 1 10",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				r, err := randomSeeded(c.Args.Get("seed"))
				if err != nil {
					return nil, err
				}
				start, end := c.Args.Get("start"), c.Args.Get("end")
				a, aok := randomInt(start)
				b, bok := randomInt(end)
				if !aok || !bok {
					return nil, fmt.Errorf("%w: randint() takes integers, got %s and %s", modules.ErrArguments, pyfmt.Repr(start), pyfmt.Repr(end))
				}
				// randint(a, b) is randrange(a, b+1)
				width := new(big.Int).Sub(new(big.Int).Add(b, big.NewInt(1)), a)
				if width.Sign() <= 0 {
					return nil, &modules.PyException{Class: "ValueError", Message: fmt.Sprintf("empty range for randrange() (%s, %s, %s)", a, new(big.Int).Add(b, big.NewInt(1)), width)}
				}
				return randomIntValue(new(big.Int).Add(a, r.RandBelowBig(width))), nil
			}},
		{Name: "random.seed", Spec: modules.Spec{Params: []modules.Param{opt("range", int64(10)), opt("hash", nil)}},
			Doc: "Returns a random number within a range. Optional hash argument can\nbe any hashable object. If hash is omitted or None, the id of the minion is used.\n\nhash: None\n    Any hashable object.\n\nrange: 10\n    Any valid integer number\n\nCLI Example:\n\n    salt '*' random.seed 10 hash=None",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				h := c.Args.Get("hash")
				if h == nil {
					h = c.Env.ID
					if c.Env.Grains != nil {
						if id, ok := c.Env.Grains.Get("id"); ok {
							h = id
						}
					}
				}
				r, err := randomSeeded(h)
				if err != nil {
					return nil, err
				}
				n, ok := randomInt(c.Args.Get("range"))
				if !ok {
					return nil, fmt.Errorf("%w: randrange() takes an integer, got %s", modules.ErrArguments, pyfmt.Repr(c.Args.Get("range")))
				}
				if n.Sign() <= 0 {
					return nil, &modules.PyException{Class: "ValueError", Message: "empty range for randrange()"}
				}
				return randomIntValue(r.RandBelowBig(n)), nil
			}},
		{Name: "random.sample", Spec: modules.Spec{Params: []modules.Param{req("value"), req("size"), opt("seed", nil)}},
			Doc: "Return a given sample size from a list. By default, the random number\ngenerator uses the current system time unless given a seed value.\n\nvalue\n    A list to e used as input.\n\nsize\n    The sample size to return.\n\nseed\n    Any value which will be hashed as a seed for random.\n\nCLI Example:\n\n    salt '*' random.sample '[\"one\", \"two\"]' 1 seed=\"something\"",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return randomSampleList(c.Args.Get("value"), c.Args.Get("size"), c.Args.Get("seed"), false)
			}},
		{Name: "random.shuffle", Spec: modules.Spec{Params: []modules.Param{req("value"), opt("seed", nil)}},
			Doc: "Return a shuffled copy of an input list. By default, the random number\ngenerator uses the current system time unless given a seed value.\n\nvalue\n    A list to be used as input.\n\nseed\n    Any value which will be hashed as a seed for random.\n\nCLI Example:\n\n    salt '*' random.shuffle '[\"one\", \"two\"]' seed=\"something\"",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return randomSampleList(c.Args.Get("value"), nil, c.Args.Get("seed"), true)
			}},
	}
}

// randomHash is salt.utils.data.hash: the hex digest of a str's UTF-8
// bytes with one of hashlib's guaranteed algorithms.
func randomHash(value, algorithm any) (any, error) {
	alg, _ := algorithm.(string)
	h, ok := pyhash.New(alg)
	if !ok {
		if alg == "shake_128" || alg == "shake_256" {
			return nil, fmt.Errorf("%w: hexdigest() missing required argument 'length' (pos 1)", modules.ErrArguments)
		}
		return nil, &modules.PyException{Class: "salt.exceptions.SaltException", Message: "You must specify a valid algorithm."}
	}
	s, ok := value.(string)
	if !ok {
		return nil, fmt.Errorf("%w: object supporting the buffer API required", modules.ErrArguments)
	}
	h.Write([]byte(s))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// randomGetStr is salt.utils.pycrypto.secure_password: length characters
// drawn uniformly from the chosen classes (chars supersedes them,
// printable supersedes the other classes). Salt draws random bytes and
// keeps those in the set, so only the set's ASCII characters can appear.
func randomGetStr(_ context.Context, c *modules.Call) (any, error) {
	chars := ""
	if v := c.Args.Get("chars"); payload.Truthy(v) {
		chars = payload.Text(v)
	}
	if modules.IsTrue(c.Args.Get("printable")) {
		chars = pyPrintable
	}
	if chars == "" {
		for _, class := range []struct {
			arg, chars string
		}{{"lowercase", pyLowercase}, {"uppercase", pyUppercase}, {"digits", pyDigits}, {"punctuation", pyPunctuation}, {"whitespace", pyWhitespace}} {
			if modules.IsTrue(c.Args.Get(class.arg)) {
				chars += class.chars
			}
		}
	}
	if chars == "" {
		// re.compile("[^]") in secure_password
		return nil, fmt.Errorf("%w: unterminated character set at position 0", modules.ErrExecution)
	}
	var set []byte
	for i := 0; i < len(chars); i++ {
		if chars[i] < 0x80 && !strings.ContainsRune(string(set), rune(chars[i])) {
			set = append(set, chars[i])
		}
	}
	n, err := pyIntOf(c.Args.Get("length"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	if n > maxRandomStr {
		return nil, fmt.Errorf("%w: length %d is more than gsalt's bound of %d", modules.ErrExecution, n, maxRandomStr)
	}
	if n <= 0 {
		return "", nil
	}
	if len(set) == 0 {
		// Salt's loop never ends: no random byte decodes to one of them
		return nil, fmt.Errorf("%w: chars has no ASCII character, which secure_password needs", modules.ErrExecution)
	}
	out := make([]byte, n)
	max := big.NewInt(int64(len(set)))
	for i := range out {
		k, err := rand.Int(rand.Reader, max)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		out[i] = set[k.Int64()]
	}
	return string(out), nil
}

// pyIntOf is Python's int(v) for an int, bool, integral-text or float.
func pyIntOf(v any) (int64, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case float64:
		return int64(x), nil
	case string:
		n, ok := new(big.Int).SetString(strings.TrimSpace(x), 10)
		if !ok || !n.IsInt64() {
			return 0, fmt.Errorf("invalid literal for int() with base 10: %s", pyfmt.Repr(x))
		}
		return n.Int64(), nil
	}
	if n, ok := randomInt(v); ok && n.IsInt64() {
		return n.Int64(), nil
	}
	return 0, fmt.Errorf("int() argument must be a string, a bytes-like object or a real number, not '%s'", payload.TypeName(v))
}

// randomInt is an int argument (int, bool or big int) as a big.Int.
func randomInt(v any) (*big.Int, bool) {
	switch x := v.(type) {
	case int64:
		return big.NewInt(x), true
	case int:
		return big.NewInt(int64(x)), true
	case uint64:
		return new(big.Int).SetUint64(x), true
	case bool:
		if x {
			return big.NewInt(1), true
		}
		return big.NewInt(0), true
	case *big.Int:
		return x, true
	}
	return nil, false
}

// randomIntValue is n in the payload's int model.
func randomIntValue(n *big.Int) any {
	if n.IsInt64() {
		return n.Int64()
	}
	return n
}

// randomSeeded is the generator after random.seed(seed): an int seeds
// with its absolute value, a str with its bytes and their sha512 digest
// (py.StrSeed), None from the system's random source.
func randomSeeded(seed any) (*py.Random, error) {
	switch x := seed.(type) {
	case nil:
		return py.NewRandom(nil), nil
	case string:
		return py.NewRandom(py.StrSeed([]byte(x))), nil
	}
	if n, ok := randomInt(seed); ok {
		return py.NewRandom(n), nil
	}
	return nil, fmt.Errorf("%w: The only supported seed types are: None, int, float, str, bytes, and bytearray.", modules.ErrArguments)
}

// randomSampleList is salt.utils.data.sample (all of value with shuffle):
// random.sample(value, size), from random.Random(hash(seed)) when a seed
// is given, where hash is salt.utils.data.hash's sha512 hex digest of a
// str seed.
func randomSampleList(value, size, seed any, shuffle bool) (any, error) {
	var pop []any
	switch x := value.(type) {
	case []any:
		pop = x
	case string:
		for _, r := range x {
			pop = append(pop, string(r))
		}
	default:
		if shuffle {
			return nil, fmt.Errorf("%w: object of type '%s' has no len()", modules.ErrArguments, payload.TypeName(value))
		}
		return nil, fmt.Errorf("%w: Population must be a sequence.  For dicts or sets, use sorted(d).", modules.ErrArguments)
	}
	k := int64(len(pop))
	if !shuffle {
		n, ok := randomInt(size)
		if !ok {
			return nil, fmt.Errorf("%w: '<=' not supported between instances of 'int' and '%s'", modules.ErrArguments, payload.TypeName(size))
		}
		if !n.IsInt64() {
			return nil, &modules.PyException{Class: "ValueError", Message: py.ErrSampleSize.Error()}
		}
		k = n.Int64()
	}
	var r *py.Random
	if seed == nil {
		r = py.NewRandom(nil)
	} else {
		s, ok := seed.(string)
		if !ok {
			return nil, fmt.Errorf("%w: object supporting the buffer API required", modules.ErrArguments)
		}
		digest, _ := randomHash(s, "sha512")
		r = py.NewRandom(py.StrSeed([]byte(digest.(string))))
	}
	if k > int64(len(pop)) || k < 0 {
		return nil, &modules.PyException{Class: "ValueError", Message: py.ErrSampleSize.Error()}
	}
	idx, err := r.SampleIndexes(len(pop), int(k))
	if err != nil {
		return nil, &modules.PyException{Class: "ValueError", Message: err.Error()}
	}
	out := make([]any, len(idx))
	for i, j := range idx {
		out[i] = pop[j]
	}
	return out, nil
}

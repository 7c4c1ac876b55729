package py

import (
	"crypto/rand"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"math"
	"math/big"
)

// ErrSampleSize is random.sample's ValueError for a sample size out of
// 0..len(population).
var ErrSampleSize = errors.New("Sample larger than population or is negative")

// Random is CPython's random.Random: the MT19937 generator seeded as
// random.seed(int) seeds it, with getrandbits, _randbelow and sample
// giving the same numbers as CPython for the same seed. It is not safe for
// concurrent use.
type Random struct {
	mt  [624]uint32
	mti int
}

// NewRandom returns random.Random(seed) for an int seed (*big.Int, nil for
// a seed from the system's random source, as random.Random() does).
func NewRandom(seed *big.Int) *Random {
	r := &Random{}
	if seed == nil {
		var b [32]byte
		_, _ = rand.Read(b[:])
		seed = new(big.Int).SetBytes(b[:])
	}
	// random_seed: the absolute value split into 32-bit words, least
	// significant first (at least one word)
	n := new(big.Int).Abs(seed)
	var key []uint32
	mask := big.NewInt(0xffffffff)
	for n.Sign() > 0 {
		key = append(key, uint32(new(big.Int).And(n, mask).Uint64()))
		n.Rsh(n, 32)
	}
	if len(key) == 0 {
		key = []uint32{0}
	}
	r.initByArray(key)
	return r
}

// NewRandomInt is NewRandom for an int64 seed.
func NewRandomInt(seed int64) *Random { return NewRandom(big.NewInt(seed)) }

func (r *Random) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < 624; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.mti = 624
}

func (r *Random) initByArray(key []uint32) {
	r.initGenrand(19650218)
	i, j := 1, 0
	k := 624
	if len(key) > k {
		k = len(key)
	}
	for ; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = 623; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
}

// Uint32 is genrand_uint32: the next 32 random bits.
func (r *Random) Uint32() uint32 {
	const upper, lower = 0x80000000, 0x7fffffff
	mag01 := [2]uint32{0, 0x9908b0df}
	if r.mti >= 624 {
		kk := 0
		for ; kk < 624-397; kk++ {
			y := (r.mt[kk] & upper) | (r.mt[kk+1] & lower)
			r.mt[kk] = r.mt[kk+397] ^ (y >> 1) ^ mag01[y&1]
		}
		for ; kk < 623; kk++ {
			y := (r.mt[kk] & upper) | (r.mt[kk+1] & lower)
			r.mt[kk] = r.mt[kk+(397-624)] ^ (y >> 1) ^ mag01[y&1]
		}
		y := (r.mt[623] & upper) | (r.mt[0] & lower)
		r.mt[623] = r.mt[396] ^ (y >> 1) ^ mag01[y&1]
		r.mti = 0
	}
	y := r.mt[r.mti]
	r.mti++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// GetRandBits is random.getrandbits(k) for k >= 0.
func (r *Random) GetRandBits(k int) *big.Int {
	if k <= 0 {
		return new(big.Int)
	}
	if k <= 32 {
		return new(big.Int).SetUint64(uint64(r.Uint32() >> (32 - k)))
	}
	words := (k-1)/32 + 1
	buf := make([]byte, words*4)
	for i := 0; i < words; i++ {
		w := r.Uint32()
		if k < 32 {
			w >>= 32 - k
		}
		// little-endian words, most significant last
		binary.BigEndian.PutUint32(buf[(words-1-i)*4:], w)
		k -= 32
	}
	return new(big.Int).SetBytes(buf)
}

// RandBelow is random._randbelow(n): a random int in [0, n), n > 0.
func (r *Random) RandBelow(n int) int {
	if n <= 0 {
		return 0
	}
	k := bitLength(uint64(n))
	if k <= 32 {
		for {
			v := int(r.Uint32() >> (32 - k))
			if v < n {
				return v
			}
		}
	}
	bn := big.NewInt(int64(n))
	for {
		v := r.GetRandBits(k)
		if v.Cmp(bn) < 0 {
			return int(v.Int64())
		}
	}
}

// RandBelowBig is random._randbelow(n) for an arbitrary-precision n > 0.
func (r *Random) RandBelowBig(n *big.Int) *big.Int {
	if n.Sign() <= 0 {
		return new(big.Int)
	}
	k := n.BitLen()
	for {
		v := r.GetRandBits(k)
		if v.Cmp(n) < 0 {
			return v
		}
	}
}

func bitLength(n uint64) int {
	l := 0
	for n > 0 {
		l++
		n >>= 1
	}
	return l
}

// SampleIndexes is random.sample(range(n), k): the indexes of the k
// elements random.sample(population, k) picks from a population of n, in
// selection order.
func (r *Random) SampleIndexes(n, k int) ([]int, error) {
	if k < 0 || k > n {
		return nil, ErrSampleSize
	}
	out := make([]int, k)
	setsize := 21
	if k > 5 {
		setsize += int(math.Pow(4, math.Ceil(math.Log(float64(k*3))/math.Log(4))))
	}
	if n <= setsize {
		pool := make([]int, n)
		for i := range pool {
			pool[i] = i
		}
		for i := 0; i < k; i++ {
			j := r.RandBelow(n - i)
			out[i] = pool[j]
			pool[j] = pool[n-i-1]
		}
		return out, nil
	}
	selected := make(map[int]bool, k)
	for i := 0; i < k; i++ {
		j := r.RandBelow(n)
		for selected[j] {
			j = r.RandBelow(n)
		}
		selected[j] = true
		out[i] = j
	}
	return out, nil
}

// StrSeed is the int random.seed(a) uses for a str or bytes a (version 2,
// the default): a's bytes followed by their sha512 digest, read as one
// big-endian int (a str is first encoded as UTF-8).
func StrSeed(a []byte) *big.Int {
	sum := sha512.Sum512(a)
	return new(big.Int).SetBytes(append(append([]byte{}, a...), sum[:]...))
}

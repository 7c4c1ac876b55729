package py

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
)

// hashModulus is CPython's _PyHASH_MODULUS (2**61 - 1) on 64-bit builds.
const hashModulus = (1 << 61) - 1

// HashInt is Python's hash() of an int.
func HashInt(v *big.Int) int64 {
	m := new(big.Int).Mod(new(big.Int).Abs(v), big.NewInt(hashModulus)).Int64()
	if v.Sign() < 0 {
		m = -m
	}
	if m == -1 {
		m = -2
	}
	return m
}

// HashFloat is Python's hash() of a finite or infinite float (ok false for
// NaN, whose hash depends on the object's identity).
func HashFloat(v float64) (int64, bool) {
	switch {
	case math.IsNaN(v):
		return 0, false
	case math.IsInf(v, 1):
		return 314159, true
	case math.IsInf(v, -1):
		return -314159, true
	}
	m, e := math.Frexp(v)
	sign := int64(1)
	if m < 0 {
		sign = -1
		m = -m
	}
	var x uint64
	for m != 0 {
		x = ((x << 28) & hashModulus) | x>>(61-28)
		m *= 268435456.0
		e -= 28
		y := uint64(m)
		m -= float64(y)
		x += y
		if x >= hashModulus {
			x -= hashModulus
		}
	}
	if e >= 0 {
		e %= 61
	} else {
		e = 61 - 1 - ((-1 - e) % 61)
	}
	x = ((x << uint(e)) & hashModulus) | x>>(61-uint(e))
	h := int64(x) * sign
	if h == -1 {
		h = -2
	}
	return h, true
}

// HashStr is CPython's hash() of a str with a zero hash secret
// (PYTHONHASHSEED=0): SipHash with a zero key over the PEP 393
// representation (1, 2 or 4 bytes a character, little-endian), cRounds
// compression rounds (2 for Python <= 3.10, 1 for Python >= 3.11).
func HashStr(s string, cRounds int) int64 {
	runes := []rune(s)
	if len(runes) == 0 {
		return 0
	}
	kind := 1
	for _, r := range runes {
		switch {
		case r > 0xFFFF:
			kind = 4
		case r > 0xFF && kind < 2:
			kind = 2
		}
	}
	buf := make([]byte, 0, len(runes)*kind)
	for _, r := range runes {
		switch kind {
		case 1:
			buf = append(buf, byte(r))
		case 2:
			buf = binary.LittleEndian.AppendUint16(buf, uint16(r))
		default:
			buf = binary.LittleEndian.AppendUint32(buf, uint32(r))
		}
	}
	dRounds := 3
	if cRounds == 2 {
		dRounds = 4
	}
	x := int64(sipHash(buf, cRounds, dRounds))
	if x == -1 {
		x = -2
	}
	return x
}

// sipHash is SipHash-c-d with a zero key.
func sipHash(msg []byte, c, d int) uint64 {
	v0 := uint64(0x736f6d6570736575)
	v1 := uint64(0x646f72616e646f6d)
	v2 := uint64(0x6c7967656e657261)
	v3 := uint64(0x7465646279746573)
	round := func() {
		v0 += v1
		v1 = bits.RotateLeft64(v1, 13)
		v1 ^= v0
		v0 = bits.RotateLeft64(v0, 32)
		v2 += v3
		v3 = bits.RotateLeft64(v3, 16)
		v3 ^= v2
		v0 += v3
		v3 = bits.RotateLeft64(v3, 21)
		v3 ^= v0
		v2 += v1
		v1 = bits.RotateLeft64(v1, 17)
		v1 ^= v2
		v2 = bits.RotateLeft64(v2, 32)
	}
	n := len(msg)
	for len(msg) >= 8 {
		m := binary.LittleEndian.Uint64(msg)
		v3 ^= m
		for i := 0; i < c; i++ {
			round()
		}
		v0 ^= m
		msg = msg[8:]
	}
	var last [8]byte
	copy(last[:], msg)
	last[7] = byte(n)
	m := binary.LittleEndian.Uint64(last[:])
	v3 ^= m
	for i := 0; i < c; i++ {
		round()
	}
	v0 ^= m
	v2 ^= 0xff
	for i := 0; i < d; i++ {
		round()
	}
	return v0 ^ v1 ^ v2 ^ v3
}

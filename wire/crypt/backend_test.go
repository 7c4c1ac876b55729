//go:build cgo && unix

package crypt

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// opensslForTest loads the OpenSSL backend; a cgo build on a machine
// without libcrypto.so.3 (Debian's libssl3) fails here rather than
// comparing nothing.
func opensslForTest(t testing.TB) *opensslBackend {
	t.Helper()
	b, err := loadOpenSSL()
	if err != nil {
		t.Fatalf("OpenSSL backend: %v (install libssl3)", err)
	}
	return b.(*opensslBackend)
}

// bothBackends returns Go's and OpenSSL's backends, Go's first.
func bothBackends(t testing.TB) []privateBackend {
	return []privateBackend{goBackend{}, opensslForTest(t)}
}

// agree runs op on every backend and fails unless all give the same
// bytes, or all fail with the same error text. It returns Go's result.
func agree(t testing.TB, what string, bs []privateBackend, op func(privateBackend) ([]byte, error)) ([]byte, error) {
	t.Helper()
	want, wantErr := op(bs[0])
	for _, b := range bs[1:] {
		got, err := op(b)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("%s: %s error %v, %s error %v", what, b.name(), err, bs[0].name(), wantErr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: %s gives\n%x\n%s gives\n%x", what, b.name(), got, bs[0].name(), want)
		}
	}
	return want, wantErr
}

// native is agree for an operation OpenSSL must do itself (a valid key
// and input): it also fails when the OpenSSL backend fell back to Go.
func native(t testing.TB, what string, bs []privateBackend, op func(privateBackend) ([]byte, error)) ([]byte, error) {
	t.Helper()
	o := bs[len(bs)-1].(*opensslBackend)
	before := o.fallbacks.Load()
	out, err := agree(t, what, bs, op)
	if n := o.fallbacks.Load() - before; n != 0 {
		t.Fatalf("%s: OpenSSL handed it to Go", what)
	}
	return out, err
}

func signWith(priv *rsa.PrivateKey, msg []byte) func(privateBackend) ([]byte, error) {
	h := sha1.Sum(msg)
	return func(b privateBackend) ([]byte, error) { return b.signSHA1(priv, h[:]) }
}

func decryptWith(priv *rsa.PrivateKey, ct []byte) func(privateBackend) ([]byte, error) {
	return func(b privateBackend) ([]byte, error) { return b.decryptOAEP(priv, ct) }
}

func rawWith(priv *rsa.PrivateKey, block []byte) func(privateBackend) ([]byte, error) {
	return func(b privateBackend) ([]byte, error) { return b.raw(priv, block) }
}

// TestBackendsOnSaltVectors runs the signatures, X9.31 blocks and OAEP
// ciphertexts real Salt made (testdata/vectors/crypto.jsonl) through both
// backends: each must give Salt's bytes.
func TestBackendsOnSaltVectors(t *testing.T) {
	bs := bothBackends(t)
	for _, v := range loadVectors(t, "sign_message") {
		t.Run("sign/"+v.name(), func(t *testing.T) {
			sig, err := native(t, "sign", bs, signWith(loadVecPriv(t, v.str(t, "key")), v.hex(t, "message_hex")))
			if err != nil || !bytes.Equal(sig, v.hex(t, "signature_hex")) {
				t.Fatalf("signature %x (%v), Salt's %s", sig, err, v.str(t, "signature_hex"))
			}
		})
	}
	for _, v := range loadVectors(t, "x931_sign") {
		t.Run("x931/"+v.name(), func(t *testing.T) {
			priv := loadVecPriv(t, v.str(t, "key"))
			s, err := native(t, "raw", bs, rawWith(priv, v.hex(t, "padded_block_hex")))
			if err != nil {
				t.Fatal(err)
			}
			si := new(big.Int).SetBytes(s)
			if t2 := new(big.Int).Sub(priv.N, si); si.Cmp(t2) > 0 {
				si = t2
			}
			if want := v.hex(t, "signature_hex"); !bytes.Equal(si.FillBytes(make([]byte, len(want))), want) {
				t.Fatalf("min(s, n-s) = %x, Salt's %x", si, want)
			}
		})
	}
	for _, v := range loadVectors(t, "oaep_decrypt") {
		t.Run("oaep/"+v.name(), func(t *testing.T) {
			priv := loadVecPriv(t, v.str(t, "decrypt_key"))
			ct := v.hex(t, "ciphertext_hex")
			pt, err := native(t, "decrypt", bs, decryptWith(priv, ct))
			if err != nil || !bytes.Equal(pt, v.hex(t, "plaintext_hex")) {
				t.Fatalf("plaintext %q (%v)", pt, err)
			}
			for _, i := range []int{0, 1, 100, len(ct) - 1} {
				bad := bytes.Clone(ct)
				bad[i] ^= 0x40
				if _, err := agree(t, fmt.Sprintf("tampered byte %d", i), bs, decryptWith(priv, bad)); !errors.Is(err, rsa.ErrDecryption) {
					t.Fatalf("tampered byte %d: %v", i, err)
				}
			}
			for _, bad := range [][]byte{nil, ct[1:], append(bytes.Clone(ct), 0), priv.N.Bytes(), bytes.Repeat([]byte{0xff}, len(ct))} {
				if _, err := agree(t, fmt.Sprintf("%d-byte ciphertext", len(bad)), bs, decryptWith(priv, bad)); err == nil {
					t.Fatalf("%d-byte ciphertext decrypted", len(bad))
				}
			}
		})
	}
}

// genKey makes an RSA key of bits bits for a test.
func genKey(t testing.TB, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestBackendsAgreeOnGeneratedKeys compares the backends on fresh keys of
// several sizes, messages of several lengths and random OAEP plaintexts,
// including a key without precomputed CRT values.
func TestBackendsAgreeOnGeneratedKeys(t *testing.T) {
	bs := bothBackends(t)
	bare := genKey(t, 2048)
	bare = &rsa.PrivateKey{PublicKey: bare.PublicKey, D: bare.D, Primes: bare.Primes}
	keys := []struct {
		name string
		key  *rsa.PrivateKey
	}{
		{"1024", genKey(t, 1024)},
		{"2047", genKey(t, 2047)},
		{"2048", genKey(t, 2048)},
		{"3072", genKey(t, 3072)},
		{"4096", genKey(t, 4096)},
		{"2048-no-precomputed", bare},
	}
	msgs := [][]byte{nil, []byte("salt"), bytes.Repeat([]byte("a"), 64), bytes.Repeat([]byte{0, 0xff}, 4096)}
	for _, kc := range keys {
		t.Run(kc.name, func(t *testing.T) {
			priv := kc.key
			k := modulusBytes(priv.N)
			for _, m := range msgs {
				if _, err := native(t, fmt.Sprintf("sign %d bytes", len(m)), bs, signWith(priv, m)); err != nil {
					t.Fatal(err)
				}
			}
			for _, m := range [][]byte{[]byte("salt"), bytes.Repeat([]byte("7"), 64), nil} {
				em, err := x931Pad(k, m)
				if err != nil {
					t.Fatal(err)
				}
				// A block not below n (a 2047-bit modulus is below 0x6A...) fails the self-check.
				inRange := new(big.Int).SetBytes(em).Cmp(priv.N) < 0
				check := agree
				if inRange {
					check = native
				}
				_, err = check(t, fmt.Sprintf("raw x931 %d bytes", len(m)), bs, rawWith(priv, em))
				if (err == nil) != inRange {
					t.Fatalf("raw x931 %d bytes: block below n %v, error %v", len(m), inRange, err)
				}
			}
			for _, n := range []int{0, 1, 24, 56, k - 2*sha1.Size - 2} {
				pt := make([]byte, n)
				_, _ = rand.Read(pt)
				ct, err := EncryptOAEP(&priv.PublicKey, pt)
				if err != nil {
					t.Fatal(err)
				}
				got, err := native(t, fmt.Sprintf("decrypt %d bytes", n), bs, decryptWith(priv, ct))
				if err != nil || !bytes.Equal(got, pt) {
					t.Fatalf("decrypt %d bytes: %v", n, err)
				}
				ct[len(ct)/2] ^= 1
				if _, err := agree(t, "tampered", bs, decryptWith(priv, ct)); !errors.Is(err, rsa.ErrDecryption) {
					t.Fatalf("tampered: %v", err)
				}
			}
		})
	}
}

// TestBackendsAgreeOnRefusedKeys: keys Go refuses stay with Go, so both
// backends fail alike.
func TestBackendsAgreeOnRefusedKeys(t *testing.T) {
	bs := bothBackends(t)
	good := genKey(t, 2048)
	wrongD := *good
	wrongD.D = new(big.Int).Add(good.D, big.NewInt(2))
	wrongD.Precomputed = rsa.PrecomputedValues{}
	cases := []struct {
		name string
		key  *rsa.PrivateKey
	}{
		{"512-bit", func() *rsa.PrivateKey {
			// Go refuses to generate it; build a 512-bit key by hand.
			p, q := mustPrime(t, 256), mustPrime(t, 256)
			return keyFromPrimes(t, p, q)
		}()},
		{"wrong-d", &wrongD},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := agree(t, "sign", bs, signWith(c.key, []byte("salt")))
			if err == nil {
				t.Fatal("signed with a key Go refuses")
			}
		})
	}
}

func mustPrime(t testing.TB, bits int) *big.Int {
	p, err := rand.Prime(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// keyFromPrimes builds a two-prime key with e=65537 (no Precompute: Go's
// signing does that itself, or refuses the key).
func keyFromPrimes(t testing.TB, p, q *big.Int) *rsa.PrivateKey {
	one := big.NewInt(1)
	phi := new(big.Int).Mul(new(big.Int).Sub(p, one), new(big.Int).Sub(q, one))
	e := big.NewInt(65537)
	d := new(big.Int).ModInverse(e, phi)
	if d == nil {
		t.Skip("e not invertible for these primes; rerun")
	}
	return &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: new(big.Int).Mul(p, q), E: 65537}, D: d, Primes: []*big.Int{p, q}}
}

// TestOpenSSLKeyConvertedOnce: many operations on one key convert it once;
// a key whose fields are replaced is converted again; a collected key's
// entry goes away.
func TestOpenSSLKeyConvertedOnce(t *testing.T) {
	b := opensslForTest(t)
	priv := loadVecPriv(t, "pki/master/master.pem")
	h := sha1.Sum([]byte("x"))
	for range 20 {
		if _, err := b.signSHA1(priv, h[:]); err != nil {
			t.Fatal(err)
		}
	}
	if n := b.converted.Load(); n != 1 {
		t.Fatalf("%d conversions for one key, want 1", n)
	}
	other := loadVecPriv(t, "pki/minion1/minion.pem")
	priv.PublicKey, priv.D, priv.Primes, priv.Precomputed = other.PublicKey, other.D, other.Primes, other.Precomputed
	sig, err := b.signSHA1(priv, h[:])
	if err != nil {
		t.Fatal(err)
	}
	want, _ := goBackend{}.signSHA1(other, h[:])
	if !bytes.Equal(sig, want) || b.converted.Load() != 2 {
		t.Fatalf("key with replaced fields: %d conversions, signature equal %v", b.converted.Load(), bytes.Equal(sig, want))
	}
	priv = nil
	count := func() int {
		n := 0
		b.keys.Range(func(any, any) bool { n++; return true })
		return n
	}
	testutil.Eventually(t, 10*time.Second, func() bool { runtime.GC(); return count() == 0 }, "the collected key's entry removed")
}

// TestOpenSSLParallel signs and decrypts from several goroutines at once
// (run with -race): every result equals Go's.
func TestOpenSSLParallel(t *testing.T) {
	b := opensslForTest(t)
	priv := loadVecPriv(t, "pki/master/master.pem")
	ct, err := EncryptOAEP(&priv.PublicKey, []byte("token"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				h := sha1.Sum(fmt.Appendf(nil, "%d/%d", g, i))
				sig, err := b.signSHA1(priv, h[:])
				want, _ := goBackend{}.signSHA1(priv, h[:])
				if err != nil || !bytes.Equal(sig, want) {
					errs <- fmt.Errorf("sign %d/%d: %v", g, i, err)
					return
				}
				if pt, err := b.decryptOAEP(priv, ct); err != nil || string(pt) != "token" {
					errs <- fmt.Errorf("decrypt %d/%d: %q %v", g, i, pt, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestChooseBackend(t *testing.T) {
	ossl := &opensslBackend{}
	loads := func() (privateBackend, error) { return ossl, nil }
	fails := func() (privateBackend, error) { return nil, errors.New("no libcrypto here") }
	cases := []struct {
		mode   string
		load   func() (privateBackend, error)
		want   string
		reason string
	}{
		{"", loads, "openssl", "libcrypto loaded"},
		{"openssl", loads, "openssl", "libcrypto loaded"},
		{"go", loads, "go", "GSALT_CRYPTO=go"},
		{" Go ", loads, "go", "GSALT_CRYPTO=go"},
		{"", fails, "go", "no libcrypto here"},
		{"openssl", fails, "go", "no libcrypto here"},
	}
	for _, c := range cases {
		b, reason := chooseBackend(c.mode, c.load)
		if b.name() != c.want || reason != c.reason {
			t.Errorf("mode %q: %s (%s), want %s (%s)", c.mode, b.name(), reason, c.want, c.reason)
		}
	}
}

// TestDefaultBackend: the package uses OpenSSL unless $GSALT_CRYPTO says go.
func TestDefaultBackend(t *testing.T) {
	want := "openssl"
	if strings.EqualFold(strings.TrimSpace(os.Getenv(CryptoEnv)), "go") {
		want = "go"
	}
	if got := backend().name(); got != want {
		t.Fatalf("backend %s, want %s", got, want)
	}
}

// FuzzBackendsAgree feeds messages and ciphertexts to both backends with
// Salt's vector keys: signatures and raw blocks must be equal, decryptions
// equal or both refused.
func FuzzBackendsAgree(f *testing.F) {
	bs := bothBackends(f)
	keys := []*rsa.PrivateKey{loadVecPriv(f, "pki/master/master.pem"), loadVecPriv(f, "pki/minion1/minion.pem")}
	for _, v := range loadVectors(f, "oaep_decrypt") {
		if ct, err := hex.DecodeString(v.optStr("ciphertext_hex")); err == nil {
			f.Add([]byte("salt"), ct)
		}
	}
	f.Add([]byte{}, []byte{})
	f.Add(bytes.Repeat([]byte{0xff}, 256), bytes.Repeat([]byte{0xff}, 256))
	f.Fuzz(func(t *testing.T, msg, ct []byte) {
		for _, priv := range keys {
			if _, err := native(t, "sign", bs, signWith(priv, msg)); err != nil {
				t.Fatal(err)
			}
			_, _ = agree(t, "decrypt", bs, decryptWith(priv, ct))
			if em, err := x931Pad(modulusBytes(priv.N), msg); err == nil && new(big.Int).SetBytes(em).Cmp(priv.N) < 0 {
				if _, err := native(t, "raw", bs, rawWith(priv, em)); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

package crypt

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestGenerateKeyDefaults(t *testing.T) {
	k, err := GenerateKey(0)
	if err != nil {
		t.Fatal(err)
	}
	if k.N.BitLen() != 2048 || k.E != 65537 {
		t.Fatalf("got %d bits e=%d", k.N.BitLen(), k.E)
	}
	if _, err := GenerateKey(512); err == nil {
		t.Fatal("512-bit key accepted")
	}
	if _, err := GenerateKey(MaxKeyBits + 1); err == nil {
		t.Fatal("oversized key accepted")
	}
}

func TestMarshalPEMShape(t *testing.T) {
	priv := loadVecPriv(t, "pki/minion1/minion.pem")
	for _, tc := range []struct {
		name, first, last string
		text              []byte
	}{
		{"private", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", MarshalPrivateKeyPEM(priv)},
		{"public", "-----BEGIN PUBLIC KEY-----", "-----END PUBLIC KEY-----", MarshalPublicKeyPEM(&priv.PublicKey)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := string(tc.text)
			if strings.HasSuffix(s, "\n") || strings.Contains(s, "\r") {
				t.Fatal("must use \\n line ends and no final newline")
			}
			lines := strings.Split(s, "\n")
			if lines[0] != tc.first || lines[len(lines)-1] != tc.last {
				t.Fatalf("header/footer %q %q", lines[0], lines[len(lines)-1])
			}
			for i, l := range lines[1 : len(lines)-1] {
				if len(l) > 64 || (i < len(lines)-3 && len(l) != 64) {
					t.Fatalf("body line %d has %d chars", i, len(l))
				}
			}
		})
	}
	if MarshalPrivateKeyPEM(nil) != nil || MarshalPublicKeyPEM(nil) != nil {
		t.Fatal("nil keys must marshal to nil")
	}
}

func TestParseVariants(t *testing.T) {
	priv := loadVecPriv(t, "pki/master/master.pem")
	spki := MarshalPublicKeyPEM(&priv.PublicKey)
	pkcs1Pub := pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&priv.PublicKey)})
	pkcs8DER, _ := x509.MarshalPKCS8PrivateKey(priv)
	pkcs8 := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8DER})
	crlf := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	ecPub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: ecDER})
	ec8, _ := x509.MarshalPKCS8PrivateKey(ec)
	ecPriv := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ec8})
	encLegacy := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY",
		Headers: map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "DES-EDE3-CBC,0011223344556677"},
		Bytes:   []byte("not really encrypted")})
	encPKCS8 := pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{0x30, 0}})

	pubCases := []struct {
		name string
		in   []byte
		err  error
	}{
		{"spki", spki, nil},
		{"spki trailing newline", append(bytes.Clone(spki), '\n'), nil},
		{"spki crlf", crlf(append(bytes.Clone(spki), '\n')), nil},
		{"spki trailing whitespace", append(bytes.Clone(spki), " \t\r\n\n  "...), nil},
		{"spki leading junk", append([]byte("junk\n"), spki...), nil},
		{"pkcs1 public", pkcs1Pub, nil},
		{"pkcs1 public crlf", crlf(pkcs1Pub), nil},
		{"empty", nil, ErrNoPEM},
		{"garbage", []byte("hello"), ErrNoPEM},
		{"private given", MarshalPrivateKeyPEM(priv), ErrKeyFormat},
		{"ec public", ecPub, ErrNotRSA},
		{"bad der", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1, 2, 3}}), ErrKeyFormat},
	}
	for _, tc := range pubCases {
		t.Run("pub/"+tc.name, func(t *testing.T) {
			k, err := ParsePublicKeyPEM(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || k.N.Cmp(priv.N) != 0 || k.E != priv.E {
				t.Fatalf("parse: %v", err)
			}
		})
	}
	privCases := []struct {
		name string
		in   []byte
		err  error
	}{
		{"pkcs1", MarshalPrivateKeyPEM(priv), nil},
		{"pkcs1 crlf trailing", crlf(append(MarshalPrivateKeyPEM(priv), "\n\n"...)), nil},
		{"pkcs8", pkcs8, nil},
		{"legacy encrypted", encLegacy, ErrEncryptedKey},
		{"pkcs8 encrypted", encPKCS8, ErrEncryptedKey},
		{"public given", spki, ErrKeyFormat},
		{"ec pkcs8", ecPriv, ErrNotRSA},
		{"bad der", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: []byte{0x30, 1, 2}}), ErrKeyFormat},
		{"none", []byte("-----BEGIN RSA PRIVATE KEY-----\n!!!\n"), ErrNoPEM},
	}
	for _, tc := range privCases {
		t.Run("priv/"+tc.name, func(t *testing.T) {
			k, err := ParsePrivateKeyPEM(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || !k.Equal(priv) {
				t.Fatalf("parse: %v", err)
			}
		})
	}
}

func TestLoadMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadPrivateKey(filepath.Join(dir, "nope.pem")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadPrivateKey: %v", err)
	}
	if _, err := LoadPublicKey(filepath.Join(dir, "nope.pub")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadPublicKey: %v", err)
	}
	if _, err := FingerprintFile(filepath.Join(dir, "nope.pub"), ""); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("FingerprintFile: %v", err)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteKeyPair(t *testing.T) {
	dir := t.TempDir()
	priv, err := WriteKeyPair(dir, "master", 0)
	if err != nil {
		t.Fatal(err)
	}
	pemPath, pubPath := filepath.Join(dir, "master.pem"), filepath.Join(dir, "master.pub")
	for path, mode := range map[string]fs.FileMode{pemPath: 0o400, pubPath: 0o644} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s mode %o, want %o", path, st.Mode().Perm(), mode)
		}
	}
	if names := listDir(t, dir); len(names) != 2 {
		t.Fatalf("leftover files: %v", names)
	}
	lp, err := LoadPrivateKey(pemPath)
	if err != nil || !lp.Equal(priv) {
		t.Fatalf("LoadPrivateKey: %v", err)
	}
	lpub, err := LoadPublicKey(pubPath)
	if err != nil || !lpub.Equal(&priv.PublicKey) {
		t.Fatalf("LoadPublicKey: %v", err)
	}
	pubText, _ := os.ReadFile(pubPath)
	if !bytes.Equal(pubText, MarshalPublicKeyPEM(&priv.PublicKey)) {
		t.Fatal("pub file content")
	}
	f1, _ := FingerprintFile(pubPath, "")
	f2, _ := PublicKeyFingerprint(&priv.PublicKey, "")
	if f1 != f2 || len(f1) != 95 {
		t.Fatalf("fingerprints %q %q", f1, f2)
	}

	// Refuse to overwrite.
	before, _ := os.ReadFile(pemPath)
	if _, err := WriteKeyPair(dir, "master", 0); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("second WriteKeyPair: %v", err)
	}
	other := loadVecPriv(t, "pki/proxy1/minion.pem")
	if err := SaveKeyPair(dir, "master", other, false); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("SaveKeyPair without overwrite: %v", err)
	}
	after, _ := os.ReadFile(pemPath)
	pubAfter, _ := os.ReadFile(pubPath)
	if !bytes.Equal(before, after) || !bytes.Equal(pubAfter, pubText) {
		t.Fatal("existing key pair was modified")
	}
	// Overwrite when told.
	if err := SaveKeyPair(dir, "master", other, true); err != nil {
		t.Fatal(err)
	}
	lp, err = LoadPrivateKey(pemPath)
	if err != nil || !lp.Equal(other) {
		t.Fatalf("after overwrite: %v", err)
	}
	if st, _ := os.Stat(pemPath); st.Mode().Perm() != 0o400 {
		t.Fatalf("overwritten pem mode %o", st.Mode().Perm())
	}
	if names := listDir(t, dir); len(names) != 2 {
		t.Fatalf("leftover files: %v", names)
	}
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`} {
		if err := SaveKeyPair(dir, bad, other, true); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	if _, err := WriteKeyPair(filepath.Join(dir, "missing"), "x", 0); err == nil {
		t.Error("missing directory accepted")
	}
}

func TestSaveKeyPairRace(t *testing.T) {
	dir := t.TempDir()
	keys := []*rsa.PrivateKey{
		loadVecPriv(t, "pki/master/master.pem"),
		loadVecPriv(t, "pki/minion1/minion.pem"),
		loadVecPriv(t, "pki/proxy1/minion.pem"),
	}
	const rounds = 8
	var wg sync.WaitGroup
	errs := make([]error, rounds)
	for i := range rounds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = SaveKeyPair(dir, "minion", keys[i%len(keys)], false)
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 && keys[winner%len(keys)] != keys[i%len(keys)] {
				t.Fatalf("two different keys both won: %d and %d", winner, i)
			}
			winner = i
		case !errors.Is(err, ErrKeyExists):
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer succeeded")
	}
	got, err := LoadPrivateKey(filepath.Join(dir, "minion.pem"))
	if err != nil || !got.Equal(keys[winner%len(keys)]) {
		t.Fatalf("pem on disk is not the winner's: %v", err)
	}
	pub, err := LoadPublicKey(filepath.Join(dir, "minion.pub"))
	if err != nil || !pub.Equal(&got.PublicKey) {
		t.Fatalf("pub on disk does not match pem: %v", err)
	}
	if names := listDir(t, dir); len(names) != 2 {
		t.Fatalf("leftover files: %v", names)
	}
}

func TestFingerprintText(t *testing.T) {
	pub, _ := os.ReadFile(vecPath("pki/master/master.pub"))
	want, _ := Fingerprint(pub, "sha256")
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"trailing newline", append(bytes.Clone(pub), '\n')},
		{"crlf", bytes.ReplaceAll(pub, []byte("\n"), []byte("\r\n"))},
		{"blank lines", bytes.Replace(append([]byte("\n \n"), pub...), []byte("\n"), []byte("\n\n\t\n"), 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := Fingerprint(tc.in, ""); got != want {
				t.Fatalf("%s != %s", got, want)
			}
		})
	}
	// Changing a body character changes it.
	mod := bytes.Clone(pub)
	mod[40] ^= 1
	if got, _ := Fingerprint(mod, ""); got == want {
		t.Fatal("fingerprint ignores the body")
	}
	// Like pem_finger, a body line with trailing spaces is hashed as is.
	sp := bytes.Replace(pub, []byte("\n"), []byte(" \n"), 2)
	if got, _ := Fingerprint(sp, ""); got == want {
		t.Fatal("trailing spaces on a body line must change the digest")
	}
	lens := map[string]int{"": 95, "md5": 47, "sha1": 59, "sha224": 83, "sha256": 95, "SHA384": 143, "sha512": 191}
	for h, n := range lens {
		got, err := Fingerprint(pub, h)
		if err != nil || len(got) != n {
			t.Errorf("%q: %q %v", h, got, err)
		}
	}
	if _, err := Fingerprint(pub, "crc32"); !errors.Is(err, ErrUnsupportedHash) {
		t.Fatalf("unknown hash: %v", err)
	}
	// Fewer than three non-blank lines: hash of nothing, like Salt.
	e1, _ := Fingerprint([]byte("a\nb\n"), "md5")
	if e1 != "d4:1d:8c:d9:8f:00:b2:04:e9:80:09:98:ec:f8:42:7e" {
		t.Fatalf("empty body md5 %s", e1)
	}
}

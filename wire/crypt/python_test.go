package crypt

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

const pythonBin = "/usr/bin/python3"

// interopScript reads a JSON job on stdin and answers on stdout. It uses
// pycryptodome (as Salt's default backend does; Debian names the package
// Cryptodome) and, for X9.31, OpenSSL's libcrypto through ctypes exactly as
// salt/utils/rsax931.py does. Exit status 3 means pycryptodome is missing.
const interopScript = `
import sys, json, ctypes, ctypes.util
try:
    from Crypto.PublicKey import RSA
    from Crypto.Cipher import PKCS1_OAEP
    from Crypto.Signature import pkcs1_15
    from Crypto.Hash import SHA1
except ImportError:
    try:
        from Cryptodome.PublicKey import RSA
        from Cryptodome.Cipher import PKCS1_OAEP
        from Cryptodome.Signature import pkcs1_15
        from Cryptodome.Hash import SHA1
    except ImportError:
        sys.exit(3)

def load_libcrypto():
    name = ctypes.util.find_library("crypto")
    if not name:
        return None
    lib = ctypes.CDLL(name)
    vp, cp, ci = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    lib.BIO_new_mem_buf.argtypes = (cp, ci); lib.BIO_new_mem_buf.restype = vp
    lib.BIO_free.argtypes = (vp,)
    for f in ("PEM_read_bio_RSAPrivateKey", "PEM_read_bio_RSA_PUBKEY"):
        getattr(lib, f).argtypes = (vp, vp, vp, vp); getattr(lib, f).restype = vp
    lib.RSA_size.argtypes = (vp,); lib.RSA_size.restype = ci
    lib.RSA_private_encrypt.argtypes = (ci, cp, cp, vp, ci)
    lib.RSA_public_decrypt.argtypes = (ci, cp, cp, vp, ci)
    return lib

def ossl_key(lib, pem, private):
    bio = lib.BIO_new_mem_buf(pem, len(pem))
    f = lib.PEM_read_bio_RSAPrivateKey if private else lib.PEM_read_bio_RSA_PUBKEY
    k = f(bio, None, None, None)
    lib.BIO_free(bio)
    if not k:
        raise ValueError("libcrypto could not read the key")
    return k

job = json.load(sys.stdin)
lib = load_libcrypto()
out = {"libcrypto": lib is not None, "keys": []}
for kj in job["keys"]:
    priv_pem = open(kj["priv_path"], "rb").read()
    pub_pem = open(kj["pub_path"], "rb").read()
    priv = RSA.import_key(priv_pem)
    pub = RSA.import_key(pub_pem)
    r = {
        "n_hex": "%x" % pub.n, "e": pub.e, "d_hex": "%x" % priv.d,
        "same_n": priv.n == pub.n,
        "export_priv_equal": priv.export_key("PEM") == priv_pem,
        "export_pub_equal": pub.export_key("PEM") == pub_pem,
    }
    msg = bytes.fromhex(kj["msg_hex"])
    r["oaep_plain_hex"] = PKCS1_OAEP.new(priv).decrypt(bytes.fromhex(kj["oaep_ct_hex"])).hex()
    try:
        pkcs1_15.new(pub).verify(SHA1.new(msg), bytes.fromhex(kj["sig_hex"]))
        r["pkcs1_ok"] = True
    except (ValueError, TypeError):
        r["pkcs1_ok"] = False
    r["py_oaep_ct_hex"] = PKCS1_OAEP.new(pub).encrypt(msg).hex()
    r["py_sig_hex"] = pkcs1_15.new(priv).sign(SHA1.new(msg)).hex()
    if lib is not None:
        kpriv, kpub = ossl_key(lib, priv_pem, True), ossl_key(lib, pub_pem, False)
        size = lib.RSA_size(kpriv)
        signed = []
        for m in kj["x931_msgs"]:
            m = bytes.fromhex(m)
            buf = ctypes.create_string_buffer(size)
            n = lib.RSA_private_encrypt(len(m), m, buf, kpriv, 5)
            signed.append(buf.raw[:n].hex() if n >= 0 else None)
        rec = []
        for s in kj["x931_sigs"]:
            s = bytes.fromhex(s)
            buf = ctypes.create_string_buffer(size)
            n = lib.RSA_public_decrypt(len(s), s, buf, kpub, 5)
            rec.append(buf.raw[:n].hex() if n >= 0 else None)
        r["x931_signed"], r["x931_recovered"] = signed, rec
    out["keys"].append(r)
json.dump(out, sys.stdout)
`

type interopKeyJob struct {
	PrivPath  string   `json:"priv_path"`
	PubPath   string   `json:"pub_path"`
	MsgHex    string   `json:"msg_hex"`
	OAEPCtHex string   `json:"oaep_ct_hex"`
	SigHex    string   `json:"sig_hex"`
	X931Msgs  []string `json:"x931_msgs"`
	X931Sigs  []string `json:"x931_sigs"`
}

type interopKeyResult struct {
	NHex            string    `json:"n_hex"`
	E               int       `json:"e"`
	DHex            string    `json:"d_hex"`
	SameN           bool      `json:"same_n"`
	ExportPrivEqual bool      `json:"export_priv_equal"`
	ExportPubEqual  bool      `json:"export_pub_equal"`
	OAEPPlainHex    string    `json:"oaep_plain_hex"`
	PKCS1OK         bool      `json:"pkcs1_ok"`
	PyOAEPCtHex     string    `json:"py_oaep_ct_hex"`
	PySigHex        string    `json:"py_sig_hex"`
	X931Signed      []*string `json:"x931_signed"`
	X931Recovered   []*string `json:"x931_recovered"`
}

// x931Probes returns signatures that exercise OpenSSL's X9.31 checks:
// real ones, hand-made blocks with odd padding, and junk.
func x931Probes(t *testing.T, priv *rsa.PrivateKey) [][]byte {
	t.Helper()
	k := modulusBytes(priv.N)
	var sigs [][]byte
	for _, m := range [][]byte{[]byte("salt"), bytes.Repeat([]byte("ab"), 32), {}, make([]byte, k-3), make([]byte, k-2), []byte("x")} {
		if s, err := X931Sign(priv, m); err == nil {
			sigs = append(sigs, s)
		}
	}
	blocks := []string{
		"6b" + repeatHex("bb", k-3) + "cc" + "00",                        // no BA, CC at k-2: OpenSSL quirk, empty message
		"6b" + repeatHex("bb", k-2) + "cc",                               // no BA, CC at the end
		"6b" + repeatHex("bb", k-6) + "ba" + "7361" + "6c" + "cd",        // bad trailer
		"6b" + "ba" + repeatHex("11", k-3) + "cc",                        // no BB
		"6b" + repeatHex("bb", 10) + "bc" + repeatHex("bb", k-13) + "cc", // bad pad byte
		"6b" + repeatHex("bb", 10) + "ba" + repeatHex("bb", k-13) + "cc", // BB inside the message
		"6a" + repeatHex("22", k-2) + "cc",
		"5a" + repeatHex("22", k-2) + "cc",
		"6b" + repeatHex("bb", k-2) + "ba",
	}
	for _, b := range blocks {
		blk := hexBytes(t, b)
		if len(blk) != k {
			t.Fatalf("probe block of %d bytes, want %d", len(blk), k)
		}
		f := new(big.Int).SetBytes(blk)
		if f.Cmp(priv.N) >= 0 {
			continue
		}
		s, err := rawPrivate(priv, f)
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, s.FillBytes(make([]byte, k)))
		sigs = append(sigs, new(big.Int).Sub(priv.N, s).FillBytes(make([]byte, k)))
	}
	for _, n := range []int{k, k, k - 1, 1, k + 1} {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		sigs = append(sigs, b)
	}
	sigs = append(sigs, priv.N.Bytes(), nil)
	return sigs
}

func repeatHex(h string, n int) string {
	var b bytes.Buffer
	for range n {
		b.WriteString(h)
	}
	return b.String()
}

func TestPythonInterop(t *testing.T) {
	if _, err := os.Stat(pythonBin); err != nil {
		t.Skip("skip: /usr/bin/python3 not found")
	}
	dir := t.TempDir()
	// A fresh 2048-bit pair written by us, an odd-sized key, and Salt's own.
	k1, err := WriteKeyPair(dir, "minion", 2048)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := WriteKeyPair(dir, "odd", 2047)
	if err != nil {
		t.Fatal(err)
	}
	k3 := loadVecPriv(t, "pki/master/master.pem")
	type entry struct {
		priv          *rsa.PrivateKey
		privPath, pub string
	}
	entries := []entry{
		{k1, filepath.Join(dir, "minion.pem"), filepath.Join(dir, "minion.pub")},
		{k2, filepath.Join(dir, "odd.pem"), filepath.Join(dir, "odd.pub")},
		{k3, vecPath("pki/master/master.pem"), vecPath("pki/master/master.pub")},
	}
	msg := []byte("HAHehm4Cbd9+bL/JN/8jl63zjSr4IkfqE38azCx+WnpyhvbqFBlEC+ca61x503Mto1iDR89my/o=")
	var job struct {
		Keys []interopKeyJob `json:"keys"`
	}
	probes := make([][][]byte, len(entries))
	msgs := make([][][]byte, len(entries))
	for i, e := range entries {
		ct, err := EncryptOAEP(&e.priv.PublicKey, msg)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := Sign(e.priv, msg)
		if err != nil {
			t.Fatal(err)
		}
		k := modulusBytes(e.priv.N)
		msgs[i] = [][]byte{[]byte("salt"), []byte("046c56ad37d9a72596dbce2936b1dd404a103053a215fecb8c480195fff362aa"),
			{}, make([]byte, k-3), bytes.Repeat([]byte{9}, k-2), make([]byte, k-1)}
		probes[i] = x931Probes(t, e.priv)
		kj := interopKeyJob{PrivPath: e.privPath, PubPath: e.pub, MsgHex: hex.EncodeToString(msg),
			OAEPCtHex: hex.EncodeToString(ct), SigHex: hex.EncodeToString(sig)}
		for _, m := range msgs[i] {
			kj.X931Msgs = append(kj.X931Msgs, hex.EncodeToString(m))
		}
		for _, s := range probes[i] {
			kj.X931Sigs = append(kj.X931Sigs, hex.EncodeToString(s))
		}
		job.Keys = append(job.Keys, kj)
	}
	in, _ := json.Marshal(job)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, pythonBin, "-c", interopScript)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
		t.Skip("skip: pycryptodome (Crypto or Cryptodome) not importable by /usr/bin/python3")
	}
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var res struct {
		Libcrypto bool               `json:"libcrypto"`
		Keys      []interopKeyResult `json:"keys"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("python output: %v\n%s", err, out)
	}
	if len(res.Keys) != len(entries) {
		t.Fatalf("python answered %d keys", len(res.Keys))
	}
	for i, e := range entries {
		r := res.Keys[i]
		name := filepath.Base(e.privPath)
		if r.NHex != e.priv.N.Text(16) || r.E != e.priv.E || r.DHex != e.priv.D.Text(16) || !r.SameN {
			t.Errorf("%s: pycryptodome read a different key", name)
		}
		// pycryptodome's own export (Salt's default backend) is byte-identical
		// to what we write.
		if !r.ExportPrivEqual || !r.ExportPubEqual {
			t.Errorf("%s: pycryptodome export differs from our files (priv %v pub %v)", name, r.ExportPrivEqual, r.ExportPubEqual)
		}
		if r.OAEPPlainHex != hex.EncodeToString(msg) {
			t.Errorf("%s: PKCS1_OAEP decrypt of our ciphertext = %s", name, r.OAEPPlainHex)
		}
		if !r.PKCS1OK {
			t.Errorf("%s: pkcs1_15 rejected our signature", name)
		}
		pyCt, _ := hex.DecodeString(r.PyOAEPCtHex)
		if pt, err := DecryptOAEP(e.priv, pyCt); err != nil || !bytes.Equal(pt, msg) {
			t.Errorf("%s: DecryptOAEP of pycryptodome ciphertext: %v", name, err)
		}
		pySig, _ := hex.DecodeString(r.PySigHex)
		if err := Verify(&e.priv.PublicKey, msg, pySig); err != nil {
			t.Errorf("%s: Verify of pycryptodome signature: %v", name, err)
		}
		if !res.Libcrypto {
			t.Log("libcrypto not loadable through ctypes: X9.31 cross-check skipped")
			continue
		}
		for j, m := range msgs[i] {
			ours, err := X931Sign(e.priv, m)
			theirs := r.X931Signed[j]
			switch {
			case theirs == nil && err == nil:
				t.Errorf("%s: msg %d (%d bytes): OpenSSL refused, we signed", name, j, len(m))
			case theirs != nil && err != nil:
				t.Errorf("%s: msg %d (%d bytes): OpenSSL signed, we failed: %v", name, j, len(m), err)
			case theirs != nil && *theirs != hex.EncodeToString(ours):
				t.Errorf("%s: msg %d (%d bytes): X9.31 signature differs from OpenSSL", name, j, len(m))
			}
		}
		accepted := 0
		for j, s := range probes[i] {
			ours, err := X931Recover(&e.priv.PublicKey, s)
			theirs := r.X931Recovered[j]
			if theirs != nil {
				accepted++
			}
			switch {
			case theirs == nil && err == nil:
				t.Errorf("%s: probe %d: OpenSSL rejected, we recovered %x", name, j, ours)
			case theirs != nil && err != nil:
				t.Errorf("%s: probe %d: OpenSSL recovered %s, we failed: %v", name, j, *theirs, err)
			case theirs != nil && *theirs != hex.EncodeToString(ours):
				t.Errorf("%s: probe %d: recovered %x, OpenSSL %s", name, j, ours, *theirs)
			}
		}
		if _, err := Token(e.priv); err != nil {
			// 2047-bit modulus below 0x6B...: OpenSSL and we refuse to
			// sign, and nothing can be recovered.
			t.Logf("%s: %d-bit modulus too small for X9.31 blocks (%v)", name, e.priv.N.BitLen(), err)
		} else if accepted < 3 || accepted > len(probes[i])-5 {
			t.Errorf("%s: probes not discriminating: OpenSSL accepted %d of %d", name, accepted, len(probes[i]))
		}
		t.Logf("%s: %d-bit, OpenSSL accepted %d of %d X9.31 probes", name, e.priv.N.BitLen(), accepted, len(probes[i]))
	}
}

// Package crypt implements the cryptographic primitives of the Salt 3006
// master/minion protocol (SALT-WIRE §3) on plain bytes.
//
// It covers:
//
//   - RSA key material in the exact PEM forms Salt writes and reads
//     (PKCS#1 "RSA PRIVATE KEY", SubjectPublicKeyInfo "PUBLIC KEY") and the
//     key-pair files of salt.crypt.gen_keys;
//   - fingerprints computed like salt.utils.crypt.pem_finger;
//   - RSA-OAEP with SHA-1 (session key and token transport), RSASSA-PKCS1-v1_5
//     with SHA-1 (sign_message / verify_signature) and OpenSSL's raw
//     RSA_X931_PADDING private encrypt / public decrypt (the auth reply sig
//     and the minion tok);
//   - the Crypticle symmetric blob format (AES-192-CBC + HMAC-SHA256) and its
//     "pickle::" + nonce framing;
//   - request nonces.
//
// The package never touches msgpack: Seal and Open take and return the
// serialized payload bytes, and a higher layer encodes and decodes them. The
// publish serial check of Crypticle.loads also belongs to that higher layer.
//
// The RSA private-key operations (OAEP decryption, PKCS#1 v1.5 signing,
// the X9.31 private encrypt) run in OpenSSL's libcrypto (libcrypto.so.3,
// dlopened through github.com/golang-fips/openssl/v2) when the build has
// cgo and the library loads (3 to 4 times less CPU than Go's crypto/rsa),
// and in crypto/rsa otherwise or when $GSALT_CRYPTO is "go". Both give the
// same bytes: the signatures are deterministic and are compared with
// Salt's vectors and with each other in the tests. Public-key operations
// stay in Go (OpenSSL is not faster there).
//
// Every exported function and every Crypticle value is safe for concurrent
// use. The package's only package-level state is that backend, chosen once
// on first use (sync.OnceValue), and its cache of converted OpenSSL keys.
package crypt

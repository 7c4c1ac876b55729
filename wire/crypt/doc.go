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
// Every exported function and every Crypticle value is safe for concurrent
// use. The package has no mutable package-level state.
package crypt

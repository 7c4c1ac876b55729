package crypt

import "errors"

// Sentinel errors. Functions wrap them with %w; test with errors.Is.
var (
	// ErrNoPEM means the input contains no PEM block.
	ErrNoPEM = errors.New("crypt: no PEM block found")
	// ErrKeyFormat means a PEM block has an unexpected type or content.
	ErrKeyFormat = errors.New("crypt: unsupported key format")
	// ErrNotRSA means a key parsed fine but is not an RSA key.
	ErrNotRSA = errors.New("crypt: not an RSA key")
	// ErrEncryptedKey means the private key is protected by a passphrase
	// (Salt's key_pass); this package does not decrypt such keys.
	ErrEncryptedKey = errors.New("crypt: encrypted private keys (key_pass) are not supported")
	// ErrKeyExists means WriteKeyPair found an existing private key file
	// and was not allowed to replace it.
	ErrKeyExists = errors.New("crypt: private key file already exists")
	// ErrUnsupportedHash means the fingerprint hash type is unknown.
	ErrUnsupportedHash = errors.New("crypt: unsupported hash type")

	// ErrDecrypt means RSA-OAEP decryption failed.
	ErrDecrypt = errors.New("crypt: RSA-OAEP decryption failed")
	// ErrBadSignature means a PKCS#1 v1.5 signature does not verify.
	ErrBadSignature = errors.New("crypt: signature verification failed")
	// ErrMessageTooLong means the message does not fit the RSA modulus for
	// X9.31 padding.
	ErrMessageTooLong = errors.New("crypt: message too long for RSA key size")
	// ErrX931 means an X9.31 signature could not be recovered (out of range
	// or bad header, padding or trailer), like OpenSSL's RSA_public_decrypt
	// failing.
	ErrX931 = errors.New("crypt: X9.31 signature recovery failed")
	// ErrBadToken means a tok did not recover to "salt".
	ErrBadToken = errors.New("crypt: token verification failed")

	// ErrBadKeyString means a Crypticle key string is not base64 of
	// exactly 56 bytes.
	ErrBadKeyString = errors.New("crypt: bad crypticle key string")
	// ErrMACMismatch means the Crypticle HMAC does not match (Salt's
	// AuthenticationError "message authentication failed").
	ErrMACMismatch = errors.New("crypt: message authentication failed")
	// ErrMalformed means a Crypticle blob is too short or its ciphertext
	// is not a whole number of AES blocks.
	ErrMalformed = errors.New("crypt: malformed crypticle blob")
	// ErrBadPadding means the decrypted Crypticle plaintext has invalid
	// PKCS#7 padding (Salt does not check this; see Crypticle.Decrypt).
	ErrBadPadding = errors.New("crypt: bad crypticle padding")
	// ErrBadIV means an explicit IV is not 16 bytes long.
	ErrBadIV = errors.New("crypt: IV must be 16 bytes")
	// ErrNoPickle means the plaintext does not start with "pickle::"; Salt
	// silently turns this into an empty dict, callers decide what to do.
	ErrNoPickle = errors.New("crypt: plaintext lacks the pickle:: prefix")
	// ErrNonceMismatch means the nonce in front of the payload differs from
	// the expected one (Salt's "Nonce verification error").
	ErrNonceMismatch = errors.New("crypt: nonce verification error")
	// ErrBadNonce means a nonce argument is not 32 bytes long.
	ErrBadNonce = errors.New("crypt: nonce must be 32 characters")
)

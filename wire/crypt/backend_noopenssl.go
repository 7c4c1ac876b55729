//go:build !(cgo && unix)

package crypt

import "errors"

// errNoCgo says why a build without cgo uses Go's crypto/rsa.
var errNoCgo = errors.New("built without cgo: no libcrypto")

// loadOpenSSL reports that this build cannot load libcrypto.
func loadOpenSSL() (privateBackend, error) { return nil, errNoCgo }

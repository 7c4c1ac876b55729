//go:build !amd64

package crypt

// haveAESNI is false off amd64: crypto/cipher does the CBC.
func haveAESNI() bool { return false }

func cbcEncAsm(rk, iv, dst, src *byte, n int) { panic("crypt: no assembly CBC on this architecture") }

func cbcDecAsm(rk, iv, dst, src *byte, n int) { panic("crypt: no assembly CBC on this architecture") }

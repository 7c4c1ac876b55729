//go:build !amd64

package crypt

// haveAESNI is false off amd64: crypto/cipher does the CBC.
func haveAESNI() bool { return false }

func cbcEncAsm(rk, iv, dst, src *byte, n int) { panic("crypt: no assembly CBC on this architecture") }

func cbcDecAsm(rk, iv, dst, src *byte, n int) { panic("crypt: no assembly CBC on this architecture") }

// haveSealMAC is false off amd64.
func haveSealMAC() bool { return false }

func sealMACAsm(rk, dst, src *byte, n int, state *[8]uint32) {
	panic("crypt: no assembly seal on this architecture")
}

// haveOpenMAC is false off amd64.
func haveOpenMAC() bool { return false }

func openMACAsm(rk, dst, src *byte, n int, state *[8]uint32, prev *byte) {
	panic("crypt: no assembly open on this architecture")
}

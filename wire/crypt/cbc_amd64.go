package crypt

import "golang.org/x/sys/cpu"

// haveAESNI reports whether the assembly CBC loops can run.
func haveAESNI() bool { return cpu.X86.HasAES && cpu.X86.HasSSE2 }

// cbcEncAsm CBC-encrypts n bytes (a multiple of 16) from src to dst with
// the 13 AES-192 round keys at rk and the IV at iv (left unchanged).
//
//go:noescape
func cbcEncAsm(rk, iv, dst, src *byte, n int)

// cbcDecAsm CBC-decrypts n bytes (a multiple of 16) from src to dst with
// the 13 equivalent-inverse-cipher round keys at rk and the IV at iv.
//
//go:noescape
func cbcDecAsm(rk, iv, dst, src *byte, n int)

// haveSealMAC reports whether sealMACAsm can run: AES-NI and SHA-NI.
func haveSealMAC() bool {
	return haveAESNI() && cpuid7EBX()&(1<<29) != 0 && cpu.X86.HasSSE41 && cpu.X86.HasSSSE3
}

// cpuid7EBX is CPUID leaf 7 (sub-leaf 0)'s EBX: bit 29 is SHA-NI, which
// golang.org/x/sys/cpu does not report (0 without leaf 7).
func cpuid7EBX() uint32

// sealMACAsm runs n rounds of: SHA-256 compression (state: a..h) of the
// 64 bytes at dst-64 while CBC-encrypting the 64 bytes at src into dst
// with the 13 AES-192 round keys at rk (the chain: the 16 bytes at
// dst-16); dst and src then move on 64 bytes. dst is src or does not
// overlap it.
//
//go:noescape
func sealMACAsm(rk, dst, src *byte, n int, state *[8]uint32)

// haveOpenMAC reports whether openMACAsm can run: haveSealMAC and AVX
// (its XORs read unaligned memory).
func haveOpenMAC() bool { return haveSealMAC() && cpu.X86.HasAVX }

// openMACAsm runs n rounds of: SHA-256 compression (state: a..h) of the
// 64 bytes at src while CBC-decrypting them into dst with the 13
// equivalent inverse cipher round keys at rk (the chain: the 16 bytes at
// prev, which then hold the last ciphertext block read); dst and src then
// move on 64 bytes. dst is src or does not overlap it.
//
//go:noescape
func openMACAsm(rk, dst, src *byte, n int, state *[8]uint32, prev *byte)

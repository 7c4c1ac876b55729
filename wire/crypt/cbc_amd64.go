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

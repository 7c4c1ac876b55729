// Package stackpad grows a goroutine's stack on purpose, at a shallow
// point of its call chain. When the runtime grows a stack it copies it
// and adjusts every frame on it; growing where only the caller's frame is
// on the stack is cheap, growing deep inside a call chain (a decoder, a
// job's return) is not. A caller that knows how much stack its next piece
// of work needs calls one of these first; a stack already large enough
// only has the frame cleared.
package stackpad

// Grow2K takes a 2 KiB frame: with a shallow caller and the runtime's
// guard, a 2 KiB stack becomes 4 KiB. i varies the index written, so the
// frame is neither optimised away nor shared.
//
//go:noinline
func Grow2K(i int) byte {
	var pad [2 << 10]byte
	pad[i%len(pad)] = 1
	return pad[(i+1)%len(pad)]
}

// Grow8K takes an 8 KiB frame: a goroutine's first 8 KiB of stack become
// 16 KiB.
//
//go:noinline
func Grow8K(i int) byte {
	var pad [8 << 10]byte
	pad[i%len(pad)] = 1
	return pad[(i+1)%len(pad)]
}

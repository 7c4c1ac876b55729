package message

import (
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

func benchChunk(b *testing.B) (*crypt.Crypticle, *payload.Map, string) {
	key, err := crypt.GenerateKeyString()
	if err != nil {
		b.Fatal(err)
	}
	c, err := crypt.NewCrypticle(key)
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i*131 + i>>9)
	}
	return c, payload.NewMap("data", data, "dest", "big.bin"), strings.Repeat("ab", crypt.NonceLen/2)
}

// BenchmarkSendReplyChunk: the master's reply to a 1 MiB _serve_file.
func BenchmarkSendReplyChunk(b *testing.B) {
	c, ret, nonce := benchChunk(b)
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeSendReply(c, ret, nonce); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenSendReplyChunk: the minion opening that reply.
func BenchmarkOpenSendReplyChunk(b *testing.B) {
	c, ret, nonce := benchChunk(b)
	frame, err := EncodeSendReply(c, ret, nonce)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, len(frame))
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, frame) // the received frame, owned by the caller
		if _, err := openReplyForBench(c, buf, nonce); err != nil {
			b.Fatal(err)
		}
	}
}

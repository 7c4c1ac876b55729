package transport

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// TestWriteMessageFraming checks the ZMTP data frames this package writes
// itself against the framing of RFC 23 (the bytes zmq4 and libzmq write):
// MORE on all frames but the last, a one-byte size up to 255 bytes and
// LONG with an eight-byte size above, for copied and writev-sent messages.
func TestWriteMessageFraming(t *testing.T) {
	big := bytes.Repeat([]byte{'b'}, copyLimit+1)
	cases := []struct {
		name   string
		frames [][]byte
		want   []byte
	}{
		{"one empty frame", [][]byte{{}}, []byte{0, 0}},
		{"short", [][]byte{[]byte("abc")}, []byte{0, 3, 'a', 'b', 'c'}},
		{"envelope", [][]byte{[]byte("id"), {}, []byte("x")}, []byte{1, 2, 'i', 'd', 1, 0, 0, 1, 'x'}},
		{"255 bytes stay short", [][]byte{bytes.Repeat([]byte{'s'}, 255)}, append([]byte{0, 255}, bytes.Repeat([]byte{'s'}, 255)...)},
		{"256 bytes are long", [][]byte{bytes.Repeat([]byte{'l'}, 256)}, append([]byte{2, 0, 0, 0, 0, 0, 0, 1, 0}, bytes.Repeat([]byte{'l'}, 256)...)},
		{"writev", [][]byte{{}, big}, append(binary.BigEndian.AppendUint64([]byte{1, 0, 2}, uint64(len(big))), big...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := encodeMessage(tc.frames); !bytes.Equal(got, tc.want) {
				t.Fatalf("encodeMessage = % x, want % x", head(got), head(tc.want))
			}
			a, b := net.Pipe()
			done := make(chan error, 1)
			go func() { done <- writeMessage(a, tc.frames); a.Close() }()
			got, err := io.ReadAll(b)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("writeMessage wrote % x, want % x", head(got), head(tc.want))
			}
		})
	}
}

func head(b []byte) []byte { return b[:min(len(b), 16)] }

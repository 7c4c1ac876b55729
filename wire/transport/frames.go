package transport

import (
	"encoding/binary"
	"net"
	"sync"
)

// ZMTP data frames are written by this package itself rather than through
// zmq4's SendMsg, which writes a header and a body per frame (collected by
// the guard) into a buffer each connection grows and keeps: the master
// publishing one job to 10,000 subscribers encoded it 10,000 times. The
// bytes are the ones zmq4 writes (NULL security): per frame a flags byte
// (MORE on all frames but the last, LONG when the body exceeds 255 bytes),
// the size in one byte or eight big-endian bytes, then the body.

// frameHeader appends the header of a data frame of size bytes to dst.
func frameHeader(dst []byte, size int, more bool) []byte {
	var flags byte
	if more {
		flags |= flagMore
	}
	if size > 255 {
		flags |= flagLong
		dst = append(dst, flags)
		return binary.BigEndian.AppendUint64(dst, uint64(size))
	}
	return append(dst, flags, byte(size))
}

// encodedLen is the size of frames encoded as one ZMTP message.
func encodedLen(frames [][]byte) int {
	n := 0
	for _, f := range frames {
		n += len(f) + 2
		if len(f) > 255 {
			n += 7
		}
	}
	return n
}

// appendMessage appends frames encoded as one ZMTP data message to dst.
func appendMessage(dst []byte, frames [][]byte) []byte {
	for i, f := range frames {
		dst = frameHeader(dst, len(f), i < len(frames)-1)
		dst = append(dst, f...)
	}
	return dst
}

// encodeMessage returns frames encoded as one ZMTP data message (a new
// slice, shared read-only by the subscribers of a publish).
func encodeMessage(frames [][]byte) []byte {
	return appendMessage(make([]byte, 0, encodedLen(frames)), frames)
}

// copyLimit is the largest message copied into a pooled buffer for one
// write; larger ones go out with writev (headers and bodies in place).
const copyLimit = 64 << 10

var sendBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// writeMessage writes frames as one ZMTP message on w with one system call.
func writeMessage(w net.Conn, frames [][]byte) error {
	if n := encodedLen(frames); n > copyLimit {
		bufs := make(net.Buffers, 0, 2*len(frames))
		hdrs := make([]byte, 0, 9*len(frames))
		for i, f := range frames {
			start := len(hdrs)
			hdrs = frameHeader(hdrs, len(f), i < len(frames)-1)
			bufs = append(bufs, hdrs[start:len(hdrs):len(hdrs)], f)
		}
		_, err := bufs.WriteTo(w)
		return err
	}
	bp := sendBufs.Get().(*[]byte)
	b := appendMessage((*bp)[:0], frames)
	_, err := w.Write(b)
	if cap(b) <= copyLimit {
		*bp = b[:0]
		sendBufs.Put(bp)
	}
	return err
}

// sendEncoded writes messages already encoded (encodeMessage) under the
// write timeout, several at once in one writev when a subscriber has a
// backlog. A failed write closes the connection.
func (c *zconn) sendEncoded(msgs [][]byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.armWrite()
	var err error
	if len(msgs) == 1 {
		_, err = c.raw.Write(msgs[0])
	} else {
		bufs := net.Buffers(msgs)
		_, err = bufs.WriteTo(c.raw)
	}
	if err != nil {
		c.close()
		return mapNetErr(err)
	}
	return nil
}

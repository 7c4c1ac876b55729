package event

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/gsalt/gsalt/wire/payload"
)

// DefaultMaxFrameSize bounds one IPC frame. Salt trims events to 1 MiB but
// its trimming can leave larger ones (lists are never trimmed), so the
// limit leaves generous room.
const DefaultMaxFrameSize = 32 << 20

// maxDataDepth bounds nesting inside event data.
const maxDataDepth = 256

// readChunk is how much a FrameReader asks the connection for at a time.
const readChunk = 64 << 10

// frameHead is the fixed start of every frame gsalt writes:
// {"head": {}, "body": ...} as msgpack.
var frameHead = [...]byte{0x82, 0xa4, 'h', 'e', 'a', 'd', 0x80, 0xa4, 'b', 'o', 'd', 'y'}

// AppendFrame appends the IPC frame for a tag and already packed data
// (msgpack, use_bin_type=True) to dst.
func AppendFrame(dst []byte, tag string, packedData []byte) []byte {
	n := len(tag) + len(TagEnd) + len(packedData)
	dst = append(dst, frameHead[:]...)
	switch {
	case n <= 0xff:
		dst = append(dst, 0xc4, byte(n))
	case n <= 0xffff:
		dst = append(dst, 0xc5, byte(n>>8), byte(n))
	default:
		dst = append(dst, 0xc6, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	dst = append(dst, tag...)
	dst = append(dst, TagEnd...)
	return append(dst, packedData...)
}

// EncodeFrame encodes ev as one IPC frame. It adds nothing to the data
// (no _stamp, no trimming); see Pusher for Salt's fire_event behaviour.
func EncodeFrame(ev Event) ([]byte, error) {
	if err := checkTag(ev.Tag); err != nil {
		return nil, err
	}
	data := ev.Data
	if data == nil {
		data = &payload.Map{}
	}
	packed, err := payload.MarshalBin(data)
	if err != nil {
		return nil, fmt.Errorf("event: encode data for %q: %w", ev.Tag, err)
	}
	if len(packed)+len(ev.Tag)+len(TagEnd) > 0xffffffff {
		return nil, fmt.Errorf("%w: %d bytes", ErrFrameTooLarge, len(packed))
	}
	return AppendFrame(nil, ev.Tag, packed), nil
}

// DecodeFrame decodes one complete frame: a msgpack map whose "body" is a
// bin (or str) holding tag, "\n\n" and a packed data map. Other keys (the
// "head") are ignored. Any failure wraps ErrBadFrame.
func DecodeFrame(frame []byte) (Event, error) {
	body, err := frameBody(frame)
	if err != nil {
		return Event{}, err
	}
	return decodeBody(body)
}

// decodeBody splits a frame body into tag and data.
func decodeBody(body []byte) (Event, error) {
	i := bytes.Index(body, []byte(TagEnd))
	if i < 0 {
		return Event{}, fmt.Errorf("%w: body has no tag separator", ErrBadFrame)
	}
	v, err := payload.UnmarshalLimits(body[i+len(TagEnd):], payload.Limits{MaxDepth: maxDataDepth})
	if err != nil {
		return Event{}, fmt.Errorf("%w: data: %w", ErrBadFrame, err)
	}
	m, ok := v.(*payload.Map)
	if !ok || m == nil {
		return Event{}, fmt.Errorf("%w: data is %s, not a map", ErrBadFrame, payload.TypeName(v))
	}
	return Event{Tag: string(body[:i]), Data: m}, nil
}

// frameBody finds the "body" value of a complete frame without copying.
func frameBody(frame []byte) ([]byte, error) {
	n, err := valueLen(frame)
	if err != nil {
		return nil, err
	}
	if n != len(frame) {
		return nil, fmt.Errorf("%w: trailing bytes after frame", ErrBadFrame)
	}
	count, hl, ok := mapHeader(frame)
	if !ok {
		return nil, fmt.Errorf("%w: frame is not a map", ErrBadFrame)
	}
	pos := hl
	var body []byte
	found := false
	for i := 0; i < count; i++ {
		key, kl, err := rawString(frame[pos:])
		if err != nil {
			return nil, fmt.Errorf("%w: frame key: %w", ErrBadFrame, err)
		}
		pos += kl
		vl, err := valueLen(frame[pos:])
		if err != nil {
			return nil, err
		}
		if string(key) == "body" {
			b, _, err := rawString(frame[pos : pos+vl])
			if err != nil {
				return nil, fmt.Errorf("%w: body: %w", ErrBadFrame, err)
			}
			body, found = b, true
		}
		pos += vl
	}
	if !found {
		return nil, fmt.Errorf("%w: no body", ErrBadFrame)
	}
	return body, nil
}

// errNotRaw is returned by rawString for a value that is not str or bin.
var errNotRaw = errors.New("not a str or bin value")

// rawString decodes a complete str or bin value at the start of b,
// returning its bytes (aliasing b) and the encoded length.
func rawString(b []byte) ([]byte, int, error) {
	if len(b) == 0 {
		return nil, 0, io.ErrUnexpectedEOF
	}
	c := b[0]
	var hl, n int
	switch {
	case c >= 0xa0 && c <= 0xbf:
		hl, n = 1, int(c&0x1f)
	case c == 0xd9 || c == 0xc4:
		if len(b) < 2 {
			return nil, 0, io.ErrUnexpectedEOF
		}
		hl, n = 2, int(b[1])
	case c == 0xda || c == 0xc5:
		if len(b) < 3 {
			return nil, 0, io.ErrUnexpectedEOF
		}
		hl, n = 3, int(binary.BigEndian.Uint16(b[1:]))
	case c == 0xdb || c == 0xc6:
		if len(b) < 5 {
			return nil, 0, io.ErrUnexpectedEOF
		}
		hl, n = 5, int(binary.BigEndian.Uint32(b[1:]))
	default:
		return nil, 0, errNotRaw
	}
	if n < 0 || len(b)-hl < n {
		return nil, 0, io.ErrUnexpectedEOF
	}
	return b[hl : hl+n], hl + n, nil
}

// mapHeader decodes a map header: element pairs and header length.
func mapHeader(b []byte) (int, int, bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	c := b[0]
	switch {
	case c >= 0x80 && c <= 0x8f:
		return int(c & 0x0f), 1, true
	case c == 0xde && len(b) >= 3:
		return int(binary.BigEndian.Uint16(b[1:])), 3, true
	case c == 0xdf && len(b) >= 5:
		return int(binary.BigEndian.Uint32(b[1:])), 5, true
	}
	return 0, 0, false
}

// valueLen returns the encoded length of the complete msgpack value at the
// start of b.
func valueLen(b []byte) (int, error) {
	var s scanner
	s.reset(false)
	n, done, err := s.scan(b, len(b))
	if err != nil {
		return 0, err
	}
	if !done {
		return 0, fmt.Errorf("%w: truncated value", ErrBadFrame)
	}
	return n, nil
}

// scanner finds where one msgpack value ends in a growing byte buffer
// without decoding it. It is resumable: when the buffer ends early it
// keeps its position and continues when called again with more bytes.
type scanner struct {
	pos       int   // offset of the next header to read (may pass the buffer end while skipping a payload)
	remaining int64 // values still to walk
	wantMap   bool  // the top value must be a map
}

func (s *scanner) reset(wantMap bool) { *s = scanner{remaining: 1, wantMap: wantMap} }

// scan walks headers in buf. It returns the value length and true when the
// value is complete, false when more bytes are needed, or an error for
// invalid input or a value that cannot fit in max bytes.
func (s *scanner) scan(buf []byte, max int) (int, bool, error) {
	for s.remaining > 0 {
		if s.pos >= len(buf) {
			return 0, false, nil
		}
		c := buf[s.pos]
		if s.wantMap && s.pos == 0 && !(c >= 0x80 && c <= 0x8f || c == 0xde || c == 0xdf) {
			return 0, false, fmt.Errorf("%w: frame starts with 0x%02x, not a map", ErrBadFrame, c)
		}
		size, count, complete, err := header(buf[s.pos:])
		if err != nil {
			return 0, false, err
		}
		if !complete {
			return 0, false, nil
		}
		if size > int64(max)-int64(s.pos) {
			return 0, false, fmt.Errorf("%w: over %d bytes", ErrFrameTooLarge, max)
		}
		s.pos += int(size)
		s.remaining += count - 1
		// Every value takes at least one byte.
		if s.remaining > int64(max)-int64(s.pos) {
			return 0, false, fmt.Errorf("%w: over %d bytes", ErrFrameTooLarge, max)
		}
	}
	if s.pos > len(buf) {
		return 0, false, nil
	}
	return s.pos, true, nil
}

// header decodes the msgpack header at the start of b (which is not empty):
// payload.Header, with ErrBadFrame for a reserved code.
func header(b []byte) (size, count int64, complete bool, err error) {
	size, count, complete, ok := payload.Header(b)
	if !ok {
		return 0, 0, false, fmt.Errorf("%w: reserved code 0x%02x", ErrBadFrame, b[0])
	}
	return size, count, complete, nil
}

// FrameReader splits a byte stream into IPC frames and decodes them. It
// handles frames split across reads, never buffers more than the maximum
// frame size plus one read, and is not safe for concurrent use.
//
// A framing error (garbage, oversize) is sticky: the stream cannot be
// resynchronised, so every later Next returns it. A well-framed frame with
// bad content only fails that call. A read error such as a deadline leaves
// the reader intact, so Next may be called again.
type FrameReader struct {
	r     io.Reader
	max   int
	buf   []byte
	start int // first unconsumed byte in buf
	sc    scanner
	err   error // sticky framing error
	eof   bool
}

// NewFrameReader reads frames from r, refusing frames over maxFrame bytes
// (0 or less: DefaultMaxFrameSize).
func NewFrameReader(r io.Reader, maxFrame int) *FrameReader {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrameSize
	}
	fr := &FrameReader{r: r, max: maxFrame}
	fr.sc.reset(true)
	return fr
}

// Next returns the next event. At a clean end of stream it returns io.EOF;
// a stream ending inside a frame gives io.ErrUnexpectedEOF.
func (fr *FrameReader) Next() (Event, error) {
	frame, err := fr.NextFrame()
	if err != nil {
		return Event{}, err
	}
	return DecodeFrame(frame)
}

// NextFrame returns the next raw frame. The slice is only valid until the
// next call.
func (fr *FrameReader) NextFrame() ([]byte, error) {
	if fr.err != nil {
		return nil, fr.err
	}
	for {
		pending := fr.buf[fr.start:]
		if len(pending) > 0 {
			n, done, err := fr.sc.scan(pending, fr.max)
			if err != nil {
				fr.err = err
				return nil, err
			}
			if done {
				frame := pending[:n]
				fr.start += n
				fr.sc.reset(true)
				return frame, nil
			}
		}
		if fr.eof {
			if len(pending) == 0 {
				return nil, io.EOF
			}
			fr.err = io.ErrUnexpectedEOF
			return nil, fr.err
		}
		if err := fr.fill(); err != nil {
			return nil, err
		}
	}
}

// buffered returns the next frame when it is already complete in the
// buffer (no read); ok is false otherwise. The slice is only valid until
// the next call.
func (fr *FrameReader) buffered() (frame []byte, ok bool, err error) {
	if fr.err != nil {
		return nil, false, fr.err
	}
	pending := fr.buf[fr.start:]
	if len(pending) == 0 {
		return nil, false, nil
	}
	n, done, err := fr.sc.scan(pending, fr.max)
	if err != nil {
		fr.err = err
		return nil, false, err
	}
	if !done {
		return nil, false, nil
	}
	fr.start += n
	fr.sc.reset(true)
	return pending[:n], true, nil
}

// fill reads more bytes, compacting and growing the buffer as needed.
func (fr *FrameReader) fill() error {
	if fr.start > 0 {
		n := copy(fr.buf, fr.buf[fr.start:])
		fr.buf = fr.buf[:n]
		fr.start = 0
	}
	if cap(fr.buf)-len(fr.buf) < readChunk {
		want := len(fr.buf) + readChunk
		// Grow toward the end of the payload being skipped, bounded by
		// the frame limit, to avoid many small reallocations.
		if fr.sc.pos > want && fr.sc.pos <= fr.max+readChunk {
			want = fr.sc.pos
		}
		if want < 2*cap(fr.buf) {
			want = 2 * cap(fr.buf)
		}
		if limit := fr.max + readChunk; want > limit {
			want = limit
		}
		nb := make([]byte, len(fr.buf), want)
		copy(nb, fr.buf)
		fr.buf = nb
	}
	n, err := fr.r.Read(fr.buf[len(fr.buf):cap(fr.buf)])
	fr.buf = fr.buf[:len(fr.buf)+n]
	if err == io.EOF {
		fr.eof = true
		return nil
	}
	if err != nil {
		return err
	}
	return nil
}

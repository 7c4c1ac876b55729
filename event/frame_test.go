package event

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gsalt/gsalt/wire/payload"
)

func mustFrame(t testing.TB, tag string, data *payload.Map) []byte {
	t.Helper()
	f, err := EncodeFrame(Event{Tag: tag, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestEncodeFrameLayout(t *testing.T) {
	f := mustFrame(t, "salt/auth", payload.NewMap("result", true))
	// 82 a4"head" 80 a4"body" c4 <len> tag \n\n data (SALT-WIRE.md A.5).
	want := []byte{0x82, 0xa4, 'h', 'e', 'a', 'd', 0x80, 0xa4, 'b', 'o', 'd', 'y', 0xc4}
	if !bytes.HasPrefix(f, want) {
		t.Fatalf("frame starts % x", f[:16])
	}
	body := f[len(want)+1:]
	if int(f[len(want)]) != len(body) || !bytes.HasPrefix(body, []byte("salt/auth\n\n")) {
		t.Fatalf("body % x", body)
	}
	// Larger bodies use bin16 and bin32.
	for _, n := range []int{300, 70000} {
		f := mustFrame(t, "t", payload.NewMap("s", strings.Repeat("x", n)))
		code := f[len(frameHead)]
		if (n == 300 && code != 0xc5) || (n == 70000 && code != 0xc6) {
			t.Errorf("%d-byte body uses code %x", n, code)
		}
		ev, err := DecodeFrame(f)
		if err != nil || len(ev.Data.Str("s")) != n {
			t.Errorf("round trip of %d bytes: %v", n, err)
		}
	}
	if _, err := EncodeFrame(Event{Tag: ""}); !errors.Is(err, ErrEmptyTag) {
		t.Errorf("empty tag: %v", err)
	}
}

func TestDecodeFrameVariants(t *testing.T) {
	data, _ := payload.MarshalBin(payload.NewMap("k", "v"))
	body := append([]byte("my/tag\n\n"), data...)
	// A Python peer might send a head with content or a str body.
	withHead, _ := payload.MarshalBin(payload.NewMap("head", payload.NewMap("mid", int64(7)), "body", body))
	strBody, _ := payload.Marshal(payload.NewMap("head", payload.NewMap(), "body", body))
	bodyFirst, _ := payload.MarshalBin(payload.NewMap("body", body, "head", payload.NewMap()))
	for name, f := range map[string][]byte{"head": withHead, "str body": strBody, "body first": bodyFirst} {
		ev, err := DecodeFrame(f)
		if err != nil || ev.Tag != "my/tag" || ev.Data.Str("k") != "v" {
			t.Errorf("%s: %v %q %v", name, err, ev.Tag, ev.Data)
		}
	}
	// The tag ends at the first separator.
	f := AppendFrame(nil, "a\nb", data)
	if ev, err := DecodeFrame(f); err != nil || ev.Tag != "a\nb" {
		t.Errorf("tag with newline: %v %q", err, ev.Tag)
	}
}

func TestDecodeFrameErrors(t *testing.T) {
	good, _ := payload.MarshalBin(payload.NewMap("k", "v"))
	frame := func(v any) []byte {
		b, err := payload.MarshalBin(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := map[string][]byte{
		"not a map":       frame([]any{"x"}),
		"no body":         frame(payload.NewMap("head", payload.NewMap())),
		"int body":        frame(payload.NewMap("body", int64(3))),
		"no separator":    AppendFrame(nil, "t", nil)[:len(frameHead)+2],
		"data not a map":  AppendFrame(nil, "t", frame([]any{int64(1)})),
		"garbage data":    AppendFrame(nil, "t", []byte{0xc1}),
		"truncated data":  AppendFrame(nil, "t", good[:len(good)-1]),
		"trailing bytes":  append(AppendFrame(nil, "t", good), 0x00),
		"int key":         frame(payload.NewMap(int64(1), "x")),
		"empty":           {},
		"truncated frame": AppendFrame(nil, "t", good)[:10],
	}
	for name, f := range tests {
		if _, err := DecodeFrame(f); !errors.Is(err, ErrBadFrame) {
			t.Errorf("%s: err = %v, want ErrBadFrame", name, err)
		}
	}
}

func TestFrameReaderPartialReads(t *testing.T) {
	var stream []byte
	var want []string
	for i, size := range []int{0, 10, 300, 70000, 5, 200000} {
		tag := strings.Repeat("t", i+1)
		stream = append(stream, mustFrame(t, tag, payload.NewMap("s", strings.Repeat("x", size), "n", int64(i)))...)
		want = append(want, tag)
	}
	readers := map[string]io.Reader{
		"one byte": iotest.OneByteReader(bytes.NewReader(stream)),
		"half":     iotest.HalfReader(bytes.NewReader(stream)),
		"whole":    bytes.NewReader(stream),
	}
	for name, r := range readers {
		fr := NewFrameReader(r, 1<<20)
		for i, tag := range want {
			ev, err := fr.Next()
			if err != nil {
				t.Fatalf("%s: frame %d: %v", name, i, err)
			}
			if ev.Tag != tag {
				t.Fatalf("%s: frame %d tag %q", name, i, ev.Tag)
			}
			if n, _ := ev.Data.Int("n"); n != int64(i) {
				t.Fatalf("%s: frame %d data %s", name, i, mapJSON(ev.Data))
			}
		}
		if _, err := fr.Next(); err != io.EOF {
			t.Errorf("%s: end: %v", name, err)
		}
	}
}

func TestFrameReaderErrors(t *testing.T) {
	good := mustFrame(t, "ok", payload.NewMap("a", int64(1)))
	badContent, _ := payload.MarshalBin(payload.NewMap("head", payload.NewMap()))
	hugeBin := append(append([]byte{}, frameHead[:]...), 0xc6, 0x10, 0, 0, 0) // 256 MiB body
	hugeMap := []byte{0xdf, 0xff, 0xff, 0xff, 0xff}
	deep := bytes.Repeat([]byte{0x91}, 100000) // arrays nested far too deep
	deep = append([]byte{0x81, 0xa1, 'x'}, deep...)

	tests := []struct {
		name   string
		stream []byte
		first  error // error of the first Next (after any good frames)
		sticky bool
	}{
		{"garbage", []byte("hello world"), ErrBadFrame, true},
		{"reserved code", []byte{0x81, 0xc1, 0x00}, ErrBadFrame, true},
		{"huge bin", hugeBin, ErrFrameTooLarge, true},
		{"huge map", hugeMap, ErrFrameTooLarge, true},
		{"deep", deep, io.ErrUnexpectedEOF, true},
		{"truncated", good[:len(good)-3], io.ErrUnexpectedEOF, true},
		{"bad content then good", append(append([]byte{}, badContent...), good...), ErrBadFrame, false},
	}
	for _, tc := range tests {
		fr := NewFrameReader(bytes.NewReader(tc.stream), 1<<20)
		_, err := fr.Next()
		if !errors.Is(err, tc.first) {
			t.Errorf("%s: first error %v, want %v", tc.name, err, tc.first)
			continue
		}
		ev, err := fr.Next()
		if tc.sticky {
			if err == nil || err == io.EOF {
				t.Errorf("%s: second Next = %v, %v; want the sticky error", tc.name, ev.Tag, err)
			}
		} else if err != nil || ev.Tag != "ok" {
			t.Errorf("%s: frame after bad content: %q %v", tc.name, ev.Tag, err)
		}
	}
}

// errReader returns a temporary error between chunks of data, as a
// connection with a read deadline does.
type errReader struct {
	chunks [][]byte
	i      int
}

var errTemp = errors.New("temporary")

func (r *errReader) Read(p []byte) (int, error) {
	if r.i >= 2*len(r.chunks) {
		return 0, io.EOF
	}
	i := r.i
	r.i++
	if i%2 == 1 {
		return 0, errTemp
	}
	return copy(p, r.chunks[i/2]), nil
}

func TestFrameReaderResumesAfterReadError(t *testing.T) {
	f := mustFrame(t, "resume", payload.NewMap("a", "b"))
	r := &errReader{chunks: [][]byte{f[:5], f[5:20], f[20:]}}
	fr := NewFrameReader(r, 0)
	var errs int
	for {
		ev, err := fr.Next()
		if errors.Is(err, errTemp) {
			errs++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Tag != "resume" || ev.Data.Str("a") != "b" {
			t.Fatalf("got %q %v", ev.Tag, ev.Data)
		}
		break
	}
	if errs != 2 {
		t.Errorf("saw %d temporary errors, want 2", errs)
	}
}

func FuzzFrameReader(f *testing.F) {
	good := mustFrame(f, "salt/job/1/ret/m", payload.NewMap("return", true, "l", []any{int64(1), "x", nil}, "b", []byte{0xff}))
	f.Add(good)
	f.Add(append(append([]byte{}, good...), good...))
	f.Add(good[:len(good)/2])
	f.Add([]byte{0x82, 0xa4, 'b', 'o', 'd', 'y', 0xc4, 0x03, 'a', '\n', '\n'})
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fr := NewFrameReader(iotest.HalfReader(bytes.NewReader(in)), 1<<16)
		for i := 0; i < len(in)+2; i++ {
			ev, err := fr.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				if errors.Is(err, ErrBadFrame) && fr.err == nil {
					continue // bad content, stream still in sync
				}
				return
			}
			// Whatever decodes must re-encode and decode to the same tag.
			if strings.Contains(ev.Tag, TagEnd) {
				t.Fatalf("decoded tag contains the separator: %q", ev.Tag)
			}
			if ev.Tag == "" {
				continue
			}
			f2, err := EncodeFrame(ev)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			ev2, err := DecodeFrame(f2)
			if err != nil || ev2.Tag != ev.Tag || ev2.Data.Len() != ev.Data.Len() {
				t.Fatalf("round trip: %v %q %q", err, ev.Tag, ev2.Tag)
			}
		}
		t.Fatalf("reader did not terminate on %d bytes", len(in))
	})
}

// Package event is gsalt's event bus: an in-process publish/subscribe hub
// with Salt's event semantics (tags, _stamp, max_event_size trimming, tag
// matching), plus the Unix-socket IPC protocol Salt 3006 uses for
// master_event_pub.ipc and master_event_pull.ipc, so that Salt's own tools
// (the salt CLI, salt-run state.event) can read and write a gsalt master's
// bus.
//
// Wire format (SALT-WIRE.md §9.2): the socket stream is a concatenation of
// msgpack maps {"head": {}, "body": <bin>} packed with use_bin_type=True,
// where body is the UTF-8 tag, "\n\n", then the msgpack (use_bin_type=True)
// encoding of the data map.
package event

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// Sentinel errors callers may branch on.
var (
	// ErrClosed is returned when the bus, server or client is closed.
	ErrClosed = errors.New("event: closed")
	// ErrEmptyTag is returned when firing an event without a tag (Salt
	// refuses those too).
	ErrEmptyTag = errors.New("event: empty tag")
	// ErrBadTag is returned for a tag containing the "\n\n" separator,
	// which would make the frame undecodable.
	ErrBadTag = errors.New("event: tag contains the \\n\\n separator")
	// ErrBadFrame wraps every frame decoding failure.
	ErrBadFrame = errors.New("event: malformed frame")
	// ErrFrameTooLarge is returned (wrapping ErrBadFrame) when a frame
	// exceeds the configured maximum size.
	ErrFrameTooLarge = fmt.Errorf("%w: frame too large", ErrBadFrame)
	// ErrNotSocket is returned by ServeIPC when a socket path exists and
	// is not a socket.
	ErrNotSocket = errors.New("event: path exists and is not a socket")
)

// StampKey is the data key the publisher adds with the event time.
const StampKey = "_stamp"

// TagEnd separates the tag from the packed data in a frame body.
const TagEnd = "\n\n"

// DefaultMaxEventSize is Salt's default max_event_size (1 MiB).
const DefaultMaxEventSize = 1048576

// Event is one bus event: a tag and its data map. Data delivered to
// subscribers is shared between them and must be treated as read-only.
type Event struct {
	Tag  string
	Data *payload.Map
}

// Tagify builds a namespaced tag the way salt.utils.event.tagify does with
// the default base "salt": "salt/<prefix>/<suffix...>". suffix may be a
// string, a []string or a []any (each element rendered like Python's str(),
// so nil becomes "None"); any other value is rendered as one part. Empty
// parts are left out: Tagify("", "wheel") is "salt/wheel". (Salt's table
// of known prefixes maps each one to itself, so prefix is used as given.)
func Tagify(suffix any, prefix string) string {
	// On the stack for up to 8 parts: the master tags every return.
	var buf [8]string
	parts := append(buf[:0], "salt", prefix)
	switch s := suffix.(type) {
	case []string:
		parts = append(parts, s...)
	case []any:
		for _, v := range s {
			parts = append(parts, payload.KeyString(v))
		}
	case string:
		parts = append(parts, s)
	default:
		parts = append(parts, payload.KeyString(s))
	}
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "/")
}

// Stamp renders t in UTC like Python's datetime.utcnow().isoformat():
// "2006-01-02T15:04:05.000000", without a zone and without the fraction
// when the microseconds are zero. Sub-microsecond digits are truncated.
func Stamp(t time.Time) string {
	t = t.UTC()
	// One allocation (the string): every return fires an event with a
	// stamp, and Format plus Sprintf made four. The digits are written
	// here (AppendFormat parses its layout each time: ~10x slower).
	var buf [32]byte
	var b []byte
	if y := t.Year(); y >= 0 && y <= 9999 {
		yr, mo, d := t.Date()
		h, mi, sec := t.Clock()
		b = appendDigits(buf[:0], yr, 4)
		b = appendDigits(append(b, '-'), int(mo), 2)
		b = appendDigits(append(b, '-'), d, 2)
		b = appendDigits(append(b, 'T'), h, 2)
		b = appendDigits(append(b, ':'), mi, 2)
		b = appendDigits(append(b, ':'), sec, 2)
		b = appendDigits(append(b, '.'), t.Nanosecond()/1000, 6)
	} else {
		b = t.AppendFormat(buf[:0], "2006-01-02T15:04:05.000000")
	}
	if t.Nanosecond() < 1000 {
		// No microseconds: isoformat() leaves the fraction out.
		b = b[:len(b)-len(".000000")]
	}
	return string(b)
}

// appendDigits appends v (0 <= v < 10^width) as width decimal digits.
func appendDigits(b []byte, v, width int) []byte {
	n := len(b) + width
	b = append(b, "000000"[:width]...)
	for i := n - 1; i >= n-width; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

// checkTag validates a tag for firing.
func checkTag(tag string) error {
	if tag == "" {
		return ErrEmptyTag
	}
	if strings.Contains(tag, TagEnd) {
		return fmt.Errorf("%w: %q", ErrBadTag, tag)
	}
	return nil
}

// prepare returns the event as it goes on the bus: a non-nil data map with
// _stamp set (added on a shallow copy when missing, so the caller's map is
// not modified), trimmed to maxSize (0 or less: no trimming), and its
// msgpack (use_bin_type=True) encoding.
func prepare(ev Event, now time.Time, maxSize int) (Event, []byte, error) {
	return prepareData(ev, now, maxSize, false)
}

// prepareData is prepare; with own the caller hands ev.Data over and a
// missing _stamp is set on it instead of on a copy.
func prepareData(ev Event, now time.Time, maxSize int, own bool) (Event, []byte, error) {
	if err := checkTag(ev.Tag); err != nil {
		return Event{}, nil, err
	}
	data := ev.Data
	if data == nil {
		data = &payload.Map{}
	}
	if !data.Has(StampKey) {
		if !own {
			data = data.Clone()
			if data == nil {
				data = &payload.Map{}
			}
		}
		data.Set(StampKey, Stamp(now))
	}
	packed, err := payload.MarshalBin(data)
	if err != nil {
		return Event{}, nil, fmt.Errorf("event: encode data for %q: %w", ev.Tag, err)
	}
	if maxSize > 0 && needsTrim(len(packed), maxSize) {
		data, packed, err = trimPacked(packed, maxSize)
		if err != nil {
			return Event{}, nil, fmt.Errorf("event: trim data for %q: %w", ev.Tag, err)
		}
	}
	return Event{Tag: ev.Tag, Data: data}, packed, nil
}

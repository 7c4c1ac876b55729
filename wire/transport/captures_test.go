package transport

import (
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/gsalt/gsalt/internal/vectors"
)

// TestCaptureStreams runs the byte streams of the five pcaps recorded from a
// real Salt 3006 (libzmq 4.3.4) through the guard's ZMTP parser, one stream
// per TCP connection and direction: every greeting, READY/SUBSCRIBE command
// and message frame must be accepted whole, at the record boundaries the
// capture decoder found, with the socket types libzmq announced.
func TestCaptureStreams(t *testing.T) {
	type stream struct {
		p       *parser
		skipped bool
	}
	units := 0
	for _, name := range []string{"testping", "startup_and_testping", "auth_accept", "pending_auth", "reactor"} {
		recs, err := vectors.ReadJSONL(vectors.Path("captures", name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		streams := map[string]*stream{}
		for _, r := range recs {
			key := r.Str("conn") + " " + r.Str("dir")
			st := streams[key]
			if st == nil {
				st = &stream{p: &parser{lim: DefaultLimits(), peers: []string{"REQ", "ROUTER", "DEALER", "PUB", "SUB"}, translateSubs: true}}
				// Long-lived SUB connections opened before the capture
				// started have no greeting: nothing to check there.
				st.skipped = r.Str("type") != "greeting"
				streams[key] = st
			}
			if st.skipped {
				continue
			}
			raw, _ := hex.DecodeString(r.Str("raw"))
			var flags []int
			_ = r.Unmarshal("frame_flags", &flags)
			want := 1
			if r.Str("type") == "message" {
				want = len(flags)
			}
			off := 0
			for i := 0; i < want; i++ {
				v, n, _, err := st.p.step(raw[off:])
				if err != nil {
					t.Fatalf("%s line %d (%s): %v", name, r.Line, r.Str("type"), err)
				}
				if v == vNeed {
					t.Fatalf("%s line %d: parser wants %d bytes of a %d-byte record", name, r.Line, n, len(raw)-off)
				}
				off += n
			}
			if off != len(raw) {
				t.Fatalf("%s line %d: record of %d bytes, parser consumed %d", name, r.Line, len(raw), off)
			}
			if r.Str("name") == "READY" {
				var props map[string]string
				_ = json.Unmarshal(r.Fields["properties"], &props)
				if st.p.peerType != props["Socket-Type"] {
					t.Fatalf("%s line %d: peer type %q, capture says %q", name, r.Line, st.p.peerType, props["Socket-Type"])
				}
			}
			units++
		}
	}
	if units < 400 {
		t.Fatalf("only %d records checked", units)
	}
}

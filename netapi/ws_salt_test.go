package netapi_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/netapi"
)

// rawWS is a minimal websocket client for comparing servers: it records
// each frame's first byte (FIN, RSV bits, opcode) instead of failing on
// bits a strict client refuses, so salt-api's frames can be read too.
type rawWS struct {
	conn net.Conn
	r    *bufio.Reader
	msgs chan wsFrame
}

type wsFrame struct {
	head byte
	text string
}

// dialRaw opens path on base (http://host:port) with a websocket
// handshake; it returns the HTTP status and, on 101, the connection.
func dialRaw(t *testing.T, base, path string) (int, *rawWS) {
	t.Helper()
	host := strings.TrimPrefix(base, "http://")
	conn, err := net.DialTimeout("tcp", host, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		path, host, base64.StdEncoding.EncodeToString(key))
	_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		conn.Close()
		return 0, nil
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		resp.Body.Close()
		conn.Close()
		return resp.StatusCode, nil
	}
	_ = conn.SetReadDeadline(time.Time{})
	ws := &rawWS{conn: conn, r: r, msgs: make(chan wsFrame, 1024)}
	t.Cleanup(func() { conn.Close() })
	go ws.readLoop()
	return resp.StatusCode, ws
}

func (w *rawWS) readLoop() {
	defer close(w.msgs)
	for {
		var h [2]byte
		if _, err := io.ReadFull(w.r, h[:]); err != nil {
			return
		}
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(w.r, b[:]); err != nil {
				return
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(w.r, b[:]); err != nil {
				return
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		if n > 1<<22 {
			return
		}
		var mask [4]byte
		if h[1]&0x80 != 0 {
			if _, err := io.ReadFull(w.r, mask[:]); err != nil {
				return
			}
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(w.r, p); err != nil {
			return
		}
		if h[1]&0x80 != 0 {
			for i := range p {
				p[i] ^= mask[i%4]
			}
		}
		w.msgs <- wsFrame{head: h[0], text: string(p)}
	}
}

// send writes one masked text frame.
func (w *rawWS) send(text string) error {
	p := []byte(text)
	hdr := []byte{0x81}
	switch {
	case len(p) < 126:
		hdr = append(hdr, 0x80|byte(len(p)))
	default:
		hdr = append(hdr, 0x80|126, byte(len(p)>>8), byte(len(p)))
	}
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	hdr = append(hdr, mask[:]...)
	for i := range p {
		p[i] ^= mask[i%4]
	}
	_, err := w.conn.Write(append(hdr, p...))
	return err
}

// poll returns the first text frame for which match is true, or false
// when none came within the time.
func (w *rawWS) poll(within time.Duration, match func(string) bool) (wsFrame, bool) {
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		select {
		case f, ok := <-w.msgs:
			if !ok {
				return wsFrame{}, false
			}
			if f.head&0x0f == 1 && match(f.text) {
				return f, true
			}
		case <-timer.C:
			return wsFrame{}, false
		}
	}
}

// next returns the first text frame for which match is true.
func (w *rawWS) next(t *testing.T, within time.Duration, what string, match func(string) bool) wsFrame {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	var seen []string
	for {
		select {
		case f, ok := <-w.msgs:
			if !ok {
				t.Fatalf("websocket closed while waiting for %s; frames seen: %q", what, seen)
			}
			if f.head&0x0f == 1 && match(f.text) {
				return f
			}
			if len(seen) < 20 {
				seen = append(seen, fmt.Sprintf("%#x %.200s", f.head, f.text))
			}
		case <-timer.C:
			t.Fatalf("no %s on the websocket within %s; frames seen: %q", what, within, seen)
		}
	}
}

// keysOf lists a JSON object's keys and, one level down, the keys of its
// object values ("k", "k.sub"), sorted.
func keysOf(v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	for k, val := range m {
		out = append(out, k)
		if sub, ok := val.(map[string]any); ok {
			for sk := range sub {
				out = append(out, k+"."+sk)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestWebsocketAgainstSaltAPI opens /ws/<token> on Salt 3006's salt-api
// (with Debian's python3-ws4py) and on gsalt-api, both in front of one
// gsalt master, and compares them: the status with a bad token, the
// acknowledgement of "websocket client ready", and the frames of one job
// (raw events as "data: {json}\n\n" with the same tag and data;
// format_events summaries equal apart from jids and times).
//
// The test reads frames with its own small client because
// github.com/coder/websocket refuses salt-api's connection ("received
// header with unexpected rsv bits set"); the frames checked here are
// plain 0x81 text frames on both servers.
func TestWebsocketAgainstSaltAPI(t *testing.T) {
	src := saltpeer.Require(t)
	if err := saltpeer.PythonCommand(context.Background(), src, "import ws4py").Run(); err != nil {
		t.Skip("salt-api's /ws needs python3-ws4py (apt-get install python3-ws4py); skipping the /ws comparison")
	}
	cfg, _, dir := startMasterMinion(t)
	salt := startSaltAPI(t, src, cfg, dir)
	o, err := netapi.OptionsFrom(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	go netapi.New(cfg, o, quiet(), quiet()).Serve(ctx, ln)
	g := &apiEnv{t: t, base: "http://" + ln.Addr().String(), hc: &http.Client{Timeout: 60 * time.Second}}
	envs := []*apiEnv{salt, g}
	names := []string{"salt-api", "gsalt-api"}

	var codes [2]int
	for i, e := range envs {
		codes[i], _ = dialRaw(t, e.base, "/ws/deadbeef")
	}
	if codes[0] != codes[1] || codes[1] != http.StatusUnauthorized {
		t.Errorf("/ws/deadbeef: status salt-api %d, gsalt-api %d, want 401", codes[0], codes[1])
	}

	for _, format := range []bool{false, true} {
		var streams [2]*rawWS
		for i, e := range envs {
			path := "/ws/" + e.login("fred", "auto", "x")
			if format {
				path += "?format_events"
			}
			code, ws := dialRaw(t, e.base, path)
			if ws == nil {
				t.Fatalf("%s %s: status %d", names[i], path, code)
			}
			if err := ws.send("websocket client ready"); err != nil {
				t.Fatal(err)
			}
			streams[i] = ws
			ack := ws.next(t, 60*time.Second, "acknowledgement", func(string) bool { return true })
			if ack.text != "server received message" {
				t.Errorf("%s: acknowledgement %q", names[i], ack.text)
			}
			if ack.head != 0x81 {
				t.Errorf("%s: acknowledgement frame starts with %#x, want 0x81 (FIN, text)", names[i], ack.head)
			}
		}
		// One job at a time, published through gsalt-api: both streams
		// watch the same master bus. salt-api subscribes to the bus only
		// after its acknowledgement, so early jobs may be missed: publish
		// again until both streams have seen the same job.
		tok := g.login("fred", "auto", "x")
		var frames [2]any
		var heads [2]byte
		deadline := time.Now().Add(150 * time.Second)
		for got := 0; got < 2; {
			if time.Now().After(deadline) {
				t.Fatalf("format_events=%v: no job seen on both websockets", format)
			}
			code, _, b := g.do("POST", "/", tok, "", []any{map[string]any{"client": "local_async", "tgt": "m1", "fun": "test.echo", "arg": "ws-compare"}})
			if code != 200 {
				t.Fatalf("local_async: %d %s", code, b)
			}
			jid := jidRE.FindString(string(b))
			if jid == "" {
				t.Fatalf("no jid in %s", b)
			}
			match := func(m string) bool { return strings.Contains(m, `salt/job/`+jid+`/ret/m1`) }
			if format {
				// The summary is cumulative: take the frame where this
				// job is complete, and compare that job only.
				match = func(m string) bool {
					var v struct {
						Jobs map[string]struct {
							State string `json:"state"`
							Fun   string `json:"fun"`
						} `json:"jobs"`
					}
					// A stream that subscribed after the job's new-job
					// event has no "fun" for it: wait for the next job.
					return json.Unmarshal([]byte(m), &v) == nil && v.Jobs[jid].State == "complete" && v.Jobs[jid].Fun != ""
				}
			}
			got = 0
			for i, s := range streams {
				f, ok := s.poll(15*time.Second, match)
				if !ok {
					break
				}
				if !format {
					if !strings.HasPrefix(f.text, "data: ") || !strings.HasSuffix(f.text, "\n\n") {
						t.Errorf("%s: frame %q is not \"data: {json}\\n\\n\"", names[i], f.text)
					}
					f.text = strings.TrimSuffix(strings.TrimPrefix(f.text, "data: "), "\n\n")
				}
				var v any
				if err := json.Unmarshal([]byte(f.text), &v); err != nil {
					t.Fatalf("%s: %q: %v", names[i], f.text, err)
				}
				if format {
					v = v.(map[string]any)["jobs"].(map[string]any)[jid]
				}
				frames[i], heads[i] = v, f.head
				got++
			}
		}
		if heads[1] != 0x81 {
			t.Errorf("gsalt-api text frame starts with %#x, want 0x81 (FIN, no RSV bits, text)", heads[1])
		}
		if heads[0] != heads[1] {
			t.Errorf("frame first byte: salt-api %#x, gsalt-api %#x", heads[0], heads[1])
		}
		if format {
			if !reflect.DeepEqual(normalize(frames[0]), normalize(frames[1])) {
				sb, _ := json.Marshal(frames[0])
				gb, _ := json.Marshal(frames[1])
				t.Errorf("format_events summary differs\nsalt-api:  %s\ngsalt-api: %s", sb, gb)
			}
			continue
		}
		if a, b := keysOf(frames[0]), keysOf(frames[1]); !reflect.DeepEqual(a, b) {
			t.Errorf("event keys differ\nsalt-api:  %v\ngsalt-api: %v", a, b)
		}
		sm, _ := frames[0].(map[string]any)
		gm, _ := frames[1].(map[string]any)
		if sm["tag"] != gm["tag"] {
			t.Errorf("tag: salt-api %v, gsalt-api %v", sm["tag"], gm["tag"])
		}
		if !reflect.DeepEqual(normalize(sm["data"]), normalize(gm["data"])) {
			t.Errorf("data differs\nsalt-api:  %v\ngsalt-api: %v", sm["data"], gm["data"])
		}
	}
}

package transport

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Interop with libzmq 4.3 through python3-zmq, the stack Salt 3006 runs on.

const pySubs = `
import sys, zmq, json
ctx = zmq.Context()
a = ctx.socket(zmq.SUB); a.setsockopt(zmq.IDENTITY, b"minion1"); a.setsockopt(zmq.SUBSCRIBE, b"")
b = ctx.socket(zmq.SUB); b.setsockopt(zmq.SUBSCRIBE, b"broadcast")
for s in (a, b):
    s.setsockopt(zmq.RCVTIMEO, 10000); s.connect(sys.argv[1])
for s in (a, b):
    while s.recv_multipart()[-1] != b"probe": pass
print("synced", flush=True)
out = {}
for name, s in (("a", a), ("b", b)):
    out[name] = []
    while True:
        m = s.recv_multipart()
        if m[-1] == b"probe": continue
        if m[-1] == b"end": break
        out[name].append([f.hex() for f in m])
print(json.dumps(out), flush=True)
`

// TestInteropLibzmqSubFromOurPub: libzmq SUB sockets (subscribe-all with an
// identity, and a "broadcast" topic) receive our PUB's one- and multi-frame
// messages, with libzmq's 3.0-style subscriptions honoured.
func TestInteropLibzmqSubFromOurPub(t *testing.T) {
	needPython(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pub := listenPub(t, "127.0.0.1:0", PubOptions{})
	py := startPython(t, ctx, pySubs, "tcp://"+pub.Addr().String())
	for done := false; !done; {
		_ = pub.Publish([]byte("broadcast"), []byte("probe"))
		select {
		case l, ok := <-py.lines:
			if l != "synced" || !ok {
				t.Fatalf("python: %q; stderr:\n%s", l, py.stderr.String())
			}
			done = true
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("libzmq subscribers never synced")
		}
	}
	msgs := [][][]byte{
		{[]byte("\x83\xa3enc\xa3aes")},                                    // a only (zmq_filtering off)
		{[]byte("broadcast"), []byte("both")},                             // a and b
		{[]byte("0123456789abcdef0123456789abcdef01234567"), []byte("x")}, // a only
		{bytes.Repeat([]byte{7}, 300<<10)},                                // a only, long frame
		{[]byte("broadcast"), []byte("end")},
	}
	for _, m := range msgs {
		if err := pub.Publish(m...); err != nil {
			t.Fatal(err)
		}
	}
	var got map[string][][]string
	if err := json.Unmarshal([]byte(py.line(t, 20*time.Second)), &got); err != nil {
		t.Fatal(err)
	}
	hexes := func(m [][]byte) []string {
		var out []string
		for _, f := range m {
			out = append(out, hex.EncodeToString(f))
		}
		return out
	}
	want := map[string][][]string{
		"a": {hexes(msgs[0]), hexes(msgs[1]), hexes(msgs[2]), hexes(msgs[3])},
		"b": {hexes(msgs[1])},
	}
	for k := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(want[k]) {
			t.Errorf("libzmq SUB %s received %d messages %.200v, want %d", k, len(got[k]), got[k], len(want[k]))
		}
	}
}

const pyReqs = `
import sys, zmq
ctx = zmq.Context()
addr, n = sys.argv[1], int(sys.argv[2])
for i in range(n):   # Salt's minion: a new REQ socket for every request
    s = ctx.socket(zmq.REQ); s.setsockopt(zmq.LINGER, 0); s.setsockopt(zmq.RCVTIMEO, 5000)
    s.connect(addr)
    body = b"req-%d" % i
    s.send(body)
    r = s.recv()
    assert r == b"re:" + body, (r, body)
    s.close()
d = ctx.socket(zmq.DEALER); d.setsockopt(zmq.RCVTIMEO, 5000); d.connect(addr)
for i in range(n):   # long-lived DEALER, pipelined
    d.send_multipart([b"", b"deal-%d" % i])
seen = set()
for i in range(n):
    e, r = d.recv_multipart()
    assert e == b"", e
    seen.add(r)
assert seen == {b"re:deal-%d" % i for i in range(n)}, seen
big = ctx.socket(zmq.REQ); big.setsockopt(zmq.RCVTIMEO, 5000); big.connect(addr)
body = b"B" * (2 << 20)
big.send(body)
assert big.recv() == b"re:" + body
print("ok", flush=True)
`

// TestInteropLibzmqReqToOurRouter: libzmq REQ sockets, new for every request
// as Salt's minion makes them, a long-lived pipelining DEALER and a 2 MiB
// request, all answered by our ReqServer.
func TestInteropLibzmqReqToOurRouter(t *testing.T) {
	needPython(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := listenReq(t, "127.0.0.1:0", echo, ReqOptions{})
	py := startPython(t, ctx, pyReqs, "tcp://"+srv.Addr().String(), "50")
	if l := py.line(t, 25*time.Second); l != "ok" {
		t.Fatalf("python: %q", l)
	}
}

const pyRouter = `
import sys, zmq
ctx = zmq.Context()
s = ctx.socket(zmq.ROUTER)
port = s.bind_to_random_port("tcp://127.0.0.1")
print(port, flush=True)
while True:
    ident, empty, body = s.recv_multipart()
    assert empty == b""
    s.send_multipart([ident, b"", b"lib:" + body])
`

// TestInteropOurReqToLibzmqRouter: our fresh-connection REQ against a libzmq
// ROUTER, through Request and ReqClient.
func TestInteropOurReqToLibzmqRouter(t *testing.T) {
	needPython(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	py := startPython(t, ctx, pyRouter)
	addr := "127.0.0.1:" + py.line(t, 10*time.Second)
	for i := range 20 {
		req := fmt.Sprintf("r%d", i)
		got, err := Request(ctx, addr, []byte(req), 5*time.Second)
		if err != nil || string(got) != "lib:"+req {
			t.Fatalf("Request %d = %q, %v", i, got, err)
		}
	}
	c := &ReqClient{Addr: "tcp://" + addr, Timeout: 5 * time.Second, Logger: testLogger(t)}
	big := bytes.Repeat([]byte("z"), 1<<20)
	got, err := c.Send(ctx, big)
	if err != nil || !bytes.Equal(got, append([]byte("lib:"), big...)) {
		t.Fatalf("ReqClient.Send: %d bytes, %v", len(got), err)
	}
}

const pyPub = `
import sys, zmq, time
ctx = zmq.Context()
s = ctx.socket(zmq.PUB)
if sys.argv[1] == "0":
    port = s.bind_to_random_port("tcp://127.0.0.1")
else:
    port = int(sys.argv[1]); s.bind("tcp://127.0.0.1:%d" % port)
print(port, flush=True)
tag, i = sys.argv[2].encode(), 0
while True:
    s.send_multipart([b"broadcast", tag, b"%d" % i])
    s.send_multipart([b"other", tag])
    s.send(b"\x83" + tag)
    i += 1
    time.sleep(0.01)
`

// TestInteropOurSubFromLibzmqPub: our Subscriber receives a libzmq PUB's
// messages (topic filtering done by libzmq from our 3.0 subscriptions), and
// after the libzmq publisher is killed and restarted on the same port it
// reconnects, re-subscribes and reports Reconnected.
func TestInteropOurSubFromLibzmqPub(t *testing.T) {
	needPython(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	py := startPython(t, ctx, pyPub, "0", "gen1")
	port := py.line(t, 10*time.Second)
	addr := "127.0.0.1:" + port
	all := dialSub(t, addr, SubOptions{Identity: []byte("minion1")})
	filtered := dialSub(t, addr, SubOptions{Topics: [][]byte{[]byte("broadcast")}})

	// expect waits for a message carrying tag on s and checks filtering.
	expect := func(s *Subscriber, tag string, onlyBroadcast bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		kinds := map[string]bool{}
		for time.Now().Before(deadline) && len(kinds) < 3 {
			m := recvTimeout(t, s, 15*time.Second)
			if onlyBroadcast && string(m[0]) != "broadcast" {
				t.Fatalf("filtered subscriber got %q", m)
			}
			if !strings.Contains(string(bytes.Join(m, nil)), tag) {
				continue // older generation still queued
			}
			kinds[fmt.Sprint(len(m), string(m[0][:1]))] = true
			if onlyBroadcast && len(kinds) == 1 {
				return
			}
		}
		if len(kinds) < 3 {
			t.Fatalf("saw message kinds %v for %s", kinds, tag)
		}
	}
	expect(all, "gen1", false)
	expect(filtered, "gen1", true)

	py.kill()
	py2 := startPython(t, ctx, pyPub, port, "gen2")
	if l := py2.line(t, 10*time.Second); l != port {
		t.Fatalf("restarted publisher bound %q, want %s", l, port)
	}
	expect(all, "gen2", false)
	expect(filtered, "gen2", true)
	for _, s := range []*Subscriber{all, filtered} {
		select {
		case <-s.Reconnected():
		case <-time.After(5 * time.Second):
			t.Fatal("Reconnected did not fire")
		}
	}
}

const pyIdlePub = `
import zmq, time
ctx = zmq.Context()
s = ctx.socket(zmq.PUB)
print(s.bind_to_random_port("tcp://127.0.0.1"), flush=True)
time.sleep(60)
`

// TestInteropLibzmqAnswersHeartbeat: libzmq answers our ZMTP PINGs even
// though zmq4 announces ZMTP 3.0, so SubOptions.Heartbeat is safe against a
// Salt master: an idle libzmq publisher is not mistaken for a dead one.
func TestInteropLibzmqAnswersHeartbeat(t *testing.T) {
	needPython(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	py := startPython(t, ctx, pyIdlePub)
	// 250 ms: the subscriber gives up after 750 ms without a read. A 50 ms
	// heartbeat (150 ms) failed about one run in four on a loaded 2-core
	// machine, where a process can wait that long for a core.
	sub := dialSub(t, "127.0.0.1:"+py.line(t, 10*time.Second), SubOptions{Heartbeat: 250 * time.Millisecond})
	select {
	case <-sub.Connected():
	case <-time.After(10 * time.Second):
		t.Fatal("not connected")
	}
	time.Sleep(2500 * time.Millisecond) // the behaviour under test: 10 heartbeat intervals without data
	if n := sub.Reconnects(); n != 0 {
		t.Fatalf("Reconnects() = %d: libzmq did not answer PING", n)
	}
}

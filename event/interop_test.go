package event

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// pySaltEvent talks to our sockets through Salt's own MasterEvent:
// it trims the given cases with salt.utils.dicttrim, reads one event from
// master_event_pub.ipc and fires two into master_event_pull.ipc.
const pySaltEvent = `
import json, sys
sock_dir, trim_in, trim_out = sys.argv[1:4]
import salt.payload
import salt.utils.dicttrim
import salt.utils.event

def jdefault(o):
    if isinstance(o, bytes):
        return {"__bytes__": o.hex()}
    raise TypeError(repr(o))

with open(trim_in, "rb") as f:
    cases = salt.payload.loads(f.read(), encoding="utf-8")
out = [salt.utils.dicttrim.trim_dict(packed, mx, is_msgpacked=True, use_bin_type=True)
       for mx, packed in cases]
with open(trim_out, "wb") as f:
    f.write(salt.payload.dumps(out, use_bin_type=True))

opts = {"sock_dir": sock_dir, "transport": "zeromq", "ipc_mode": "ipc", "max_event_size": 4000}
ev = salt.utils.event.get_master_event(opts, sock_dir, listen=True)
print("READY", flush=True)
got = ev.get_event(wait=20, tag="gsalt/to/python", full=True)
print("EVENT " + json.dumps(got, default=jdefault), flush=True)
data = {"str": "hello", "unicode": "h\u00e9llo \u2603", "int": 42, "neg": -7, "big": 2**40,
        "float": 1.5, "bool": True, "none": None, "list": [1, "two", [3]],
        "nested": {"a": {"b": "c"}}, "bytes": b"\x00\xff", 1: "intkey"}
ok1 = ev.fire_event(data, "gsalt/from/python")
ok2 = ev.fire_event({"big": "x" * 10000, "small": "ok"}, "gsalt/from/python/big")
print("FIRED", ok1, ok2, flush=True)
ev.destroy()
`

// jsonView converts a payload value to what the Python side prints with
// json.dumps (bytes as {"__bytes__": hex}).
func jsonView(v any) any {
	switch x := v.(type) {
	case *payload.Map:
		m := map[string]any{}
		for _, it := range x.Items() {
			m[payload.KeyString(it.Key)] = jsonView(it.Value)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = jsonView(x[i])
		}
		return out
	case []byte:
		return map[string]any{"__bytes__": hex.EncodeToString(x)}
	}
	return v
}

// normJSON round-trips through encoding/json so both sides compare alike.
func normJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInteropSaltPython(t *testing.T) {
	saltSrc := saltpeer.Require(t)
	python := saltpeer.Python()
	pyPath := saltSrc + string(os.PathListSeparator) + saltpeer.Pyshim()

	e := startIPC(t, Options{}, IPCConfig{})
	fromPy := e.bus.Subscribe(Prefix("gsalt/from/python"), 10)

	// dicttrim cases, as [max, packed] pairs.
	cases := trimCases()
	var list []any
	for _, tc := range cases {
		packed, err := payload.MarshalBin(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, []any{int64(tc.max), packed})
	}
	trimIn := filepath.Join(e.dir, "trim.in")
	trimOut := filepath.Join(e.dir, "trim.out")
	blob, _ := payload.MarshalBin(list)
	if err := os.WriteFile(trimIn, blob, 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", pySaltEvent, e.dir, trimIn, trimOut)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pyPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	defer func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("python stderr:\n%s", stderr.String())
		}
	}()
	next := func(prefix string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("python exited before %q", prefix)
			}
			if !strings.HasPrefix(l, prefix) {
				t.Fatalf("python printed %q, want %q...", l, prefix)
			}
			return strings.TrimPrefix(l, prefix)
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %q", prefix)
		}
		return ""
	}

	// (c) Salt's trim_dict agrees with Trim.
	next("READY")
	raw, err := os.ReadFile(trimOut)
	if err != nil {
		t.Fatal(err)
	}
	res, err := payload.Unmarshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	results, _ := res.([]any)
	if len(results) != len(cases) {
		t.Fatalf("python returned %d trim results", len(results))
	}
	for i, tc := range cases {
		pyPacked := payload.Text(results[i])
		goMap, err := Trim(tc.in, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		goPacked, _ := payload.MarshalBin(goMap)
		if pyPacked != string(goPacked) {
			pm, _ := payload.UnmarshalMap([]byte(pyPacked))
			t.Errorf("trim %q: salt %s\ngsalt %s", tc.name, mapJSON(pm), mapJSON(goMap))
		}
	}

	// (a) Salt reads what we publish.
	waitFor(t, "python reader", func() bool { return e.srv.Readers() >= 1 })
	sent := payload.NewMap("str", "héllo ☃", "int", int64(42), "neg", int64(-7), "big", uint64(1<<63),
		"float", 1.5, "bool", true, "none", nil, "list", []any{int64(1), "two", []any{int64(3)}},
		"nested", payload.NewMap("a", payload.NewMap("b", "c")), "bytes", []byte{0, 0xff})
	e.bus.Publish(Event{Tag: "gsalt/to/python", Data: sent})
	var got any
	if err := json.Unmarshal([]byte(next("EVENT ")), &got); err != nil {
		t.Fatal(err)
	}
	withStamp := sent.Clone().Set("_stamp", Stamp(fixedNow))
	want := normJSON(t, map[string]any{"tag": "gsalt/to/python", "data": jsonView(withStamp)})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("salt read\n%v\nwant\n%v", got, want)
	}

	// (b) Salt's fire_event reaches our bus with identical data.
	next("FIRED True True")
	ev := recv(t, fromPy)
	if ev.Tag != "gsalt/from/python" {
		t.Fatalf("tag %q", ev.Tag)
	}
	stamp := ev.Data.Clone()
	st, _ := stamp.Delete("_stamp")
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$`).MatchString(payload.Text(st)) {
		t.Errorf("_stamp %v", st)
	}
	wantData := payload.NewMap("str", "hello", "unicode", "héllo ☃", "int", int64(42), "neg", int64(-7),
		"big", int64(1<<40), "float", 1.5, "bool", true, "none", nil,
		"list", []any{int64(1), "two", []any{int64(3)}}, "nested", payload.NewMap("a", payload.NewMap("b", "c")),
		"bytes", []byte{0, 0xff}, int64(1), "intkey")
	gb, _ := payload.MarshalBin(stamp)
	wb, _ := payload.MarshalBin(wantData)
	if !bytes.Equal(gb, wb) {
		t.Errorf("fired data\n%s\nwant\n%s", mapJSON(stamp), mapJSON(wantData))
	}
	ev = recv(t, fromPy)
	if ev.Tag != "gsalt/from/python/big" || ev.Data.Str("big") != TrimmedValue || ev.Data.Str("small") != "ok" {
		t.Errorf("big event: %q %s", ev.Tag, mapJSON(ev.Data))
	}
}

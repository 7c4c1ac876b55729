package builtin_test

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// statusMasterListener opens a TCP listener on 127.0.0.1 that accepts
// and holds its connections, and one connection to it: an "established
// connection to the master's publish port" both Salt and gsalt see. It
// returns the port and a port nothing listens on.
func statusMasterListener(t *testing.T) (open, closed int) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	conn, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// A port that was free a moment ago and has no connections.
	ln2, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed = ln2.Addr().(*net.TCPAddr).Port
	ln2.Close()
	return ln.Addr().(*net.TCPAddr).Port, closed
}

// TestStatusMasterEvents checks the return and the event status.master
// fires on the minion bus, over a real established TCP connection.
func TestStatusMasterEvents(t *testing.T) {
	open, closed := statusMasterListener(t)
	r := registry(t)
	cases := []struct {
		name    string
		port    int
		args    []any
		want    any
		wantTag string
	}{
		{"connected as expected", open, []any{"127.0.0.1"}, true, ""},
		{"connected, expected not", open, []any{"127.0.0.1", false}, true, "__master_connected"},
		{"localhost resolves", open, []any{"localhost"}, true, ""},
		{"disconnected", closed, []any{"127.0.0.1"}, false, "__master_disconnected"},
		{"disconnected as expected", closed, []any{"127.0.0.1", false}, false, ""},
		{"connected not a bool", open, []any{"127.0.0.1", int64(1)}, true, "__master_connected"},
		{"no master", open, nil, nil, ""},
		{"empty master", open, []any{""}, nil, ""},
		{"unresolvable", open, []any{"no-such-host.invalid"}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bus := &recBus{}
			env := &modules.Env{ID: "m1", Registry: r, Grains: payload.NewMap("kernel", "Linux"),
				Opts: payload.NewMap("publish_port", int64(tc.port)), Services: map[string]any{"events": bus}}
			res := r.Execute(context.Background(), modules.Binder{}, env, "status.master", tc.args, nil)
			if res.Retcode != 0 || res.Return != tc.want {
				t.Fatalf("status.master %v: retcode %d return %#v, want %#v", tc.args, res.Retcode, res.Return, tc.want)
			}
			if tc.wantTag == "" {
				if len(bus.tags) != 0 {
					t.Fatalf("fired %v, want no event", bus.tags)
				}
				return
			}
			if len(bus.tags) != 1 || bus.tags[0] != tc.wantTag {
				t.Fatalf("fired %v, want [%s]", bus.tags, tc.wantTag)
			}
			if got := jsonText(bus.data[0].(*payload.Map)); got != `{"master":"`+payload.Text(tc.args[0])+`"}` {
				t.Fatalf("event data %s", got)
			}
		})
	}
}

// TestStatusMasterLive runs status.master beside Salt 3006 (gated on
// GSALT_SALT_SRC) over the same established connection.
func TestStatusMasterLive(t *testing.T) {
	open, closed := statusMasterListener(t)
	calls := []salttest.Call{
		{Name: "connected", Fun: "status.master", Args: []any{"127.0.0.1"}},
		{Name: "connected expected false", Fun: "status.master", Args: []any{"127.0.0.1"}, Kwargs: []any{"connected", false}},
		{Name: "localhost", Fun: "status.master", Args: []any{"localhost"}},
		{Name: "disconnected", Fun: "status.master", Args: []any{"127.0.0.1"}, Opts: []any{"publish_port", int64(closed)}},
		{Name: "disconnected string port", Fun: "status.master", Args: []any{"127.0.0.1"}, Opts: []any{"publish_port", strconv.Itoa(closed)}},
		{Name: "bad port", Fun: "status.master", Args: []any{"127.0.0.1"}, Opts: []any{"publish_port", "x"}},
		{Name: "none", Fun: "status.master"},
		{Name: "unresolvable", Fun: "status.master", Args: []any{"no-such-host.invalid"}},
	}
	runSuite(t, salttest.Suite{Name: "status_master", Live: true, Grains: linuxGrains(),
		Opts: []any{"publish_port", int64(open)}, Calls: calls})
}

// TestStatusMasterParse checks the two readers of established
// connections: ss output and /proc/net/tcp{,6} tables.
func TestStatusMasterParse(t *testing.T) {
	ss := "State Recv-Q Send-Q Local Address:Port Peer Address:PortProcess\n" +
		"ESTAB 0      0          10.0.0.5:41000      10.0.0.1:4505\n" +
		"ESTAB 0      0      [::ffff:127.0.0.1]:41323 [::ffff:127.0.0.1]:4505\n" +
		"ESTAB 0      0          [fe80::1]:41324      [2001:db8::1]:4505\n" +
		"ESTAB 0      0          10.0.0.5:41001      10.0.0.9:4506\n" +
		"LISTEN 0     128        0.0.0.0:22          0.0.0.0:*\n"
	got, ok := builtin.BuiltinParseSS(ss, 4505)
	if !ok || len(got) != 3 || !got["10.0.0.1"] || !got["::ffff:127.0.0.1"] || !got["2001:db8::1"] {
		t.Fatalf("ss parse: %v %v", got, ok)
	}
	if _, ok := builtin.BuiltinParseSS("garbage\n", 4505); ok {
		t.Fatal("output without a header accepted")
	}
	tcp := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: 0100007F:A028 0100007F:1199 01 00000000:00000000 00:00000000 00000000     0        0 1 1 0 10 0 -1\n" +
		"   1: 0100007F:A029 0200007F:1199 06 00000000:00000000 00:00000000 00000000     0        0 1 1 0 10 0 -1\n" +
		"   2: 00000000000000000000000001000000:A02A 0000000000000000FFFF00000100007F:1199 01 0 0 0 0 0 1\n" +
		"   3: 00000000000000000000000001000000:A02B B80D0120000000000000000001000000:1199 01 0 0 0 0 0 1\n"
	est := builtin.BuiltinProcTCP(tcp)
	for ip, port := range map[string]int{"127.0.0.1": 4505, "2001:db8::1": 4505} {
		if !est[ip][port] {
			t.Errorf("%s:%d not found in %v", ip, port, est)
		}
	}
	if est["127.0.0.2"] != nil {
		t.Errorf("a TIME_WAIT socket counted: %v", est)
	}
}

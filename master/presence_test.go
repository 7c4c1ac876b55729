package master

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/internal/procnet"
)

func TestParseProcAddr(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ip   string
		port int
		ok   bool
	}{
		{"0100007F:1151", "127.0.0.1", 4433, true},
		{"0202000C0:0050", "", 0, false},
		{"0000000000000000FFFF00000100007F:1A0A", "127.0.0.1", 6666, true},
		{"00000000000000000000000001000000:0016", "::1", 22, true},
		{"zz:1", "", 0, false},
		{"0100007F", "", 0, false},
	} {
		ip, port, ok := procnet.ParseAddr(tc.in)
		if ok != tc.ok || (ok && (!ip.Equal(net.ParseIP(tc.ip)) || port != tc.port)) {
			t.Errorf("%s: %v %d %v", tc.in, ip, port, ok)
		}
	}
}

func TestScanProcNet(t *testing.T) {
	f := filepath.Join(t.TempDir(), "tcp")
	text := "  sl  local_address rem_address   st tx_queue\n" +
		"   0: 0100007F:1199 0202000A:D431 01 00000000:00000000\n" + // 127.0.0.1:4505 <- 10.0.2.2, established
		"   1: 0100007F:1199 0302000A:D432 0A 00000000:00000000\n" + // listen: ignored
		"   2: 0100007F:119A 0402000A:D433 01 00000000:00000000\n" // other port
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	if err := scanProcNet(f, 4505, got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got["10.0.2.2"] {
		t.Fatalf("%v", got)
	}
}

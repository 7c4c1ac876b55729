//go:build libvirt_dlopen

package virt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/virt"
	"github.com/gsalt/gsalt/wire/payload"
)

const (
	capsHostFile   = "testdata/caps_qemu.xml"
	capsDomainFile = "testdata/domcaps_qemu.xml"
	capsGoldenFile = "testdata/caps_golden.json"
)

// capsConn answers the capabilities calls with fixed documents; any other
// call panics through the nil embedded Conn (none is expected).
type capsConn struct {
	virt.Conn
	host, dom string
	domCalls  [][4]string
}

func (c *capsConn) Close() error                  { return nil }
func (c *capsConn) Capabilities() (string, error) { return c.host, nil }
func (c *capsConn) DomainCapabilities(emulator, arch, machine, typ string) (string, error) {
	c.domCalls = append(c.domCalls, [4]string{emulator, arch, machine, typ})
	return c.dom, nil
}

type capsDialer struct{ c *capsConn }

func (d capsDialer) Open(string, *virt.Auth) (virt.Conn, error) { return d.c, nil }

// TestCapabilitiesGolden parses a QEMU libvirt's host and domain
// capabilities (captured in testdata) the way Salt 3006's
// virt.capabilities, domain_capabilities and all_capabilities do.
func TestCapabilitiesGolden(t *testing.T) {
	if testutil.Update() {
		out := runGoldenScript(t, 2*time.Minute, "caps_golden.py", capsHostFile, capsDomainFile)
		if err := os.WriteFile(capsGoldenFile, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	host, err := os.ReadFile(capsHostFile)
	if err != nil {
		t.Fatal(err)
	}
	dom, err := os.ReadFile(capsDomainFile)
	if err != nil {
		t.Fatal(err)
	}
	golden, ok := loadJSON(t, capsGoldenFile).(*payload.Map)
	if !ok {
		t.Fatalf("%s: not an object", capsGoldenFile)
	}
	conn := &capsConn{host: string(host), dom: string(dom)}
	env := testEnv(t, "fake:///", &virt.Module{Dialer: capsDialer{conn}})
	for _, fun := range []string{"capabilities", "domain_capabilities", "all_capabilities"} {
		t.Run(fun, func(t *testing.T) {
			res := env.Registry.Execute(context.Background(), modules.Binder{}, env, "virt."+fun, nil, nil)
			if res.Retcode != 0 {
				t.Fatalf("virt.%s: %v", fun, res.Return)
			}
			want, _ := golden.Get(fun)
			gj, _ := json.Marshal(tag(res.Return))
			wj, _ := json.Marshal(want)
			if !bytes.Equal(gj, wj) {
				t.Errorf("virt.%s differs from Salt's:\n got  %s\n want %s", fun, gj, wj)
			}
		})
	}
	// all_capabilities asks for one domain capabilities document per
	// (arch, domain type) of the host, with the guest's emulator.
	if len(conn.domCalls) < 2 || conn.domCalls[1][1] == "" || conn.domCalls[1][3] == "" {
		t.Errorf("all_capabilities calls: %v", conn.domCalls)
	}
}

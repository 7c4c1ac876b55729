package scraplitest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scrapli/scrapligo/driver/network"
	"github.com/scrapli/scrapligo/driver/opoptions"
	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/platform"
	"github.com/scrapli/scrapligo/transport"
	"github.com/scrapli/scrapligo/util"

	"github.com/gsalt/gsalt/proxy/devsim"
)

func openXR(t *testing.T, f *devsim.Fleet, i int, timeout time.Duration) *network.Driver {
	t.Helper()
	p, err := platform.NewPlatform("cisco_iosxr", "127.0.0.1",
		options.WithAuthNoStrictKey(), options.WithAuthUsername("admin"), options.WithAuthPassword("admin"),
		options.WithPort(f.Port(i)), options.WithTransportType(transport.StandardTransport),
		options.WithTimeoutSocket(5*time.Second), options.WithTimeoutOps(timeout))
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.GetNetworkDriver()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Open(); err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// TestScrapligoIOSXR drives the iosxr simulator with scrapligo's own
// cisco_iosxr platform: on-open (terminal width/length), commands, both
// configuration privilege levels, failed-when-contains, and the way its
// "end" deescalation meets IOS XR's uncommitted-changes question.
func TestScrapligoIOSXR(t *testing.T) {
	f := startFleet(t, devsim.Options{Platform: devsim.PlatformIOSXR, Devices: 2})
	dev := f.Device(0)
	d := openXR(t, f, 0, 5*time.Second)

	r, err := d.SendCommand("show version")
	if err != nil || !strings.Contains(r.Result, "Cisco IOS XR Software, Version 7.3.2") || r.Failed != nil {
		t.Fatalf("show version: %v %q", err, r.Result)
	}
	if r, err := d.SendCommand("show bogus"); err != nil || r.Failed == nil {
		t.Fatalf("invalid command not failed: %v %q", err, r.Result)
	}

	// Lines then "commit" in configuration-exclusive; "end" after the commit
	// meets no question, so scrapligo gets back to exec by itself.
	m, err := d.SendConfigs([]string{"ntp server 192.0.2.1", "commit"}, opoptions.WithPrivilegeLevel("configuration-exclusive"))
	if err != nil || m.Failed != nil {
		t.Fatalf("send configs: %v %v", err, m.Failed)
	}
	if r, err := d.SendCommand("show running-config ntp"); err != nil || !strings.Contains(r.Result, " server 192.0.2.1") {
		t.Fatalf("after commit: %v %q", err, r.Result)
	}
	if !strings.Contains(dev.RunningConfig(), " server 192.0.2.1") {
		t.Fatal("commit not applied")
	}
	m, err = d.SendConfigs([]string{"this is not a command"})
	if err != nil || m.Failed == nil {
		t.Fatalf("invalid config line not failed: %v", err)
	}
	if _, err := d.SendConfigs([]string{"abort"}); err != nil {
		t.Fatal(err)
	}

	// Quirk: uncommitted lines make scrapligo's deescalation ("end") hit
	// "Uncommitted changes found, commit them before exiting(yes/no/cancel)?
	// [cancel]:", which matches no prompt pattern: the next exec command
	// waits for the whole operation timeout and fails with
	// ErrPrivilegeError ("failed acquiring default desired privilege
	// level"). gsalt's iosxr driver therefore
	// always leaves configuration mode with "abort" itself.
	short := openXR(t, f, 1, 1500*time.Millisecond)
	if _, err := short.SendConfigs([]string{"hostname pending"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = short.SendCommand("show clock")
	if !errors.Is(err, util.ErrPrivilegeError) || time.Since(start) < time.Second {
		t.Fatalf("end with uncommitted changes: %v after %v", err, time.Since(start))
	}
	if strings.Contains(f.Device(1).RunningConfig(), "pending") {
		t.Fatal("uncommitted line applied")
	}
}

package scraplitest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scrapli/scrapligo/driver/network"
	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/platform"
	"github.com/scrapli/scrapligo/transport"
	"github.com/scrapli/scrapligo/util"

	"github.com/gsalt/gsalt/proxy/devsim"
)

const secret = "s3cret"

func startFleet(t *testing.T, o devsim.Options) *devsim.Fleet {
	t.Helper()
	if o.Secret == "" {
		o.Secret = secret
	}
	f, err := devsim.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func scrapliPlatform(p string) string {
	if p == devsim.PlatformEOS {
		return "arista_eos"
	}
	return "cisco_iosxe"
}

func newDriver(t *testing.T, f *devsim.Fleet, i int, extra ...util.Option) *network.Driver {
	t.Helper()
	opts := append([]util.Option{
		options.WithAuthNoStrictKey(),
		options.WithAuthUsername("admin"),
		options.WithAuthPassword("admin"),
		options.WithAuthSecondary(secret),
		options.WithPort(f.Port(i)),
		options.WithTransportType(transport.StandardTransport),
		options.WithTimeoutSocket(5 * time.Second),
		options.WithTimeoutOps(10 * time.Second),
	}, extra...)
	p, err := platform.NewPlatform(scrapliPlatform(f.Options().Platform), "127.0.0.1", opts...)
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.GetNetworkDriver()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func openDriver(t *testing.T, f *devsim.Fleet, i int, extra ...util.Option) *network.Driver {
	t.Helper()
	d := newDriver(t, f, i, extra...)
	if err := d.Open(); err != nil {
		t.Fatalf("open %s: %v", f.Addr(i), err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func TestScrapligoSendCommandAndConfigs(t *testing.T) {
	cases := []struct {
		plat, version string
		configs       []string
		want          []string
	}{
		{devsim.PlatformIOS, "Cisco IOS XE Software, Version 17.03.04a",
			[]string{"interface GigabitEthernet4", " description set by scrapligo", " no shutdown", "ntp server 192.0.2.1", "ip route 198.51.100.0 255.255.255.0 192.0.2.254"},
			[]string{"interface GigabitEthernet4\n description set by scrapligo\n negotiation auto\n!", "ntp server 192.0.2.1", "ip route 198.51.100.0 255.255.255.0 192.0.2.254"}},
		{devsim.PlatformEOS, "Software image version: 4.27.3F",
			[]string{"interface Ethernet4", "   description set by scrapligo", "   no shutdown", "ntp server 192.0.2.1", "ip route 198.51.100.0/24 192.0.2.254"},
			[]string{"interface Ethernet4\n   description set by scrapligo\n!", "ntp server 192.0.2.1", "ip route 198.51.100.0/24 192.0.2.254"}},
	}
	for _, tc := range cases {
		t.Run(tc.plat, func(t *testing.T) {
			f := startFleet(t, devsim.Options{Platform: tc.plat, Devices: 2})
			d := openDriver(t, f, 1)
			if d.CurrentPriv != "privilege-exec" {
				t.Fatalf("privilege after open = %q", d.CurrentPriv)
			}
			r, err := d.SendCommand("show version")
			if err != nil || r.Failed != nil {
				t.Fatalf("show version: %v %v", err, r.Failed)
			}
			if !strings.Contains(r.Result, tc.version) || strings.Contains(r.Result, "sw2#") {
				t.Fatalf("show version result:\n%s", r.Result)
			}
			r, err = d.SendCommand("show lldp neighbors")
			if err != nil || !strings.Contains(r.Result, "sw1") {
				t.Fatalf("lldp: %v\n%s", err, r.Result)
			}
			m, err := d.SendConfigs(tc.configs)
			if err != nil || m.Failed != nil {
				t.Fatalf("send configs: %v %v", err, m.Failed)
			}
			run := f.Device(1).RunningConfig()
			for _, w := range tc.want {
				if !strings.Contains(run, w) {
					t.Errorf("running config lacks %q:\n%s", w, run)
				}
			}
			if strings.Contains(run, "shutdown\n") && strings.Contains(run, "set by scrapligo\n   shutdown") {
				t.Errorf("no shutdown not applied:\n%s", run)
			}
			m, err = d.SendConfigs([]string{"this is not a command"})
			if err != nil {
				t.Fatal(err)
			}
			if m.Failed == nil {
				t.Errorf("invalid config line not reported as failed: %q", m.Responses[0].Result)
			}
			r, err = d.SendCommand("show bogus")
			if err != nil || r.Failed == nil {
				t.Errorf("invalid command not failed: %v %q", err, r.Result)
			}
			r, err = d.SendCommand("show running-config")
			if err != nil || !strings.Contains(r.Result, "ntp server 192.0.2.1") {
				t.Errorf("show running-config over ssh: %v\n%s", err, r.Result)
			}
		})
	}
}

func TestScrapligoCfgIOSXE(t *testing.T) {
	f := startFleet(t, devsim.Options{Platform: devsim.PlatformIOS, Devices: 1})
	dev := f.Device(0)
	d := openDriver(t, f, 0)
	c := &iosxeCfg{d: d, candidate: "scrapli_cfg_candidate"}
	v, err := c.getVersion()
	if err != nil || v != "17.03.04a" {
		t.Fatalf("version %q %v", v, err)
	}
	orig, err := c.getConfig("running")
	if err != nil || !strings.Contains(orig, "hostname sw1") {
		t.Fatalf("get config: %v\n%s", err, orig)
	}

	// Merge: load, diff, abort leaves the running config alone and removes the candidate.
	merge := "interface Loopback42\n ip address 10.42.42.42 255.255.255.255\nntp server 203.0.113.42\n"
	if err := c.loadConfig(merge, false); err != nil {
		t.Fatal(err)
	}
	if got, ok := dev.File(c.candidate); !ok || strings.TrimSpace(got) != strings.TrimSpace(merge) {
		t.Fatalf("candidate file = %q (exists %v)", got, ok)
	}
	diff, err := c.diffConfig()
	if err != nil || !strings.Contains(diff, "interface Loopback42\n ip address 10.42.42.42") {
		t.Fatalf("merge diff: %v\n%s", err, diff)
	}
	if err := c.abortConfig(); err != nil {
		t.Fatal(err)
	}
	if _, ok := dev.File(c.candidate); ok {
		t.Fatal("candidate survived abort")
	}
	if strings.Contains(dev.RunningConfig(), "Loopback42") {
		t.Fatal("abort changed the running config")
	}

	// Merge commit (file prompt alert: interactive copy, save, delete).
	if err := c.loadConfig(merge, false); err != nil {
		t.Fatal(err)
	}
	if err := c.commitConfig(); err != nil {
		t.Fatal(err)
	}
	run := dev.RunningConfig()
	if !strings.Contains(run, "interface Loopback42\n ip address 10.42.42.42 255.255.255.255") ||
		!strings.Contains(run, "ntp server 203.0.113.42") {
		t.Fatalf("merge not applied:\n%s", run)
	}
	if !strings.Contains(dev.StartupConfig(), "ntp server 203.0.113.42") {
		t.Fatal("commit did not save the startup config")
	}
	if _, ok := dev.File(c.candidate); ok {
		t.Fatal("candidate survived commit")
	}

	// Replace with "file prompt quiet": the full config minus the loopback, with a new NTP server.
	if _, err := d.SendConfigs([]string{"file prompt quiet"}); err != nil {
		t.Fatal(err)
	}
	full, err := c.getConfig("running")
	if err != nil {
		t.Fatal(err)
	}
	full = strings.Replace(full, "interface Loopback42\n ip address 10.42.42.42 255.255.255.255\n", "", 1)
	full = strings.Replace(full, "ntp server 203.0.113.42", "ntp server 203.0.113.43", 1)
	if err := c.loadConfig(full, true); err != nil {
		t.Fatal(err)
	}
	diff, err = c.diffConfig()
	if err != nil || !strings.Contains(diff, "+ntp server 203.0.113.43") || !strings.Contains(diff, "-interface Loopback42") {
		t.Fatalf("replace diff: %v\n%s", err, diff)
	}
	if err := c.commitConfig(); err != nil {
		t.Fatal(err)
	}
	run = dev.RunningConfig()
	if strings.Contains(run, "Loopback42") || !strings.Contains(run, "ntp server 203.0.113.43") ||
		strings.Contains(run, "203.0.113.42") || !strings.Contains(run, "hostname sw1") {
		t.Fatalf("replace not applied:\n%s", run)
	}
	if files := dev.Files(); len(files) != 0 {
		t.Fatalf("files left behind: %v", files)
	}
}

func TestScrapligoCfgEOS(t *testing.T) {
	f := startFleet(t, devsim.Options{Platform: devsim.PlatformEOS, Devices: 1})
	dev := f.Device(0)
	d := openDriver(t, f, 0)
	c := &eosCfg{d: d, session: "scrapli_cfg_1700000000"}
	v, err := c.getVersion()
	if err != nil || v != "4.27.3F" {
		t.Fatalf("version %q %v", v, err)
	}
	merge := "interface Loopback42\n   ip address 10.42.42.42/32\nntp server 203.0.113.42\nend"
	if err := c.loadConfig(merge, false); err != nil {
		t.Fatal(err)
	}
	diff, err := c.diffConfig()
	if err != nil || !strings.Contains(diff, "+interface Loopback42") || !strings.Contains(diff, "+ntp server 203.0.113.42") {
		t.Fatalf("diff: %v\n%s", err, diff)
	}
	if err := c.abortConfig(); err != nil {
		t.Fatal(err)
	}
	if s := dev.ConfigSessions(); len(s) != 0 || strings.Contains(dev.RunningConfig(), "Loopback42") {
		t.Fatalf("abort left sessions %v or changed the running config", s)
	}
	// The driver must still work after the abort.
	if r, err := d.SendCommand("show hostname"); err != nil || !strings.Contains(r.Result, "Hostname: sw1") {
		t.Fatalf("after abort: %v", err)
	}

	if err := c.loadConfig(merge, false); err != nil {
		t.Fatal(err)
	}
	if err := c.commitConfig(); err != nil {
		t.Fatal(err)
	}
	run := dev.RunningConfig()
	if !strings.Contains(run, "interface Loopback42\n   ip address 10.42.42.42/32") || !strings.Contains(run, "ntp server 203.0.113.42") {
		t.Fatalf("merge not committed:\n%s", run)
	}
	if !strings.Contains(dev.StartupConfig(), "Loopback42") {
		t.Fatal("startup config not saved")
	}

	// Replace: rollback clean-config, then a full configuration without the loopback.
	full := strings.Replace(run, "interface Loopback42\n   ip address 10.42.42.42/32\n!\n", "", 1)
	full = strings.Replace(full, "ntp server 203.0.113.42", "ntp server 203.0.113.43", 1)
	c.session = "scrapli_cfg_1700000001"
	if err := c.loadConfig(full, true); err != nil {
		t.Fatal(err)
	}
	diff, err = c.diffConfig()
	if err != nil || !strings.Contains(diff, "-interface Loopback42") || !strings.Contains(diff, "+ntp server 203.0.113.43") {
		t.Fatalf("replace diff: %v\n%s", err, diff)
	}
	if strings.Count(diff, "\n-") > 6 {
		t.Errorf("replace diff removes too much:\n%s", diff)
	}
	if err := c.commitConfig(); err != nil {
		t.Fatal(err)
	}
	run = dev.RunningConfig()
	if strings.Contains(run, "Loopback42") || !strings.Contains(run, "ntp server 203.0.113.43") || !strings.Contains(run, "router bgp 65001") {
		t.Fatalf("replace not committed:\n%s", run)
	}
}

func TestScrapligoFaults(t *testing.T) {
	f := startFleet(t, devsim.Options{Devices: 4, Faults: map[int]devsim.Fault{
		1: devsim.FaultHang, 2: devsim.FaultBadAuth, 3: devsim.FaultDrop}})
	// Healthy device with the default options works.
	openDriver(t, f, 0)

	// badauth: the transport refuses to open.
	if err := newDriver(t, f, 2).Open(); err == nil {
		t.Fatal("badauth device accepted the login")
	}

	// hang: the session opens, then show output stops half way and the operation times out.
	d := openDriver(t, f, 1, options.WithTimeoutOps(time.Second))
	start := time.Now()
	_, err := d.SendCommand("show running-config")
	if !errors.Is(err, util.ErrTimeoutError) {
		t.Fatalf("hang: err = %v", err)
	}
	if time.Since(start) < 900*time.Millisecond {
		t.Fatalf("hang returned after %v", time.Since(start))
	}

	// drop: the connection closes in the middle of the output.
	d = openDriver(t, f, 3, options.WithTimeoutOps(5*time.Second))
	if _, err := d.SendCommand("show version"); err == nil {
		t.Fatal("drop: command succeeded")
	}
}

// TestScrapligoNapalmIOSFlow drives the commands NAPALM's ios driver sends for
// load_replace_candidate (inline tcl transfer), compare_config, commit_config and rollback.
func TestScrapligoNapalmIOSFlow(t *testing.T) {
	f := startFleet(t, devsim.Options{Platform: devsim.PlatformIOS, Devices: 2})
	dev := f.Device(1)
	d := openDriver(t, f, 1)
	before := dev.RunningConfig()
	cand := strings.Replace(before, "ntp server 172.16.255.254", "ntp server 198.51.100.7", 1)
	c := &iosxeCfg{d: d, candidate: "candidate_config.txt"}
	if err := c.loadConfig(cand, true); err != nil {
		t.Fatal(err)
	}
	if m, err := d.SendConfigs([]string{"file prompt quiet"}); err != nil || m.Failed != nil {
		t.Fatalf("file prompt quiet: %v", err)
	}
	send := func(cmd string) string {
		t.Helper()
		r, err := d.SendCommand(cmd)
		if err != nil || r.Failed != nil {
			t.Fatalf("%s: %v %v\n%s", cmd, err, r.Failed, r.Result)
		}
		return r.Result
	}
	diff := send("show archive config differences system:running-config flash:/candidate_config.txt")
	for _, w := range []string{"!Contextual Config Diffs:", "+ntp server 198.51.100.7", "-ntp server 172.16.255.254", "-file prompt quiet"} {
		if !strings.Contains(diff, w) {
			t.Errorf("diff lacks %q:\n%s", w, diff)
		}
	}
	send("copy running-config flash:/rollback_config.txt")
	if out := send("dir flash:/candidate_config.txt"); !strings.Contains(out, "Directory of flash:/candidate_config.txt") {
		t.Fatalf("dir:\n%s", out)
	}
	out := send("configure replace flash:/candidate_config.txt force revert trigger error")
	if low := strings.ToLower(out); strings.Contains(low, "error") || strings.Contains(low, "failed") {
		t.Fatalf("configure replace:\n%s", out)
	}
	send("write memory")
	if run := dev.RunningConfig(); !strings.Contains(run, "ntp server 198.51.100.7") || strings.Contains(run, "ntp server 172.16.255.254") {
		t.Fatalf("commit not applied:\n%s", run)
	}
	if !strings.Contains(dev.StartupConfig(), "ntp server 198.51.100.7") {
		t.Fatal("write memory did not save")
	}
	send("configure replace flash:/rollback_config.txt force")
	send("write memory")
	run := dev.RunningConfig()
	if !strings.Contains(run, "ntp server 172.16.255.254") || strings.Contains(run, "198.51.100.7") || !strings.Contains(run, "file prompt quiet") {
		t.Fatalf("rollback not applied:\n%s", run)
	}
	if r, _ := d.SendCommand("dir flash:/gone.txt"); !strings.Contains(r.Result, "%Error opening flash:/gone.txt") {
		t.Fatalf("missing file: %q", r.Result)
	}
}

// TestScrapligoNoEnableSecret opens devices without an enable secret, with and without
// scrapligo's secondary password.
func TestScrapligoNoEnableSecret(t *testing.T) {
	for _, plat := range []string{devsim.PlatformIOS, devsim.PlatformEOS} {
		f, err := devsim.Start(context.Background(), devsim.Options{Platform: plat, Devices: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, extra := range [][]util.Option{nil, {options.WithAuthSecondary("")}} {
			d := openDriver(t, f, 0, extra...)
			if r, err := d.SendCommand("show clock"); err != nil || r.Failed != nil {
				t.Fatalf("%s: %v", plat, err)
			}
			_ = d.Close()
		}
		_ = f.Close()
	}
}

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"

	"github.com/gsalt/gsalt/internal/fleetlab"
	"github.com/gsalt/gsalt/internal/natstest"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// TestNATSIntendedConfigs: the example as shipped (master.d file, reactor
// SLS, publisher) with real processes on loopback. The publisher sends
// sw1's running configuration plus an NTP server on dc1.sw1.configure
// (JetStream) and waits for the job return the bridge mirrors back: sw1's
// running configuration has the server, sw2 is untouched. A configuration
// with a line IOS rejects fails with the device's error and changes
// nothing. Then
// gsalt-master is stopped, a second configuration is published while it
// is down, gsalt-master is started again: the stored message is fired
// (nats/configure/sw1 comes back on NATS as the bus mirror) and sw1 gets
// the second configuration.
func TestNATSIntendedConfigs(t *testing.T) {
	natstest.Require(t)
	if testing.Short() {
		t.Skip("real-process end-to-end test skipped in -short mode")
	}
	dir := testutil.ShortDir(t, "gni")
	bin := buildTools(t)
	srv := natstest.Start(t, natstest.Options{JetStream: true})

	sim := startProc(t, dir, "gsalt-devsim", filepath.Join(bin, "gsalt-devsim"), "--devices", "2", "--base-port", "0",
		"--platform", "ios", "--user", "admin", "--password", "admin")
	port1, port2 := devsimPorts(t, sim)

	// The master: the example's master.d file with its paths and URL
	// moved onto the test's, the proxies' pillar pointing at the devices.
	ex := exampleDir(t)
	roots := filepath.Join(dir, "srv", "salt")
	testutil.CopyTree(t, filepath.Join(ex, "salt"), roots)
	ports := proc.FreePorts(t, 2)
	etc := filepath.Join(dir, "etc")
	testutil.WriteFile(t, filepath.Join(etc, "master"), fmt.Sprintf("interface: 127.0.0.1\npublish_port: %[2]d\nret_port: %[3]d\n"+
		"root_dir: %[1]s\npki_dir: %[1]s/pki\ncachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/master.log\n"+
		"log_level_logfile: debug\nuser: root\nauto_accept: True\npillar_roots: {base: [%[1]s/pillar]}\n",
		dir, ports[0], ports[1]), 0o644)
	conf := testutil.ReadFile(t, filepath.Join(ex, "master.d", "nats-intended-configs.conf"))
	conf = testutil.Redirect(t, conf, "/srv/salt", roots)
	conf = testutil.Redirect(t, conf, "nats://127.0.0.1:4222", srv.URL())
	// The proxies reconnect within a second or two here (30 s in the
	// shipped file is for real fleets).
	conf = testutil.Redirect(t, conf, "start_delay: 30", fmt.Sprintf("start_delay: %g", testutil.Scale(4*time.Second).Seconds()))
	testutil.WriteFile(t, filepath.Join(etc, "master.d", "nats-intended-configs.conf"), conf, 0o644)
	testutil.WriteFile(t, filepath.Join(dir, "pki", "master.pem"), testutil.ReadFile(t, filepath.Join(vectorsDir, "pki/master/master.pem")), 0o400)
	testutil.WriteFile(t, filepath.Join(dir, "pki", "master.pub"), testutil.ReadFile(t, filepath.Join(vectorsDir, "pki/master/master.pub")), 0o644)
	testutil.WriteFile(t, filepath.Join(dir, "pillar", "top.sls"), "base:\n  'sw*':\n    - devices\n", 0o644)
	testutil.WriteFile(t, filepath.Join(dir, "pillar", "devices.sls"), fmt.Sprintf(
		"{%% set ports = {'sw1': %d, 'sw2': %d} %%}\nproxy:\n  proxytype: napalm\n  driver: ios\n  host: 127.0.0.1\n"+
			"  username: admin\n  password: admin\n  timeout: 10\n  optional_args:\n    port: {{ ports[grains['id']] }}\n",
		port1, port2), 0o644)
	masterArgs := []string{filepath.Join(bin, "gsalt-master"), "-c", etc, "-l", "info"}
	master := startProc(t, dir, "gsalt-master", masterArgs...)

	// Everything below is observed through NATS, the bridge's mirror of
	// the master's bus.
	nc, err := natsgo.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	starts, err := nc.SubscribeSync("salt.salt.minion.*.start")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	waitStarts := func(what string) {
		t.Helper()
		seen := map[string]bool{}
		deadline := time.Now().Add(testutil.Scale(90 * time.Second))
		for !seen["salt.salt.minion.sw1.start"] || !seen["salt.salt.minion.sw2.start"] {
			m, err := starts.NextMsg(time.Until(deadline))
			if err != nil {
				t.Fatalf("%s: the proxies' start events did not come (seen %v): %v", what, seen, err)
			}
			seen[m.Subject] = true
		}
	}

	petc := filepath.Join(dir, "petc")
	testutil.WriteFile(t, filepath.Join(petc, "proxy"), fmt.Sprintf("master: 127.0.0.1\nmaster_port: %[2]d\nroot_dir: %[1]s/p\n"+
		"pki_dir: %[1]s/p/pki\ncachedir: %[1]s/p/cache\nsock_dir: %[1]s/p/sock\nlog_file: %[1]s/p/log\n"+
		"enable_fqdns_grains: False\nacceptance_wait_time: 0.2\nacceptance_wait_time_max: 1\n", dir, ports[1]), 0o644)
	startProc(t, dir, "gsalt-proxy", filepath.Join(bin, "gsalt-proxy"), "-c", petc, "--proxyid", "sw1", "--proxyid", "sw2", "-l", "info")
	waitStarts("first start")

	initial1, initial2 := fleetlab.RunningConfig(t, port1), fleetlab.RunningConfig(t, port2)
	const ntp, ntp2 = "ntp server 192.0.2.123", "ntp server 192.0.2.124"
	if fleetlab.HasLine(initial1, ntp) || fleetlab.HasLine(initial1, ntp2) {
		t.Fatalf("sw1 starts with the test's servers:\n%s", initial1)
	}
	intended := filepath.Join(dir, "intended")
	want1 := withLine(t, initial1, "ntp server ", ntp)
	testutil.WriteFile(t, filepath.Join(intended, "sw1.cfg"), want1, 0o644)

	// The bridge creates the stream once connected.
	testutil.Eventually(t, 30*time.Second, func() bool {
		m, err := nc.Request("$JS.API.STREAM.INFO.INTENDED", nil, 5*time.Second)
		return err == nil && !bytes.Contains(m.Data, []byte(`"error"`))
	}, "the stream INTENDED")

	// 1. Publish and wait for the return, as the seed's watch service.
	pub := exec.Command(filepath.Join(bin, "publisher"), "-s", srv.URL(), "-js", "-wait", testutil.Scale(90*time.Second).String(),
		filepath.Join(intended, "sw1.cfg"))
	var out bytes.Buffer
	pub.Stdout, pub.Stderr = &out, &out
	if err := pub.Run(); err != nil {
		t.Fatalf("publisher: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "published dc1.sw1.configure") || !strings.Contains(out.String(), "sw1: jid ") ||
		!strings.Contains(out.String(), "result true") || !strings.Contains(out.String(), "+"+ntp) {
		t.Errorf("publisher output:\n%s", out.String())
	}
	t.Logf("publisher:\n%s", out.String())
	got1 := fleetlab.RunningConfig(t, port1)
	if !fleetlab.HasLine(got1, ntp) {
		t.Fatalf("sw1's running configuration lacks %q:\n%s", ntp, got1)
	}
	if got := fleetlab.RunningConfig(t, port2); got != initial2 {
		t.Errorf("sw2 changed:\n%s", got)
	}

	// 2. A configuration the device rejects: the publisher reports the
	// failed replace with the device's error, sw1 stays as it was.
	bad := withLine(t, withLine(t, got1, "ntp server ", "ntp server 192.0.2.200"), "ntp server ", "frobnicate widgets now")
	testutil.WriteFile(t, filepath.Join(intended, "sw1.cfg"), bad, 0o644)
	pub = exec.Command(filepath.Join(bin, "publisher"), "-s", srv.URL(), "-js", "-wait", testutil.Scale(90*time.Second).String(),
		filepath.Join(intended, "sw1.cfg"))
	out.Reset()
	pub.Stdout, pub.Stderr = &out, &out
	if err := pub.Run(); err == nil || !strings.Contains(out.String(), "result false") ||
		!strings.Contains(out.String(), "Invalid input") || !strings.Contains(out.String(), "the replace failed") {
		t.Errorf("publisher of a rejected configuration: %v\n%s", err, out.String())
	}
	if got := fleetlab.RunningConfig(t, port1); got != got1 {
		t.Errorf("sw1 changed by a rejected configuration:\n%s", got)
	}

	// 3. gsalt-master is down while the next configuration is published:
	// JetStream keeps it, the restarted master fires it.
	master.Stop()
	want2 := withLine(t, got1, "ntp server ", ntp2)
	testutil.WriteFile(t, filepath.Join(intended, "sw1.cfg"), want2, 0o644)
	pub = exec.Command(filepath.Join(bin, "publisher"), "-s", srv.URL(), "-js", filepath.Join(intended, "sw1.cfg"))
	if b, err := pub.CombinedOutput(); err != nil {
		t.Fatalf("publisher while the master is down: %v\n%s", err, b)
	}
	mirrored, err := nc.SubscribeSync("salt.nats.configure.sw1")
	if err != nil {
		t.Fatal(err)
	}
	rets, err := nc.SubscribeSync("salt.salt.job.*.ret.sw1")
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	startProc(t, dir, "gsalt-master-2", masterArgs...)
	m, err := mirrored.NextMsg(testutil.Scale(90 * time.Second))
	if err != nil {
		t.Fatalf("the stored configuration was not fired after the restart: %v", err)
	}
	var ev map[string]any
	if err := json.Unmarshal(m.Data, &ev); err != nil || ev["payload"] != want2 || ev["nats_subject"] != "dc1.sw1.configure" {
		t.Fatalf("fired event %s (%v)", m.Data, err)
	}
	deadline := time.Now().Add(testutil.Scale(90 * time.Second))
	for {
		m, err := rets.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("no net.load_config return from sw1 after the restart: %v", err)
		}
		var ret struct {
			Fun    string         `json:"fun"`
			Return map[string]any `json:"return"`
		}
		if json.Unmarshal(m.Data, &ret) == nil && ret.Fun == "net.load_config" {
			if ret.Return["result"] != true {
				t.Fatalf("replace after the restart: %s", m.Data)
			}
			break
		}
	}
	if got := fleetlab.RunningConfig(t, port1); !fleetlab.HasLine(got, ntp) || !fleetlab.HasLine(got, ntp2) {
		t.Fatalf("sw1 after the restart lacks %q or %q:\n%s", ntp, ntp2, got)
	}
	if got := fleetlab.RunningConfig(t, port2); got != initial2 {
		t.Errorf("sw2 changed:\n%s", got)
	}
	// Nothing is left unacknowledged in the stream.
	js, err := jetstreamInfo(nc)
	if err != nil {
		t.Fatal(err)
	}
	if js.NumAckPending != 0 || js.NumPending != 0 {
		t.Errorf("consumer after the restart: %+v", js)
	}
}

type consumerState struct {
	NumAckPending int    `json:"num_ack_pending"`
	NumPending    uint64 `json:"num_pending"`
}

// jetstreamInfo asks the server for the example's durable consumer
// (stream INTENDED, durable gsalt-<master id>), through the JetStream API
// subject, waiting for the acknowledgement to land.
func jetstreamInfo(nc *natsgo.Conn) (consumerState, error) {
	var st consumerState
	var last error
	ok := testutil.Poll(20*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		names, err := nc.RequestWithContext(ctx, "$JS.API.CONSUMER.NAMES.INTENDED", nil)
		if err != nil {
			last = err
			return false
		}
		var nr struct {
			Consumers []string `json:"consumers"`
		}
		if err := json.Unmarshal(names.Data, &nr); err != nil || len(nr.Consumers) != 1 {
			last = fmt.Errorf("consumers %s", names.Data)
			return false
		}
		info, err := nc.RequestWithContext(ctx, "$JS.API.CONSUMER.INFO.INTENDED."+nr.Consumers[0], nil)
		if err != nil {
			last = err
			return false
		}
		if err := json.Unmarshal(info.Data, &st); err != nil {
			last = err
			return false
		}
		last = fmt.Errorf("consumer %s", info.Data)
		return st.NumAckPending == 0 && st.NumPending == 0
	})
	if !ok {
		return st, last
	}
	return st, nil
}

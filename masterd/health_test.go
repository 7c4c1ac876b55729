package masterd_test

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/health"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/masterd"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

func getText(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHealthAuthOutcomesAndClose: the master counts _auth decisions by
// outcome (pending, accepted, denied for a different key, rejected for an
// invalid id) where it takes them, exports them, and stops being ready
// once it closes.
func TestHealthAuthOutcomesAndClose(t *testing.T) {
	dir := shortDir(t)
	cfg := writeConfig(t, dir, "")
	copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pem"), filepath.Join(cfg.PKIDir, "master.pem"), 0o400)
	copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pub"), filepath.Join(cfg.PKIDir, "master.pub"), 0o644)
	hc, err := masterd.HealthConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if hc.Enabled() || hc.Host != "127.0.0.1" {
		t.Fatalf("HealthConfig without metrics_port: %+v (want off, host = interface)", hc)
	}
	hc.Port = proc.FreePort(t)
	hc.HeartbeatTimeout = 3 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hs := health.New(hc, logger())
	if err := hs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	base := "http://" + hs.Addr().String()
	d, err := masterd.Start(ctx, cfg, masterd.Options{Logger: logger(), Health: hs})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if code, body := getText(t, base+health.PathReadyz); code != 200 || !strings.Contains(body, "ok job cache: open") {
		t.Fatalf("/readyz: %d %q", code, body)
	}

	m1 := newMinion(t, d, "minion1", "m1")
	if st := m1.auth(); st != message.AuthPending {
		t.Fatalf("first auth: %v", st)
	}
	if _, err := d.Keys().Accept("m1"); err != nil {
		t.Fatal(err)
	}
	if st := m1.auth(); st != message.AuthAccepted {
		t.Fatalf("auth after accept: %v", st)
	}
	other := newMinion(t, d, "proxy1", "m1") // m1's id with another key
	other.auth()
	bad := newMinion(t, d, "proxy1", "../x")
	bad.auth()
	want := map[string]uint64{master.AuthPending: 1, master.AuthAccepted: 1, master.AuthDenied: 1, master.AuthRejected: 1, master.AuthFull: 0}
	got := d.Master().Stats().Auth
	for k, v := range want {
		if got[k] != v {
			t.Errorf("auth %s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	_, text := getText(t, base+health.PathMetrics)
	for _, line := range []string{
		`gsalt_master_auth_total{outcome="accepted"} 1`,
		`gsalt_master_auth_total{outcome="denied"} 1`,
		`gsalt_master_auth_total{outcome="pending"} 1`,
		`gsalt_master_auth_total{outcome="rejected"} 1`,
		`gsalt_master_auth_total{outcome="full"} 0`,
		`gsalt_master_connections_evicted_total 0`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	var live string
	if !testutil.Poll(30*time.Second, func() bool {
		var c int
		c, live = getText(t, base+health.PathHealthz)
		return c == 200 && strings.Contains(live, "ok maintenance loop")
	}) {
		t.Fatalf("/healthz: %q", live)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	code, body := getText(t, base+health.PathReadyz)
	if code != 503 || !strings.Contains(body, "fail publish port: closing") || !strings.Contains(body, "fail job cache: not open") {
		t.Fatalf("/readyz after Close: %d %q", code, body)
	}
	// The maintenance loop stopped: its heartbeat goes stale.
	if !testutil.Poll(30*time.Second, func() bool {
		c, b := getText(t, base+health.PathHealthz)
		return c == 503 && strings.Contains(b, "fail maintenance loop: last heartbeat")
	}) {
		t.Fatal("/healthz still passes after the maintenance loop stopped")
	}
}

// TestHealthReactorMetrics: with the reactor on, a runner reaction is
// counted where the reactor starts it and exported.
func TestHealthReactorMetrics(t *testing.T) {
	dir := shortDir(t)
	cfg := writeConfig(t, dir, reactorConfig(t, dir))
	hc, err := masterd.HealthConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hc.Port = proc.FreePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hs := health.New(hc, logger())
	if err := hs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := masterd.Start(ctx, cfg, masterd.Options{Logger: logger(), Health: hs})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	base := "http://" + hs.Addr().String()
	if _, text := getText(t, base+health.PathMetrics); !strings.Contains(text, `gsalt_reactor_reactions_total{kind="runner"} 0`+"\n") {
		t.Fatalf("no reactor metrics before any event:\n%s", text)
	}
	d.Bus().Publish(event.Event{Tag: "my/tag", Data: payload.NewMap("id", "m1", "data", payload.NewMap())})
	var text string
	if !testutil.Poll(60*time.Second, func() bool {
		_, text = getText(t, base+health.PathMetrics)
		return strings.Contains(text, `gsalt_reactor_reactions_total{kind="runner"} 1`+"\n")
	}) {
		t.Fatalf("the runner reaction was not counted:\n%s", text)
	}
	for _, line := range []string{`gsalt_reactor_dropped_total{reason="queue"} 0`, `gsalt_reactor_failed_total 0`} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
}

package health_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gsalt/gsalt/internal/health"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

func TestConfigFrom(t *testing.T) {
	cases := []struct {
		name    string
		opts    map[string]any
		defHost string
		want    health.Config
		bad     bool
	}{
		{"off by default", nil, "", health.Config{Host: "127.0.0.1", ReadyShare: 0.9, HeartbeatTimeout: 30 * time.Second}, false},
		{"master default host", map[string]any{"metrics_port": 9100}, "10.0.0.1",
			health.Config{Port: 9100, Host: "10.0.0.1", ReadyShare: 0.9, HeartbeatTimeout: 30 * time.Second}, false},
		{"all set", map[string]any{"metrics_port": "9101", "metrics_host": "0.0.0.0", "metrics_ready_share": 0.5, "metrics_heartbeat_timeout": 2.5}, "",
			health.Config{Port: 9101, Host: "0.0.0.0", ReadyShare: 0.5, HeartbeatTimeout: 2500 * time.Millisecond}, false},
		{"null port is off", map[string]any{"metrics_port": nil}, "", health.Config{Host: "127.0.0.1", ReadyShare: 0.9, HeartbeatTimeout: 30 * time.Second}, false},
		{"port too large", map[string]any{"metrics_port": 70000}, "", health.Config{}, true},
		{"port not a number", map[string]any{"metrics_port": "http"}, "", health.Config{}, true},
		{"port a list", map[string]any{"metrics_port": []any{1}}, "", health.Config{}, true},
		{"fractional port", map[string]any{"metrics_port": 91.5}, "", health.Config{}, true},
		{"share zero", map[string]any{"metrics_ready_share": 0}, "", health.Config{}, true},
		{"share above one", map[string]any{"metrics_ready_share": 1.5}, "", health.Config{}, true},
		{"empty host", map[string]any{"metrics_host": " "}, "", health.Config{}, true},
		{"negative heartbeat", map[string]any{"metrics_heartbeat_timeout": -1}, "", health.Config{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := health.ConfigFrom(func(k string) (any, bool) { v, ok := tc.opts[k]; return v, ok }, tc.defHost)
			if tc.bad {
				if !errors.Is(err, health.ErrConfig) {
					t.Fatalf("err = %v, want ErrConfig", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
			if got.Enabled() != (tc.want.Port > 0) {
				t.Fatalf("Enabled() = %v", got.Enabled())
			}
		})
	}
	c := health.Config{Port: 1, Host: "a"}.Override(2, "b")
	if c.Port != 2 || c.Host != "b" {
		t.Fatalf("Override: %+v", c)
	}
	if c := (health.Config{Port: 1, Host: "a"}).Override(0, ""); c.Port != 1 || c.Host != "a" {
		t.Fatalf("Override with nothing: %+v", c)
	}
}

func TestOffIsNil(t *testing.T) {
	s := health.New(health.Config{}, nil)
	if s != nil {
		t.Fatal("New without a port returned a server")
	}
	// Every hook is a no-op on the nil server.
	s.Live("x", func() (bool, string) { return true, "" })
	s.Ready("x", func() (bool, string) { return true, "" })
	s.MustRegister(health.CounterFunc("t", "x_total", "x", func() uint64 { return 1 }))
	if err := s.Start(context.Background()); err != nil || s.Addr() != nil || s.Close() != nil || s.Registry() != nil {
		t.Fatal("nil server did something")
	}
}

// get fetches a URL and returns the status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestServerProbesAndMetrics(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := health.New(health.Config{Port: proc.FreePort(t), Host: "127.0.0.1", ReadyShare: 0.5, HeartbeatTimeout: time.Hour}, nil)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.Addr().String()

	// Nothing registered yet: both probes fail.
	for _, p := range []string{health.PathHealthz, health.PathReadyz} {
		if code, body := get(t, base+p); code != 503 || !strings.Contains(body, "not started") {
			t.Fatalf("%s before checks: %d %q", p, code, body)
		}
	}
	var up atomic.Int64
	s.Live("loop", func() (bool, string) { return true, "fine" })
	s.Ready("devices", health.Share("devices", func() (int, int) { return int(up.Load()), 4 }, s.Config().ReadyShare))
	if code, body := get(t, base+health.PathHealthz); code != 200 || body != "ok loop: fine\n" {
		t.Fatalf("healthz: %d %q", code, body)
	}
	for _, tc := range []struct {
		up   int64
		code int
		want string
	}{
		{0, 503, "fail devices: 0/4 devices connected (0.0%, ready at 50.0%)\n"},
		{1, 503, "fail devices: 1/4 devices connected (25.0%, ready at 50.0%)\n"},
		{2, 200, "ok devices: 2/4 devices connected (50.0%, ready at 50.0%)\n"},
		{4, 200, "ok devices: 4/4 devices connected (100.0%, ready at 50.0%)\n"},
	} {
		up.Store(tc.up)
		if code, body := get(t, base+health.PathReadyz); code != tc.code || body != tc.want {
			t.Fatalf("readyz with %d up: %d %q, want %d %q", tc.up, code, body, tc.code, tc.want)
		}
	}
	var n atomic.Uint64
	s.MustRegister(
		health.CounterFunc("test", "things_total", "Things.", n.Load),
		health.CounterVecFunc("test", "auth_total", "Auth by outcome.", "outcome", []string{"accepted", "rejected"},
			func() map[string]float64 { return map[string]float64{"accepted": float64(n.Load())} }),
	)
	n.Store(3)
	fams := scrape(t, base)
	if v := value(t, fams, "gsalt_test_things_total", nil); v != 3 {
		t.Fatalf("gsalt_test_things_total = %v", v)
	}
	if v := value(t, fams, "gsalt_test_auth_total", map[string]string{"outcome": "accepted"}); v != 3 {
		t.Fatalf("accepted = %v", v)
	}
	if v := value(t, fams, "gsalt_test_auth_total", map[string]string{"outcome": "rejected"}); v != 0 {
		t.Fatalf("rejected = %v", v)
	}
	if v := value(t, fams, "gsalt_build_info", nil); v != 1 {
		t.Fatalf("gsalt_build_info = %v", v)
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if value(t, fams, name, nil) <= 0 {
			t.Fatalf("%s not positive", name)
		}
	}
	if code, _ := get(t, base+"/other"); code != 404 {
		t.Fatalf("/other: %d", code)
	}
	resp, err := http.Post(base+health.PathReadyz, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /readyz: %d", resp.StatusCode)
	}
	// The listener stops with the context.
	cancel()
	if !testutil.Poll(5*time.Second, func() bool { _, err := http.Get(base + health.PathHealthz); return err != nil }) {
		t.Fatal("the listener still answers after the context ended")
	}
}

// TestPortInUse: a metrics_port that cannot be bound is an error naming
// the option (the daemon stops: its probes could never answer).
func TestPortInUse(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := health.New(health.Config{Port: proc.FreePort(t), Host: "127.0.0.1"}, nil)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := health.New(a.Config(), nil)
	err := b.Start(ctx)
	if err == nil || !strings.Contains(err.Error(), "metrics_port") || !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("second Start on the same port: %v", err)
	}
}

func TestHeartbeat(t *testing.T) {
	h := health.NewHeartbeat()
	if ok, d := h.Check(time.Minute)(); !ok {
		t.Fatalf("fresh heartbeat failed: %s", d)
	}
	if ok, d := h.Check(0)(); ok || !strings.Contains(d, "limit 0s") {
		t.Fatalf("a zero limit passed: %s", d)
	}
	var zero health.Heartbeat
	if ok, d := zero.Check(time.Hour)(); ok || d != "no heartbeat yet" {
		t.Fatalf("zero heartbeat: %v %s", ok, d)
	}
	// Watch beats while the probe returns and stops beating while it blocks.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var w health.Heartbeat
	block := make(chan struct{})
	var blocked atomic.Bool
	w.Watch(ctx, 10*time.Millisecond, func() {
		if blocked.Load() {
			<-block
		}
	})
	if !testutil.Poll(5*time.Second, func() bool { ok, _ := w.Check(time.Second)(); return ok }) {
		t.Fatal("Watch never beat")
	}
	blocked.Store(true)
	if !testutil.Poll(10*time.Second, func() bool { ok, _ := w.Check(200 * time.Millisecond)(); return !ok }) {
		t.Fatal("a blocked probe kept the heartbeat fresh")
	}
	close(block)
	if !testutil.Poll(5*time.Second, func() bool { ok, _ := w.Check(200 * time.Millisecond)(); return ok }) {
		t.Fatal("the heartbeat did not resume")
	}
}

// scrapeStrict checks that text is Prometheus text format that the
// parser accepts with legacy (strict) names, that every family has HELP
// and TYPE, and that no name appears twice.
func scrapeStrict(t *testing.T, text string) {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the scrape does not parse: %v", err)
	}
	for name, mf := range fams {
		if mf.GetHelp() == "" {
			t.Errorf("%s has no HELP", name)
		}
		if !strings.HasPrefix(name, "gsalt_") && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") && !strings.HasPrefix(name, "promhttp_") {
			t.Errorf("%s is not prefixed gsalt_ (nor a Go/process collector's)", name)
		}
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			if seen[f[2]] {
				t.Errorf("%s has two TYPE lines", f[2])
			}
			seen[f[2]] = true
		}
	}
}

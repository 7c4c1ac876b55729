package netapi

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/health"
)

// HealthConfig reads metrics_port, metrics_host (default 127.0.0.1),
// metrics_ready_share and metrics_heartbeat_timeout from the
// rest_cherrypy section of the master configuration: gsalt-master reads
// the top-level options of the same file.
func HealthConfig(cfg *config.Master) (health.Config, error) {
	rc := cfg.Opts.Map("rest_cherrypy")
	return health.ConfigFrom(func(k string) (any, bool) { v, ok := rc[k]; return v, ok }, health.DefaultHost)
}

// apiRoutes are the path labels of gsalt_api_requests_total (the first
// path segment under root_prefix; anything else is "other").
var apiRoutes = map[string]bool{"": true, "login": true, "logout": true, "token": true, "minions": true,
	"jobs": true, "run": true, "events": true, "keys": true, "stats": true}

// route maps a request path to its metrics label.
func (s *Server) route(path string) string {
	rest, ok := strings.CutPrefix(path, strings.TrimRight(s.opts.RootPrefix, "/"))
	if !ok {
		return "other"
	}
	rest = strings.TrimPrefix(rest, "/")
	first, _, _ := strings.Cut(rest, "/")
	if hook := strings.Trim(s.opts.WebhookURL, "/"); hook != "" && (rest == hook || strings.HasPrefix(rest, hook+"/")) {
		return "/" + hook
	}
	if apiRoutes[first] {
		return "/" + first
	}
	return "other"
}

// countRequest counts one answered request (a no-op until RegisterHealth).
func (s *Server) countRequest(path string, code int) {
	c := s.reqs.Load()
	if c == nil {
		return
	}
	if code == 0 {
		code = http.StatusOK
	}
	c.WithLabelValues(s.route(path), strconv.Itoa(code)).Inc()
}

// RegisterHealth adds gsalt-api's probes and metrics to h (nothing when h
// is nil): /healthz dials the API's own listener (addr), /readyz the
// master's request port; gsalt_api_requests_total counts requests by
// path and status.
func (s *Server) RegisterHealth(ctx context.Context, h *health.Server, addr func() net.Addr) {
	if h == nil {
		return
	}
	dial := func(what, a string) (bool, string) {
		d := net.Dialer{Timeout: 2 * time.Second}
		c, err := d.DialContext(ctx, "tcp", a)
		if err != nil {
			return false, what + " " + a + " unreachable: " + err.Error()
		}
		c.Close()
		return true, what + " " + a + " reachable"
	}
	h.Live("api listener", func() (bool, string) {
		a := addr()
		if a == nil {
			return false, "not listening yet"
		}
		host, port, _ := net.SplitHostPort(a.String())
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			host = "127.0.0.1"
			if ip.To4() == nil {
				host = "::1"
			}
		}
		return dial("listener", net.JoinHostPort(host, port))
	})
	h.Ready("master", func() (bool, string) { return dial("master request port", s.client.Addr) })
	cv := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: health.Namespace, Subsystem: "api",
		Name: "requests_total", Help: "API requests answered, by path (first segment under root_prefix) and HTTP status."},
		[]string{"path", "status"})
	h.MustRegister(cv)
	s.reqs.Store(cv)
}

// Package health serves a gsalt daemon's health and metrics endpoints on
// their own HTTP listener: GET /healthz (liveness), GET /readyz
// (readiness) and GET /metrics (Prometheus text exposition, from the
// daemon's own registry: there is no global default registry).
//
// The listener is off unless metrics_port is set (a positive port) in the
// daemon's configuration file or with --metrics-port. It binds
// metrics_host (--metrics-host). The default host is chosen to be safe:
//
//   - gsalt-master: its interface option, the address the master already
//     exposes its publish and request ports on (so a pod's probes reach it
//     where the master is reachable at all);
//   - gsalt-minion, gsalt-proxy and gsalt-api: 127.0.0.1, since nothing
//     else of these daemons listens on the network (set metrics_host:
//     0.0.0.0, or the pod IP, for Kubernetes probes).
//
// metrics_ready_share (default 0.9) is the share of a gsalt-proxy's
// devices that must be connected for /readyz to answer 200;
// metrics_heartbeat_timeout (seconds, default 30) is how old the main
// loop's last heartbeat may be before /healthz answers 503.
//
// gsalt-api reads its options from the rest_cherrypy section of the
// master configuration (rest_cherrypy: {metrics_port: ...}), so that
// gsalt-master and gsalt-api sharing one master file do not collide.
//
// Both probe endpoints answer 200 or 503 with a short text body: one line
// per check, "ok NAME: DETAIL" or "fail NAME: DETAIL". What they check:
//
//   - gsalt-master: /healthz the maintenance loop's heartbeat (it ticks
//     every second); /readyz the publish and request ports bound and the
//     job cache open (503 while starting, e.g. while another process
//     holds the job cache's lock, and while stopping).
//   - gsalt-minion: /healthz a watcher taking the minion's state lock
//     every second; /readyz authenticated by the master and the publish
//     subscription connected (--swarm: the share of identities connected,
//     against metrics_ready_share).
//   - gsalt-proxy: /healthz a watcher of the device table; /readyz the
//     share of devices connected (proxy module up, minion authenticated
//     and subscribed) against metrics_ready_share, e.g. "ok devices:
//     950/1000 devices connected (95.0%, ready at 90.0%)".
//   - gsalt-api: /healthz the API's own listener accepts; /readyz the
//     master's request port accepts.
//
// Metrics, each daemon on its own registry, besides the Go and process
// collectors (go_goroutines, go_memstats_*, process_resident_memory_bytes,
// process_cpu_seconds_total, process_open_fds, ...):
//
//	every daemon
//	  gsalt_build_info{version, salt_version} 1
//	gsalt-master
//	  gsalt_master_jobs_published_total
//	  gsalt_master_returns_received_total
//	  gsalt_master_auth_total{outcome="accepted|pending|rejected|denied|full"}
//	  gsalt_master_request_queue_depth, gsalt_master_request_queue_capacity
//	  gsalt_master_request_queue_waits_total, gsalt_master_request_dropped_total
//	  gsalt_master_request_malformed_total
//	  gsalt_master_publish_subscribers, gsalt_master_publish_dropped_total
//	  gsalt_master_connections, gsalt_master_connections_budget
//	  gsalt_master_connections_evicted_total
//	  gsalt_event_bus_subscribers, gsalt_event_bus_dropped_total
//	  gsalt_event_bus_ipc_dropped_total
//	  gsalt_jobcache_writes_total, gsalt_jobcache_write_errors_total
//	  gsalt_reactor_reactions_total{kind="local|runner|wheel|caller"}
//	  gsalt_reactor_dropped_total{reason="queue|call_queue|bus"}
//	  gsalt_reactor_failed_total, gsalt_reactor_queue_depth (reactor on)
//	gsalt-minion
//	  gsalt_minion_authentications_total, gsalt_minion_authenticated
//	  gsalt_minion_connected, gsalt_minion_publish_dropped_total
//	  gsalt_minion_swarm_connected, gsalt_minion_swarm_size,
//	  gsalt_minion_swarm_publish_dropped_total (--swarm)
//	gsalt-proxy
//	  gsalt_proxy_devices{state="starting|up|down"}
//	  gsalt_proxy_devices_connected
//	  gsalt_proxy_device_sessions_up_total
//	  gsalt_proxy_device_sessions_down_total
//	  gsalt_proxy_device_connect_errors_total
//	  gsalt_proxy_device_ops_in_flight, gsalt_proxy_device_queue_depth
//	gsalt-api
//	  gsalt_api_requests_total{path="/|/login|/minions|...|other",status="200|401|..."}
//
// The counters live where the counted things happen (atomic counters of
// the master, the transport, the event bus, the job cache, the reactor,
// the proxy fleet) and are read at scrape time: the hot paths never touch
// a Prometheus type.
package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gsalt/gsalt/version"
)

// Endpoint paths.
const (
	PathHealthz = "/healthz"
	PathReadyz  = "/readyz"
	PathMetrics = "/metrics"
)

// Option names in the daemons' configuration files.
const (
	OptPort             = "metrics_port"
	OptHost             = "metrics_host"
	OptReadyShare       = "metrics_ready_share"
	OptHeartbeatTimeout = "metrics_heartbeat_timeout"
)

// Defaults.
const (
	// DefaultHost is metrics_host for the daemons other than the master.
	DefaultHost = "127.0.0.1"
	// DefaultReadyShare is metrics_ready_share.
	DefaultReadyShare = 0.9
	// DefaultHeartbeatTimeout is metrics_heartbeat_timeout.
	DefaultHeartbeatTimeout = 30 * time.Second
	// Namespace prefixes every gsalt metric name.
	Namespace = "gsalt"
)

// ErrConfig is matched by the errors of ConfigFrom.
var ErrConfig = errors.New("health: bad configuration")

// Config are the listener's options.
type Config struct {
	// Port is metrics_port; 0 turns the endpoints off.
	Port int
	// Host is metrics_host.
	Host string
	// ReadyShare is metrics_ready_share, in (0, 1].
	ReadyShare float64
	// HeartbeatTimeout is metrics_heartbeat_timeout.
	HeartbeatTimeout time.Duration
}

// Enabled reports whether the endpoints are served.
func (c Config) Enabled() bool { return c.Port > 0 }

// Addr is host:port.
func (c Config) Addr() string {
	host := c.Host
	if host == "" {
		host = DefaultHost
	}
	return net.JoinHostPort(host, strconv.Itoa(c.Port))
}

// ConfigFrom reads the options through get (a configuration's Get, or a
// lookup in a section such as rest_cherrypy). defaultHost is used when
// metrics_host is not set ("" means DefaultHost).
func ConfigFrom(get func(key string) (any, bool), defaultHost string) (Config, error) {
	if defaultHost == "" {
		defaultHost = DefaultHost
	}
	c := Config{Host: defaultHost, ReadyShare: DefaultReadyShare, HeartbeatTimeout: DefaultHeartbeatTimeout}
	if v, ok := get(OptPort); ok && v != nil {
		n, err := toFloat(v)
		if err != nil || n != float64(int(n)) || n < 0 || n > 65535 {
			return c, fmt.Errorf("%w: %s must be a port number (0 to 65535), not %v", ErrConfig, OptPort, v)
		}
		c.Port = int(n)
	}
	if v, ok := get(OptHost); ok && v != nil {
		s, isStr := v.(string)
		if !isStr || strings.TrimSpace(s) == "" {
			return c, fmt.Errorf("%w: %s must be an address, not %v", ErrConfig, OptHost, v)
		}
		c.Host = strings.TrimSpace(s)
	}
	if v, ok := get(OptReadyShare); ok && v != nil {
		f, err := toFloat(v)
		if err != nil || f <= 0 || f > 1 {
			return c, fmt.Errorf("%w: %s must be a number in (0, 1], not %v", ErrConfig, OptReadyShare, v)
		}
		c.ReadyShare = f
	}
	if v, ok := get(OptHeartbeatTimeout); ok && v != nil {
		f, err := toFloat(v)
		if err != nil || f <= 0 {
			return c, fmt.Errorf("%w: %s must be a positive number of seconds, not %v", ErrConfig, OptHeartbeatTimeout, v)
		}
		c.HeartbeatTimeout = time.Duration(f * float64(time.Second))
	}
	return c, nil
}

// Override puts command-line values over c: a port > 0 and a host that
// is not empty.
func (c Config) Override(port int, host string) Config {
	if port > 0 {
		c.Port = port
	}
	if host != "" {
		c.Host = host
	}
	return c
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	case *big.Int:
		return 0, errors.New("too large")
	case string:
		return strconv.ParseFloat(strings.TrimSpace(x), 64)
	}
	return 0, fmt.Errorf("a %T", v)
}

// Check reports whether one condition holds, with a short detail for the
// probe's body (numbers, the reason of a failure).
type Check func() (ok bool, detail string)

type namedCheck struct {
	name  string
	check Check
}

// Server is one daemon's health and metrics listener. A nil *Server (the
// endpoints are off) accepts every call and does nothing, so daemons hook
// into it unconditionally.
type Server struct {
	cfg Config
	log *slog.Logger
	reg *prometheus.Registry

	mu    sync.Mutex
	live  []namedCheck
	ready []namedCheck

	ln   net.Listener
	srv  *http.Server
	done chan struct{}
	once sync.Once
}

// New returns the server of cfg with a fresh registry holding the Go
// runtime and process collectors (go_*, process_*), or nil when cfg is
// not Enabled.
func New(cfg Config, log *slog.Logger) *Server {
	if !cfg.Enabled() {
		return nil
	}
	if log == nil {
		log = slog.Default()
	}
	if cfg.HeartbeatTimeout <= 0 {
		cfg.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if cfg.ReadyShare <= 0 || cfg.ReadyShare > 1 {
		cfg.ReadyShare = DefaultReadyShare
	}
	reg := prometheus.NewRegistry()
	info := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "build_info",
		Help:        "Always 1; the labels say which gsalt (and which Salt release it speaks) runs.",
		ConstLabels: prometheus.Labels{"version": version.Gsalt, "salt_version": version.Salt}})
	info.Set(1)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), info)
	return &Server{cfg: cfg, log: log, reg: reg, done: make(chan struct{})}
}

// Config returns the server's configuration (the zero Config for nil).
func (s *Server) Config() Config {
	if s == nil {
		return Config{}
	}
	return s.cfg
}

// Registry returns the daemon's registry (nil for a nil Server).
func (s *Server) Registry() *prometheus.Registry {
	if s == nil {
		return nil
	}
	return s.reg
}

// MustRegister registers collectors; it panics, like prometheus'
// MustRegister, only on a programming error (a duplicate metric).
func (s *Server) MustRegister(cs ...prometheus.Collector) {
	if s == nil {
		return
	}
	s.reg.MustRegister(cs...)
}

// Live adds a liveness check (GET /healthz).
func (s *Server) Live(name string, c Check) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.live = append(s.live, namedCheck{name, c})
	s.mu.Unlock()
}

// Ready adds a readiness check (GET /readyz).
func (s *Server) Ready(name string, c Check) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.ready = append(s.ready, namedCheck{name, c})
	s.mu.Unlock()
}

// Handler serves the three endpoints (404 for other paths).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(PathHealthz, func(w http.ResponseWriter, r *http.Request) { s.probe(w, r, true) })
	mux.HandleFunc(PathReadyz, func(w http.ResponseWriter, r *http.Request) { s.probe(w, r, false) })
	mux.Handle(PathMetrics, promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	}))
	return mux
}

// probe answers /healthz or /readyz: 200 when every check holds (and there
// is at least one), 503 otherwise; one line per check.
func (s *Server) probe(w http.ResponseWriter, r *http.Request, live bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	checks := s.ready
	if live {
		checks = s.live
	}
	checks = append([]namedCheck(nil), checks...)
	s.mu.Unlock()
	var b strings.Builder
	ok := len(checks) > 0
	if !ok {
		b.WriteString("fail: not started\n")
	}
	for _, c := range checks {
		good, detail := c.check()
		word := "ok"
		if !good {
			word, ok = "fail", false
		}
		fmt.Fprintf(&b, "%s %s: %s\n", word, c.name, detail)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if ok {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = w.Write([]byte(b.String()))
}

// Start binds the listener and serves until Close or until ctx is done.
// A listener that cannot be bound is an error (the daemon should stop:
// its probes would fail anyway).
func (s *Server) Start(ctx context.Context) error {
	if s == nil {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.Addr())
	if err != nil {
		return fmt.Errorf("health: %s: %w", OptPort, err)
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("health: the metrics listener stopped", "err", err)
		}
	}()
	context.AfterFunc(ctx, func() { _ = s.Close() })
	s.log.Info("health and metrics endpoints listening", "addr", ln.Addr().String())
	return nil
}

// Addr returns the bound address (nil before Start or for nil).
func (s *Server) Addr() net.Addr {
	if s == nil || s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Close stops the listener. It is idempotent.
func (s *Server) Close() error {
	if s == nil || s.srv == nil {
		return nil
	}
	var err error
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err = s.srv.Shutdown(ctx)
		<-s.done
	})
	return err
}

// Heartbeat is the time of a loop's last iteration. Its zero value has
// never beaten; NewHeartbeat starts it at the current time.
type Heartbeat struct {
	last atomic.Int64
	now  func() time.Time
}

// NewHeartbeat returns a heartbeat that has just beaten.
func NewHeartbeat() *Heartbeat {
	h := &Heartbeat{now: time.Now}
	h.Beat()
	return h
}

// Beat records that the loop is alive. Safe on nil.
func (h *Heartbeat) Beat() {
	if h == nil {
		return
	}
	h.last.Store(h.clock().UnixNano())
}

func (h *Heartbeat) clock() time.Time {
	if h.now == nil {
		return time.Now()
	}
	return h.now()
}

// Age is the time since the last beat.
func (h *Heartbeat) Age() time.Duration {
	return h.clock().Sub(time.Unix(0, h.last.Load()))
}

// Check holds while the last beat is at most max old.
func (h *Heartbeat) Check(max time.Duration) Check {
	return func() (bool, string) {
		if h.last.Load() == 0 {
			return false, "no heartbeat yet"
		}
		age := h.Age()
		if age > max {
			return false, fmt.Sprintf("last heartbeat %s ago (limit %s)", age.Round(time.Millisecond), max)
		}
		return true, fmt.Sprintf("last heartbeat %s ago", age.Round(time.Millisecond))
	}
}

// Watch calls probe every interval until ctx is done and beats after each
// call returns: a probe that blocks (a deadlocked lock, a stuck loop)
// stops the heartbeat. probe must take the locks of the thing it watches.
func (h *Heartbeat) Watch(ctx context.Context, every time.Duration, probe func()) {
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			probe()
			h.Beat()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Share is the readiness check of "at least want of total": it holds
// when up/total >= want (and total > 0), with the numbers in the detail.
func Share(what string, counts func() (up, total int), want float64) Check {
	return func() (bool, string) {
		up, total := counts()
		if total == 0 {
			return false, fmt.Sprintf("no %s", what)
		}
		share := float64(up) / float64(total)
		d := fmt.Sprintf("%d/%d %s connected (%.1f%%, ready at %.1f%%)", up, total, what, 100*share, 100*want)
		return share >= want, d
	}
}

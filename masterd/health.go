package masterd

import (
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/health"
	"github.com/gsalt/gsalt/master"
)

// HealthConfig reads metrics_port, metrics_host (default: the interface
// option, where the master's ports listen), metrics_ready_share and
// metrics_heartbeat_timeout from the master configuration.
func HealthConfig(cfg *config.Master) (health.Config, error) {
	host := cfg.Interface
	if host == "" {
		host = "0.0.0.0"
	}
	return health.ConfigFrom(cfg.Opts.Get, host)
}

// up records which parts of the daemon are serving, for /readyz (read by
// the HTTP handler while Start runs).
type up struct {
	pub, req, jobs atomic.Bool
	closing        atomic.Bool
}

// healthChecks registers the master's probes before anything is bound:
// /healthz is the maintenance loop's heartbeat (it ticks every second) and
// the event bus; /readyz needs the publish and request ports bound and
// the job cache open.
func (d *Daemon) healthChecks(h *health.Server) {
	d.beat = health.NewHeartbeat()
	h.Live("maintenance loop", d.beat.Check(h.Config().HeartbeatTimeout))
	h.Ready("publish port", d.boundCheck(&d.up.pub, func() string { return d.pub.Addr().String() }))
	h.Ready("request port", d.boundCheck(&d.up.req, func() string { return d.req.Addr().String() }))
	h.Ready("job cache", func() (bool, string) {
		if !d.up.jobs.Load() || d.up.closing.Load() || !d.jobs.IsOpen() {
			return false, "not open"
		}
		return true, "open"
	})
}

func (d *Daemon) boundCheck(flag *atomic.Bool, addr func() string) health.Check {
	return func() (bool, string) {
		switch {
		case d.up.closing.Load():
			return false, "closing"
		case !flag.Load():
			return false, "not bound"
		}
		return true, "bound on " + addr()
	}
}

// registerMetrics exposes the master's counters (incremented where the
// things happen: master, transport, event bus, job cache, reactor).
func (d *Daemon) registerMetrics(h *health.Server) {
	reg := h.Registry()
	if reg == nil {
		return
	}
	m, bus, ipc, jobs, req, pub, gate := d.m, d.bus, d.ipc, d.jobs, d.req, d.pub, d.gate
	cs := []prometheus.Collector{
		health.CounterFunc("master", "jobs_published_total", "Jobs sent on the publish port.",
			func() uint64 { return m.Stats().JobsPublished }),
		health.CounterFunc("master", "returns_received_total", "Job returns (_return) received and stored.",
			func() uint64 { return m.Stats().ReturnsReceived }),
		health.CounterFunc("master", "slow_load_commits_total", "Publishes answered before the job cache committed their load (over 1 s).",
			func() uint64 { return m.Stats().SlowLoadCommits }),
		health.CounterVecFunc("master", "auth_total", "Minion authentications (_auth) by outcome.", "outcome",
			master.AuthOutcomes, func() map[string]float64 {
				out := map[string]float64{}
				for k, v := range m.Stats().Auth {
					out[k] = float64(v)
				}
				return out
			}),
		health.GaugeFunc("master", "request_queue_depth", "Requests waiting for a worker on the request port.",
			func() float64 { return float64(req.QueueLen()) }),
		health.GaugeFunc("master", "request_queue_capacity", "Bound of the request queue.",
			func() float64 { return float64(req.QueueCap()) }),
		health.CounterFunc("master", "request_queue_waits_total", "Requests that waited for room in a full request queue (back-pressure).",
			req.Waited),
		health.CounterFunc("master", "request_dropped_total", "Requests dropped by the request port (the queue applies back-pressure instead).",
			req.Dropped),
		health.CounterFunc("master", "request_malformed_total", "Messages on the request port ignored as malformed.",
			req.Malformed),
		health.GaugeFunc("master", "publish_subscribers", "Minion connections to the publish port.",
			func() float64 { return float64(pub.Subscribers()) }),
		health.GaugeFunc("master", "connections", "Connections the publish and request ports hold together.",
			func() float64 { return float64(gate.Conns()) }),
		health.GaugeFunc("master", "connections_budget", "Connections the two ports may hold together (open files limit minus a reserve; 0: unbounded).",
			func() float64 { return float64(gate.Max()) }),
		health.CounterFunc("master", "connections_evicted_total", "Idle request connections closed to admit a new connection when the budget was spent.",
			gate.Evicted),
		health.CounterFunc("master", "publish_dropped_total", "Publish deliveries dropped because a subscriber's queue was full.",
			pub.Dropped),
		health.GaugeFunc("event_bus", "subscribers", "Subscriptions of the master event bus.",
			func() float64 { return float64(bus.Subscribers()) }),
		health.CounterFunc("event_bus", "dropped_total", "Events lost by event bus subscriptions whose queue was full.",
			bus.Dropped),
		health.CounterFunc("event_bus", "ipc_dropped_total", "Events lost by slow readers of master_event_pub.ipc.",
			ipc.Dropped),
		health.CounterFunc("jobcache", "writes_total", "Job cache writes committed.",
			func() uint64 { return jobs.Stats().Writes }),
		health.CounterFunc("jobcache", "write_errors_total", "Job cache writes that failed.",
			func() uint64 { return jobs.Stats().WriteErrors }),
		health.CounterFunc("jobcache", "commits_total", "Job cache transactions (one fsync each; writes_total / commits_total is the mean batch).",
			func() uint64 { return jobs.Stats().Commits }),
	}
	if rx := d.rx; rx != nil {
		cs = append(cs,
			health.CounterVecFunc("reactor", "reactions_total", "Reactions started, by kind.", "kind",
				[]string{"local", "runner", "wheel", "caller"}, func() map[string]float64 {
					s := rx.Stats()
					return map[string]float64{"local": float64(s.Local), "runner": float64(s.Runner),
						"wheel": float64(s.Wheel), "caller": float64(s.Caller)}
				}),
			health.CounterVecFunc("reactor", "dropped_total", "Reactor events or reactions lost, by reason: queue (reactor_worker_hwm), call_queue (runner and wheel reactions), bus (the reactor's bus subscription was full).", "reason",
				[]string{"queue", "call_queue", "bus"}, func() map[string]float64 {
					s := rx.Stats()
					return map[string]float64{"queue": float64(s.Dropped), "call_queue": float64(s.CallDropped), "bus": float64(s.BusDropped)}
				}),
			health.CounterFunc("reactor", "failed_total", "Reactions that could not be built or started.",
				func() uint64 { return rx.Stats().Failed }),
			health.GaugeFunc("reactor", "queue_depth", "Reactor work waiting for a worker.",
				func() float64 { return float64(rx.Stats().QueueLen) }),
		)
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			d.log.Warn("metrics: cannot register a collector", "err", fmt.Sprint(err))
		}
	}
}

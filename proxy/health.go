package proxy

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/gsalt/gsalt/internal/health"
)

// sessionCounters count device sessions where they start and end.
type sessionCounters struct {
	up, down, connectErrors atomic.Uint64
}

// SessionStats are the fleet's device session counters since New.
type SessionStats struct {
	// Up counts sessions established (a successful Init of a proxy
	// module); Down sessions ended (a keepalive probe found the
	// connection dead, or the device stopped); ConnectErrors failed
	// Inits (the device is down and retried with backoff).
	Up, Down, ConnectErrors uint64
}

// SessionStats returns the session counters.
func (f *Fleet) SessionStats() SessionStats {
	return SessionStats{Up: f.sess.up.Load(), Down: f.sess.down.Load(), ConnectErrors: f.sess.connectErrors.Load()}
}

// StateCounts returns how many devices are in each state (StateStarting,
// StateUp, StateDown) and how many are connected: up, with their minion
// authenticated by and connected to its master.
func (f *Fleet) StateCounts() (states map[string]int, connected, total int) {
	states = map[string]int{StateStarting: 0, StateUp: 0, StateDown: 0}
	for _, d := range f.Devices() {
		total++
		st := d.Status().State
		if st == "" {
			st = StateStarting
		}
		states[st]++
		if st != StateUp {
			continue
		}
		if m := d.Minion(); m != nil {
			if c := m.Connection(); c.Authenticated && c.Connected {
				connected++
			}
		}
	}
	return states, connected, total
}

// RegisterHealth adds the fleet's probes and metrics to h (nothing when h
// is nil): /healthz watches the fleet's device table every second;
// /readyz holds while at least metrics_ready_share of the devices are
// connected (StateCounts), with the numbers in the body.
func (f *Fleet) RegisterHealth(ctx context.Context, h *health.Server) {
	if h == nil {
		return
	}
	hb := health.NewHeartbeat()
	hb.Watch(ctx, time.Second, func() { _ = len(f.Devices()) })
	h.Live("device table", hb.Check(h.Config().HeartbeatTimeout))
	h.Ready("devices", health.Share("devices", func() (int, int) {
		_, c, t := f.StateCounts()
		return c, t
	}, h.Config().ReadyShare))
	h.MustRegister(
		health.GaugeVecFunc("proxy", "devices", "Devices by connection state.", "state",
			[]string{StateStarting, StateUp, StateDown}, func() map[string]float64 {
				st, _, _ := f.StateCounts()
				out := map[string]float64{}
				for k, v := range st {
					out[k] = float64(v)
				}
				return out
			}),
		health.GaugeFunc("proxy", "devices_connected", "Devices up whose minion is authenticated and connected to the master.",
			func() float64 { _, c, _ := f.StateCounts(); return float64(c) }),
		health.CounterFunc("proxy", "device_sessions_up_total", "Device sessions established (successful proxy module Init).",
			func() uint64 { return f.SessionStats().Up }),
		health.CounterFunc("proxy", "device_sessions_down_total", "Device sessions ended (connection found dead, device stopped).",
			func() uint64 { return f.SessionStats().Down }),
		health.CounterFunc("proxy", "device_connect_errors_total", "Failed device connections (proxy module Init errors).",
			func() uint64 { return f.SessionStats().ConnectErrors }),
		health.GaugeFunc("proxy", "device_ops_in_flight", "Device operations in flight (bounded by --max-conns).",
			func() float64 { return float64(len(f.conns)) }),
		health.GaugeFunc("proxy", "device_queue_depth", "Commands waiting for their device, over all devices.",
			func() float64 {
				n := 0
				for _, d := range f.Devices() {
					n += d.Waiting()
				}
				return float64(n)
			}),
	)
}

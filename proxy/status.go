package proxy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// Connection states of a device, in Status.State.
const (
	// StateStarting: the device's minion has not read its proxy
	// configuration yet.
	StateStarting = "starting"
	// StateUp: the proxy module is initialised (the device answered).
	StateUp = "up"
	// StateDown: the last Init failed or the connection died; the device
	// is retried with backoff (Status.NextRetry).
	StateDown = "down"
)

// Event tags a device fires on the master's bus when its state changes
// (never twice in a row for the same state). DownTag's data has error,
// attempts and retry_in (seconds); UpTag's data has attempts (the failed
// ones before this success) and down_for (seconds).
const (
	DownTagFmt = "gsalt/proxy/%s/down"
	UpTagFmt   = "gsalt/proxy/%s/up"
)

// Defaults of the retry backoff.
const (
	// DefaultRetryMin is the first pause before a device whose Init failed
	// is tried again; the pause doubles at each failure.
	DefaultRetryMin = time.Second
	// DefaultRetryMax caps the pause (and proxy_keep_alive_interval, when
	// smaller, caps it further).
	DefaultRetryMax = time.Minute
)

// Status is a snapshot of a device's connection state.
type Status struct {
	// State is StateStarting, StateUp or StateDown.
	State string
	// Since is when the device entered State.
	Since time.Time
	// LastError is the last Init or keepalive failure ("" when up).
	LastError string
	// Attempts counts the failed attempts since the device was last up.
	Attempts int
	// NextRetry is when a down device is tried next (zero when up).
	NextRetry time.Time
	// Probes counts keepalive probes; Reconnects counts the connections
	// a probe found dead (each is re-initialised at once).
	Probes, Reconnects int64
}

// status guards a device's Status.
type status struct {
	mu sync.Mutex
	s  Status
}

func (st *status) get() Status {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.s
}

// up records a success and reports whether the state changed from down,
// with the failed attempts and how long the device was down.
func (st *status) up(now time.Time) (changed bool, attempts int, downFor time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	changed = st.s.State == StateDown
	attempts, downFor = st.s.Attempts, now.Sub(st.s.Since)
	if changed && st.s.Since.IsZero() {
		downFor = 0
	}
	if st.s.State != StateUp {
		st.s.State, st.s.Since = StateUp, now
	}
	st.s.LastError, st.s.Attempts, st.s.NextRetry = "", 0, time.Time{}
	return changed, attempts, downFor
}

// down records a failure and the next retry; it reports whether the
// state changed (from up or starting) and the attempts so far.
func (st *status) down(now time.Time, err error, retryIn time.Duration) (changed bool, attempts int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	changed = st.s.State != StateDown
	if changed {
		st.s.State, st.s.Since = StateDown, now
	}
	st.s.Attempts++
	if err != nil {
		st.s.LastError = err.Error()
	}
	st.s.NextRetry = now.Add(retryIn)
	return changed, st.s.Attempts
}

// reconnect counts a live connection found dead.
func (st *status) reconnect() {
	st.mu.Lock()
	st.s.Reconnects++
	st.mu.Unlock()
}

func (st *status) probed() {
	st.mu.Lock()
	st.s.Probes++
	st.mu.Unlock()
}

// backoff is the pause before retry number attempt (1-based): lo doubled
// per attempt, capped at hi, with ±20% jitter so that devices that failed
// together do not retry together.
func backoff(attempt int, lo, hi time.Duration) time.Duration {
	d := lo
	for i := 1; i < attempt && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	j := time.Duration(float64(d) * 0.2 * (2*rand.Float64() - 1))
	return max(d+j, time.Millisecond)
}

// Status returns a snapshot of the device's connection state.
func (d *Device) Status() Status { return d.st.get() }

// fireState reports a state change on the master's bus (best effort: a
// master that is unreachable just misses it; the log has it too).
func (d *Device) fireState(ctx context.Context, tagFmt string, data *payload.Map) {
	m := d.Minion()
	if m == nil {
		return
	}
	tag := fmt.Sprintf(tagFmt, d.id)
	if err := m.FireMaster(ctx, data, tag); err != nil {
		d.log.Info("fire_master failed", "tag", tag, "err", err)
	}
}

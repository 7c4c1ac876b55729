package minion

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gsalt/gsalt/wire/transport"
)

// runState is the fatal-error sink of a running minion.
type runState struct {
	mu     sync.Mutex
	err    error
	cancel context.CancelFunc
}

// Run connects to the master (or masters: Salt's multi-master options,
// see multimaster.go) and serves jobs until ctx is done (then it returns
// nil) or a fatal condition stops the minion (ErrRejected,
// ErrMasterFinger, ErrNoMaster, ErrMasterType). It may be called once.
func (m *Minion) Run(ctx context.Context) error {
	if len(m.links) == 0 && m.masterFunc == "" {
		return ErrNoMaster
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := &runState{cancel: cancel}
	m.mu.Lock()
	m.runCtx = rctx
	m.mu.Unlock()
	m.setRunState(st)
	defer func() {
		cancel()
		m.waitJobs(15 * time.Second)
		m.rets.closeAll()
		m.closeReqPools()
		m.closeReplayGuard()
	}()

	if d := m.optInt("random_startup_delay", 0); d > 0 {
		if err := sleep(rctx, jitter(0, time.Duration(d)*time.Second)); err != nil {
			return st.result(ctx)
		}
	}
	if m.masterFunc != "" && len(m.links) == 0 {
		if err := m.evalMasterFunc(rctx); err != nil {
			return err
		}
	}
	if m.mode == modeFailover {
		m.runFailover(rctx)
	} else {
		m.runHot(rctx)
	}
	return st.result(ctx)
}

// serveLink subscribes to l's publisher and hands its jobs over until ctx
// ends, resubscribing when the master's publish port changes. Jobs run
// under the run context (a job outlives a failover) marked with l, so
// their returns go to the master that published them.
func (m *Minion) serveLink(ctx context.Context, l *link, s *session) {
	jobCtx := withLink(m.backgroundCtx(), l)
	if m.mode == modeHot {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.watchAlive(ctx, l)
		}()
	}
	addr, port := m.publishAddr(l, s)
	started := false
	for ctx.Err() == nil {
		loopCtx, loopCancel := context.WithCancel(ctx)
		o := m.subOptions()
		if m.pushPublishes() {
			// recvLoop below then only waits for the subscription's end.
			o.Deliver = (&deliverer{m: m, ctx: jobCtx}).deliver
		}
		sub, err := m.subscribe(loopCtx, addr, o)
		if err != nil {
			loopCancel()
			m.fatal(err)
			return
		}
		m.mu.Lock()
		l.subPort = port
		l.resubFn = loopCancel
		m.mu.Unlock()
		box := &subBox{sub}
		l.sub.Store(box)
		if rn, ok := sub.(ReconnectNotifier); ok {
			rn.OnReconnect(m.reauthAfterReconnect(loopCtx, l))
		} else {
			go m.watchReconnects(loopCtx, l, sub)
		}
		if !started {
			started = true
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				m.linkStarted(ctx, l, sub)
			}()
		}
		m.recvLoop(loopCtx, jobCtx, sub)
		sub.Close()
		l.sub.CompareAndSwap(box, nil)
		loopCancel()
		if s := m.linkSession(l); s != nil {
			addr, port = m.publishAddr(l, s)
		}
	}
}

// Subscription is a minion's view of the master's publisher:
// *transport.Subscriber, or what Options.Subscribe returns.
type Subscription interface {
	// Recv returns the next published message (its frames, which the
	// minion only reads) until ctx ends or the subscription is closed.
	Recv(ctx context.Context) ([][]byte, error)
	// Connected is closed once the publisher connection is up.
	Connected() <-chan struct{}
	// Reconnected receives a value after each re-connection.
	Reconnected() <-chan struct{}
	// Close ends the subscription.
	Close() error
	// Up reports whether the publisher connection is up now.
	Up() bool
	// Dropped counts publishes dropped because the queue was full.
	Dropped() uint64
}

// subBox holds a link's current subscription (atomic.Pointer needs one
// concrete type).
type subBox struct{ Subscription }

// subscribe opens the minion's subscription to the publisher at addr.
func (m *Minion) subscribe(ctx context.Context, addr string, o transport.SubOptions) (Subscription, error) {
	if m.subscribeFn != nil {
		return m.subscribeFn(ctx, addr, o)
	}
	o.Gate = m.gates.For(addr)
	o.Source = m.source
	return transport.DialSub(ctx, addr, o)
}

// runPrepare runs Options.Prepare and installs what it returns: a new
// registry (and a beacon manager calling through it), then fresh grains,
// which a pillar refresh sends to the master.
// No job runs yet, so nothing else reads these fields concurrently.
func (m *Minion) runPrepare(ctx context.Context) error {
	reg, err := m.prepare(ctx, m)
	if err != nil {
		return err
	}
	if reg != nil {
		m.mu.Lock()
		m.reg = reg
		m.mu.Unlock()
		b := m.newBeacons()
		m.mu.Lock()
		svc := make(map[string]any, len(m.services))
		for k, v := range m.services {
			svc[k] = v
		}
		svc["beacons"] = b
		m.beacons, m.services = b, svc
		m.mu.Unlock()
	}
	if m.grainsFunc != nil {
		if err := (grainsStore{m}).RefreshGrains(ctx, false); err != nil {
			return err
		}
		// The master caches the grains sent with _pillar for its grain
		// targeting: send the new ones.
		if err := m.refreshPillar(ctx); err != nil {
			m.log.Warn("could not refresh the pillar after Prepare", "err", err)
		}
	}
	return nil
}

// setRunState records the run's fatal-error sink.
func (m *Minion) setRunState(st *runState) {
	m.mu.Lock()
	m.runState = st
	m.mu.Unlock()
}

// result is Run's return value: the fatal error, or nil when the caller
// cancelled.
func (st *runState) result(parent context.Context) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.err != nil && !errors.Is(st.err, context.Canceled) {
		return st.err
	}
	return nil
}

// fatal stops Run with err (rejected key, fingerprint mismatch).
func (m *Minion) fatal(err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	m.mu.RLock()
	st := m.runState
	m.mu.RUnlock()
	if st == nil {
		return
	}
	st.mu.Lock()
	if st.err == nil {
		st.err = err
	}
	st.mu.Unlock()
	st.cancel()
}

// subOptions configures the SUB socket like Salt's PublishClient.
func (m *Minion) subOptions() transport.SubOptions {
	o := transport.SubOptions{
		Identity:     []byte(m.id),
		ReconnectMin: time.Duration(m.optInt("recon_default", 1000)) * time.Millisecond,
		ReconnectMax: time.Duration(m.optInt("recon_max", 10000)) * time.Millisecond,
		QueueSize:    m.subQueue,
		Logger:       m.log,
	}
	if m.opened != nil {
		o.Intern = m.opened.intern
	}
	if o.ReconnectMax < o.ReconnectMin {
		o.ReconnectMax = o.ReconnectMin
	}
	if m.cfg.ZMQFiltering {
		o.Topics = [][]byte{[]byte("broadcast"), []byte(hexID(m.id))}
	}
	return o
}

// recvLoop hands every published message to handleFrames (with jobCtx,
// the context of the jobs it starts) until ctx ends.
func (m *Minion) recvLoop(ctx, jobCtx context.Context, sub Subscription) {
	for {
		frames, err := sub.Recv(ctx)
		if err != nil {
			return
		}
		m.handleFrames(jobCtx, frames)
	}
}

// ReconnectNotifier is implemented by a Subscription that calls a
// function after each re-connection (a process serving many identities
// from one publisher connection) instead of only signalling on
// Reconnected: no goroutine waits for each identity's re-connections.
type ReconnectNotifier interface {
	// OnReconnect registers fn, called (it must not block) after each
	// re-connection until the subscription is closed.
	OnReconnect(fn func())
}

// reauthAfterReconnect returns the OnReconnect function of l's
// subscription: it re-authenticates as watchReconnects does, one at a
// time (a re-connection during a re-authentication makes one more), and
// no more after one failed or ctx ended.
func (m *Minion) reauthAfterReconnect(ctx context.Context, l *link) func() {
	var (
		mu             sync.Mutex
		running, again bool
		stopped        bool
	)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped || ctx.Err() != nil {
			return
		}
		if running {
			again = true
			return
		}
		running = true
		go func() {
			for {
				m.log.Info("reconnected to the master's publisher; re-authenticating", "master", l.master)
				_, err := m.reauth(ctx, l, m.linkSession(l))
				mu.Lock()
				if err != nil || ctx.Err() != nil {
					stopped, running = true, false
					mu.Unlock()
					return
				}
				if !again {
					running = false
					mu.Unlock()
					return
				}
				again = false
				mu.Unlock()
			}
		}()
	}
}

// watchReconnects re-authenticates after the publisher connection was
// re-established: the master may have restarted with a new session key.
func (m *Minion) watchReconnects(ctx context.Context, l *link, sub Subscription) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.Reconnected():
			m.log.Info("reconnected to the master's publisher; re-authenticating", "master", l.master)
			if _, err := m.reauth(ctx, l, m.linkSession(l)); err != nil {
				return
			}
		}
	}
}

// checkPublishPort restarts l's subscription when a new session names
// another publish port.
func (m *Minion) checkPublishPort(l *link, s *session) {
	_, port := m.publishAddr(l, s)
	m.mu.Lock()
	fn := l.resubFn
	changed := l.subPort != 0 && port != l.subPort
	m.mu.Unlock()
	if changed && fn != nil {
		m.log.Info("the master's publish port changed; resubscribing", "port", port)
		fn()
	}
}

// linkStarted fires the start events to l's master once its subscription
// is up (each master gets them, as each of Salt's per-master minions sends
// them, and a failover sends them to the new master), then starts the
// minion's own services after the first master.
func (m *Minion) linkStarted(ctx context.Context, l *link, sub Subscription) {
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-sub.Connected():
	case <-t.C:
	case <-ctx.Done():
		return
	}
	m.fireStartEvents(onlyLink(ctx, l))
	m.servicesOnce.Do(func() {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.runServices(m.backgroundCtx())
		}()
	})
}

// runServices marks the minion ready, then keeps the beacons, the
// schedule, the mine and the master ping going until ctx ends. It
// returns at once: the mine and the ping run from timers (no goroutine
// waits for each minion between them; a process serving thousands of
// identities holds only their timers).
func (m *Minion) runServices(ctx context.Context) {
	m.markReady()
	if m.beaconClock != nil {
		m.runBeacons(ctx) // joins the clock and returns
	} else {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.runBeacons(ctx)
		}()
	}
	m.startSchedule(ctx)
	mineEnabled := true
	if v, ok := m.cfg.Opts.Get("mine_enabled"); ok {
		mineEnabled = v != false
	}
	if _, ok := m.reg.Lookup("mine.update"); ok && mineEnabled {
		m.runMine(ctx)
		if iv := m.cfg.MineInterval; iv > 0 {
			every(ctx, time.Duration(iv)*time.Minute, m.runMine)
		}
	}
	if iv := m.cfg.PingInterval; iv > 0 {
		every(ctx, time.Duration(iv)*time.Minute, func(ctx context.Context) {
			if err := m.fireMaster(ctx, "ping", "minion_ping", false); err != nil {
				m.log.Info("ping to the master failed", "err", err)
			}
		})
	}
}

// every runs fn each period until ctx ends, from a timer: one run at a
// time, the next period counted from the end of the last run.
func every(ctx context.Context, period time.Duration, fn func(context.Context)) {
	var (
		mu   sync.Mutex
		t    *time.Timer
		done bool
	)
	tick := func() {
		if ctx.Err() != nil {
			return
		}
		fn(ctx)
		mu.Lock()
		defer mu.Unlock()
		if !done {
			t.Reset(period)
		}
	}
	mu.Lock()
	t = time.AfterFunc(period, tick)
	mu.Unlock()
	context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		done = true
		t.Stop()
	})
}

// runMine is the scheduled __mine_interval job: mine.update.
func (m *Minion) runMine(ctx context.Context) {
	res := m.reg.Execute(ctx, m.binder, m.env(), "mine.update", nil, nil)
	if res.Retcode != 0 {
		m.log.Warn("mine.update failed", "return", res.Return)
	}
}

// waitJobs waits for the job goroutines to see their cancelled context,
// at most d (a function that ignores its context must not keep the minion
// from stopping).
func (m *Minion) waitJobs(d time.Duration) {
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
		m.log.Warn("jobs still running at shutdown", "jobs", m.jobs.count())
	}
}

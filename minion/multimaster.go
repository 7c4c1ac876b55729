package minion

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/gsalt/gsalt/wire/transport"
)

// Salt's multi-master modes (salt/minion.py MinionManager and
// MinionBase.eval_master).
//
//   - hot (master_type str with a list of masters): one connection per
//     master; jobs are accepted from every master and each job's return
//     goes to the master that published it; events the minion sends on
//     its own (fire_master, beacons, mine, schedule returns) go to every
//     master, as Salt's per-master Minion objects each forward them.
//   - failover (master_type failover, or distributed): one master at a
//     time, the first of the list that accepts the minion; with
//     master_alive_interval the publisher connection is checked and a lost
//     master is moved to the end of the list (__master_disconnected); with
//     master_failback the first master is pinged every
//     master_failback_interval and the minion returns to it
//     (__master_failback).
//   - func: master names module.function whose result is the master (or a
//     list of masters, of which the first reachable one is used).
//
// All masters share one pki_dir and one cached minion_master.pub, as in
// Salt: they must share the master key pair (the Multi-Master tutorial
// copies master.pem and master.pub to every master).
type masterMode int

const (
	modeHot masterMode = iota
	modeFailover
)

// Local event tags Salt's status.master and status.ping_master fire
// (salt.minion.master_event).
const (
	TagMasterConnected    = "__master_connected"
	TagMasterDisconnected = "__master_disconnected"
	TagMasterFailback     = "__master_failback"
)

// ErrMasterType is returned by Run for a master_type Salt does not know.
var ErrMasterType = errors.New("minion: invalid master_type")

// errUnresolvable: a master name did not resolve (failover skips it).
var errUnresolvable = errors.New("minion: master hostname could not be resolved")

// link is the minion's connection to one master: Salt's per-master
// Minion object of a MinionManager.
type link struct {
	master string // the entry of the master option
	port   int    // ret port

	hostMu sync.Mutex
	host   string // host to dial
	addr   string // host:ret_port

	authMu sync.Mutex // serialises authentications with this master

	sub atomic.Pointer[subBox] // the publisher connection

	// Guarded by Minion.mu.
	sess        *session
	subPort     int
	resubFn     context.CancelFunc
	lastDialErr string
	// reached: the last _auth exchange with this master got a reply, so
	// the next sign-in (a re-authentication) skips the reachability probe.
	reached bool
}

// target returns the host and the request address (host:ret_port) of l.
func (l *link) target() (host, addr string) {
	l.hostMu.Lock()
	defer l.hostMu.Unlock()
	return l.host, l.addr
}

// isUp reports whether l's publisher connection is established.
func (l *link) isUp() bool {
	s := l.sub.Load()
	return s != nil && s.Up()
}

// linkCtxKey carries the link a job came from (and whether a request must
// go to that link only) in a context.
type linkCtxKey struct{}

type linkCtx struct {
	l    *link
	only bool
}

// withLink marks ctx as belonging to l: requests made under it go to l.
func withLink(ctx context.Context, l *link) context.Context {
	return context.WithValue(ctx, linkCtxKey{}, linkCtx{l: l})
}

// onlyLink makes every request under ctx go to l, events included.
func onlyLink(ctx context.Context, l *link) context.Context {
	return context.WithValue(ctx, linkCtxKey{}, linkCtx{l: l, only: true})
}

func linkOf(ctx context.Context) linkCtx {
	if ctx == nil {
		return linkCtx{}
	}
	lc, _ := ctx.Value(linkCtxKey{}).(linkCtx)
	return lc
}

// parseMasters builds the links of the master entries ("host",
// "host:port", "[v6]:port").
func parseMasters(entries []string, defPort int) []*link {
	if defPort == 0 {
		defPort = 4506
	}
	var out []*link
	for _, e := range entries {
		host := strings.TrimSpace(e)
		port := defPort
		if h, p, err := net.SplitHostPort(host); err == nil {
			if n, err := strconv.Atoi(p); err == nil {
				host, port = h, n
			}
		}
		host = strings.Trim(host, "[]")
		if host == "" {
			continue
		}
		out = append(out, &link{master: strings.TrimSpace(e), host: host, port: port, addr: net.JoinHostPort(host, strconv.Itoa(port))})
	}
	return out
}

// setupMasters reads master, master_type, random_master/master_shuffle and
// master_failback(_interval) into the minion's links and mode, as
// eval_master does before its first connection.
func (m *Minion) setupMasters() error {
	mt := m.cfg.MasterType
	if mt == "" {
		mt = "str"
	}
	if mt == "disable" || len(m.cfg.Master) == 0 {
		return ErrNoMaster
	}
	switch mt {
	case "str":
		m.mode = modeHot
	case "failover", "distributed":
		m.mode = modeFailover
	case "func":
		// Evaluated in Run, where the execution modules can run.
		m.masterFunc = strings.TrimSpace(m.cfg.Master[0])
		m.mode = modeFailover
		return nil
	default:
		return fmt.Errorf("%w: Invalid keyword '%s' for variable 'master_type'", ErrMasterType, mt)
	}
	return m.setLinks(m.cfg.Master, mt)
}

// setLinks installs the links of masters for master type mt.
func (m *Minion) setLinks(masters []string, mt string) error {
	links := parseMasters(masters, m.cfg.MasterPort)
	if len(links) == 0 {
		return ErrNoMaster
	}
	if m.mode == modeFailover {
		if mt == "distributed" && len(links) > 1 {
			// Salt 3006 computes crc32 over the str id, which raises
			// TypeError on Python 3 and is caught: the list order stays.
			m.log.Warn("Failed to distribute to a specific master.")
		}
		if m.cfg.MasterShuffle {
			m.log.Warn("Use of 'master_shuffle' detected. 'master_shuffle' is deprecated in favor of 'random_master'. Please update your minion config file.")
		}
		m.failbackEvery = time.Duration(m.cfg.MasterFailbackInterval) * time.Second
		if m.cfg.MasterFailback && m.failbackEvery == 0 {
			m.failbackEvery = time.Duration(m.cfg.MasterAliveInterval) * time.Second
		}
		if m.cfg.RetryDNS != 0 && m.masterFunc == "" {
			m.log.Error("'master_type' set to 'failover' but 'retry_dns' is not 0. Setting 'retry_dns' to 0 to failover to the next master on DNS errors.")
		}
		m.retryDNS = 0
	} else {
		m.retryDNS = m.cfg.RetryDNS
	}
	order := m.shuffled(links)
	m.mu.Lock()
	m.links = order
	m.masterList = append([]*link(nil), order...)
	m.mu.Unlock()
	return nil
}

// randomMaster reports whether random_master (or the deprecated
// master_shuffle, in failover) is on.
func (m *Minion) randomMaster() bool {
	return m.cfg.RandomMaster || (m.mode == modeFailover && m.cfg.MasterShuffle)
}

// shuffled returns the connection order of links: shuffled with
// random_master, keeping the first in place in failover with
// master_failback (eval_master).
func (m *Minion) shuffled(links []*link) []*link {
	out := append([]*link(nil), links...)
	if !m.randomMaster() || len(out) < 2 {
		return out
	}
	if m.mode == modeFailover && m.cfg.MasterFailback {
		rest := out[1:]
		rand.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		return out
	}
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// evalMasterFunc runs master_type func's module.function and makes its
// result the master list (eval_master_func).
func (m *Minion) evalMasterFunc(ctx context.Context) error {
	fn := m.masterFunc
	if strings.Count(fn, ".") != 1 {
		m.log.Error("Failed to load module " + fn)
		return fmt.Errorf("%w: Failed to load module %s", ErrMasterType, fn)
	}
	if _, ok := m.reg.Lookup(fn); !ok {
		m.log.Error("Failed to load module " + fn)
		return fmt.Errorf("%w: Failed to load module %s", ErrMasterType, fn)
	}
	res := m.reg.Execute(ctx, m.binder, m.env(), fn, nil, nil)
	var masters []string
	switch v := res.Return.(type) {
	case string:
		masters = []string{v}
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				masters = nil
				break
			}
			masters = append(masters, s)
		}
	}
	if res.Retcode != 0 || len(masters) == 0 {
		msg := fmt.Sprintf("%v returned from %s is not a string", res.Return, fn)
		m.log.Error(msg)
		return fmt.Errorf("%w: %s", ErrMasterType, msg)
	}
	m.log.Info("Evaluated master from module: " + fn)
	// A list from func is walked like eval_master walks any list: the
	// first reachable master is used.
	return m.setLinks(masters, "func")
}

// resolveLink is resolve_dns: a master name that does not resolve is
// retried every retry_dns seconds (retry_dns_count times when set); with
// retry_dns 0 failover skips it and the other modes fall back to
// 127.0.0.1, as Salt does.
func (m *Minion) resolveLink(ctx context.Context, l *link) error {
	host, _ := l.target()
	if net.ParseIP(host) != nil {
		return nil
	}
	lookup := func() error {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		lookupHost := m.lookupHost
		if lookupHost == nil {
			lookupHost = net.DefaultResolver.LookupHost
		}
		_, err := lookupHost(lctx, host)
		return err
	}
	err := lookup()
	if err == nil {
		return nil
	}
	if m.retryDNS <= 0 {
		if m.mode == modeFailover {
			return fmt.Errorf("%w: %s: %w", errUnresolvable, l.master, err)
		}
		m.log.Error("master hostname not found; using 127.0.0.1", "master", l.master, "err", err)
		l.hostMu.Lock()
		l.host = "127.0.0.1"
		l.addr = net.JoinHostPort(l.host, strconv.Itoa(l.port))
		l.hostMu.Unlock()
		return nil
	}
	count := -1
	if v, ok := m.cfg.Opts.Get("retry_dns_count"); ok && v != nil {
		if n, err := m.cfg.Opts.Int("retry_dns_count"); err == nil {
			count = n
		}
	}
	for {
		if count == 0 {
			msg := fmt.Sprintf("Master address: '%s' could not be resolved. Invalid or unresolveable address. Set 'master' value in minion config.", l.master)
			m.log.Error(msg)
			return fmt.Errorf("%w: %s", errUnresolvable, msg)
		}
		if count > 0 {
			count--
		}
		m.log.Error(fmt.Sprintf("Master hostname: '%s' not found or not responsive. Retrying in %v seconds", l.master, m.retryDNS))
		if err := sleep(ctx, seconds(m.retryDNS)); err != nil {
			return err
		}
		if lookup() == nil {
			return nil
		}
	}
}

// linkSession returns l's session.
func (m *Minion) linkSession(l *link) *session {
	if l == nil {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return l.sess
}

// primary is the master requests without a job's link go to: the current
// master in failover, else the first master with a session whose
// publisher connection is up (or the first with a session).
func (m *Minion) primary() *link {
	if m.mode == modeFailover {
		if a := m.active.Load(); a != nil {
			return a
		}
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var withSess *link
	for _, l := range m.links {
		if l.sess == nil {
			continue
		}
		if l.isUp() {
			return l
		}
		if withSess == nil {
			withSess = l
		}
	}
	if withSess != nil {
		return withSess
	}
	if len(m.links) > 0 {
		return m.links[0]
	}
	return nil
}

// linkFor is the master a request under ctx goes to.
func (m *Minion) linkFor(ctx context.Context) *link {
	lc := linkOf(ctx)
	if lc.l != nil && (lc.only || m.mode == modeHot) {
		return lc.l
	}
	return m.primary()
}

// requestTargets are the masters load goes to: every connected master for
// the events, mine data and schedule returns the minion sends on its own
// in hot multi-master, else linkFor's master.
func (m *Minion) requestTargets(ctx context.Context, cmd string) []*link {
	lc := linkOf(ctx)
	if m.mode == modeHot && len(m.links) > 1 && !lc.only &&
		(cmd == "_minion_event" || cmd == "_mine" || cmd == "_mine_delete" || cmd == "_mine_flush" || (cmd == "_return" && lc.l == nil)) {
		m.mu.RLock()
		defer m.mu.RUnlock()
		var out []*link
		for _, l := range m.links {
			if l.sess != nil {
				out = append(out, l)
			}
		}
		return out
	}
	if l := m.linkFor(ctx); l != nil {
		return []*link{l}
	}
	return nil
}

// pingMaster sends Salt's clear {"cmd": "ping"} to l (status.ping_master).
func (m *Minion) pingMaster(ctx context.Context, l *link) bool {
	if err := m.resolveLink(ctx, l); err != nil {
		return false
	}
	frame, err := message.EncodeClearRequest(payload.NewMap("cmd", "ping"))
	if err != nil {
		return false
	}
	timeout := time.Duration(m.cfg.AuthTimeout) * time.Second
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	_, addr := l.target()
	client := transport.ReqClient{Addr: addr, Tries: 1, Timeout: timeout, Logger: m.log, Source: m.source}
	_, err = client.Send(ctx, frame)
	return err == nil
}

// fireLocal fires a minion-local event (the local event bus).
func (m *Minion) fireLocal(ctx context.Context, tag string, data any) {
	eventBus{m}.Fire(ctx, tag, data)
}

// watchAlive is the __master_alive_<master> job of a hot multi-master or
// single-master minion: every master_alive_interval it checks the
// publisher connection of l and fires __master_disconnected when it was
// lost and __master_connected when it is back.
func (m *Minion) watchAlive(ctx context.Context, l *link) {
	iv := time.Duration(m.cfg.MasterAliveInterval) * time.Second
	if iv <= 0 || m.cfg.Transport == "tcp" {
		return
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	connected := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		up := l.isUp()
		switch {
		case connected && !up:
			connected = false
			m.fireLocal(ctx, TagMasterDisconnected, payload.NewMap("master", l.master))
			m.log.Info(fmt.Sprintf("Connection to master %s lost", l.master))
		case !connected && up:
			connected = true
			m.fireLocal(ctx, TagMasterConnected, payload.NewMap("master", l.master))
			m.log.Info(fmt.Sprintf("Connection to master %s re-established", l.master))
		}
	}
}

// connectFirst walks order like eval_master: the first master that
// resolves, answers and accepts the key is used; a round in which none did
// is followed by acceptance_wait_time (growing up to
// acceptance_wait_time_max) and another round, until ctx ends or a fatal
// error (rejected key, fingerprint mismatch).
func (m *Minion) connectFirst(ctx context.Context, order []*link) (*link, *session, error) {
	wait := seconds(m.cfg.AcceptanceWaitTime)
	if wait <= 0 {
		wait = 10 * time.Second
	}
	waitMax := seconds(m.cfg.AcceptanceWaitTimeMax)
	tries := m.cfg.MasterTries
	for attempt := 1; ; attempt++ {
		for _, l := range order {
			if err := m.resolveLink(ctx, l); err != nil {
				if ctx.Err() != nil {
					return nil, nil, ctx.Err()
				}
				m.log.Info(fmt.Sprintf("Master %s could not be resolved, trying next master (if any)", l.master), "err", err)
				continue
			}
			l.authMu.Lock()
			s, err := m.authenticate(ctx, l, len(order) > 1)
			l.authMu.Unlock()
			if err == nil {
				return l, s, nil
			}
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			if errors.Is(err, ErrRejected) || errors.Is(err, ErrMasterFinger) || errors.Is(err, ErrPending) {
				return nil, nil, err
			}
			m.log.Info(fmt.Sprintf("Master %s could not be reached, trying next master (if any)", l.master), "err", err)
		}
		if tries > 0 && attempt%tries == 0 {
			m.log.Error("No master could be reached or all masters denied the minion's connection attempt.")
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, nil, err
		}
		if wait < waitMax {
			wait += seconds(m.cfg.AcceptanceWaitTime)
		}
	}
}

// failoverOrder is the next connection order after cur was lost (moved to
// the end) or after a failback (the configured list again), shuffled as
// eval_master shuffles it with random_master.
func (m *Minion) failoverOrder(order []*link, cur *link, failback bool) []*link {
	var next []*link
	if failback || cur == nil {
		next = append(next, m.masterList...)
	} else {
		for _, l := range order {
			if l != cur {
				next = append(next, l)
			}
		}
		next = append(next, cur)
	}
	return m.shuffled(next)
}

// runFailover serves one master at a time (master_type failover).
func (m *Minion) runFailover(rctx context.Context) {
	order := append([]*link(nil), m.links...)
	first := true
	for rctx.Err() == nil {
		l, s, err := m.connectFirst(rctx, order)
		if err != nil {
			m.fatal(err)
			return
		}
		m.active.Store(l)
		if first {
			first = false
			if err := m.initAfterAuth(rctx); err != nil {
				m.fatal(err)
				return
			}
		} else {
			m.log.Info(fmt.Sprintf("Re-initialising subsystems for new master %s", l.master))
		}
		lctx, lcancel := context.WithCancel(rctx)
		reason := make(chan string, 2)
		served := make(chan struct{})
		go func() {
			defer close(served)
			m.serveLink(lctx, l, s)
		}()
		var mon sync.WaitGroup
		if iv := time.Duration(m.cfg.MasterAliveInterval) * time.Second; iv > 0 && m.cfg.Transport != "tcp" {
			mon.Add(1)
			go func() {
				defer mon.Done()
				t := time.NewTicker(iv)
				defer t.Stop()
				for {
					select {
					case <-lctx.Done():
						return
					case <-t.C:
					}
					if !l.isUp() {
						m.fireLocal(lctx, TagMasterDisconnected, payload.NewMap("master", l.master))
						m.log.Info(fmt.Sprintf("Connection to master %s lost", l.master))
						reason <- "failed"
						return
					}
				}
			}()
		}
		if top := m.masterList[0]; m.cfg.MasterFailback && l != top && m.failbackEvery > 0 {
			mon.Add(1)
			go func() {
				defer mon.Done()
				t := time.NewTicker(m.failbackEvery)
				defer t.Stop()
				for {
					select {
					case <-lctx.Done():
						return
					case <-t.C:
					}
					if m.pingMaster(lctx, top) {
						m.log.Info(fmt.Sprintf("Master %s answers again; failing back to it", top.master))
						m.fireLocal(lctx, TagMasterFailback, payload.NewMap("master", top.master))
						reason <- "failback"
						return
					}
				}
			}()
		}
		var why string
		select {
		case why = <-reason:
		case <-rctx.Done():
		case <-served:
		}
		lcancel()
		mon.Wait()
		<-served
		if rctx.Err() != nil {
			return
		}
		m.log.Info("Trying to tune in to next master from master-list")
		m.mu.Lock()
		l.sess = nil
		m.mu.Unlock()
		m.active.Store(nil)
		order = m.failoverOrder(order, l, why == "failback")
	}
}

// runHot connects to every master at once (hot multi-master, or the one
// master of a plain minion). The pillar and Prepare run once, after the
// first master accepted the key.
func (m *Minion) runHot(rctx context.Context) {
	if len(m.links) == 1 {
		m.runSingle(rctx, m.links[0])
		<-rctx.Done() // as below: a failed link waits for the run's end
		return
	}
	firstOK := make(chan struct{}, len(m.links))
	prepared := make(chan struct{})
	var wg sync.WaitGroup
	for _, l := range m.links {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, ok := m.linkUp(rctx, l)
			if !ok {
				return
			}
			firstOK <- struct{}{}
			select {
			case <-prepared:
			case <-rctx.Done():
				return
			}
			if cur := m.linkSession(l); cur != nil {
				s = cur
			}
			m.serveLink(rctx, l, s)
		}()
	}
	select {
	case <-firstOK:
		if err := m.initAfterAuth(rctx); err != nil {
			m.fatal(err)
		} else {
			close(prepared)
		}
	case <-rctx.Done():
	}
	<-rctx.Done()
	wg.Wait()
}

// runSingle is runHot for the one master of a plain minion, in the
// caller's goroutine: the same steps (resolve, authenticate, pillar and
// Prepare, then serve) without a goroutine per link waiting beside the
// caller (a process serving thousands of identities keeps one goroutine
// less for each).
func (m *Minion) runSingle(rctx context.Context, l *link) {
	s, ok := m.linkUp(rctx, l)
	if !ok {
		return
	}
	if err := m.initAfterAuth(rctx); err != nil {
		m.fatal(err)
		return
	}
	if cur := m.linkSession(l); cur != nil {
		s = cur
	}
	m.serveLink(rctx, l, s)
}

// linkUp resolves a link's master and authenticates to it; on failure it
// reports the error as fatal (unless the run is ending) and returns false.
func (m *Minion) linkUp(rctx context.Context, l *link) (*session, bool) {
	if err := m.resolveLink(rctx, l); err != nil {
		if rctx.Err() == nil {
			m.fatal(err)
		}
		return nil, false
	}
	l.authMu.Lock()
	s, err := m.authenticate(rctx, l, false)
	l.authMu.Unlock()
	if err != nil {
		m.fatal(err)
		return nil, false
	}
	return s, true
}

// initAfterAuth fetches the pillar and runs Prepare once the first master
// accepted the key.
func (m *Minion) initAfterAuth(ctx context.Context) error {
	if err := m.refreshPillar(ctx); err != nil {
		m.log.Warn("could not fetch the pillar; continuing with an empty pillar", "err", err)
	}
	if m.prepare != nil {
		return m.runPrepare(ctx)
	}
	return nil
}

package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/grains"
	"github.com/gsalt/gsalt/minion"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/wire/payload"
)

// Device is one proxy minion of a Fleet: its own id, key pair, grains,
// pillar and master connection, and one proxy module instance through
// which every device command passes, one at a time.
type Device struct {
	f      *Fleet
	id     string
	parent string
	log    *slog.Logger

	slot    chan struct{} // held while a command runs on the device
	waiting atomic.Int64  // commands waiting for slot

	mu          sync.RWMutex
	cfg         *config.Minion
	m           *minion.Minion
	typ         proxymod.Type
	mod         proxymod.Module
	modCfg      *proxymod.Config
	initialized bool
	initErr     error
	st          status

	ready     chan struct{}
	readyOnce sync.Once
	done      chan struct{}
	err       error // why the device stopped for good (set before done closes)
}

func newDevice(f *Fleet, id, parent string) *Device {
	d := &Device{
		f: f, id: id, parent: parent,
		log:   f.log.With("minion", id),
		slot:  make(chan struct{}, 1),
		ready: make(chan struct{}),
		done:  make(chan struct{}),
	}
	d.st.s = Status{State: StateStarting, Since: time.Now()}
	return d
}

// ID returns the device's minion id.
func (d *Device) ID() string { return d.id }

// Parent returns the id of the deltaproxy control proxy that serves this
// device, or "" for a device named on the command line.
func (d *Device) Parent() string { return d.parent }

// ProxyType implements proxymod.Service: the device's proxytype, "" until
// its proxy configuration was read.
func (d *Device) ProxyType() string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.typ.Name
}

// Initialized reports whether the device's proxy module initialised.
func (d *Device) Initialized() bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.initialized
}

// Minion returns the device's current minion (nil before the first start;
// a new one after each restart).
func (d *Device) Minion() *minion.Minion {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.m
}

// Ready is closed the first time the device's minion is connected and
// serving jobs (its proxy module initialised or not).
func (d *Device) Ready() <-chan struct{} { return d.ready }

// Done is closed when the device stopped for good; Err tells why.
func (d *Device) Done() <-chan struct{} { return d.done }

// Err returns why the device stopped for good (nil while it runs, and
// after a stop by the fleet's context).
func (d *Device) Err() error {
	select {
	case <-d.done:
		return d.err
	default:
		return nil
	}
}

// Waiting returns how many commands wait for the device.
func (d *Device) Waiting() int { return int(d.waiting.Load()) }

// Do implements proxymod.Service.
func (d *Device) Do(ctx context.Context, fn func(ctx context.Context, m proxymod.Module) error) error {
	return d.gate(ctx, true, fn)
}

// statePing implements statePinger: a module whose ping reports only its
// own state (proxymod.StatePinger) answers at once, whatever runs on the
// device.
func (d *Device) statePing() (up, ok bool) {
	d.mu.RLock()
	mod := d.mod
	d.mu.RUnlock()
	sp, ok := mod.(proxymod.StatePinger)
	if !ok {
		return false, false
	}
	return sp.PingState(), true
}

// gate runs fn on the device's module: after the commands already waiting
// (at most the fleet's queue depth), within the fleet's limit of
// concurrent device operations. requireInit refuses modules whose Init did
// not succeed. A panic in fn (device output is network input) becomes an
// error.
func (d *Device) gate(ctx context.Context, requireInit bool, fn func(context.Context, proxymod.Module) error) (err error) {
	if n := d.waiting.Add(1); n > int64(d.f.queueDepth) {
		d.waiting.Add(-1)
		return fmt.Errorf("%w: %s has %d commands waiting", proxymod.ErrBusy, d.id, n-1)
	}
	select {
	case d.slot <- struct{}{}:
		d.waiting.Add(-1)
	case <-ctx.Done():
		d.waiting.Add(-1)
		return ctx.Err()
	}
	defer func() { <-d.slot }()
	select {
	case d.f.conns <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-d.f.conns }()
	// select picks at random among ready cases: never start work for a
	// caller that has gone (a keepalive re-init after its minion stopped).
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.RLock()
	mod, init, initErr := d.mod, d.initialized, d.initErr
	d.mu.RUnlock()
	if mod == nil {
		return fmt.Errorf("%w: %s has no proxy module yet", proxymod.ErrNotInitialized, d.id)
	}
	if requireInit && !init {
		if initErr != nil {
			if st := d.st.get(); st.State == StateDown {
				return fmt.Errorf("%w: %s is down (%d failed attempts, next in %s): %v", proxymod.ErrNotInitialized, d.id,
					st.Attempts, max(time.Until(st.NextRetry), 0).Round(100*time.Millisecond), initErr)
			}
			return fmt.Errorf("%w: %s: %v", proxymod.ErrNotInitialized, d.id, initErr)
		}
		return fmt.Errorf("%w: %s", proxymod.ErrNotInitialized, d.id)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("proxy: %s: the proxy module panicked: %v", d.id, p)
		}
	}()
	return fn(ctx, mod)
}

// run serves the device until ctx is done or a fatal error: each pass
// loads the configuration, creates a minion and runs it; a minion that
// stops for another reason is restarted after a growing pause.
func (d *Device) run(ctx context.Context) {
	defer close(d.done)
	pause := d.f.restartMin
	for {
		err := d.runOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if isFatal(err) {
			d.log.Error("proxy minion stopped for good", "err", err)
			d.err = err
			return
		}
		d.log.Warn("proxy minion stopped; restarting it", "err", err, "in", pause)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, d.f.restartMax)
	}
}

// errFatal marks errors after which a device is not restarted.
type errFatal struct{ err error }

func (e errFatal) Error() string { return e.err.Error() }
func (e errFatal) Unwrap() error { return e.err }

func isFatal(err error) bool {
	var fe errFatal
	return errors.As(err, &fe) || errors.Is(err, minion.ErrRejected) ||
		errors.Is(err, minion.ErrMasterFinger) || errors.Is(err, minion.ErrNoMaster)
}

// runOnce runs one minion for the device.
func (d *Device) runOnce(ctx context.Context) error {
	cfg, err := config.LoadProxy(d.f.confDir, d.id)
	if err != nil {
		return errFatal{err}
	}
	if cfg.ID != d.id {
		d.log.Warn("the configuration sets another id; the proxy id wins", "config_id", cfg.ID)
	}
	d.f.cfgShare.Share(cfg.Opts)
	d.mu.Lock()
	d.cfg = cfg
	d.mu.Unlock()
	m, err := d.f.newMinion(ctx, d, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errFatal{err}
	}
	d.mu.Lock()
	d.m = m
	d.mu.Unlock()
	err = m.Run(ctx)
	d.shutdownModule()
	if err == nil && ctx.Err() == nil {
		err = errors.New("proxy: the minion stopped")
	}
	return err
}

// markReady closes Ready (the first time one of the device's minions is
// ready; minion.Options.OnReady).
func (d *Device) markReady() { d.readyOnce.Do(func() { close(d.ready) }) }

// minionOptions are the minion.Options of the device.
func (d *Device) minionOptions(cfg *config.Minion) minion.Options {
	return minion.Options{
		Config:        cfg,
		ID:            d.id,
		PKIDir:        filepath.Join(cfg.PKIDir, d.id),
		CacheDir:      cfg.CacheDir,
		Registry:      d.f.base,
		Logger:        d.f.log,
		RejectedDelay: d.f.o.RejectedDelay,
		Services:      map[string]any{proxymod.ServiceName: d},
		GrainsFunc:    d.grains,
		GrainsFile:    d.grainsFile(cfg),
		Prepare:       d.prepare,
		SubQueue:      deviceSubQueue,
		Subscribe:     d.f.hub.subscribe,
		ReqPool:       d.f.reqs.pool,
		BeaconClock:   d.f.clock,
		Matcher:       d.f.matcher,
		OptionShare:   &d.f.optShare,
		AuthSlots:     d.f.authSlots,
		PublishCache:  d.f.pubs,
		ProcDelay:     d.f.procDelay(),
		OnReady:       d.markReady,
	}
}

// deviceProcDelay is how long a device's job runs before its proc file
// is written (minion.Options.ProcDelay) in fleets of up to 1,000 devices.
const deviceProcDelay = time.Second

// procDelay is a device's minion.Options.ProcDelay: deviceProcDelay, and
// 1 ms a device in larger fleets (10 s at 10,000). A fan-out's device
// jobs run MaxConns at a time, so most wait longer than a second for
// their turn, and each wrote its proc file (cachedir/<id>/proc/<jid>,
// read only by other processes: the fleet's find_job and
// saltutil.running read the job table) and removed it: 8% of gsalt-proxy's
// CPU in a net.load_config fan-out over 500 devices.
func (f *Fleet) procDelay() time.Duration {
	return max(deviceProcDelay, time.Duration(f.count.Load())*time.Millisecond)
}

// deviceSubQueue bounds the publishes waiting for one device's minion
// (a minion's default, 1000 slots, costs ~24 KiB per device; each device
// handles a publish as soon as it arrives, jobs run aside). Devices read
// the fleet's shared publisher connection (pubHub).
const deviceSubQueue = 100

// grainsFile is proxy.d/<id>/grains beside the configuration file, where
// Salt keeps a proxy's static grains.
func (d *Device) grainsFile(cfg *config.Minion) string {
	dir := d.f.confDir
	if cfg.ConfFile != "" {
		dir = filepath.Dir(cfg.ConfFile)
	}
	return filepath.Join(dir, "proxy.d", d.id, grains.FileName)
}

// ErrNoProxyConfig: the device has no proxy: mapping in its configuration
// or pillar (Salt's salt-proxy aborts; gsalt-proxy retries the device).
var ErrNoProxyConfig = errors.New("proxy: no proxy configuration")

// prepare is the minion's Prepare hook: it reads the device's proxy
// configuration (the configuration file's proxy: first, then the pillar's;
// a deltaproxy sub-proxy reads only its pillar, as in Salt), creates and
// initialises the proxy module and returns the registry of its proxytype.
// A module whose Init fails does not stop the minion: the device answers
// jobs (test.ping returns false) and Init is retried every
// proxy_keep_alive_interval minutes.
func (d *Device) prepare(ctx context.Context, m *minion.Minion) (*modules.Registry, error) {
	d.mu.RLock()
	cfg := d.cfg
	d.mu.RUnlock()
	pillar := m.Pillar()
	var pc *payload.Map
	if d.parent == "" {
		if v, ok := cfg.Opts.Get("proxy"); ok {
			pc, _ = payload.FromGo(v).(*payload.Map)
		}
	}
	if pc == nil {
		pc = pillar.Map("proxy")
	}
	if pc == nil || pc.Len() == 0 {
		return nil, fmt.Errorf("%w: No proxy key found in pillar or opts for id %s. Check your pillar/opts configuration and contents.", ErrNoProxyConfig, d.id)
	}
	pc = payload.DeepClone(pc).(*payload.Map)
	ids := pc.List("ids")
	pc.Delete("ids")
	name := pc.Str("proxytype")
	typ, ok := d.f.types.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q (id %s)", proxymod.ErrUnknownType, name, d.id)
	}
	reg, err := d.f.registryFor(typ)
	if err != nil {
		return nil, errFatal{err}
	}
	modCfg := &proxymod.Config{
		ID: d.id, ProxyType: name, Proxy: pc, Pillar: pillar,
		Opts: cfg.Opts, CacheDir: cfg.CacheDir, Log: d.log,
	}
	// The previous module (if any) was shut down when its minion stopped.
	d.mu.Lock()
	d.typ, d.mod, d.modCfg, d.initialized, d.initErr = typ, typ.New(), modCfg, false, nil
	d.mu.Unlock()
	d.initModule(ctx)
	d.keepAlive(ctx, m, cfg)
	if d.parent == "" && cfg.Str("metaproxy") == "deltaproxy" {
		for _, v := range ids {
			d.f.addDevice(payload.Text(v), d.id)
		}
		if err := m.FireMaster(ctx, nil, "salt/deltaproxy/start"); err != nil {
			d.log.Info("fire_master failed", "tag", "salt/deltaproxy/start", "err", err)
		}
	}
	return reg, nil
}

// initModule runs the module's Init under the device gate, records the
// outcome in the device's Status and reports a change of state on the
// master's bus.
func (d *Device) initModule(ctx context.Context) bool {
	d.mu.RLock()
	modCfg := d.modCfg
	d.mu.RUnlock()
	err := d.gate(ctx, false, func(ctx context.Context, mod proxymod.Module) error {
		err := mod.Init(ctx, modCfg)
		d.mu.Lock()
		d.initialized, d.initErr = err == nil, err
		d.mu.Unlock()
		return err
	})
	if ctx.Err() != nil {
		return false
	}
	if err != nil {
		d.markDown(ctx, err)
		return false
	}
	d.log.Info("proxy module initialized", "proxytype", modCfg.ProxyType)
	d.f.sess.up.Add(1)
	if changed, attempts, downFor := d.st.up(time.Now()); changed {
		d.fireState(ctx, UpTagFmt, payload.NewMap("attempts", int64(attempts), "down_for", downFor.Seconds()))
	}
	return true
}

// markDown records a failure (of Init or of a keepalive probe), schedules
// the next attempt with backoff and reports a change of state.
func (d *Device) markDown(ctx context.Context, err error) {
	attempts := d.st.get().Attempts + 1
	retryIn := backoff(attempts, d.f.retryMin, d.f.retryMax)
	changed, _ := d.st.down(time.Now(), err, retryIn)
	d.f.sess.connectErrors.Add(1)
	d.log.Error("the device is down; retrying", "err", err, "attempts", attempts, "retry_in", retryIn)
	if changed {
		d.fireState(ctx, DownTagFmt, payload.NewMap("error", err.Error(), "attempts", int64(attempts), "retry_in", retryIn.Seconds()))
	}
}

// shutdownModule calls the module's Shutdown once its minion stopped.
func (d *Device) shutdownModule() {
	ctx, cancel := context.WithTimeout(context.Background(), d.f.shutdownTimeout)
	defer cancel()
	err := d.gate(ctx, true, func(ctx context.Context, mod proxymod.Module) error {
		err := mod.Shutdown(ctx)
		d.mu.Lock()
		d.initialized = false
		d.mu.Unlock()
		d.f.sess.down.Add(1)
		return err
	})
	if err != nil && !errors.Is(err, proxymod.ErrNotInitialized) {
		d.log.Warn("proxy module shutdown failed", "err", err)
	}
}

// keepAlive supervises the device's connection while its minion runs: a
// module whose Init failed is tried again with exponential backoff
// (Fleet retryMin doubling up to retryMax, capped by
// proxy_keep_alive_interval); an initialised module is probed (Salt's
// proxy keepalive, status.proxy_reconnect) every proxy_keep_alive_interval
// minutes, or every keepalive seconds when the module keeps a session
// open (napalm always_alive), and re-initialised when it is not alive.
// Probes never wait: a device busy with a job, or a fleet at its
// connection limit, skips the probe. Grains are recomputed after every
// successful (re-)initialisation. It returns at once: each step runs from
// a timer (no goroutine waits for a device between steps; a fleet of
// thousands of devices holds only their timers) until ctx ends.
func (d *Device) keepAlive(ctx context.Context, m *minion.Minion, cfg *config.Minion) {
	k := &keeper{d: d, ctx: ctx, m: m, probeOn: true, first: true}
	if v, ok := cfg.Opts.Get("proxy_keep_alive"); ok && !payload.Truthy(v) {
		k.probeOn = false
	}
	k.every = d.f.o.KeepAliveInterval
	if k.every <= 0 {
		mins := 1
		if n, err := cfg.Int("proxy_keep_alive_interval"); err == nil && n > 0 {
			mins = n
		}
		k.every = time.Duration(mins) * time.Minute
	}
	context.AfterFunc(ctx, k.stop)
	k.schedule()
}

// keeper is the state of one device's keepAlive between its steps; the
// steps run one after another (each schedules the next).
type keeper struct {
	d       *Device
	ctx     context.Context
	m       *minion.Minion
	probeOn bool
	every   time.Duration
	first   bool // the next wait of an initialised module is spread at random

	mu      sync.Mutex
	t       *time.Timer
	stopped bool
}

// schedule arms the timer of the next step.
func (k *keeper) schedule() {
	d := k.d
	var wait time.Duration
	if d.Initialized() {
		wait = k.probeWait()
		if k.first {
			// Spread the probes of devices started together.
			wait = time.Duration(rand.Int64N(int64(wait))) + time.Millisecond
		}
		k.first = false
	} else {
		wait = max(time.Until(d.st.get().NextRetry), 0)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return
	}
	k.t = time.AfterFunc(wait, k.step)
}

// probeWait is the wait between two probes of an initialised module:
// proxy_keep_alive_interval, or the module's own shorter keepalive
// interval (proxymod.Keepaliver) as long as the fleet's probes together
// stay within probeRate a second (a large fleet probes each session less
// often, never less often than proxy_keep_alive_interval).
func (k *keeper) probeWait() time.Duration {
	wait := k.every
	k.d.mu.RLock()
	ka, ok := k.d.mod.(proxymod.Keepaliver)
	k.d.mu.RUnlock()
	if ok {
		if iv := ka.KeepaliveInterval(); iv > 0 && iv < wait {
			wait = min(max(iv, k.d.f.probeSpacing()), wait)
		}
	}
	return wait
}

// step is one turn: re-initialise a module that is down, or probe one
// that is up; then the next turn is scheduled.
func (k *keeper) step() {
	ctx, d := k.ctx, k.d
	if ctx.Err() != nil {
		return
	}
	if !d.Initialized() {
		if d.initModule(ctx) {
			k.first = true
			if err := k.m.RefreshGrains(ctx, true); err != nil {
				d.log.Warn("grains refresh after initialization failed", "err", err)
			}
		}
	} else if k.probeOn {
		d.probe(ctx, k.every)
	}
	if ctx.Err() == nil {
		k.schedule()
	}
}

// stop disarms the timer once the minion's context ended.
func (k *keeper) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	if k.t != nil {
		k.t.Stop()
	}
}

// probe asks an initialised module whether it is alive, unless the device
// or the fleet is busy; a dead module is shut down and initialised again
// at once (a failure marks the device down and keepAlive retries it with
// backoff).
func (d *Device) probe(ctx context.Context, limit time.Duration) {
	d.mu.RLock()
	al, ok := d.mod.(proxymod.Aliver)
	d.mu.RUnlock()
	if !ok {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	alive := false
	ran, err := d.tryGate(pctx, func(ctx context.Context, _ proxymod.Module) error {
		var err error
		alive, err = al.Alive(ctx)
		return err
	})
	if !ran || ctx.Err() != nil {
		return
	}
	d.st.probed()
	if err == nil && alive {
		return
	}
	if err == nil {
		err = errors.New("keepalive: the device does not answer")
	}
	d.log.Info("the proxy is down; restarting its connection", "err", err)
	_ = d.gate(ctx, false, func(ctx context.Context, mod proxymod.Module) error {
		d.mu.Lock()
		d.initialized = false
		d.mu.Unlock()
		return mod.Shutdown(ctx)
	})
	d.st.reconnect()
	d.f.sess.down.Add(1)
	if d.initModule(ctx) {
		if m := d.Minion(); m != nil {
			if err := m.RefreshGrains(ctx, true); err != nil {
				d.log.Warn("grains refresh after initialization failed", "err", err)
			}
		}
	}
}

// tryGate runs fn like gate with an initialised module, but only if
// neither the device nor the fleet's connection limit makes it wait;
// ran is false when it did not run.
func (d *Device) tryGate(ctx context.Context, fn func(context.Context, proxymod.Module) error) (ran bool, err error) {
	select {
	case d.slot <- struct{}{}:
	default:
		return false, nil
	}
	defer func() { <-d.slot }()
	select {
	case d.f.conns <- struct{}{}:
	default:
		return false, nil
	}
	defer func() { <-d.f.conns }()
	d.mu.RLock()
	mod, init := d.mod, d.initialized
	d.mu.RUnlock()
	if mod == nil || !init {
		return false, nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("proxy: %s: the proxy module panicked: %v", d.id, p)
		}
	}()
	return true, fn(ctx, mod)
}

// grains is the device minion's GrainsFunc: the fleet's proxy host
// grains, the master grain of the device's configuration, its static
// grains file, the proxy module's grains once initialised, then the
// grains: option (Salt's order).
func (d *Device) grains(ctx context.Context) (*payload.Map, error) {
	d.mu.RLock()
	cfg, init := d.cfg, d.initialized
	d.mu.RUnlock()
	g := d.f.hostGrains.Clone()
	g.Set("id", d.id)
	if v, ok := cfg.Opts.Get("master"); ok {
		g.Set("master", payload.FromGo(v))
	}
	deep := false
	if v, ok := cfg.Opts.Get("grains_deep_merge"); ok && v == true {
		deep = true
	}
	file, err := grains.ReadFile(d.grainsFile(cfg))
	if err != nil {
		d.log.Warn("Bad syntax in grains file! Skipping.", "err", err)
	} else {
		mergeGrains(g, file, deep)
	}
	if init {
		var mg *payload.Map
		err := d.gate(ctx, true, func(ctx context.Context, mod proxymod.Module) error {
			var err error
			mg, err = mod.Grains(ctx)
			return err
		})
		switch {
		case err != nil:
			d.log.Warn("Failed to run proxy's grains function", "err", err)
		case mg != nil:
			mergeGrains(g, mg, deep)
		}
	}
	if static, ok := payload.FromGo(cfg.Grains).(*payload.Map); ok && static != nil {
		mergeGrains(g, payload.DeepClone(static).(*payload.Map), deep)
	}
	return g, nil
}

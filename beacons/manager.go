package beacons

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// Getter reads configuration options (config.Opts and *payload.Map both
// satisfy it).
type Getter interface {
	Get(key string) (any, bool)
}

// Options configure a Manager.
type Options struct {
	// Opts are the minion's options: "id", "beacons" (the minion's own
	// beacon configuration, copied at New) and "loop_interval" (seconds,
	// default 1) are read.
	Opts Getter
	// ID overrides Opts' "id" when set.
	ID string
	// Pillar returns the minion's current pillar (its "beacons" and
	// "master": {"beacons"} keys are merged in). nil means no pillar.
	Pillar func() *payload.Map
	// Grains returns the minion's current grains (may be nil).
	Grains func() *payload.Map
	// Caller runs execution functions for the beacons that need them.
	Caller Caller
	// Modules are the available beacon modules (beacons/builtin.All()).
	Modules []Module
	// StateRunning reports whether a state job runs now; Run uses it for
	// disable_during_state_run (nil: never).
	StateRunning func() bool
	// Logger is the logger (default slog.Default()).
	Logger *slog.Logger
}

// Manager runs the configured beacons. It is safe for concurrent use;
// beacon runs are serialised.
type Manager struct {
	id           string
	loopInterval float64
	pillar       func() *payload.Map
	grains       func() *payload.Map
	caller       Caller
	modules      map[string]Module
	stateRunning func() bool
	log          *slog.Logger

	mu          sync.Mutex
	opts        *payload.Map   // the minion's own "beacons" option
	intervalMap map[string]int // Beacon.interval_map

	procMu    sync.Mutex // serialises Process and guards instances
	instances map[string]*instance
}

type instance struct {
	module string
	beacon Beacon
}

// New returns a Manager for the options.
func New(o Options) *Manager {
	m := &Manager{
		id:           o.ID,
		loopInterval: 1,
		pillar:       o.Pillar,
		grains:       o.Grains,
		caller:       o.Caller,
		modules:      map[string]Module{},
		stateRunning: o.StateRunning,
		log:          o.Logger,
		opts:         &payload.Map{},
		intervalMap:  map[string]int{},
		instances:    map[string]*instance{},
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	m.log = m.log.With("component", "beacons")
	for _, mod := range o.Modules {
		if mod.Name != "" && mod.New != nil {
			m.modules[mod.Name] = mod
		}
	}
	if o.Opts != nil {
		if m.id == "" {
			if v, ok := o.Opts.Get("id"); ok {
				m.id = payload.Text(v)
			}
		}
		if v, ok := o.Opts.Get("loop_interval"); ok {
			if f, ok := number(v); ok && f > 0 {
				m.loopInterval = f
			}
		}
		if v, ok := o.Opts.Get("beacons"); ok && v != nil {
			if b, ok := Normalize(v).(*payload.Map); ok {
				m.opts = b
			} else {
				m.log.Error("the beacons option must be a dict; ignoring it", "type", payload.TypeName(v))
			}
		}
	}
	return m
}

// LoopInterval is the time between two beacon loops (loop_interval).
func (m *Manager) LoopInterval() time.Duration {
	return time.Duration(m.loopInterval * float64(time.Second))
}

// Modules returns the names of the available beacon modules, sorted.
func (m *Manager) Modules() []string {
	out := make([]string, 0, len(m.modules))
	for n := range m.modules {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Run calls Process every loop interval until ctx ends, handing non-empty
// event batches to fire (the minion sends them with EventsLoad), then
// closes the beacons.
func (m *Manager) Run(ctx context.Context, fire func(ctx context.Context, events []Event)) {
	t := time.NewTicker(m.LoopInterval())
	defer t.Stop()
	defer m.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			m.Tick(ctx, now, fire)
		}
	}
}

// Tick is one turn of Run's loop: Process (skipped when Idle, which
// would find nothing to do) and fire with the events, if any. Processes
// that tick many Managers from one timer (a swarm) call it themselves.
func (m *Manager) Tick(ctx context.Context, now time.Time, fire func(ctx context.Context, events []Event)) {
	if m.Idle() {
		return
	}
	running := m.stateRunning != nil && m.stateRunning()
	if evs := m.Process(ctx, now, running); len(evs) > 0 && fire != nil {
		fire(ctx, evs)
	}
}

// Idle reports whether a beacon loop now would do nothing: no beacon in
// the minion's options or the pillar (beacons, master:beacons) and none
// running. Checking it is a few lookups; Process copies the merged
// configuration every loop.
func (m *Manager) Idle() bool {
	m.mu.Lock()
	own := m.opts.Len()
	m.mu.Unlock()
	if own > 0 {
		return false
	}
	m.procMu.Lock()
	running := len(m.instances)
	m.procMu.Unlock()
	if running > 0 {
		return false
	}
	p := m.currentPillar()
	if master := p.Map("master"); master != nil && master.Has("beacons") {
		return false
	}
	return !p.Has("beacons")
}

// Close closes every beacon instance. The Manager stays usable: later
// runs start the beacons afresh.
func (m *Manager) Close() {
	m.procMu.Lock()
	defer m.procMu.Unlock()
	for name, inst := range m.instances {
		closeBeacon(m.log, name, inst.beacon)
		delete(m.instances, name)
	}
}

func closeBeacon(log *slog.Logger, name string, b Beacon) {
	if c, ok := b.(Closer); ok {
		if err := c.Close(); err != nil {
			log.Warn("closing beacon failed", "beacon", name, "err", err)
		}
	}
}

// currentPillar returns the pillar or an empty map.
func (m *Manager) currentPillar() *payload.Map {
	if m.pillar != nil {
		if p := m.pillar(); p != nil {
			return p
		}
	}
	return &payload.Map{}
}

// merged is config.merge("beacons", opts["beacons"]): the pillar's
// master:beacons and beacons dicts, each updated with the minion's own
// (so the minion configuration wins a name clash, as in Salt).
func (m *Manager) merged() *payload.Map {
	m.mu.Lock()
	ret := m.opts.Clone()
	m.mu.Unlock()
	p := m.currentPillar()
	var sources []*payload.Map
	if master := p.Map("master"); master != nil {
		if b, ok := master.Get("beacons"); ok {
			if bm, ok := b.(*payload.Map); ok {
				sources = append(sources, bm)
			}
		}
	}
	if b, ok := p.Get("beacons"); ok {
		if bm, ok := b.(*payload.Map); ok {
			sources = append(sources, bm)
		}
	}
	for _, src := range sources {
		tmp := src.Clone()
		for _, it := range ret.Items() {
			tmp.SetKey(it.Key, it.Value)
		}
		ret = tmp
	}
	return payload.DeepClone(ret).(*payload.Map)
}

// Process runs one beacon loop (Beacon.process on config.merge's result)
// and returns the events, in configuration order. stateRunning tells
// whether a state job runs now (disable_during_state_run).
func (m *Manager) Process(ctx context.Context, now time.Time, stateRunning bool) []Event {
	m.procMu.Lock()
	defer m.procMu.Unlock()
	config := m.merged()
	m.dropRemoved(config)
	if v, ok := config.Get("enabled"); ok && !payload.Truthy(v) {
		return nil
	}
	var grains *payload.Map
	if m.grains != nil {
		grains = m.grains()
	}
	var out []Event
	for _, it := range config.Items() {
		mod := payload.KeyString(it.Key)
		if mod == "enabled" {
			continue
		}
		evs, err := m.processOne(ctx, mod, it.Value, now, stateRunning, grains)
		if err != nil {
			m.log.Error("beacon skipped", "beacon", mod, "err", err)
			continue
		}
		out = append(out, evs...)
	}
	return out
}

// processOne handles one configured beacon of Process.
func (m *Manager) processOne(ctx context.Context, mod string, raw any, now time.Time, stateRunning bool, grains *payload.Map) ([]Event, error) {
	var cur *payload.Map
	switch raw.(type) {
	case []any, *payload.Map:
		cur = ListToDict(raw)
	default:
		return nil, fmt.Errorf("%w: configuration of %s is a %s", ErrBadConfig, mod, payload.TypeName(raw))
	}
	if v, ok := cur.Get("enabled"); ok && !payload.Truthy(v) {
		m.log.Debug("beacon disabled", "beacon", mod)
		return nil, nil
	}
	beaconName := mod
	if bm := configGet(cur, "beacon_module"); payload.Truthy(bm) {
		beaconName = payload.Text(bm)
	}
	cfg := payload.DeepClone(raw)
	if cur.Has("enabled") {
		// Salt removes an enabled item from the live configuration on the
		// first loop, so beacons never see it after that.
		cfg = trimConfig(cfg, "enabled")
	}
	module, known := m.modules[beaconName]
	if known && module.Validate != nil {
		if ok, comment := module.Validate(payload.DeepClone(cfg)); !ok {
			m.log.Error("beacon configuration invalid, not running", "beacon", mod, "comment", comment)
			return nil, nil
		}
	} else {
		m.log.Warn("no validate function found, running basic beacon validation", "beacon", mod)
		if _, ok := cfg.([]any); !ok {
			m.log.Error("configuration for beacon must be a list", "beacon", mod)
			return nil, nil
		}
	}
	if !known {
		m.log.Warn("unable to process beacon", "beacon", mod)
		return nil, nil
	}
	runOnce := payload.Truthy(configGet(cur, "run_once"))
	if interval := configGet(cur, "interval"); payload.Truthy(interval) {
		cfg = trimConfig(cfg, "interval")
		due, err := m.processInterval(mod, interval)
		if err != nil {
			return nil, err
		}
		if !due {
			return nil, nil
		}
	}
	if payload.Truthy(configGet(cur, "disable_during_state_run")) {
		cfg = trimConfig(cfg, "disable_during_state_run")
		if stateRunning {
			if inst := m.instances[mod]; inst != nil {
				m.log.Info("closing beacon: state run in progress", "beacon", mod)
				closeBeacon(m.log, mod, inst.beacon)
			}
			return nil, nil
		}
	}
	inst := m.instance(mod, module)
	prefix := "salt/beacon/" + m.id + "/" + mod + "/"
	raws, err := runBeacon(ctx, inst.beacon, &Request{Config: cfg, Now: now, Grains: grains})
	if err != nil {
		msg := err.Error()
		if msg == "" {
			msg = "beacon error"
		}
		m.log.Error("unable to start beacon", "beacon", mod, "err", msg)
		return []Event{{Tag: prefix, Data: &payload.Map{}, BeaconName: beaconName, Error: msg}}, nil
	}
	out := make([]Event, 0, len(raws))
	for _, data := range raws {
		if data == nil {
			data = &payload.Map{}
		}
		tag := prefix
		if t, ok := data.Delete("tag"); ok {
			tag += payload.Text(t)
		}
		if !data.Has("id") {
			data.Set("id", m.id)
		}
		out = append(out, Event{Tag: tag, Data: data, BeaconName: beaconName})
	}
	if runOnce {
		m.mu.Lock()
		err := m.updateEnabled(mod, false)
		m.mu.Unlock()
		if err != nil {
			m.log.Warn("run_once: cannot disable beacon", "beacon", mod, "err", err)
		}
	}
	return out, nil
}

// runBeacon calls the beacon, turning a panic into an error.
func runBeacon(ctx context.Context, b Beacon, req *Request) (out []*payload.Map, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	return b.Beacon(ctx, req)
}

// instance returns the beacon instance for a configured name, creating it
// (and replacing one of another module) as needed. procMu is held.
func (m *Manager) instance(name string, module Module) *instance {
	if inst := m.instances[name]; inst != nil {
		if inst.module == module.Name {
			return inst
		}
		closeBeacon(m.log, name, inst.beacon)
	}
	env := &Env{ID: m.id, Caller: m.caller, Log: m.log.With("beacon", name)}
	inst := &instance{module: module.Name, beacon: module.New(env)}
	m.instances[name] = inst
	return inst
}

// dropRemoved closes the instances of beacons no longer configured.
// procMu is held.
func (m *Manager) dropRemoved(config *payload.Map) {
	for name, inst := range m.instances {
		if !config.Has(name) {
			closeBeacon(m.log, name, inst.beacon)
			delete(m.instances, name)
		}
	}
}

// processInterval is Beacon._process_interval: loops are counted, and a
// beacon with an interval first runs once counter*loop_interval reaches
// it (so not on its first loop).
func (m *Manager) processInterval(mod string, interval any) (bool, error) {
	iv, ok := number(interval)
	if !ok {
		return false, fmt.Errorf("%w: interval of %s is not a number: %v", ErrBadConfig, mod, interval)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	counter, seen := m.intervalMap[mod]
	if !seen {
		m.intervalMap[mod] = 1
		return false, nil
	}
	if float64(counter)*m.loopInterval >= iv {
		m.intervalMap[mod] = 1
		return true, nil
	}
	m.intervalMap[mod] = counter + 1
	return false, nil
}

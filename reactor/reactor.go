package reactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/wire/payload"
)

// Sentinel errors callers may branch on.
var (
	// ErrUnknownType: a reaction's type is not local, runner, wheel or
	// caller (Salt then abandons the event's remaining reactions).
	ErrUnknownType = errors.New("reactor: unknown reaction type")
	// ErrReaction: a reaction cannot be run as written (missing target,
	// bad arguments, unknown legacy runner or wheel function).
	ErrReaction = errors.New("reactor: reaction failed")
	// ErrRender: a reactor file failed to render or renders to data the
	// compiler cannot use.
	ErrRender = errors.New("reactor: render failed")
	// ErrNotFound: a reactor file named in the reactor option is missing.
	ErrNotFound = errors.New("reactor: file missing or not found")
	// ErrInvalid: the rendered reactions failed Salt's verify_high checks.
	ErrInvalid = errors.New("reactor: invalid reactions")
	// ErrConfig: the reactor option or the Options are unusable.
	ErrConfig = errors.New("reactor: bad configuration")
	// ErrClosed: the reactor was closed.
	ErrClosed = errors.New("reactor: closed")
)

// Defaults of Salt's reactor options.
const (
	DefaultWorkers         = 10
	DefaultQueueSize       = 10000
	DefaultRefreshInterval = 60 * time.Second
	// MaxQueueSize bounds the work queue; reactor_worker_hwm: 0 (Salt's
	// "unbounded") means this.
	MaxQueueSize = 1 << 16
	// subscriptionQueue is the reactor's queue on the event bus. The
	// dispatcher only matches tags, so it rarely fills.
	subscriptionQueue = 1 << 14
)

// manageTag is the tag namespace of the reactor runner's requests.
const manageTag = "salt/reactors/manage"

// Options configure a Reactor. Bus and Map are required; clients left nil
// make the reactions that need them fail with a log line.
type Options struct {
	// Bus is the master's event bus.
	Bus *event.Bus
	// Map is the reactor option: a list of one-key maps from a tag glob to
	// a reactor file or a list of them (local paths, which may be globs,
	// or salt:// URLs), or a string naming a YAML file holding that list.
	Map any
	// Compiler renders reactor files; nil means a Compiler with the
	// default renderers and nothing else (no opts, grains, salt or
	// salt:// files).
	Compiler *Compiler
	// Local publishes local reactions, Runner runs runner reactions,
	// Wheel wheel reactions, Caller caller reactions.
	Local  LocalClient
	Runner RunnerClient
	Wheel  WheelClient
	Caller Caller
	// Runners and Wheels give the signatures legacy runner and wheel
	// reactions are matched against.
	Runners, Wheels SignatureFunc
	// NewJID allocates job ids for reactions, so that the events of the
	// jobs a reaction starts can be traced back to it (loop detection);
	// nil leaves local jids to the master and runner jids to the runner.
	NewJID func() string
	// Timeout is the master's timeout option (the default publish
	// timeout), 5 when 0.
	Timeout int
	// Workers is reactor_worker_threads (DefaultWorkers when 0).
	Workers int
	// QueueSize is reactor_worker_hwm: rendering work and runner/wheel
	// calls waiting for a worker. 0 means DefaultQueueSize, negative (or
	// more than MaxQueueSize) means MaxQueueSize.
	QueueSize int
	// RefreshInterval is reactor_refresh_interval: how often a reactor map
	// file (Map as a string) is checked for changes. 0 means
	// DefaultRefreshInterval.
	RefreshInterval time.Duration
	// MasterID is the master's id (set_leader requests name it).
	MasterID string
	// MasterKey is the root user's client key; salt/reactors/manage
	// requests must carry it. "" refuses them all.
	MasterKey string
	// Loop configures the loop protection.
	Loop LoopOptions
	// Logger receives the reactor's logs (nil: slog.Default()).
	Logger *slog.Logger
}

// OptionsFromConfig reads Salt's reactor options from a master
// configuration: reactor, reactor_worker_threads, reactor_worker_hwm,
// reactor_refresh_interval, timeout and id, and builds a Compiler with the
// renderer option and the options as the templates' opts. Clients, the bus
// and the master key are left for the caller.
func OptionsFromConfig(opts *config.Opts) Options {
	o := Options{QueueSize: DefaultQueueSize}
	if opts == nil {
		return o
	}
	o.Map, _ = opts.Get("reactor")
	if n, err := opts.Int("reactor_worker_threads"); err == nil {
		o.Workers = n
	}
	if n, err := opts.Int("reactor_worker_hwm"); err == nil {
		o.QueueSize = n
		if n == 0 {
			o.QueueSize = -1 // Salt: unbounded; here MaxQueueSize
		}
	}
	if f, err := opts.Float("reactor_refresh_interval"); err == nil && f > 0 {
		o.RefreshInterval = time.Duration(f * float64(time.Second))
	}
	if n, err := opts.Int("timeout"); err == nil {
		o.Timeout = n
	}
	o.MasterID = opts.Str("id")
	m, _ := payload.FromGo(opts.Snapshot()).(*payload.Map)
	o.Compiler = &Compiler{Pipeline: opts.Str("renderer"), Opts: m}
	return o
}

// Enabled reports whether a reactor option value configures any reactor
// (a non-empty list or a file name).
func Enabled(v any) bool {
	switch x := v.(type) {
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	}
	return false
}

// entry is one compiled item of the reactor map.
type entry struct {
	tag      string
	match    event.Matcher
	reactors []string
}

// task is one unit of work for the pool: an event to render, or a runner
// or wheel reaction to run.
type task struct {
	ev       event.Event
	reactors []string
	chain    []string
	rx       *Reaction
}

// Reactor maps events on the master bus to reactions. Create it with New,
// start it with Start and stop it with Close.
type Reactor struct {
	o     Options
	log   *slog.Logger
	comp  *Compiler
	build Builder
	lim   *limiter
	orig  *origins

	mapMu   sync.Mutex // serialises map changes
	entries atomic.Pointer[[]entry]
	raw     []any  // the map as configured or changed by add/delete
	file    string // the map file when Map is a string
	fileSig string

	leader atomic.Bool
	queue  chan task

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	sub    *event.Subscription
	start  sync.Once
	stop   sync.Once

	st counters
}

// counters are the Stats counters.
type counters struct {
	received, own, matched, queued, dropped, callDropped atomic.Uint64
	suppressed, loops, rendered, renderErrors, failed    atomic.Uint64
	local, runner, wheel, caller, noMinions              atomic.Uint64
}

// Stats is a snapshot of the reactor's counters.
type Stats struct {
	// Received counts events read from the bus (only events whose tag
	// matches the map or the manage namespace are delivered), BusDropped
	// those the bus dropped because the reactor's subscription was full.
	Received, BusDropped uint64
	// Own counts events ignored because the reactor's runners fired them
	// (data user "Reactor"); Matched events that matched a reactor.
	Own, Matched uint64
	// Queued counts events handed to the workers; Dropped events refused
	// because the queue (reactor_worker_hwm) was full; CallDropped
	// runner and wheel reactions refused for the same reason.
	Queued, Dropped, CallDropped uint64
	// Suppressed counts reactor files not rendered because of the loop
	// protection; Loops the events recognised as caused by an earlier
	// reaction of the same file.
	Suppressed, Loops uint64
	// Rendered counts events whose reactor files were rendered,
	// RenderErrors the problems found doing so.
	Rendered, RenderErrors uint64
	// Local, Runner, Wheel and Caller count reactions started; Failed
	// those that could not be built or started; NoMinions local reactions
	// whose target matched no minion.
	Local, Runner, Wheel, Caller, Failed, NoMinions uint64
	// QueueLen and QueueCap describe the work queue; Workers the pool.
	QueueLen, QueueCap, Workers int
}

// New validates o and builds a reactor (not yet listening).
func New(o Options) (*Reactor, error) {
	if o.Bus == nil {
		return nil, fmt.Errorf("%w: no event bus", ErrConfig)
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	switch {
	case o.QueueSize == 0:
		o.QueueSize = DefaultQueueSize
	case o.QueueSize < 0 || o.QueueSize > MaxQueueSize:
		o.QueueSize = MaxQueueSize
	}
	if o.RefreshInterval <= 0 {
		o.RefreshInterval = DefaultRefreshInterval
	}
	if o.Timeout <= 0 {
		o.Timeout = 5
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	r := &Reactor{
		o:     o,
		log:   log.With("component", "reactor"),
		comp:  o.Compiler,
		build: Builder{Runners: o.Runners, Wheels: o.Wheels, Timeout: o.Timeout},
		lim:   newLimiter(o.Loop),
		orig:  newOrigins(maxOrigins),
		queue: make(chan task, o.QueueSize),
	}
	if r.comp == nil {
		r.comp = &Compiler{}
	}
	if r.comp.Log == nil {
		r.comp.Log = r.log
	}
	r.leader.Store(true)
	switch m := o.Map.(type) {
	case string:
		r.file = m
		if err := r.reloadFile(); err != nil {
			r.log.Error("Failed to read reactor map", "file", m, "err", err)
		}
	case []any:
		r.raw = normalizeMap(m)
		r.compileMap()
	case nil:
		r.raw = []any{}
		r.compileMap()
	default:
		return nil, fmt.Errorf("%w: the reactor option is a %s, not a list or a file name", ErrConfig, payload.TypeName(o.Map))
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r, nil
}

// Start subscribes to the bus and starts the dispatcher and the workers.
// The reactor runs until Close or until ctx is done.
func (r *Reactor) Start(ctx context.Context) error {
	err := ErrClosed
	r.start.Do(func() {
		if r.ctx.Err() != nil {
			return
		}
		err = nil
		r.sub = r.o.Bus.Subscribe(event.MatchFunc(r.wanted), subscriptionQueue)
		r.wg.Add(1 + r.o.Workers)
		go r.dispatch()
		for i := 0; i < r.o.Workers; i++ {
			go r.work()
		}
		if r.file != "" {
			r.wg.Add(1)
			go r.refresh()
		}
		go func() {
			select {
			case <-ctx.Done():
				r.Close()
			case <-r.ctx.Done():
			}
		}()
		r.log.Info("reactor started", "entries", len(*r.entries.Load()), "workers", r.o.Workers, "queue", cap(r.queue))
	})
	return err
}

// Close stops the reactor: no more events are read, queued work is
// abandoned, running reactions are cancelled and waited for. It is
// idempotent.
func (r *Reactor) Close() error {
	r.stop.Do(func() {
		r.cancel()
		if r.sub != nil {
			r.sub.Close()
		}
		r.wg.Wait()
		r.log.Info("reactor stopped")
	})
	return nil
}

// Stats returns the current counters.
func (r *Reactor) Stats() Stats {
	s := Stats{
		Received: r.st.received.Load(), Own: r.st.own.Load(), Matched: r.st.matched.Load(),
		Queued: r.st.queued.Load(), Dropped: r.st.dropped.Load(), CallDropped: r.st.callDropped.Load(),
		Suppressed: r.st.suppressed.Load(), Loops: r.st.loops.Load(),
		Rendered: r.st.rendered.Load(), RenderErrors: r.st.renderErrors.Load(),
		Local: r.st.local.Load(), Runner: r.st.runner.Load(), Wheel: r.st.wheel.Load(), Caller: r.st.caller.Load(),
		Failed: r.st.failed.Load(), NoMinions: r.st.noMinions.Load(),
		QueueLen: len(r.queue), QueueCap: cap(r.queue), Workers: r.o.Workers,
	}
	if r.sub != nil {
		s.BusDropped = r.sub.Dropped()
	}
	return s
}

// Leader reports whether the reactor acts on events (Salt's is_leader).
func (r *Reactor) Leader() bool { return r.leader.Load() }

// SetLeader makes the reactor act on events or not.
func (r *Reactor) SetLeader(v bool) { r.leader.Store(v) }

// wanted is the bus subscription's matcher: tags some reactor matches and
// the manage namespace. It runs in the publisher's goroutine.
func (r *Reactor) wanted(tag string) bool {
	if strings.Contains(tag, manageTag) {
		return true
	}
	for _, e := range *r.entries.Load() {
		if e.match.Match(tag) {
			return true
		}
	}
	return false
}

// ListReactors returns the reactor files for tag in map order, like
// Reactor.list_reactors.
func (r *Reactor) ListReactors(tag string) []string {
	var out []string
	for _, e := range *r.entries.Load() {
		if e.match.Match(tag) {
			out = append(out, e.reactors...)
		}
	}
	return out
}

// dispatch reads the bus: it skips the reactor's own runner events,
// answers manage requests, finds the reactors of each event, applies the
// loop protection and queues the event for a worker. It never blocks on
// the workers.
func (r *Reactor) dispatch() {
	defer r.wg.Done()
	for ev := range r.sub.C() {
		r.handle(ev)
	}
}

func (r *Reactor) handle(ev event.Event) {
	r.st.received.Add(1)
	data := ev.Data
	if data == nil {
		data = &payload.Map{}
	}
	if u, ok := data.Get("user"); ok && u == EventUser {
		r.st.own.Add(1)
		return
	}
	if strings.Contains(ev.Tag, manageTag) && r.manage(ev.Tag, data) {
		return
	}
	if !r.leader.Load() {
		return
	}
	r.log.Debug("Gathering reactors for tag", "tag", ev.Tag)
	reactors := r.ListReactors(ev.Tag)
	if len(reactors) == 0 {
		return
	}
	r.st.matched.Add(1)
	chain, via := r.orig.chainOf(ev.Tag, data)
	id := data.Str("id")
	keep := make([]string, 0, len(reactors))
	for _, sls := range reactors {
		if slices.Contains(chain, sls) {
			r.st.loops.Add(1)
			if !r.lim.allowLoop(r.log, sls, ev.Tag, via) {
				r.st.suppressed.Add(1)
				continue
			}
		}
		if !r.lim.allow(r.log, ev.Tag, sls, id) {
			r.st.suppressed.Add(1)
			continue
		}
		keep = append(keep, sls)
	}
	if len(keep) == 0 {
		return
	}
	select {
	case r.queue <- task{ev: event.Event{Tag: ev.Tag, Data: data}, reactors: keep, chain: chain}:
		r.st.queued.Add(1)
	default:
		n := r.st.dropped.Add(1)
		if n == 1 || n%1000 == 0 {
			r.log.Error("reactor queue is full, event dropped; consider tuning reactor_worker_threads and/or reactor_worker_hwm",
				"tag", ev.Tag, "dropped_total", n, "queue", cap(r.queue))
		}
	}
}

// work runs queued tasks until the reactor stops.
func (r *Reactor) work() {
	defer r.wg.Done()
	for {
		select {
		case <-r.ctx.Done():
			return
		case t := <-r.queue:
			if t.rx != nil {
				r.call(t.rx, t.chain)
				continue
			}
			r.react(t)
		}
	}
}

// react renders an event's reactor files and starts its reactions in
// order, like ReactWrap._call_reactions.
func (r *Reactor) react(t task) {
	r.log.Debug("Compiling reactions for tag", "tag", t.ev.Tag)
	// Templates may modify data (data.update(...)); the bus shares it.
	data, _ := payload.DeepClone(t.ev.Data).(*payload.Map)
	chunks, problems := r.comp.Reactions(r.ctx, t.ev.Tag, data, t.reactors)
	r.st.rendered.Add(1)
	for _, p := range problems {
		r.st.renderErrors.Add(1)
		r.log.Error("reactor render", "tag", t.ev.Tag, "err", p)
	}
	for _, low := range chunks {
		if r.ctx.Err() != nil {
			return
		}
		rx, err := r.build.Build(low)
		if errors.Is(err, ErrUnknownType) {
			r.st.failed.Add(1)
			r.log.Error("Exception while calling the reactions; the remaining reactions of this event are skipped", "tag", t.ev.Tag, "err", err)
			return
		}
		if err != nil {
			r.st.failed.Add(1)
			r.log.Error("reaction not run", "tag", t.ev.Tag, "err", err)
			continue
		}
		for _, w := range rx.Warnings {
			r.log.Warn(w)
		}
		for _, n := range rx.Notes {
			r.log.Warn("reaction option not supported", "reaction", rx.ID, "note", n)
		}
		chain := append(append([]string(nil), t.chain...), rx.SLS)
		switch rx.Type {
		case TypeLocal:
			r.runLocal(rx, chain)
		case TypeCaller:
			r.runCaller(rx)
		default:
			// Runner and wheel reactions go back to the pool, as in Salt.
			select {
			case r.queue <- task{rx: rx, chain: chain}:
			default:
				r.st.callDropped.Add(1)
				r.st.failed.Add(1)
				r.log.Error(fmt.Sprintf("Reactor '%s' failed to execute %s '%s': TaskPool queue is full! Consider tuning reactor_worker_threads and/or reactor_worker_hwm",
					rx.ID, rx.Type, rx.Fun))
			}
		}
	}
}

// call runs a runner or wheel reaction.
func (r *Reactor) call(rx *Reaction, chain []string) {
	switch rx.Type {
	case TypeRunner:
		r.runRunner(rx, chain)
	case TypeWheel:
		r.runWheel(rx)
	}
}

// jid allocates a jid for a reaction and records where it came from.
func (r *Reactor) jid(given string, chain []string) string {
	jid := given
	if jid == "" && r.o.NewJID != nil {
		jid = r.o.NewJID()
	}
	if jid != "" {
		r.orig.add(jid, chain)
	}
	return jid
}

// refresh re-reads a reactor map file when it changes.
func (r *Reactor) refresh() {
	defer r.wg.Done()
	t := time.NewTicker(r.o.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
			if err := r.reloadFile(); err != nil {
				r.log.Error("Failed to read reactor map", "file", r.file, "err", err)
			}
		}
	}
}

// reloadFile reads the map file when its size or time changed.
func (r *Reactor) reloadFile() error {
	r.mapMu.Lock()
	defer r.mapMu.Unlock()
	fi, err := os.Stat(r.file)
	if err != nil {
		if r.entries.Load() == nil {
			r.setEntriesLocked(nil)
		}
		return err
	}
	sig := fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
	if sig == r.fileSig && r.entries.Load() != nil {
		return nil
	}
	b, err := readBounded(r.file, 16<<20)
	if err == nil {
		var v any
		if v, err = config.DecodeYAMLPayload(b); err == nil {
			list, _ := v.([]any)
			r.raw = normalizeMap(list)
			r.fileSig = sig
			r.compileMapLocked()
			return nil
		}
		err = fmt.Errorf("%w: failed to parse YAML in reactor map: %w", ErrConfig, err)
	}
	if r.entries.Load() == nil {
		r.setEntriesLocked(nil)
	}
	return err
}

// normalizeMap converts the configured map to payload data.
func normalizeMap(l []any) []any {
	out := make([]any, 0, len(l))
	for _, v := range l {
		out = append(out, payload.FromGo(v))
	}
	return out
}

func (r *Reactor) compileMap() {
	r.mapMu.Lock()
	defer r.mapMu.Unlock()
	r.compileMapLocked()
}

// compileMapLocked compiles r.raw like list_reactors reads it: one-key
// dicts only, a string or a list of strings as the reactor files.
func (r *Reactor) compileMapLocked() {
	var es []entry
	for _, item := range r.raw {
		m, ok := item.(*payload.Map)
		if !ok || m.Len() != 1 {
			continue
		}
		it := m.Items()[0]
		tag, ok := it.Key.(string)
		if !ok {
			continue
		}
		match, err := event.Glob(tag)
		if err != nil {
			r.log.Error("reactor tag glob", "tag", tag, "err", err)
			continue
		}
		e := entry{tag: tag, match: match}
		switch v := it.Value.(type) {
		case string:
			e.reactors = []string{v}
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					e.reactors = append(e.reactors, s)
				}
			}
		}
		es = append(es, e)
	}
	r.setEntriesLocked(es)
}

func (r *Reactor) setEntriesLocked(es []entry) {
	if es == nil {
		es = []entry{}
	}
	r.entries.Store(&es)
}

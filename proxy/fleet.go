package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/gsalt/gsalt/proxy/netmod"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/minion"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// Defaults of Options.
const (
	// DefaultMaxConns bounds the device operations (init, commands, pings,
	// keepalive checks) in flight across the whole process.
	DefaultMaxConns = 256
	// DefaultQueueDepth bounds the commands waiting for one device.
	DefaultQueueDepth = 64
	// DefaultRestartMin and DefaultRestartMax bound the pause before a
	// device whose minion stopped (no proxy configuration yet, unknown
	// proxytype, ...) is started again; the pause doubles each time.
	DefaultRestartMin = 10 * time.Second
	DefaultRestartMax = 5 * time.Minute
	// GCPercent is the collector target gsalt-proxy runs with (GOGC
	// overrides it): the heap of a fleet is mostly its devices'
	// long-lived state, and Go's default of 100 lets the process grow to
	// twice that between collections.
	GCPercent = 50
	// MaxDevices bounds the devices of one process.
	MaxDevices = 100000
	// maxIDsFile bounds a --proxyids-file.
	maxIDsFile = 64 << 20
	// probeRate bounds the keepalive probes (a prompt round trip each) a
	// fleet sends per second when its modules ask for a probe every few
	// seconds (napalm's keepalive, 5 s by default): 1,000 devices are
	// probed every 5 s, 10,000 every 50 s instead of 2,000 round trips a
	// second (about a third of a core in gsalt-proxy and a fifth in the
	// devices). Salt's own proxy asks is_alive once per
	// proxy_keep_alive_interval (a minute), which stays the longest wait.
	probeRate = 200
)

// Sentinel errors of the fleet.
var (
	// ErrNoIDs: no proxy id was given.
	ErrNoIDs = errors.New("proxy: no proxy id given (--proxyid or --proxyids-file)")
	// ErrBadID: a proxy id is empty, a path or holds a NUL byte.
	ErrBadID = errors.New("proxy: invalid proxy id")
)

// Options configures a Fleet.
type Options struct {
	// ConfigDir holds the proxy configuration (DIR/proxy, proxy.d/); ""
	// means config.DefaultConfigDir.
	ConfigDir string
	// IDs are the devices to serve, each read with config.LoadProxy(DIR,
	// id). An id whose configuration sets metaproxy: deltaproxy is a
	// control proxy: it also serves the ids of its proxy configuration.
	IDs []string
	// Types are the proxy modules; nil means DefaultTypes().
	Types *proxymod.Registry
	// Registry is the base execution registry every proxytype's registry
	// is derived from; nil means minion.NewRegistry().
	Registry *modules.Registry
	// Logger receives the logs; nil means slog.Default().
	Logger *slog.Logger
	// MaxConns bounds the device operations in flight in the process;
	// 0 means DefaultMaxConns.
	MaxConns int
	// QueueDepth bounds the commands waiting for one device (more fail
	// with proxymod.ErrBusy); 0 means DefaultQueueDepth.
	QueueDepth int
	// RestartMin and RestartMax override DefaultRestartMin/Max.
	RestartMin, RestartMax time.Duration
	// KeepAliveInterval overrides proxy_keep_alive_interval (minutes).
	KeepAliveInterval time.Duration
	// RetryMin and RetryMax bound the exponential backoff between
	// attempts to (re-)initialise a device that is down; 0 means
	// DefaultRetryMin / DefaultRetryMax (capped by KeepAliveInterval).
	RetryMin, RetryMax time.Duration
	// RejectedDelay is passed to every minion (minion.Options).
	RejectedDelay time.Duration
	// Shard, when set (Count > 0), selects the deltaproxy sub-proxies this
	// process serves: a control proxy's ids (its proxy: mapping, e.g. from
	// the pillar) are kept only when Shard.Owns them. IDs themselves are
	// taken as given (the caller selects them, see Shard.Select).
	Shard Shard
	// Started, when set, is called with each device before it starts.
	Started func(*Device)
}

// Fleet serves many proxy minions from one process. Each device is a
// complete minion (minion.Minion) with its own id, key pair under
// pki_dir/<id>/, cachedir/<id>/, grains, pillar, master connection and
// jobs; the devices share the process, the execution registries (one per
// proxytype), the host part of the grains and the limit on concurrent
// device operations.
type Fleet struct {
	o          Options
	confDir    string
	log        *slog.Logger
	types      *proxymod.Registry
	queueDepth int
	conns      chan struct{}
	newSem     chan struct{}
	authSlots  chan struct{} // minion.Options.AuthSlots of every device

	restartMin, restartMax time.Duration
	retryMin, retryMax     time.Duration
	shutdownTimeout        time.Duration

	// set by Run before any device starts
	base       *modules.Registry
	hostGrains *payload.Map
	hub        *pubHub   // one publisher connection per master for all devices
	reqs       *reqPools // the request connections to each master, shared
	// One beacon timer and one target matcher for all devices (a timer
	// and a goroutine per device otherwise).
	clock   *minion.BeaconClock
	matcher *target.Matcher
	// The devices' options (configuration and __opts__) keep the entries
	// they have in common once.
	cfgShare config.OptsShare
	optShare minion.OptionShare
	// Every device receives each publish; it is opened once for all.
	pubs *minion.PublishCache

	mu      sync.Mutex
	runCtx  context.Context
	devices map[string]*Device
	count   atomic.Int64 // len(devices), read without mu
	regs    map[string]*modules.Registry
	wg      sync.WaitGroup

	sess sessionCounters // SessionStats
}

// New checks the options and returns a fleet ready to Run.
func New(o Options) (*Fleet, error) {
	if len(o.IDs) == 0 {
		return nil, ErrNoIDs
	}
	if len(o.IDs) > MaxDevices {
		return nil, fmt.Errorf("proxy: %d ids, more than %d", len(o.IDs), MaxDevices)
	}
	seen := map[string]bool{}
	for _, id := range o.IDs {
		if err := CheckID(id); err != nil {
			return nil, err
		}
		if seen[id] {
			return nil, fmt.Errorf("%w: %q given twice", ErrBadID, id)
		}
		seen[id] = true
	}
	f := &Fleet{
		o:               o,
		confDir:         o.ConfigDir,
		log:             o.Logger,
		types:           o.Types,
		queueDepth:      o.QueueDepth,
		restartMin:      o.RestartMin,
		restartMax:      o.RestartMax,
		shutdownTimeout: 30 * time.Second,
		devices:         map[string]*Device{},
		regs:            map[string]*modules.Registry{},
	}
	if f.confDir == "" {
		f.confDir = config.DefaultConfigDir
	}
	if f.log == nil {
		f.log = slog.Default()
	}
	if f.types == nil {
		f.types = DefaultTypes()
	}
	if f.queueDepth <= 0 {
		f.queueDepth = DefaultQueueDepth
	}
	n := o.MaxConns
	if n <= 0 {
		n = DefaultMaxConns
	}
	f.conns = make(chan struct{}, n)
	f.newSem = make(chan struct{}, max(1, runtime.NumCPU()))
	f.authSlots = make(chan struct{}, fleetAuthSlots)
	f.pubs = minion.NewPublishCache()
	if f.restartMin <= 0 {
		f.restartMin = DefaultRestartMin
	}
	if f.restartMax < f.restartMin {
		f.restartMax = max(f.restartMin, DefaultRestartMax)
	}
	f.retryMin, f.retryMax = o.RetryMin, o.RetryMax
	if f.retryMin <= 0 {
		f.retryMin = DefaultRetryMin
	}
	if f.retryMax <= 0 {
		f.retryMax = DefaultRetryMax
		if o.KeepAliveInterval > 0 {
			f.retryMax = min(f.retryMax, o.KeepAliveInterval)
		}
	}
	f.retryMax = max(f.retryMax, f.retryMin)
	return f, nil
}

// CheckID refuses ids Salt refuses (salt.utils.verify.valid_id): empty,
// holding a path separator or a NUL byte, or "." and "..".
func CheckID(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, "/\\\x00") {
		return fmt.Errorf("%w: %q", ErrBadID, id)
	}
	return nil
}

// ReadIDs reads proxy ids one per line; blank lines and lines starting
// with # are skipped, surrounding white space is removed.
func ReadIDs(r io.Reader) ([]string, error) {
	var ids []string
	sc := bufio.NewScanner(io.LimitReader(r, maxIDsFile))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := CheckID(line); err != nil {
			return nil, err
		}
		ids = append(ids, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("proxy: reading ids: %w", err)
	}
	return ids, nil
}

// ReadIDsFile is ReadIDs on a file.
func ReadIDsFile(path string) ([]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	defer fh.Close()
	return ReadIDs(fh)
}

// Run serves every device until ctx is done (it then stops them, calling
// each proxy module's Shutdown, and returns nil) or until every device
// stopped for good (it returns their errors joined: rejected keys, a
// master fingerprint mismatch, bad configuration). It may be called once.
func (f *Fleet) Run(ctx context.Context) error {
	cfg, err := config.LoadProxy(f.confDir, f.o.IDs[0])
	if err != nil {
		return err
	}
	if f.base = f.o.Registry; f.base == nil {
		if f.base, err = minion.NewRegistry(); err != nil {
			return err
		}
	}
	if f.hostGrains, err = HostGrains(ctx, cfg); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	f.mu.Lock()
	if f.runCtx != nil {
		f.mu.Unlock()
		return errors.New("proxy: Fleet.Run called twice")
	}
	f.runCtx = ctx
	f.hub = newPubHub(ctx, f.log, deviceSubQueue)
	f.reqs = newReqPools(f.log)
	f.clock = minion.NewBeaconClock(beacons.New(beacons.Options{Opts: cfg.Opts, Logger: f.log}).LoopInterval())
	f.matcher = target.New(target.Options{Logger: f.log})
	f.mu.Unlock()
	go f.clock.Run(ctx)
	f.log.Info("gsalt-proxy starting", "devices", len(f.o.IDs), "max_conns", cap(f.conns), "queue_depth", f.queueDepth)
	for _, id := range f.o.IDs {
		f.addDevice(id, "")
	}
	go f.settle(ctx)
	f.wg.Wait()
	f.reqs.close()
	if ctx.Err() != nil {
		return nil
	}
	var errs []error
	for _, d := range f.Devices() {
		if err := d.Err(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.id, err))
		}
	}
	return errors.Join(errs...)
}

// addDevice starts serving id unless it is served already. parent is the
// control proxy of a deltaproxy sub-proxy.
func (f *Fleet) addDevice(id, parent string) {
	if err := CheckID(id); err != nil {
		f.log.Error("skipping a proxy id", "parent", parent, "err", err)
		return
	}
	if parent != "" && !f.o.Shard.Owns(id) {
		return // another shard serves it
	}
	f.mu.Lock()
	if _, ok := f.devices[id]; ok || f.runCtx == nil {
		f.mu.Unlock()
		return
	}
	if len(f.devices) >= MaxDevices {
		f.mu.Unlock()
		f.log.Error("too many devices; skipping", "id", id, "max", MaxDevices)
		return
	}
	d := newDevice(f, id, parent)
	f.devices[id] = d
	f.count.Store(int64(len(f.devices)))
	ctx := f.runCtx
	f.wg.Add(1)
	f.mu.Unlock()
	if f.o.Started != nil {
		f.o.Started(d)
	}
	go func() {
		defer f.wg.Done()
		d.run(ctx)
	}()
}

// probeSpacing is the shortest wait between two keepalive probes of one
// device that keeps the whole fleet within probeRate probes a second.
func (f *Fleet) probeSpacing() time.Duration {
	return time.Duration(f.count.Load()) * time.Second / probeRate
}

// Device returns the device with the given id.
func (f *Fleet) Device(id string) (*Device, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.devices[id]
	return d, ok
}

// Devices returns every device, sorted by id.
func (f *Fleet) Devices() []*Device {
	f.mu.Lock()
	out := make([]*Device, 0, len(f.devices))
	for _, d := range f.devices {
		out = append(out, d)
	}
	f.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// newMinion creates the device's minion; at most one per CPU at a time,
// since the first start of a device generates its RSA key pair.
func (f *Fleet) newMinion(ctx context.Context, d *Device, cfg *config.Minion) (*minion.Minion, error) {
	select {
	case f.newSem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-f.newSem }()
	return minion.New(d.minionOptions(cfg))
}

// hostOnlyModules are execution modules that manage the host itself;
// Salt never loads them on a proxy (their __virtual__ wants a Linux or
// Debian os grain, and a proxy's is "proxy"). A proxytype may provide its
// own functions under these names.
var hostOnlyModules = map[string]bool{"pkg": true, "service": true}

// registryFor returns the execution registry of a proxytype's devices:
// the base functions minus the host-only modules, with the proxy versions
// of the common functions (test.ping asks the device) and the proxytype's
// own functions. It is built once per proxytype.
func (f *Fleet) registryFor(t proxymod.Type) (*modules.Registry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.regs[t.Name]; ok {
		return r, nil
	}
	over := commonFunctions()
	if t.Functions != nil {
		over = append(over, t.Functions()...)
	}
	skip := map[string]bool{}
	for _, fn := range over {
		skip[fn.Name] = true
	}
	r := modules.NewRegistry()
	for _, name := range f.base.Names() {
		if skip[name] || hostOnlyModules[name[:strings.IndexByte(name, '.')]] {
			continue
		}
		fn, _ := f.base.Lookup(name)
		if err := r.Register(*fn); err != nil {
			return nil, fmt.Errorf("proxy: %w", err)
		}
	}
	if err := r.Register(over...); err != nil {
		return nil, fmt.Errorf("proxy: proxytype %s: %w", t.Name, err)
	}
	f.regs[t.Name] = r
	return r, nil
}

// settle returns the memory of the start-up to the operating system once
// every device of the initial list is ready (or stopped): thousands of
// devices authenticating, rendering their pillar and opening their
// sessions at once leave the heap much larger than what the running
// fleet keeps, and the runtime would otherwise hand the difference back
// only slowly.
func (f *Fleet) settle(ctx context.Context) {
	for _, d := range f.Devices() {
		select {
		case <-d.Ready():
		case <-d.Done():
		case <-ctx.Done():
			return
		}
	}
	debug.FreeOSMemory()
	f.log.Debug("devices ready; start-up memory returned to the system")
}

// DefaultTypes returns gsalt-proxy's proxytypes: the built-in ones of
// proxymod (dummy, deltaproxy) and napalm with its net.*, napalm.*, ntp.*
// and bgp.* execution functions (package netmod).
func DefaultTypes() *proxymod.Registry {
	r := proxymod.Default()
	if err := r.Register(netmod.Type()); err != nil {
		panic(err) // distinct built-in names: a programming error
	}
	return r
}

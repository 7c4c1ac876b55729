// Package masterd wires gsalt-master together: configuration, the key
// store, the event bus with Salt's IPC sockets, the job cache, the local
// client keys, the publish and request ports, and the maintenance loop
// (session key rotation on the cachedir/.dfn dropfile, job cache pruning).
//
// Files it maintains for Salt's own tools (SALT-WIRE §13.33):
// cachedir/.<user>_key (76-character client keys, mode 0600, rewritten at
// every start, for the master's user, the current user and root),
// sock_dir/publish_pull.ipc (an empty file: Python's LocalClient only checks
// that it exists), sock_dir/master_event_pub.ipc and master_event_pull.ipc
// (the event bus). The job cache is the bbolt file cachedir/gsalt-jobs.db.
package masterd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	natsbridge "github.com/gsalt/gsalt/bridge/nats"
	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/fileserver"
	"github.com/gsalt/gsalt/grains"
	"github.com/gsalt/gsalt/internal/atomicfile"
	"github.com/gsalt/gsalt/internal/health"
	"github.com/gsalt/gsalt/internal/pidfile"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/master/wheel"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/reactor"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/gsalt/gsalt/wire/transport"
)

// File names in cachedir and sock_dir.
const (
	JobCacheFile   = "gsalt-jobs.db"
	PublishPullIPC = "publish_pull.ipc"
	// LockFile in sock_dir is held (flock) for the daemon's life and holds
	// its pid: a second master on the same sock_dir stops before it
	// touches the running one's sockets.
	LockFile = "gsalt-master.lock"
	// WorkersIPC is the file salt-api's _is_master_running looks for
	// (zeromq transport); written empty like PublishPullIPC.
	WorkersIPC = "workers.ipc"
)

// GCPercent is the collector target gsalt-master runs with (GOGC
// overrides it). Unlike a proxy fleet's, the master's heap is mostly
// garbage of short life: every return is decoded, stored, turned into an
// event and dropped. At Go's default of 100 a 10,000-minion ping cost a
// collection (marking ~20,000 connection goroutines' stacks and the
// live heap) every ~1.3 pings. With 150, 10,000 minions: master CPU per
// return 0.097 ms (100: 0.101–0.107), RSS after a re-authentication
// storm 471 MiB (100: 420–444); 1,000 minions stay under 120 MB.
const GCPercent = 150

// ErrRunning is matched by Start's error when another gsalt-master holds
// the configuration's pidfile or sock_dir lock.
var ErrRunning = pidfile.ErrRunning

// rotationCheck is how often the rotation dropfile is looked for.
const rotationCheck = time.Second

// ipcReaderQueue is the number of events queued for one reader of
// master_event_pub.ipc.
const ipcReaderQueue = 1 << 16

// Options tune a Daemon beyond the configuration.
type Options struct {
	// Logger receives the daemon's logs; nil means slog.Default().
	Logger *slog.Logger
	// Pillar compiles pillars for _pillar; nil means Salt's pillar
	// compiler over pillar_roots (package pillar).
	Pillar master.PillarFunc
	// Runners is the runner registry; nil means runners.Default().
	Runners *runners.Registry
	// Ready, when set, is called by Run once the master serves (systemd's
	// READY=1).
	Ready func()
	// Health, when set, gets the master's probes and metrics (see
	// HealthConfig); nil means the endpoints are off.
	Health *health.Server
}

// Daemon is a running gsalt master.
type Daemon struct {
	cfg  *config.Master
	log  *slog.Logger
	bus  *event.Bus
	ipc  *event.IPCServer
	keys *keys.Store
	jobs *jobcache.Cache
	rets *masterReturners
	pub  *transport.PubServer
	req  *transport.ReqServer
	// gate is the connection budget the two ports share (metrics).
	gate *transport.ConnGate
	// localReq serves the request port on sock_dir/gsalt_req.ipc for the
	// CLIs on this host (nil when it could not be bound).
	localReq *transport.ReqServer
	m        *master.Master
	rx       *reactor.Reactor // nil unless the reactor option is set

	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	once     sync.Once
	done     chan struct{}
	err      error
	pullFile bool // publish_pull.ipc was written
	locks    []*pidfile.File

	nats *natsbridge.Bridge // nil unless the nats option is set
	up   up                 // what /readyz checks
	beat *health.Heartbeat  // the maintenance loop's heartbeat (/healthz)
}

// Start brings a master up: it creates cachedir and sock_dir, opens the key
// store (creating master.pem/master.pub when missing), starts the event bus
// and its IPC sockets, opens the job cache, writes the client keys and
// publish_pull.ipc, binds the publish and request ports (port 0 picks a
// free port; see PubAddr and ReqAddr) and starts the maintenance loop. The
// daemon runs until Close or until ctx is done.
func Start(ctx context.Context, cfg *config.Master, opts Options) (_ *Daemon, err error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	d := &Daemon{cfg: cfg, log: log, done: make(chan struct{})}
	d.ctx, d.cancel = context.WithCancel(ctx)
	d.healthChecks(opts.Health)
	defer func() {
		if err != nil {
			d.shutdown()
		}
	}()
	for _, dir := range []string{cfg.CacheDir, cfg.SockDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("masterd: %w", err)
		}
	}
	// Before anything of a running master can be touched (its IPC sockets
	// are replaced below), make sure there is none.
	if err := d.lock(); err != nil {
		return nil, err
	}
	d.bus = event.New(event.Options{MaxEventSize: cfg.MaxEventSize, Logger: log})
	var mref atomic.Pointer[master.Master]
	d.keys, err = keys.Open(keyOptions(cfg, log, d.bus, master.ConnectedCounter(mref.Load)))
	if err != nil {
		return nil, fmt.Errorf("masterd: key store: %w", err)
	}
	// A CLI waiting for thousands of returns must not lose any: the queue
	// per reader is large, still bounded by DefaultReaderQueueBytes.
	d.ipc, err = event.ServeIPCConfig(d.ctx, d.bus,
		filepath.Join(cfg.SockDir, event.MasterPubSocket), filepath.Join(cfg.SockDir, event.MasterPullSocket),
		event.IPCConfig{ReaderQueue: ipcReaderQueue})
	if err != nil {
		return nil, fmt.Errorf("masterd: event sockets: %w", err)
	}
	d.jobs, err = jobcache.Open(filepath.Join(cfg.CacheDir, JobCacheFile),
		jobcache.Options{Keep: time.Duration(cfg.KeepJobsSeconds) * time.Second, Recover: jobCacheRecover(cfg), Logger: log})
	if err != nil {
		return nil, fmt.Errorf("masterd: %w", err)
	}
	d.rets, err = openReturners(cfg, nil, log)
	if err != nil {
		return nil, err
	}
	d.up.jobs.Store(true)
	clientKeys, err := WriteClientKeys(cfg.CacheDir, clientUsers(cfg))
	if err != nil {
		return nil, err
	}
	for _, f := range []string{PublishPullIPC, WorkersIPC} {
		if err := writePublishPull(filepath.Join(cfg.SockDir, f)); err != nil {
			return nil, err
		}
	}
	d.pullFile = true
	// Handlers mostly wait for the job cache's group commit: more of them
	// make bigger batches (one commit, two fdatasyncs, for up to this many
	// returns). 64 workers gave ~21 returns a commit in a 1,000-minion
	// ping; a waiting worker costs a parked goroutine.
	workers := max(16*transport.DefaultWorkers, cfg.WorkerThreads*16)
	// Authentications (an RSA operation each) have workers of their own.
	slow := 2 * runtime.GOMAXPROCS(0)
	// The descriptors the request handlers may hold at once besides their
	// connections: a file each (a minion's key, a file server chunk, a
	// cache file), two for one authenticating (the pki_dir lock and the
	// key), which the slow workers and the local socket's workers (no
	// slow queue of their own) may be doing.
	lim := connLimits(cfg, log, workers+2*slow+2*transport.DefaultWorkers)
	d.gate = lim.Gate
	d.pub, err = transport.ListenPub(d.ctx, hostPort(cfg.Interface, cfg.PublishPort),
		transport.PubOptions{HWM: cfg.PubHWM, Limits: lim, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("masterd: publish port: %w", err)
	}
	d.up.pub.Store(true)
	d.m, err = master.New(master.Options{
		Config:      cfg,
		Keys:        d.keys,
		Bus:         d.bus,
		Jobs:        d.jobs,
		ExtJobs:     d.rets.External(),
		Publisher:   d.pub,
		PublishPort: d.pub.Addr().(*net.TCPAddr).Port,
		ClientKeys:  clientKeys,
		Pillar:      pillarFunc(cfg, opts, log),
		Runners:     opts.Runners,
		Logger:      log,
	})
	if err != nil {
		return nil, err
	}
	mref.Store(d.m)
	d.rets.startEvents(cfg, d.bus)
	if reactor.Enabled(mustOpt(cfg, "reactor")) {
		if d.rx, err = startReactor(d.ctx, d, cfg, opts, clientKeys["root"], log); err != nil {
			return nil, err
		}
	}
	// After the reactor subscribed: JetStream delivers stored events at once.
	if d.nats, err = natsbridge.StartMaster(d.ctx, cfg, d.bus, log); err != nil {
		return nil, fmt.Errorf("masterd: %w", err)
	}
	d.req, err = transport.ListenReq(d.ctx, hostPort(cfg.Interface, cfg.RetPort), d.m.HandleRequest,
		transport.ReqOptions{Workers: workers, SlowWorkers: slow, Limits: lim, Logger: log, Release: d.m.ReplyRelease(), Slow: master.SlowRequest})
	if err != nil {
		return nil, fmt.Errorf("masterd: request port: %w", err)
	}
	// The same requests on a unix socket for the local CLIs, with workers
	// of its own: a command typed during an auth storm does not wait
	// behind 10,000 minion connections in the TCP port's backlog.
	local := filepath.Join(cfg.SockDir, transport.LocalReqSocket)
	if d.localReq, err = transport.ListenReq(d.ctx, "ipc://"+local, d.m.HandleRequest,
		transport.ReqOptions{Workers: transport.DefaultWorkers, Logger: log, Release: d.m.ReplyRelease()}); err != nil {
		log.Warn("cannot serve the local request socket; the CLIs use the request port", "path", local, "err", err)
		d.localReq, err = nil, nil
	}
	// Metrics first: /readyz turns ready with the request port, and a
	// scraper that starts then must find every family.
	d.registerMetrics(opts.Health)
	d.up.req.Store(true)
	d.wg.Add(1)
	go d.maintain()
	go func() {
		<-d.ctx.Done()
		d.shutdown()
	}()
	log.Info("gsalt-master started", "publish", d.pub.Addr().String(), "ret", d.req.Addr().String(),
		"pki_dir", cfg.PKIDir, "cachedir", cfg.CacheDir, "sock_dir", cfg.SockDir)
	return d, nil
}

// lock takes sock_dir/gsalt-master.lock and the pidfile option's file.
// The sock_dir lock is required; a pidfile that cannot be written (a
// non-root user and /var/run) is logged and skipped.
func (d *Daemon) lock() error {
	l, err := pidfile.Lock(filepath.Join(d.cfg.SockDir, LockFile), "gsalt-master")
	if err != nil {
		return fmt.Errorf("masterd: %w", err)
	}
	d.locks = append(d.locks, l)
	if pf, _ := d.cfg.Opts.Get("pidfile"); pf != nil {
		if path, ok := pf.(string); ok && path != "" {
			p, err := pidfile.Lock(path, "gsalt-master")
			switch {
			case errors.Is(err, pidfile.ErrRunning):
				return fmt.Errorf("masterd: %w", err)
			case err != nil:
				d.log.Warn("cannot write the pidfile", "pidfile", path, "err", err)
			default:
				d.locks = append(d.locks, p)
			}
		}
	}
	return nil
}

// connLimits maps max_open_files onto the ports' limits like Salt's
// check_max_open_files: the soft RLIMIT_NOFILE is raised towards
// max_open_files (bounded by the hard limit). The two ports share one
// budget of connections (a ConnGate): the descriptors minus a reserve for
// what is not a minion connection (connBudget; handlerFiles is the
// descriptors the request handlers may hold at once). 10,000 minions hold
// 10,000 publish connections plus their request connections; with a
// fixed split (40% a port) a 20,000-descriptor limit refused 2,000
// minions on each port and every CLI request behind them. When the budget
// is spent, an idle request connection makes room (its peer reconnects on
// its next request).
func connLimits(cfg *config.Master, log *slog.Logger, handlerFiles int) transport.Limits {
	want := uint64(100000)
	if v, ok := cfg.Opts.Get("max_open_files"); ok {
		if n, ok := payload.AsInt(v); ok && n > 0 {
			want = uint64(n)
		}
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return transport.Limits{}
	}
	if rl.Cur < want {
		nl := rl
		nl.Cur = min(want, rl.Max)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &nl); err == nil {
			rl = nl
		}
	}
	if rl.Cur < want {
		log.Warn("the open files limit is below max_open_files; connections are limited accordingly",
			"ulimit_n", rl.Cur, "max_open_files", want)
	}
	return transport.Limits{Gate: transport.NewConnGate(connBudget(min(rl.Cur, want), handlerFiles))}
}

// fdMargin is the descriptors connBudget keeps besides the handlers':
// the daemon's own files (log, pidfile and lock, the job cache, stdio,
// the runtime's cgroup files), its pollers, its listening sockets (the
// ports, the local request and event sockets, metrics), the event bus's
// and the local request socket's clients (a CLI holds two), returners.
// A 10,000-minion master held 23 such descriptors while pinged and while
// all 10,000 authenticated at once (/proc/PID/fd counted by type).
const fdMargin = 64

// connBudget is the connections both ports may hold together with files
// descriptors open: all but a reserve of handlerFiles (what the request
// handlers may hold at once: a file each, two for an authentication; the
// key cache and the one job cache file make even that rare) plus
// fdMargin, and at least 64. The reserve is what a master needs besides
// its minion connections, no more: every descriptor kept out of the
// budget is a request connection that 10,000 minions under a
// 20,000-descriptor limit do not fit, which the master evicts and a
// minion reconnects at least once per job to all. A reserve that
// falls short is not fatal: an accept that meets EMFILE backs off and
// retries (the peer waits in the backlog), and a request that cannot
// open the minion's key or a file server chunk, or an authentication
// that cannot read the key, is not answered (the minion sends it again).
func connBudget(files uint64, handlerFiles int) int {
	reserve := uint64(max(handlerFiles, 0)) + fdMargin
	if files <= reserve+64 {
		return 64
	}
	return int(files - reserve)
}

// jobCacheRecover is job_cache_recover (default True): a damaged job
// cache file is moved aside and a fresh one started.
func jobCacheRecover(cfg *config.Master) bool {
	v, ok := cfg.Opts.Get("job_cache_recover")
	return !ok || v == nil || cfg.Opts.Bool("job_cache_recover")
}

// Run starts a daemon and serves until ctx is done, then stops it cleanly.
func Run(ctx context.Context, cfg *config.Master, opts Options) error {
	d, err := Start(ctx, cfg, opts)
	if err != nil {
		return err
	}
	if opts.Ready != nil {
		opts.Ready()
	}
	<-ctx.Done()
	return d.Close()
}

// pillarFunc is the _pillar compiler: opts.Pillar when set, else the
// pillar package over pillar_roots with the master's options (pillar_cache
// included; templates call execution modules on the master, as in Salt).
func pillarFunc(cfg *config.Master, opts Options, log *slog.Logger) master.PillarFunc {
	if opts.Pillar != nil {
		return opts.Pillar
	}
	pc := runners.NewPillarCompiler(cfg.Opts, log)
	return func(ctx context.Context, req master.PillarRequest) (*payload.Map, error) {
		return pc.Compile(ctx, pillar.Request{ID: req.ID, Grains: req.Grains, Saltenv: req.Saltenv,
			Pillarenv: req.Pillarenv, Override: req.Override, CleanCache: req.CleanCache, Ext: req.Ext})
	}
}

// keyOptions maps the configuration onto the key store options.
func keyOptions(cfg *config.Master, log *slog.Logger, bus *event.Bus, conn func(string) (int, bool)) keys.Options {
	o := keys.Options{
		PKIDir:              cfg.PKIDir,
		CacheDir:            cfg.CacheDir,
		KeySize:             cfg.KeySize,
		HashType:            cfg.HashType,
		NoRotateAESKey:      !cfg.RotateAESKey,
		PreserveMinionCache: cfg.Opts.Bool("preserve_minion_cache"),
		OpenMode:            cfg.OpenMode,
		AutoAccept:          cfg.AutoAccept,
		AutosignFile:        cfg.AutosignFile,
		AutorejectFile:      cfg.AutorejectFile,
		AutosignGrainsDir:   cfg.AutosignGrainsDir,
		AutosignTimeout:     time.Duration(cfg.AutosignTimeout) * time.Minute,
		PermissivePKIAccess: cfg.PermissivePKIAccess,
		User:                cfg.User,
		MaxMinions:          cfg.MaxMinions,
		ConnectedMinions:    conn,
		Logger:              log,
		Event: func(tag string, data map[string]any) {
			bus.Publish(event.Event{Tag: tag, Data: eventData(data)})
		},
	}
	if cfg.AutosignTimeout == 0 {
		o.AutosignTimeout = -1
	}
	return o
}

// hostPort joins an interface and a port (IPv6 addresses get brackets).
func hostPort(iface string, port int) string {
	if iface == "" {
		iface = "0.0.0.0"
	}
	return net.JoinHostPort(iface, strconv.Itoa(port))
}

// clientUsers are the users whose client key files are written: the
// master's user, the user running the daemon, and root.
func clientUsers(cfg *config.Master) []string {
	users := []string{"root"}
	if cfg.User != "" {
		users = append(users, cfg.User)
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		users = append(users, u.Username)
	}
	return users
}

// WriteClientKeys writes a fresh 76-character key to cacheDir/.<user>_key
// (mode 0600) for each user, replacing older ones like Salt's
// masterapi.access_keys, and returns user -> key.
func WriteClientKeys(cacheDir string, users []string) (map[string]string, error) {
	out := map[string]string{}
	for _, u := range users {
		if _, done := out[u]; done || u == "" || filepath.Base(u) != u {
			continue
		}
		k, err := crypt.GenerateKeyString()
		if err != nil {
			return nil, fmt.Errorf("masterd: client key: %w", err)
		}
		if err := writeFile0600(filepath.Join(cacheDir, "."+u+"_key"), []byte(k)); err != nil {
			return nil, fmt.Errorf("masterd: client key for %s: %w", u, err)
		}
		out[u] = k
	}
	return out, nil
}

func writeFile0600(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, 0o600, false)
}

// writePublishPull creates sock_dir/publish_pull.ipc, which Python's
// LocalClient requires to exist before it publishes. A socket left there by
// a Salt master is replaced by an empty file.
func writePublishPull(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case err == nil && fi.Mode().IsRegular():
		return nil
	case err == nil:
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("masterd: %w", err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("masterd: %w", err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		return fmt.Errorf("masterd: %w", err)
	}
	return nil
}

// maintain runs the maintenance loop: the rotation dropfile every second,
// the job cache prune and cache cleanup every loop_interval.
func (d *Daemon) maintain() {
	defer d.wg.Done()
	loop := time.Duration(d.cfg.LoopInterval * float64(time.Second))
	if loop <= 0 {
		loop = time.Minute
	}
	tick := time.NewTicker(rotationCheck)
	defer tick.Stop()
	last := time.Now()
	if err := d.m.Maintenance(); err != nil {
		d.log.Error("maintenance", "err", err)
	}
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-tick.C:
		}
		d.beat.Beat()
		if _, err := d.m.CheckRotation(); err != nil {
			d.log.Error("session key rotation", "err", err)
		}
		if time.Since(last) >= loop {
			last = time.Now()
			if err := d.m.Maintenance(); err != nil {
				d.log.Error("maintenance", "err", err)
			}
		}
	}
}

// Reactor returns the reactor, or nil when the reactor option is not set.
func (d *Daemon) Reactor() *reactor.Reactor { return d.rx }

// startReactor starts Salt's reactor over the bus: local reactions publish
// through the master, runner and wheel reactions run in it as user
// "Reactor", caller reactions and templates' salt[...] run the execution
// modules on the master with its id, options and grains, salt:// reactor
// files come from file_roots, salt/reactors/manage requests need the root
// client key.
func startReactor(ctx context.Context, d *Daemon, cfg *config.Master, opts Options, rootKey string, log *slog.Logger) (*reactor.Reactor, error) {
	o := reactor.OptionsFromConfig(cfg.Opts)
	o.Bus, o.Local, o.Runner, o.Wheel = d.bus, d.m, d.m, d.m
	o.NewJID, o.MasterKey, o.Logger = d.jobs.NewJID, rootKey, log
	g, err := grains.Load(ctx, grains.Options{ID: cfg.ID, Opts: cfg.Opts, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("masterd: reactor grains: %w", err)
	}
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		log.Error("reactor: some execution modules are not available", "err", err)
	}
	caller := reactor.ModuleCaller{Registry: reg, Env: &modules.Env{ID: cfg.ID, Opts: cfg.Opts, Grains: g, Registry: reg, Log: log}}
	o.Caller, o.Compiler.Salt = caller, caller
	o.Compiler.Grains = func() *payload.Map { return g }
	fso := fileserver.OptionsFrom(cfg.Opts)
	fso.Roots, fso.Logger = cfg.FileRoots, log
	o.Compiler.Files = reactor.RootsFiles{Roots: fileserver.New(fso)}
	runReg := opts.Runners
	if runReg == nil {
		runReg = runners.Default()
	}
	o.Runners = func(fun string) (reactor.Signature, bool) {
		rn, ok := runReg.Lookup(fun)
		if !ok {
			return reactor.Signature{}, false
		}
		return reactorSignature(rn.Params, rn.VarKwargs), true
	}
	wheels := wheel.Default()
	o.Wheels = func(fun string) (reactor.Signature, bool) {
		f, ok := wheels.Lookup(fun)
		if !ok {
			return reactor.Signature{}, false
		}
		return reactorSignature(f.Params, f.VarKwargs), true
	}
	rx, err := reactor.New(o)
	if err != nil {
		return nil, fmt.Errorf("masterd: %w", err)
	}
	if err := rx.Start(ctx); err != nil {
		return nil, fmt.Errorf("masterd: %w", err)
	}
	return rx, nil
}

// reactorSignature converts a runner or wheel signature.
func reactorSignature(ps []runners.Param, varKw bool) reactor.Signature {
	s := reactor.Signature{VarKwargs: varKw}
	for _, p := range ps {
		s.Params = append(s.Params, reactor.Param{Name: p.Name, Default: p.Default, Required: p.Required})
	}
	return s
}

// mustOpt returns an option's value (nil when unset).
func mustOpt(cfg *config.Master, key string) any {
	v, _ := cfg.Opts.Get(key)
	return v
}

// NATS returns the NATS bridge, or nil when the nats option is not set.
func (d *Daemon) NATS() *natsbridge.Bridge { return d.nats }

// Master returns the request handler and publisher.
func (d *Daemon) Master() *master.Master { return d.m }

// Bus returns the event bus.
func (d *Daemon) Bus() *event.Bus { return d.bus }

// Keys returns the key store.
func (d *Daemon) Keys() *keys.Store { return d.keys }

// Jobs returns the job cache.
func (d *Daemon) Jobs() *jobcache.Cache { return d.jobs }

// FlushReturners waits until the master's returners (master_job_cache,
// event_return) have written everything queued so far.
func (d *Daemon) FlushReturners(ctx context.Context) error { return d.rets.Flush(ctx) }

// PubAddr returns the address of the publish port.
func (d *Daemon) PubAddr() net.Addr { return d.pub.Addr() }

// ReqAddr returns the address of the request port.
func (d *Daemon) ReqAddr() net.Addr { return d.req.Addr() }

// Done is closed once the daemon has stopped.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Close stops the daemon: the request port first (no new work), then
// running runners, the publish port, the event sockets, the bus and the job
// cache; publish_pull.ipc is removed. It is idempotent.
func (d *Daemon) Close() error {
	d.shutdown()
	return d.err
}

func (d *Daemon) shutdown() {
	d.once.Do(func() {
		d.up.closing.Store(true)
		d.cancel()
		var errs []error
		if d.localReq != nil {
			errs = append(errs, ignoreClosed(d.localReq.Close()))
		}
		if d.req != nil {
			errs = append(errs, ignoreClosed(d.req.Close()))
		}
		d.wg.Wait()
		errs = append(errs, d.nats.Close())
		if d.rx != nil {
			errs = append(errs, d.rx.Close())
		}
		if d.m != nil {
			errs = append(errs, d.m.Close())
		}
		errs = append(errs, d.rets.Close())
		if d.pub != nil {
			errs = append(errs, ignoreClosed(d.pub.Close()))
		}
		if d.ipc != nil {
			errs = append(errs, ignoreClosed(d.ipc.Close()))
		}
		if d.bus != nil {
			d.bus.Close()
		}
		if d.jobs != nil {
			errs = append(errs, d.jobs.Close())
		}
		if d.pullFile {
			os.Remove(filepath.Join(d.cfg.SockDir, PublishPullIPC))
			os.Remove(filepath.Join(d.cfg.SockDir, WorkersIPC))
		}
		for i := len(d.locks) - 1; i >= 0; i-- {
			_ = d.locks[i].Release()
		}
		d.err = errors.Join(errs...)
		if d.log != nil && d.m != nil {
			d.log.Info("gsalt-master stopped")
		}
		close(d.done)
	})
}

// eventData renders key store event data in Salt's key order.
func eventData(data map[string]any) *payload.Map {
	out := payload.NewMap()
	for _, k := range []string{"result", "act", "id"} {
		if v, ok := data[k]; ok {
			out.Set(k, payload.FromGo(v))
		}
	}
	rest := make([]string, 0, len(data))
	for k := range data {
		if !out.Has(k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		out.Set(k, payload.FromGo(data[k]))
	}
	return out
}

// ignoreClosed drops "already closed" errors from shutdown.
func ignoreClosed(err error) error {
	if errors.Is(err, transport.ErrClosed) || errors.Is(err, event.ErrClosed) {
		return nil
	}
	return err
}

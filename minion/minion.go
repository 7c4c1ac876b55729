package minion

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/internal/ctxsleep"
	"github.com/gsalt/gsalt/schedule"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/grains"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/returners"
	retbuiltin "github.com/gsalt/gsalt/returners/builtin"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/gsalt/gsalt/wire/transport"
)

// Sentinel errors Run returns for conditions the caller (gsalt-minion)
// turns into Salt's exit codes.
var (
	// ErrRejected: the master rejected this minion's key and rejected_retry
	// is off (Salt exits with EX_NOPERM, 77).
	ErrRejected = errors.New("minion: the master rejected this minion's public key")
	// ErrMasterFinger: the master's key does not have the fingerprint in
	// master_finger (Salt exits with 42).
	ErrMasterFinger = errors.New("minion: the master's key does not match master_finger")
	// ErrPending: the key is not accepted yet and the caller asked not to
	// wait (gsalt-call, which exits with 2 like salt-call).
	ErrPending = errors.New("minion: failed to authenticate with the master, has the minion key been accepted?")
	// ErrNoMaster: the configuration names no master to connect to.
	ErrNoMaster = errors.New("minion: no master configured")
	// ErrNotConnected: a request was made before the first authentication.
	ErrNotConnected = errors.New("minion: not connected to the master")
	// ErrSourceAddress: source_address is not an IP address.
	ErrSourceAddress = errors.New("minion: source_address must be an IP address")
)

// Exit codes of gsalt-minion and gsalt-call matching Salt's.
const (
	ExitRejected     = 77 // EX_NOPERM
	ExitMasterFinger = 42
	ExitPending      = 2
)

// Options configures a Minion.
type Options struct {
	// Config is the minion configuration (config.LoadMinion). Required.
	Config *config.Minion
	// ID overrides Config.ID (swarm identities); "" keeps it.
	ID string
	// SourceAddress overrides the source_address option: the IP address
	// the minion's connections to its masters start from ("" keeps the
	// option; a swarm gives each identity its own).
	SourceAddress string
	// PKIDir and CacheDir override the configured pki_dir and cachedir.
	PKIDir, CacheDir string
	// Registry holds the execution functions; nil builds one with
	// builtin.Register. A registry may be shared by many minions.
	Registry *modules.Registry
	// Returners holds the returners jobs may name (--return, the
	// "return" option, a schedule's "returner"); nil is
	// returners/builtin's.
	Returners *returners.Registry
	// Grains are the minion's grains; nil computes them with grains.Load.
	// The map is not modified (the "id" grain of a copy is set to the id).
	Grains *payload.Map
	// Logger receives the minion's logs; nil means slog.Default().
	Logger *slog.Logger
	// RejectedDelay replaces Salt's random 10-20 s pause before Run returns
	// ErrRejected; zero keeps Salt's.
	RejectedDelay time.Duration
	// Caller makes authentication give up with ErrPending instead of
	// waiting for the key to be accepted (salt-call's behaviour).
	Caller bool

	// Services are extra Env.Services entries for this identity's jobs
	// (a proxy minion's "proxy" service); they replace built-in entries of
	// the same name.
	Services map[string]any
	// GrainsFunc, when set, computes the identity's grains instead of the
	// host grains: in New when Grains is nil, after Prepare, and on every
	// grains refresh. The id grain is set on its result.
	GrainsFunc func(ctx context.Context) (*payload.Map, error)
	// GrainsFile is the static grains file grains.setval and friends
	// write; "" means the grains file beside the configuration file.
	GrainsFile string
	// OnLocalEvent, when set, is called with every event fired on the
	// minion's local bus (event.fire, the __master_disconnected,
	// __master_connected and __master_failback events of the multi-master
	// checks, ...). It must not block.
	OnLocalEvent func(tag string, data any)
	// Prepare, when set, runs once in Run after the first authentication
	// and pillar fetch and before the minion subscribes to the master's
	// publisher (proxy minions initialise their device here from the
	// pillar). A non-nil registry it returns replaces Registry; the grains
	// are then recomputed with GrainsFunc when set and sent to the master
	// with a pillar refresh. An error stops Run, which returns it.
	Prepare func(ctx context.Context, m *Minion) (*modules.Registry, error)
	// SubQueue bounds the publishes received but not yet handled (the SUB
	// socket's high-water mark); 0 means transport.DefaultSubQueue (1000,
	// libzmq's default). A process serving thousands of identities (a
	// proxy) sets less: the queue's slots are allocated for each identity.
	SubQueue int
	// Subscribe, when set, opens the minion's subscription to the master's
	// publisher instead of transport.DialSub (a process serving many
	// identities of one master shares one publisher connection). o is what
	// the minion would dial with (identity, topics, reconnect pauses).
	Subscribe func(ctx context.Context, addr string, o transport.SubOptions) (Subscription, error)

	// ReqPool, when set, returns the request connection pool to the
	// master at addr ("host:port") for the minion's AES requests
	// (returns, events, mine, file client) instead of the minion's own
	// pools. A process serving thousands of identities of one master (a
	// proxy) shares one bounded pool: each identity's pool would keep its
	// own connections open. The minion never closes a pool it was given.
	ReqPool func(addr string) *transport.ReqPool

	// AuthSlots, when set, bounds the _auth exchanges in flight across
	// the identities given the same channel (its capacity): a process
	// serving thousands of identities (a proxy) would otherwise have them
	// all dial the master at once after a start or a master restart, each
	// holding a connection (a file descriptor in both processes) while
	// the master works through the crowd. An identity waits for a slot
	// before its reachability check and holds it until its _auth reply
	// or failure.
	AuthSlots chan struct{}

	// DialGates, when set, gives the minion's connections to each master
	// address (requests, _auth, the publisher) a transport.DialGate
	// shared with the other identities given the same DialGates: while a
	// master is down (restarting) one of them probes it and the others
	// wait, instead of thousands redialing every second.
	DialGates *transport.DialGates

	// OptionShare, when set, lets this identity's options map share
	// memory with the other identities given the same OptionShare (a
	// proxy's devices); each still sees exactly its own configuration.
	OptionShare *OptionShare

	// BeaconClock, when set, ticks the minion's beacons from the clock's
	// one timer (the minions of a process serving many identities share
	// one; no goroutine waits for each minion's beacons).
	BeaconClock *BeaconClock
	// Matcher, when set, matches the publishes' targets (a process
	// serving many identities shares one and its cache of compiled
	// expressions); nil creates one for the minion.
	Matcher *target.Matcher

	// ProcDelay, when > 0, is how long a job runs before its proc file
	// (cachedir/proc/<jid>) is written, instead of 20 ms. A process
	// serving thousands of identities (a proxy) sets more: on a busy
	// machine most short jobs (find_job) outlive 20 ms, and each wrote a
	// file holding the whole publish (a find_job names every minion yet
	// to return).
	ProcDelay time.Duration

	// OnReady, when set, is called once when Ready closes (the minion is
	// connected and serves jobs): a process serving thousands of
	// identities needs no goroutine per identity waiting on Ready.
	OnReady func()

	// PublishCache, when set, is shared by identities that receive the
	// same publishes (a proxy's devices read one publisher connection):
	// each publish is checked, decrypted and decoded once for all of them
	// instead of once per identity.
	PublishCache *PublishCache

	// baseOpts and matcher are shared by the identities of a swarm.
	baseOpts *payload.Map
	matcher  *target.Matcher
	verified *verifiedPubs
	opened   *openedPubs
	clock    *beaconClock
	workers  *jobWorkers
}

// Minion is one minion identity connected to one master. Create it with
// New and start it with Run.
type Minion struct {
	cfg      *config.Minion
	id       string
	pkiDir   string
	cacheDir string
	confDir  string
	log      *slog.Logger
	reg      *modules.Registry
	binder   modules.Binder
	matcher  *target.Matcher
	verified *verifiedPubs // shared publish signature checks (swarm)
	opened   *openedPubs   // shared opened publishes (swarm); their loads are read-only
	workers  *jobWorkers   // the goroutines that run jobs (swarm); nil: one each
	// beaconClock ticks the beacons of a swarm's identities (nil: the
	// minion's own timer).
	beaconClock *beaconClock
	opts        *payload.Map
	caller      bool
	rejDelay    time.Duration

	extraServices map[string]any
	grainsFunc    func(context.Context) (*payload.Map, error)
	grainsFile    string
	prepare       func(context.Context, *Minion) (*modules.Registry, error)
	subQueue      int
	subscribeFn   func(context.Context, string, transport.SubOptions) (Subscription, error)
	reqPoolFn     func(string) *transport.ReqPool
	// source is the IP address connections to the masters start from
	// (source_address or Options.SourceAddress; "" for any).
	source    string
	authSlots chan struct{}
	gates     *transport.DialGates
	procDelay time.Duration
	onReady   func()

	// The masters (multimaster.go): links in connection order, the
	// configured order (master_list) for failback, the current master in
	// failover.
	links         []*link
	masterList    []*link
	mode          masterMode
	active        atomic.Pointer[link]
	masterFunc    string // master_type func: module.function
	failbackEvery time.Duration
	retryDNS      float64
	servicesOnce  sync.Once
	onLocalEvent  func(tag string, data any)
	lookupHost    func(ctx context.Context, host string) ([]string, error) // nil: the system resolver

	priv   *rsa.PrivateKey
	pubPEM []byte
	tok    []byte

	mu       sync.RWMutex
	grains   *payload.Map
	pillar   *payload.Map
	runCtx   context.Context
	runState *runState
	jidQueue []string
	jidSeen  map[string]bool

	replayMu sync.Mutex
	replay   replayState

	reqs reqPools

	jobs     *jobTable
	rets     *minionReturners
	services map[string]any
	beacons  *beacons.Manager
	schedule *schedule.Manager
	files    *builtin.SaltFileClient
	// localPillar compiles the pillar of a masterless minion.
	localPillar *pillar.Compiler
	wg          sync.WaitGroup

	ready     chan struct{}
	readyOnce sync.Once
	lastErr   atomic.Pointer[errBox]
	authCount atomic.Int64
}

type errBox struct{ err error }

// New prepares a minion: it resolves its directories and master address,
// loads or creates its key pair and computes its grains. It does not
// contact the master.
func New(o Options) (*Minion, error) {
	if o.Config == nil {
		return nil, errors.New("minion: Options.Config is required")
	}
	cfg := o.Config
	m := &Minion{
		cfg:      cfg,
		id:       cfg.ID,
		pkiDir:   cfg.PKIDir,
		cacheDir: cfg.CacheDir,
		log:      o.Logger,
		reg:      o.Registry,
		caller:   o.Caller,
		rejDelay: o.RejectedDelay,

		extraServices: o.Services,
		grainsFunc:    o.GrainsFunc,
		grainsFile:    o.GrainsFile,
		prepare:       o.Prepare,
		onLocalEvent:  o.OnLocalEvent,
		subQueue:      o.SubQueue,
		subscribeFn:   o.Subscribe,
		reqPoolFn:     o.ReqPool,
		source:        o.SourceAddress,
		authSlots:     o.AuthSlots,
		gates:         o.DialGates,
		procDelay:     o.ProcDelay,
		onReady:       o.OnReady,
		jidSeen:       map[string]bool{},
		ready:         make(chan struct{}),
	}
	if m.source == "" {
		m.source = cfg.Opts.Str("source_address")
	}
	if m.source != "" {
		ip := net.ParseIP(strings.Trim(m.source, "[]"))
		if ip == nil {
			return nil, fmt.Errorf("%w: %q", ErrSourceAddress, m.source)
		}
		m.source = ip.String()
	}
	if o.Returners == nil {
		o.Returners = retbuiltin.New()
	}
	m.rets = newMinionReturners(o.Returners)
	if o.ID != "" {
		m.id = o.ID
	}
	if o.PKIDir != "" {
		m.pkiDir = o.PKIDir
	}
	if o.CacheDir != "" {
		m.cacheDir = o.CacheDir
	}
	if m.id == "" {
		return nil, errors.New("minion: no minion id")
	}
	if len(m.id) > 255 {
		return nil, fmt.Errorf("minion: id %q is longer than 255 bytes", m.id)
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	m.log = m.log.With("minion", m.id)
	m.loadReplayGuard()
	if m.reg == nil {
		reg, err := NewRegistry()
		if err != nil {
			return nil, err
		}
		m.reg = reg
	}
	m.binder = modules.Binder{Yamlify: YamlifyArg}
	m.matcher = o.matcher
	m.verified = o.verified
	m.opened = o.opened
	m.workers = o.workers
	if pc := o.PublishCache; pc != nil && m.opened == nil {
		m.verified, m.opened = pc.verified, pc.opened
	}
	m.beaconClock = o.clock
	if o.BeaconClock != nil {
		m.beaconClock = o.BeaconClock.c
	}
	if m.matcher == nil {
		m.matcher = o.Matcher
	}
	if m.matcher == nil {
		m.matcher = target.New(target.Options{Logger: m.log})
	}
	if cf := cfg.ConfFile; cf != "" {
		m.confDir = filepath.Dir(cf)
	}
	m.opts = optionsMap(cfg, o.baseOpts, m.id, m.pkiDir, m.cacheDir)
	if o.OptionShare != nil && o.baseOpts == nil {
		m.opts = o.OptionShare.share(m.opts)
	}
	if err := m.setupMasters(); err != nil && !errors.Is(err, ErrNoMaster) {
		return nil, err
	}
	if err := m.prepareDirs(); err != nil {
		return nil, err
	}
	if err := m.loadKeys(); err != nil {
		return nil, err
	}
	g := o.Grains
	if g == nil {
		var err error
		if g, err = m.computeGrains(context.Background()); err != nil {
			return nil, err
		}
	} else {
		g = g.Clone()
	}
	g.Set("id", m.id)
	freeze(g)
	m.grains = g
	m.pillar = &payload.Map{}
	m.jobs = newJobTable()
	m.buildServices()
	return m, nil
}

// ID returns the minion id.
func (m *Minion) ID() string { return m.id }

// Ready is closed once the minion has authenticated, fetched its pillar,
// subscribed to the publisher and fired its start events.
func (m *Minion) Ready() <-chan struct{} { return m.ready }

// LastAuthError returns the error of the most recent failed authentication
// attempt (nil after a success).
func (m *Minion) LastAuthError() error {
	if b := m.lastErr.Load(); b != nil {
		return b.err
	}
	return nil
}

// Authentications returns how many times the minion obtained a session key.
func (m *Minion) Authentications() int64 { return m.authCount.Load() }

// Grains returns the minion's current grains (shared; do not modify).
func (m *Minion) Grains() *payload.Map {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.grains
}

// Pillar returns the minion's current pillar (shared; do not modify).
func (m *Minion) Pillar() *payload.Map {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.pillar
}

// optionsMap is the Env.Opts of the minion's jobs: every option as an
// ordered map (a copy of base when given), with the identity-specific
// values of this minion.
func optionsMap(cfg *config.Minion, base *payload.Map, id, pkiDir, cacheDir string) *payload.Map {
	if base == nil {
		base = baseOptions(cfg)
	}
	m := base.Clone()
	m.Set("id", id).Set("pki_dir", pkiDir).Set("cachedir", cacheDir)
	freeze(m)
	return m
}

// baseOptions converts the configuration's options once.
func baseOptions(cfg *config.Minion) *payload.Map {
	m, ok := payload.FromGo(cfg.Opts.Snapshot()).(*payload.Map)
	if !ok {
		m = &payload.Map{}
	}
	freeze(m)
	return m
}

// optInt reads an integer option with a default.
func (m *Minion) optInt(key string, def int) int {
	if _, ok := m.cfg.Opts.Get(key); !ok {
		return def
	}
	n, err := m.cfg.Opts.Int(key)
	if err != nil {
		return def
	}
	return n
}

func (m *Minion) prepareDirs() error {
	for _, d := range []string{m.pkiDir, m.cacheDir, filepath.Join(m.cacheDir, "proc")} {
		if d == "" {
			continue
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("minion: %w", err)
		}
	}
	m.cleanProcDir()
	return nil
}

// cleanProcDir removes proc files left behind by a previous run.
func (m *Minion) cleanProcDir() {
	dir := filepath.Join(m.cacheDir, "proc")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err == nil {
			if pm, err := payload.UnmarshalMap(b); err == nil {
				if pid, _ := pm.Int("pid"); pid > 0 && int(pid) != os.Getpid() && pidAlive(int(pid)) {
					continue
				}
			}
		}
		_ = os.Remove(p)
	}
}

// loadKeys reads minion.pem/minion.pub, creating the pair on first start.
func (m *Minion) loadKeys() error {
	pem := filepath.Join(m.pkiDir, "minion.pem")
	pub := filepath.Join(m.pkiDir, "minion.pub")
	priv, err := crypt.LoadPrivateKey(pem)
	if errors.Is(err, os.ErrNotExist) {
		m.log.Info("generating the minion key pair", "dir", m.pkiDir)
		priv, err = crypt.WriteKeyPair(m.pkiDir, "minion", m.cfg.KeySize)
		if errors.Is(err, crypt.ErrKeyExists) {
			priv, err = crypt.LoadPrivateKey(pem)
		}
	}
	if err != nil {
		return fmt.Errorf("minion: key %s: %w", pem, err)
	}
	pubPEM, err := os.ReadFile(pub)
	if err != nil || len(pubPEM) == 0 {
		pubPEM = crypt.MarshalPublicKeyPEM(&priv.PublicKey)
		if err := os.WriteFile(pub, pubPEM, 0o644); err != nil {
			return fmt.Errorf("minion: %w", err)
		}
	}
	filePub, err := crypt.ParsePublicKeyPEM(pubPEM)
	if err != nil || filePub.N.Cmp(priv.PublicKey.N) != 0 {
		return fmt.Errorf("minion: %s does not match %s", pub, pem)
	}
	tok, err := crypt.Token(priv)
	if err != nil {
		return fmt.Errorf("minion: %w", err)
	}
	m.priv, m.pubPEM, m.tok = priv, pubPEM, tok
	return nil
}

// computeGrains runs grains.Load for this minion, or its GrainsFunc.
func (m *Minion) computeGrains(ctx context.Context) (*payload.Map, error) {
	if m.grainsFunc != nil {
		g, err := m.grainsFunc(ctx)
		if err != nil {
			return nil, fmt.Errorf("minion: grains: %w", err)
		}
		if g == nil {
			g = &payload.Map{}
		}
		return g, nil
	}
	return LoadGrains(ctx, m.cfg, m.id, m.log)
}

// LoadGrains computes the grains of a minion configuration for id, as the
// minion does at start (core grains, the grains file, the grains option).
func LoadGrains(ctx context.Context, cfg *config.Minion, id string, log *slog.Logger) (*payload.Map, error) {
	static, _ := payload.FromGo(cfg.Grains).(*payload.Map)
	master, _ := cfg.Opts.Get("master")
	confDir := ""
	if cfg.ConfFile != "" {
		confDir = filepath.Dir(cfg.ConfFile)
	}
	g, err := grains.Load(ctx, grains.Options{ID: id, Master: master, Grains: static, ConfDir: confDir, Opts: cfg.Opts, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("minion: grains: %w", err)
	}
	return g, nil
}

func (m *Minion) setAuthErr(err error) {
	if err == nil {
		m.lastErr.Store(nil)
		return
	}
	m.lastErr.Store(&errBox{err})
}

// markReady closes Ready once.
func (m *Minion) markReady() {
	m.readyOnce.Do(func() {
		close(m.ready)
		if m.onReady != nil {
			m.onReady()
		}
	})
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error { return ctxsleep.Sleep(ctx, d) }

// seconds converts a float number of seconds.
func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// jitter returns a random duration in [lo, hi].
func jitter(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rand.Int64N(int64(hi-lo)+1))
}

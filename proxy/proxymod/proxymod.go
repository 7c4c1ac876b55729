// Package proxymod is the registry of gsalt's proxy modules: Go versions of
// Salt's salt/proxy/<proxytype>.py, one file per proxytype. A proxy module
// talks to one device; gsalt-proxy (package proxy) creates one Module
// instance per device, serialises every call on it and hands execution
// functions their device through Env.Services[ServiceName].
//
// A proxytype may also register execution functions for its devices (Salt's
// modules whose __virtual__ checks the proxytype, such as dummyproxy_pkg
// for the dummy proxy); they replace same-named functions in the registry
// of that proxytype's devices.
package proxymod

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// ServiceName is the Env.Services key under which a proxy minion's jobs
// find their device (a Service).
const ServiceName = "proxy"

// Errors of the proxy framework that execution functions may branch on.
var (
	// ErrNotProxy: the function runs on a minion that serves no device.
	ErrNotProxy = errors.New("proxymod: not running on a proxy minion")
	// ErrNotInitialized: the device's proxy module has not been
	// initialised (its init failed, or the device is restarting).
	ErrNotInitialized = errors.New("proxymod: the proxy module is not initialized")
	// ErrBusy: too many commands are already queued for the device.
	ErrBusy = errors.New("proxymod: too many commands queued for the device")
	// ErrWrongModule: the device runs another proxytype than the function
	// expects.
	ErrWrongModule = errors.New("proxymod: the device's proxy module is of another type")
	// ErrUnknownType: no proxy module is registered under the proxytype.
	ErrUnknownType = errors.New("proxymod: unknown proxytype")
)

// Config is what a proxy module's Init receives (Salt passes opts).
type Config struct {
	// ID is the device's minion id.
	ID string
	// ProxyType is the proxytype the module was created for.
	ProxyType string
	// Proxy is the device's proxy configuration: the proxy: mapping of the
	// configuration file or the pillar (Salt's opts["proxy"]), without the
	// ids of a control proxy. The module owns this copy.
	Proxy *payload.Map
	// Pillar is the device's pillar when the module was initialised.
	Pillar *payload.Map
	// Opts are the device's minion options.
	Opts modules.Options
	// CacheDir is the device's cachedir (cachedir/<id> of the proxy
	// configuration).
	CacheDir string
	// Log is the device's logger.
	Log *slog.Logger
}

// Module is one device's proxy module instance. The framework never calls
// two of its methods at the same time, so implementations need no locking
// of their own.
type Module interface {
	// Init connects to the device (Salt's init(opts)).
	Init(ctx context.Context, cfg *Config) error
	// Ping reports whether the device answers (test.ping on a proxy).
	Ping(ctx context.Context) (bool, error)
	// Grains returns the device's grains, merged over the proxy host's
	// grains (Salt's grains(); called only once Init succeeded).
	Grains(ctx context.Context) (*payload.Map, error)
	// Shutdown closes the device connection (Salt's shutdown(opts)).
	Shutdown(ctx context.Context) error
}

// Aliver is implemented by modules with Salt's alive(opts): the framework
// checks it every proxy_keep_alive_interval minutes and re-initialises the
// module (Shutdown, then Init) when it reports false.
type Aliver interface {
	Alive(ctx context.Context) (bool, error)
}

// StatePinger is implemented by modules whose Ping only reports what the
// module itself knows, without asking the device (NAPALM's ping is its
// "UP" flag). test.ping then answers from PingState at once, safe to call
// while another method runs, instead of waiting behind the device's
// commands (an Init opening a session) and for the process-wide limit of
// device operations: thousands of pings of a fleet starting up would
// otherwise queue behind the session openings.
type StatePinger interface {
	// PingState returns what Ping would return; it may be called
	// concurrently with the module's other methods.
	PingState() bool
}

// Keepaliver is implemented by modules that keep a session open and want
// it probed more often than every proxy_keep_alive_interval minutes
// (NAPALM's keepalive seconds with always_alive); 0 means the default.
type Keepaliver interface {
	KeepaliveInterval() time.Duration
}

// Type is one registered proxytype.
type Type struct {
	// Name is the proxytype (the proxy:proxytype value).
	Name string
	// New creates the module instance of one device.
	New func() Module
	// Functions, when set, returns execution functions registered for
	// devices of this type; they replace same-named functions.
	Functions func() []modules.Function
}

// Registry maps proxytypes to their modules. It is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	types map[string]Type
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{types: map[string]Type{}} }

// Register adds a proxytype; a duplicate name is an error.
func (r *Registry) Register(t Type) error {
	if t.Name == "" || t.New == nil {
		return fmt.Errorf("proxymod: bad proxytype %q", t.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.types[t.Name]; dup {
		return fmt.Errorf("proxymod: proxytype %q registered twice", t.Name)
	}
	r.types[t.Name] = t
	return nil
}

// Lookup returns a proxytype by name.
func (r *Registry) Lookup(name string) (Type, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.types[name]
	return t, ok
}

// Names returns the registered proxytypes, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.types))
	for n := range r.types {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Default returns a new registry holding every built-in proxytype.
func Default() *Registry {
	r := NewRegistry()
	for _, t := range []Type{DummyType(), DeltaproxyType()} {
		if err := r.Register(t); err != nil {
			// The built-in names are distinct; reaching this is a
			// programming error caught by the package tests.
			panic(err)
		}
	}
	return r
}

// Service is what execution functions see of their device under
// Env.Services[ServiceName].
type Service interface {
	// ID is the device's minion id.
	ID() string
	// ProxyType is the device's proxytype ("" before initialisation).
	ProxyType() string
	// Do runs fn with the device's module: after the commands queued
	// before it on the same device, within the process-wide limit of
	// concurrent device operations. It fails with ErrBusy when the
	// device's queue is full, ErrNotInitialized when the module is not
	// initialised, or ctx's error. Do is not reentrant: fn must not call
	// Do on the same device.
	Do(ctx context.Context, fn func(ctx context.Context, m Module) error) error
}

// With runs fn with the calling job's device module, which must be an M.
// Framework failures come back as modules.ErrExecution errors, so the job
// returns "ERROR: ..." like a CommandExecutionError in Salt.
func With[M any, R any](ctx context.Context, c *modules.Call, fn func(ctx context.Context, m M) (R, error)) (R, error) {
	var out R
	svc, ok := modules.Service[Service](c.Env, ServiceName)
	if !ok {
		return out, fmt.Errorf("%w: %w", modules.ErrExecution, ErrNotProxy)
	}
	var inner error
	err := svc.Do(ctx, func(ctx context.Context, mod Module) error {
		m, ok := mod.(M)
		if !ok {
			return fmt.Errorf("%w: %w: %s is a %s proxy", modules.ErrExecution, ErrWrongModule, svc.ID(), svc.ProxyType())
		}
		out, inner = fn(ctx, m)
		return nil
	})
	if err != nil {
		if errors.Is(err, modules.ErrExecution) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return out, err
		}
		return out, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return out, inner
}

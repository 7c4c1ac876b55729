// Package returners is gsalt's returner registry (Salt's salt.returners):
// a returner is opened by name (the "--return NAME" of a publish, a
// schedule's "returner", the master's master_job_cache and event_return)
// and gets the job returns, job loads or events. Returners register into a
// Registry (returners/builtin holds gsalt's, one file each); there is no
// global one. Options are read like salt.returners.get_returner_options:
// "returner.NAME.OPTION" (or a "returner.NAME" dict), "ret_config" naming
// an alternative prefix, "ret_kwargs" overriding single options.
package returners

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// Errors callers branch on.
var (
	// ErrUnknown is returned for a returner name nothing registered.
	ErrUnknown = errors.New("returners: unknown returner")
	// ErrUnsupported is returned when a returner lacks a function (for
	// example event_return).
	ErrUnsupported = errors.New("returners: function not supported")
	// ErrUnavailable is returned when the returner's backend cannot be
	// reached (a database down); the call may be retried later.
	ErrUnavailable = errors.New("returners: backend unavailable")
)

// Option looks up one configuration value the way Salt's config.option
// does for returners (minion/master options, then grains, pillar and the
// master's options). A nil Option finds nothing.
type Option func(key string) (any, bool)

// Env is what a returner is opened with.
type Env struct {
	// Option reads configuration values.
	Option Option
	// ID is the opts id (the master id written with events).
	ID string
	// Log receives the returner's logs; nil is slog.Default().
	Log *slog.Logger
	// Now returns the time (tests); nil is time.Now.
	Now func() time.Time
}

// Returner is an opened returner: returner() of Salt's module.
type Returner interface {
	// Return stores one job return (the "ret" dict Salt passes to
	// NAME.returner: return, retcode, success, jid, fun, fun_args, id, and
	// ret_config/ret_kwargs when the publish had them).
	Return(ctx context.Context, ret *payload.Map) error
	// Close releases the returner's connections.
	Close() error
}

// JobCache is a returner usable as master_job_cache (save_load, get_load,
// get_jid, get_jids, get_minions, get_fun, clean_old_jobs).
type JobCache interface {
	Returner
	SaveLoad(ctx context.Context, jid string, load *payload.Map) error
	// GetLoad returns a job's load, nil when there is none.
	GetLoad(ctx context.Context, jid string) (*payload.Map, error)
	// GetJID maps each minion that returned for jid to its full return.
	GetJID(ctx context.Context, jid string) (*payload.Map, error)
	// GetJIDs returns every jid with its load.
	GetJIDs(ctx context.Context) ([]JobLoad, error)
	// GetMinions returns every minion with a return, sorted.
	GetMinions(ctx context.Context) ([]string, error)
	// GetFun maps each minion to its last return of fun.
	GetFun(ctx context.Context, fun string) (*payload.Map, error)
	// CleanOldJobs removes (or archives, with archive_jobs) jobs older
	// than keep seconds; keep <= 0 keeps everything.
	CleanOldJobs(ctx context.Context, keep time.Duration, archive bool) error
}

// JobLoad is one job of GetJIDs.
type JobLoad struct {
	JID  string
	Load *payload.Map
}

// Event is one event for event_return.
type Event struct {
	Tag  string
	Data any
}

// EventReturner is a returner usable as event_return.
type EventReturner interface {
	Returner
	EventReturn(ctx context.Context, events []Event) error
}

// Factory opens a returner.
type Factory func(env Env) (Returner, error)

// Registry maps returner names to factories. It is safe for concurrent use.
type Registry struct {
	mu sync.RWMutex
	m  map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{m: map[string]Factory{}} }

// Register adds a returner; an empty or taken name is an error.
func (r *Registry) Register(name string, f Factory) error {
	if name == "" || strings.ContainsAny(name, ". ,") || f == nil {
		return fmt.Errorf("returners: bad returner %q", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[name]; ok {
		return fmt.Errorf("returners: %q registered twice", name)
	}
	r.m[name] = f
	return nil
}

// Has reports whether a returner is registered.
func (r *Registry) Has(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.m[name]
	return ok
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.m))
	for n := range r.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Open opens the returner name. An unknown name fails with ErrUnknown and
// Salt's loader text ("'NAME.returner' is not available.").
func (r *Registry) Open(name string, env Env) (Returner, error) {
	r.mu.RLock()
	f, ok := r.m[name]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknown, MissingText(name, "returner"))
	}
	if env.Log == nil {
		env.Log = slog.Default()
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	return f(env)
}

// MissingText is Salt's loader text for a missing returner function:
// "'NAME.FUN' is not available.".
func MissingText(name, fun string) string {
	return fmt.Sprintf("'%s.%s' is not available.", name, fun)
}

// Names splits a publish's "ret" (a comma-separated string or a list) into
// returner names, in order, without duplicates.
func Names(v any) []string {
	var raw []string
	switch x := v.(type) {
	case string:
		raw = strings.Split(x, ",")
	case []byte:
		raw = strings.Split(string(x), ",")
	case []any:
		for _, e := range x {
			raw = append(raw, payload.Text(e))
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range raw {
		if n = strings.TrimSpace(n); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// Options reads a returner's options like get_returner_options: for each
// attribute, the ret_config alternative ("ALT.VIRTUAL.ATTR" or the
// "ALT.VIRTUAL" dict) when the ret names one, else the "VIRTUAL" dict, else
// "VIRTUAL.ATTR"; false-like values fall to defaults; ret_kwargs override.
// virtual is the option prefix ("returner.pgjsonb").
func Options(opt Option, virtual string, ret *payload.Map, attrs map[string]string, defaults map[string]any) map[string]any {
	get := func(key string) any {
		if opt == nil {
			return nil
		}
		v, _ := opt(key)
		return v
	}
	getMap := func(key string) *payload.Map {
		if m, ok := get(key).(*payload.Map); ok {
			return m
		}
		return payload.NewMap()
	}
	retConfig := ""
	if ret != nil {
		if v, ok := ret.Get("ret_config"); ok && v != nil {
			retConfig = payload.Text(v)
		}
	}
	cCfg := getMap(virtual)
	fetch := func(attr string) any {
		if retConfig != "" {
			altCfg := getMap(retConfig + "." + virtual)
			var v any
			if x, ok := altCfg.Get(attr); ok {
				v = x
			} else {
				v = get(retConfig + "." + virtual + "." + attr)
			}
			if payload.Truthy(v) {
				return v
			}
		}
		if v, ok := cCfg.Get(attr); ok {
			return v
		}
		return get(virtual + "." + attr)
	}
	out := map[string]any{}
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		if v := fetch(attrs[name]); payload.Truthy(v) {
			out[name] = v
		} else if d, ok := defaults[name]; ok {
			out[name] = d
		}
	}
	if ret != nil {
		if kw := ret.Map("ret_kwargs"); kw != nil {
			for _, it := range kw.Items() {
				out[payload.KeyString(it.Key)] = it.Value
			}
		}
	}
	return out
}

// JSON renders v as psycopg2's Json adapter does after
// salt.utils.data.decode: json.dumps, bytes decoded as UTF-8 (invalid bytes
// replaced), values JSON cannot hold written as their text.
func JSON(v any) (string, error) {
	return pyfmt.JSON(v, pyfmt.JSONOptions{Indent: pyfmt.NoIndent, Normalize: decodeBytes,
		Default: func(x any) (any, error) { return pyfmt.Str(x), nil }})
}

func decodeBytes(v any) any {
	if b, ok := v.([]byte); ok {
		if utf8.Valid(b) {
			return string(b)
		}
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return v
}

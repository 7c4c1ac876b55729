package fileserver

import (
	"errors"
	"log/slog"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// Default values of the options, as in Salt 3006's master configuration.
const (
	// DefaultBufferSize is the master's file_buffer_size (1 MiB).
	DefaultBufferSize = 1 << 20
	// MinionBufferSize is the minion's file_buffer_size (256 KiB), which a
	// masterless minion serves its own file_roots with.
	MinionBufferSize = 256 << 10
	// MaxBufferSize bounds file_buffer_size (larger values are lowered).
	MaxBufferSize = 64 << 20
	// DefaultHashType is Salt's hash_type.
	DefaultHashType = "sha256"
)

// Walk bounds: a list stops growing (and a warning is logged) past these.
const (
	// MaxWalkDepth is the deepest directory level walked below a root.
	MaxWalkDepth = 128
	// MaxWalkEntries is the most entries (files and directories) one
	// saltenv's lists hold, and the most directories its walk visits.
	MaxWalkEntries = 1 << 20
)

// maxCachedEnvs bounds the per-saltenv list cache (an __env__ root makes
// the set of saltenvs open-ended); maxCachedHashes bounds the hash cache.
const (
	maxCachedEnvs   = 64
	maxCachedHashes = 8192
)

var (
	// ErrBadLoad is returned where Salt's handler raises on a malformed
	// load (a wrong value type, a negative loc, a bad gzip level): Salt's
	// master then answers "".
	ErrBadLoad = errors.New("fileserver: bad load")
	// ErrUnknownCommand is returned by Handle for a command that is not a
	// file server request.
	ErrUnknownCommand = errors.New("fileserver: unknown command")
	// ErrHashType is returned when hash_type names no supported algorithm
	// (Salt's get_hash raises "Invalid hash type").
	ErrHashType = errors.New("fileserver: invalid hash type")
)

// Options configures a Roots. The zero value serves nothing; OptionsFrom
// reads Salt's option names and defaults.
type Options struct {
	// Roots is file_roots: saltenv → directories, searched in order.
	Roots map[string][]string
	// Backends is fileserver_backend; nil or empty means ["roots"]. Only
	// "roots" is implemented: without it nothing is served.
	Backends []string
	// IgnoreRegex and IgnoreGlob are file_ignore_regex and
	// file_ignore_glob.
	IgnoreRegex []string
	IgnoreGlob  []string
	// FollowSymlinks is fileserver_followsymlinks (Salt's default: true).
	FollowSymlinks bool
	// IgnoreSymlinks is fileserver_ignoresymlinks (default false).
	IgnoreSymlinks bool
	// HashType is hash_type ("" means sha256).
	HashType string
	// BufferSize is file_buffer_size, the size of a _serve_file chunk
	// (0 means DefaultBufferSize).
	BufferSize int
	// Logger receives warnings (nil: slog.Default()).
	Logger *slog.Logger
}

// Getter reads configuration options, such as *config.Opts or a module
// call's Env.Opts.
type Getter interface {
	Get(key string) (any, bool)
}

// OptionsFrom reads file_roots, fileserver_backend, file_ignore_regex,
// file_ignore_glob, fileserver_followsymlinks, fileserver_ignoresymlinks,
// hash_type and file_buffer_size from opts, with Salt's master defaults for
// missing ones.
func OptionsFrom(opts Getter) Options {
	o := Options{FollowSymlinks: true, HashType: DefaultHashType, BufferSize: DefaultBufferSize}
	if opts == nil {
		return o
	}
	if v, ok := opts.Get("file_roots"); ok {
		o.Roots = ParseRoots(v)
	}
	if v, ok := opts.Get("fileserver_backend"); ok {
		o.Backends = strList(v)
	}
	if v, ok := opts.Get("file_ignore_regex"); ok {
		o.IgnoreRegex = strList(v)
	}
	if v, ok := opts.Get("file_ignore_glob"); ok {
		o.IgnoreGlob = strList(v)
	}
	if v, ok := opts.Get("fileserver_followsymlinks"); ok {
		o.FollowSymlinks = payload.Truthy(v)
	}
	if v, ok := opts.Get("fileserver_ignoresymlinks"); ok {
		o.IgnoreSymlinks = payload.Truthy(v)
	}
	if v, ok := opts.Get("hash_type"); ok {
		if s, ok := v.(string); ok && s != "" {
			o.HashType = s
		}
	}
	if v, ok := opts.Get("file_buffer_size"); ok {
		if n, ok := toInt(v); ok && n > 0 {
			o.BufferSize = n
		}
	}
	return o
}

// toInt accepts the integer types a configuration or payload holds.
func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		return n, err == nil
	}
	n, ok := payload.AsInt(v)
	return int(n), ok
}

// strList reads a string or a list of scalars as a list of strings.
func strList(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
		return []string{x}
	case []string:
		return append([]string(nil), x...)
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			switch e.(type) {
			case nil, []any, map[string]any, *payload.Map:
				continue
			}
			out = append(out, pyfmt.Str(e))
		}
		return out
	}
	return nil
}

// ParseRoots reads a file_roots value (a mapping of saltenv to a list of
// directories, as a map[string]any, map[string][]string or *payload.Map)
// into saltenv → directories. Other shapes give nil.
func ParseRoots(v any) map[string][]string {
	out := map[string][]string{}
	switch m := v.(type) {
	case map[string][]string:
		for k, d := range m {
			out[k] = append([]string(nil), d...)
		}
	case map[string]any:
		for k, d := range m {
			out[k] = strList(d)
		}
	case *payload.Map:
		for _, it := range m.Items() {
			out[payload.KeyString(it.Key)] = strList(it.Value)
		}
	default:
		return nil
	}
	return out
}

// Roots is the roots file server. It is safe for concurrent use.
type Roots struct {
	roots      map[string][]string
	enabled    bool
	regexes    []*regexp.Regexp
	globs      []*regexp.Regexp
	follow     bool
	ignoreLink bool
	hashType   string
	bufSize    int
	log        *slog.Logger

	// chunks holds *[]byte read buffers handed back by ReleaseChunk.
	chunks sync.Pool

	mu        sync.Mutex
	listCache map[string]*envLists
	hashes    map[string]hashEntry
}

// New builds a Roots. Ignore patterns that do not compile are dropped with
// a warning (Salt drops the file_ignore_regex entries Python rejects), as
// are unsupported backends.
func New(o Options) *Roots {
	r := &Roots{
		roots:      map[string][]string{},
		follow:     o.FollowSymlinks,
		ignoreLink: o.IgnoreSymlinks,
		hashType:   strings.ToLower(o.HashType),
		bufSize:    o.BufferSize,
		log:        o.Logger,
		listCache:  map[string]*envLists{},
		hashes:     map[string]hashEntry{},
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.hashType == "" {
		r.hashType = DefaultHashType
	}
	if r.bufSize <= 0 {
		r.bufSize = DefaultBufferSize
	}
	if r.bufSize > MaxBufferSize {
		r.log.Warn("fileserver: file_buffer_size too large, lowered", "file_buffer_size", r.bufSize, "max", MaxBufferSize)
		r.bufSize = MaxBufferSize
	}
	r.enabled = len(o.Backends) == 0
	for _, b := range o.Backends {
		if b == "roots" {
			r.enabled = true
		} else {
			r.log.Warn("fileserver: backend not supported by gsalt, ignored", "backend", b)
		}
	}
	if r.enabled {
		for env, dirs := range o.Roots {
			r.roots[env] = append([]string(nil), dirs...)
		}
	}
	for _, p := range o.IgnoreRegex {
		re, err := regexp.Compile(pyRegex(p))
		if err != nil {
			r.log.Warn("fileserver: unable to parse file_ignore_regex, skipping", "regex", p, "err", err)
			continue
		}
		r.regexes = append(r.regexes, re)
	}
	for _, g := range o.IgnoreGlob {
		re, err := py.CompileFnmatch(g)
		if err != nil {
			r.log.Warn("fileserver: unable to parse file_ignore_glob, skipping", "glob", g, "err", err)
			continue
		}
		r.globs = append(r.globs, re)
	}
	return r
}

// HashType returns the hash_type hashes are computed with.
func (r *Roots) HashType() string { return r.hashType }

// Envs returns the saltenvs of file_roots, sorted ("__env__" included when
// configured, as in Salt).
func (r *Roots) Envs() []string {
	out := make([]string, 0, len(r.roots))
	for e := range r.roots {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// ignored is salt.fileserver.is_file_ignored.
func (r *Roots) ignored(name string) bool {
	for _, re := range r.regexes {
		if re.MatchString(name) {
			return true
		}
	}
	for _, re := range r.globs {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// pyRegex adapts the Python-only spellings RE2 lacks: \Z (end of text).
func pyRegex(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			if p[i+1] == 'Z' {
				b.WriteString(`\z`)
			} else {
				b.WriteByte('\\')
				b.WriteByte(p[i+1])
			}
			i++
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

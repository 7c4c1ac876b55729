package config

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
)

// DefaultConfigDir is Salt's configuration directory on Linux (-c default).
const DefaultConfigDir = "/etc/salt"

// ErrConfigFile marks a configuration file that exists but cannot be used:
// unreadable, invalid YAML, or not a mapping.
var ErrConfigFile = errors.New("config: bad configuration file")

// ErrNoProxyID is returned by LoadProxy without a proxy id (salt-proxy
// requires --proxyid).
var ErrNoProxyID = errors.New("config: a proxy needs a proxy id (--proxyid)")

// ErrUnsupported is returned for options gsalt cannot honour in a way that
// would silently change behaviour (id_function, which runs a Salt module).
var ErrUnsupported = errors.New("config: unsupported option")

// maxIncludeDepth bounds nested include: chains (Salt recurses without limit).
const maxIncludeDepth = 16

// loader carries the per-load environment (kept out of package state).
type loader struct {
	role string
	log  *slog.Logger
	home string
	// unknown are the options Salt does not know, with near misses.
	unknown []UnknownOption
	// sources are the files read (or looked for), in order.
	sources []Source
}

func newLoader(role string) *loader {
	home, err := os.UserHomeDir()
	if err != nil {
		home = "/"
	}
	return &loader{role: role, log: slog.Default(), home: home}
}

// currentUser is Salt's salt.utils.user.get_user(): the effective user's name.
func currentUser() string {
	if u, err := user.LookupId(strconv.Itoa(os.Geteuid())); err == nil {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return strconv.Itoa(os.Geteuid())
}

// readConfFile reads one configuration file like Salt's _read_conf_file: an
// empty or "falsy" document is {}, anything else must be a mapping; a
// non-string id is turned into its Python str() form.
func readConfFile(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfigFile, path, err)
	}
	doc, err := DecodeYAML(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfigFile, path, err)
	}
	if !truthy(doc) {
		return map[string]any{}, nil
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: %s: the file must hold a mapping of options, not %s", ErrConfigFile, path, pyRepr(doc))
	}
	if id, ok := m["id"]; ok {
		if _, isStr := id.(string); !isStr {
			m["id"] = pyfmt.Str(id)
		}
	}
	return m, nil
}

// loadConfig reads the main configuration file; a missing file gives {}.
func (l *loader) loadConfig(path string) (map[string]any, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		l.sources = append(l.sources, Source{Path: path, Kind: SourceMissing})
		return map[string]any{}, nil
	}
	l.sources = append(l.sources, Source{Path: path, Kind: SourceMain})
	m, err := readConfFile(path)
	if err != nil {
		return nil, err
	}
	m["conf_file"] = path
	return m, nil
}

// includeConfig reads the files matched by include (a glob or a list of
// globs, relative to the directory of origPath), in sorted order, merging
// them recursively with list concatenation like Salt's include_config.
func (l *loader) includeConfig(include any, origPath string, verbose bool, depth int) (map[string]any, error) {
	if !truthy(include) {
		return map[string]any{}, nil
	}
	if depth > maxIncludeDepth {
		return nil, fmt.Errorf("%w: %s: include nesting deeper than %d", ErrConfigFile, origPath, maxIncludeDepth)
	}
	var patterns []string
	switch x := include.(type) {
	case string:
		patterns = []string{x}
	case []any:
		for _, p := range x {
			s, ok := p.(string)
			if !ok {
				return nil, fmt.Errorf("%w: %s: include: want a string or a list of strings, got %s", ErrConfigFile, origPath, pyRepr(include))
			}
			patterns = append(patterns, s)
		}
	default:
		return nil, fmt.Errorf("%w: %s: include: want a string or a list of strings, got %s", ErrConfigFile, origPath, pyRepr(include))
	}
	conf := map[string]any{}
	for _, pat := range patterns {
		if pat == "~" || strings.HasPrefix(pat, "~/") {
			pat = l.home + pat[1:]
		}
		if !strings.HasPrefix(pat, "/") {
			dir, _ := pySplit(origPath)
			pat = pyOsJoin(dir, pat)
		}
		matches, err := filepath.Glob(pat)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: include %q: %w", ErrConfigFile, origPath, pat, err)
		}
		if len(matches) == 0 && verbose {
			l.log.Warn("config: include path/glob matches no files", "pattern", pat)
		}
		matches = pythonGlobFilter(pat, matches)
		sort.Strings(matches)
		for _, fn := range matches {
			l.sources = append(l.sources, Source{Path: fn, Kind: SourceInclude})
			opts, err := readConfFile(fn)
			if err != nil {
				return nil, err
			}
			if sched, ok := opts["schedule"].(map[string]any); ok && len(sched) > 0 {
				if cur, ok := conf["schedule"].(map[string]any); ok {
					for k, v := range sched {
						cur[k] = v
					}
				}
			}
			if inc := opts["include"]; truthy(inc) {
				sub, err := l.includeConfig(inc, fn, verbose, depth+1)
				if err != nil {
					return nil, err
				}
				for k, v := range sub {
					opts[k] = v
				}
			}
			dictUpdate(conf, opts, true)
		}
	}
	return conf, nil
}

// dictUpdate is salt.utils.dictupdate.update(dest, upd, True, mergeLists):
// mappings merge recursively; with mergeLists, lists are concatenated
// without adding items already present.
func dictUpdate(dest, upd map[string]any, mergeLists bool) map[string]any {
	for k, v := range upd {
		cur, exists := dest[k]
		if !exists {
			dest[k] = v
			continue
		}
		cm, ok1 := cur.(map[string]any)
		vm, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			dest[k] = dictUpdate(cm, vm, mergeLists)
			continue
		}
		cl, ok1 := cur.([]any)
		vl, ok2 := v.([]any)
		if ok1 && ok2 && mergeLists {
			merged := deepCopy(cl).([]any)
			for _, x := range vl {
				if !containsValue(merged, x) {
					merged = append(merged, x)
				}
			}
			dest[k] = merged
			continue
		}
		dest[k] = v
	}
	return dest
}

func containsValue(list []any, x any) bool {
	for _, y := range list {
		if reflect.DeepEqual(y, x) {
			return true
		}
	}
	return false
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// readLayers reads DIR/<name> plus its default_include and include files and
// returns the overrides (Salt's `overrides` dict before apply_*_config).
func (l *loader) readLayers(path string, defaults map[string]any) (map[string]any, error) {
	overrides, err := l.loadConfig(path)
	if err != nil {
		return nil, err
	}
	defInc, ok := overrides["default_include"]
	if !ok {
		defInc = defaults["default_include"]
	}
	inc := overrides["include"]
	if err := l.addIncludes(overrides, defInc, inc, path); err != nil {
		return nil, err
	}
	return overrides, nil
}

func (l *loader) addIncludes(overrides map[string]any, defInc, inc any, path string) error {
	extra, err := l.includeConfig(defInc, path, false, 0)
	if err != nil {
		return err
	}
	for k, v := range extra {
		overrides[k] = v
	}
	extra, err = l.includeConfig(inc, path, true, 0)
	if err != nil {
		return err
	}
	for k, v := range extra {
		overrides[k] = v
	}
	return nil
}

// logUnknown logs, at debug level, options Salt does not know, and keeps
// them (with the nearest known option) for the daemon to warn about once
// logging is set up.
func (l *loader) logUnknown(overrides, defaults map[string]any) {
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		if _, ok := defaults[k]; ok {
			continue
		}
		if _, ok := saltOptType(k); ok {
			continue
		}
		if knownExtra(k) {
			continue
		}
		l.log.Debug("config: unknown option", "role", l.role, "key", k)
		u := UnknownOption{Key: k}
		if !isGsaltOption(k) {
			// gsalt's own options are not misspellings (Warnings skips
			// them): no search through every option for them, which a
			// gsalt-proxy paid for each of its 10,000 devices.
			u.Suggestion = nearestOption(k, defaults)
		}
		l.unknown = append(l.unknown, u)
	}
}

// knownExtra lists options Salt reads without declaring them in its
// defaults or type table.
func knownExtra(k string) bool {
	switch k {
	case "include", "conf_file", "autosign_file", "autoreject_file", "autosign_grains_dir",
		"log_dir", "mine_functions", "append_domain", "environment", "beacons", "token_dir",
		"syndic_dir", "id_function", "return", "autosign_timeout", "publish_port", "proxy",
		"ext_pillar", "master_tops", "file_ignore_regex", "file_ignore_glob", "pillar":
		return true
	case "nats": // gsalt-master's NATS bridge (package bridge/nats)
		return true
	}
	return false
}

// LoadMaster reads the master configuration the way salt-master 3006 does:
// DIR/master, then the files matched by default_include (master.d/*.conf,
// sorted; later files merge recursively into earlier ones and lists are
// concatenated) replacing top-level keys of the main file, then the main
// file's include globs, then Salt's defaults and post-processing (root_dir
// prefixing, id guessing with "_master" appended, ...). An empty dir means
// DefaultConfigDir. A missing DIR/master is not an error.
func LoadMaster(dir string) (*Master, error) {
	return loadMaster(dir, false)
}

// loadMaster is LoadMaster, plus the user's client file when client is
// set (LoadClient).
func loadMaster(dir string, client bool) (*Master, error) {
	if dir == "" {
		dir = DefaultConfigDir
	}
	l := newLoader(RoleMaster)
	defaults := masterDefaults(currentUser(), l.home)
	overrides, err := l.readLayers(filepath.Join(dir, "master"), defaults)
	if err != nil {
		return nil, err
	}
	l.logUnknown(overrides, defaults)
	opts, err := l.applyMaster(overrides, defaults)
	if err != nil {
		return nil, err
	}
	if client {
		rc := clientConfigPath(l.home, os.LookupEnv)
		if env := os.Getenv(EnvClientConfig); env != "" {
			if st, err := os.Stat(env); err == nil && st.Mode().IsRegular() {
				rc = env
			}
		}
		rcOpts, err := l.loadConfig(rc)
		if err != nil {
			return nil, err
		}
		for k, v := range rcOpts {
			opts[k] = v
		}
	}
	o := NewOpts(RoleMaster, opts)
	o.unknown = l.unknown
	o.sources = l.sources
	return newMaster(o)
}

// EnvClientConfig names the environment variable that points the CLIs to
// another client configuration file than ~/.saltrc (Salt's
// SALT_CLIENT_CONFIG).
const EnvClientConfig = "SALT_CLIENT_CONFIG"

// LoadClient reads the configuration of the master-side command-line
// tools (gsalt, gsalt-run, gsalt-key) like Salt's client_config: the
// master configuration (LoadMaster), then the user's client file
// $XDG_CONFIG_HOME/salt/saltrc when that directory exists, else ~/.saltrc
// ($SALT_CLIENT_CONFIG instead when it names an existing file), whose
// top-level options replace the master's.
func LoadClient(dir string) (*Master, error) {
	return loadMaster(dir, true)
}

// clientConfigPath is Salt's default client file: saltrc in
// $XDG_CONFIG_HOME/salt (default ~/.config/salt) when that directory
// exists, else ~/.saltrc. As in Python, a variable set to "" counts as
// set (a relative "salt" directory).
func clientConfigPath(home string, lookup func(string) (string, bool)) string {
	xdg, ok := lookup("XDG_CONFIG_HOME")
	if !ok {
		xdg = filepath.Join(home, ".config")
	}
	dir := filepath.Join(xdg, "salt")
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return filepath.Join(dir, "saltrc")
	}
	return filepath.Join(home, ".saltrc")
}

// LoadMinion reads the minion configuration the way salt-minion 3006 (and
// salt-call) do: DIR/minion, minion.d/*.conf, include globs, defaults and
// post-processing. When no id is configured it is resolved as Salt does:
// the cache file <root_dir>/etc/salt/minion_id (not DIR/minion_id), else the
// host name, which is then written to that cache file when
// minion_id_caching is true. gsalt uses os.Hostname where Salt prefers a
// resolvable FQDN.
func LoadMinion(dir string) (*Minion, error) {
	if dir == "" {
		dir = DefaultConfigDir
	}
	l := newLoader(RoleMinion)
	defaults := minionDefaults(currentUser())
	overrides, err := l.readLayers(filepath.Join(dir, "minion"), defaults)
	if err != nil {
		return nil, err
	}
	l.logUnknown(overrides, defaults)
	opts, err := l.applyMinion(overrides, defaults, true, "")
	if err != nil {
		return nil, err
	}
	o := NewOpts(RoleMinion, opts)
	o.unknown = l.unknown
	o.sources = l.sources
	return newMinion(o, "")
}

// LoadProxy reads a proxy minion's configuration the way salt-proxy 3006
// does: DIR/proxy, proxy.d/*.conf and include globs, with the minion
// defaults overlaid by the proxy ones; the id is proxyID unless the files
// set id; cachedir, extension_modules and pidfile get the id appended; and
// a second pass reads proxy.d/<id>/*.conf. The id is never cached.
func LoadProxy(dir string, proxyID string) (*Minion, error) {
	if proxyID == "" {
		return nil, ErrNoProxyID
	}
	if dir == "" {
		dir = DefaultConfigDir
	}
	l := newLoader(RoleProxy)
	defaults := minionDefaults(currentUser())
	for k, v := range proxyDefaults() {
		defaults[k] = v
	}
	path := filepath.Join(dir, "proxy")
	overrides, err := l.readLayers(path, defaults)
	if err != nil {
		return nil, err
	}
	opts, err := l.applyMinion(overrides, deepCopy(defaults).(map[string]any), false, proxyID)
	if err != nil {
		return nil, err
	}
	defInc, ok := opts["default_include"]
	if !ok {
		defInc = defaults["default_include"]
	}
	if err := l.addIncludes(overrides, defInc, opts["include"], path); err != nil {
		return nil, err
	}
	l.logUnknown(overrides, defaults)
	opts, err = l.applyMinion(overrides, defaults, false, proxyID)
	if err != nil {
		return nil, err
	}
	o := NewOpts(RoleProxy, opts)
	o.unknown = l.unknown
	o.sources = l.sources
	return newMinion(o, proxyID)
}

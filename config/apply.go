package config

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
)

// adjustLogFileOverride is Salt's _adjust_log_file_override: log_dir moves
// a relative (or the default) log_file under it. It edits overrides.
func adjustLogFileOverride(overrides map[string]any, defaultLogFile string) {
	logDir, _ := overrides["log_dir"].(string)
	if logDir == "" {
		return
	}
	if lf, ok := overrides["log_file"].(string); ok && lf != "" {
		if !strings.HasPrefix(lf, "/") {
			overrides["log_file"] = pyOsJoin(logDir, lf)
		}
		return
	}
	if truthy(overrides["log_file"]) {
		return
	}
	_, base := pySplit(defaultLogFile)
	overrides["log_file"] = pyOsJoin(logDir, base)
}

// commonPre applies the steps Salt's apply_master_config and
// apply_minion_config share before their role-specific parts.
func (l *loader) commonPre(opts, overrides, defaults map[string]any, role string) {
	opts["__role"] = role
	defLog, _ := defaults["log_file"].(string)
	adjustLogFileOverride(overrides, defLog)
	for k, v := range overrides {
		opts[k] = v
	}
	if _, ok := opts["environment"]; ok {
		if opts["saltenv"] != nil {
			l.log.Warn("config: 'saltenv' and 'environment' both set; ignoring 'environment'")
			opts["environment"] = opts["saltenv"]
		} else {
			l.log.Warn("config: 'environment' was renamed to 'saltenv'")
			opts["saltenv"] = opts["environment"]
		}
	}
	if fb, ok := opts["fileserver_backend"].([]any); ok {
		out := make([]any, len(fb))
		for i, v := range fb {
			switch v {
			case "git", "hg", "svn", "minion":
				v = v.(string) + "fs"
			}
			out[i] = v
		}
		opts["fileserver_backend"] = out
	}
	opts["__cli"] = filepath.Base(os.Args[0])
}

// sockDirRule is Salt's guard against over-long unix socket paths.
func sockDirRule(opts map[string]any) {
	sock, ok1 := opts["sock_dir"].(string)
	cache, ok2 := opts["cachedir"].(string)
	if ok1 && ok2 && len(sock) > len(cache)+10 {
		opts["sock_dir"] = pyOsJoin(cache, ".salt-unix")
	}
}

// extmodsAndUtils fills extension_modules and utils_dirs when empty.
func extmodsAndUtils(opts map[string]any) {
	if !truthy(opts["extension_modules"]) {
		cache, _ := opts["cachedir"].(string)
		opts["extension_modules"] = pyOsJoin(cache, "extmods")
	}
	if !truthy(opts["utils_dirs"]) {
		ext, _ := opts["extension_modules"].(string)
		opts["utils_dirs"] = []any{pyOsJoin(ext, "utils")}
	}
}

// ipcWriteBuffer mirrors Salt: 0 unless configured, "dynamic" computes it
// from the memory size.
func ipcWriteBuffer(opts, overrides map[string]any) {
	v, ok := overrides["ipc_write_buffer"]
	if !ok {
		opts["ipc_write_buffer"] = 0
		return
	}
	if v == "dynamic" {
		opts["ipc_write_buffer"] = dynamicBufferSize()
	}
}

// dynamicBufferSize is half of max(5% of RAM, 10 MiB), like Salt.
func dynamicBufferSize() int {
	total := 0.0
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
					total = kb * 1024
				}
			}
		}
	}
	space := total * 0.05
	if space < 10<<20 {
		space = 10 << 20
	}
	return int(space * 0.5)
}

// logPathKeys returns the log options to re-root: those that are strings
// without a URL scheme (a syslog URL is not a file).
func logPathKeys(opts map[string]any, keys ...string) []string {
	var out []string
	for _, k := range keys {
		v, present := opts[k]
		if !present {
			continue
		}
		s, ok := v.(string)
		if !ok {
			continue
		}
		if urlScheme(s) == "" {
			out = append(out, k)
		}
	}
	return out
}

// normalizeRoots is Salt's _validate_file_roots/_normalize_roots: a
// non-mapping falls back to {base: [fallback]}, non-list values become [],
// and entries with glob characters are expanded.
func (l *loader) normalizeRoots(v any, key, fallback string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		l.log.Warn("config: option is not a mapping, using defaults", "key", key)
		return map[string]any{"base": expandGlobs([]any{fallback})}
	}
	out := make(map[string]any, len(m))
	for env, dirs := range m {
		list, ok := dirs.([]any)
		if !ok {
			list = []any{}
		}
		out[env] = expandGlobs(list)
	}
	return out
}

func expandGlobs(in []any) []any {
	out := make([]any, 0, len(in))
	for _, e := range in {
		s, ok := e.(string)
		if !ok || !strings.ContainsAny(s, "*?[") {
			out = append(out, e)
			continue
		}
		matches, err := filepath.Glob(s)
		if err != nil {
			out = append(out, e)
			continue
		}
		for _, m := range pythonGlobFilter(s, matches) {
			out = append(out, m)
		}
	}
	return out
}

// pythonGlobFilter drops matches that Python's glob would not return: a
// wildcard path component does not match names starting with "." unless the
// pattern component itself starts with ".".
func pythonGlobFilter(pattern string, matches []string) []string {
	pc := strings.Split(pattern, "/")
	out := make([]string, 0, len(matches))
	for _, m := range matches {
		mc := strings.Split(m, "/")
		hidden := false
		if len(mc) == len(pc) {
			for i := range pc {
				if strings.ContainsAny(pc[i], "*?[") && !strings.HasPrefix(pc[i], ".") && strings.HasPrefix(mc[i], ".") {
					hidden = true
					break
				}
			}
		}
		if !hidden {
			out = append(out, m)
		}
	}
	return out
}

// updateSSL is Salt's _update_ssl_config for the cases gsalt sees: false or
// nil → nil, true → {}. Mappings are kept as written (Salt turns the names of
// cert_reqs/ssl_version into Python ssl constants).
func updateSSL(opts map[string]any) {
	switch v := opts["ssl"].(type) {
	case nil:
		opts["ssl"] = nil
	case bool:
		if v {
			opts["ssl"] = map[string]any{}
		} else {
			opts["ssl"] = nil
		}
	}
}

// updateDiscovery is Salt's _update_discovery_config.
func updateDiscovery(opts map[string]any) error {
	d := opts["discovery"]
	if d == nil || d == false {
		return nil
	}
	if d == true {
		d = map[string]any{}
	}
	dm, ok := d.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: discovery: want a boolean or a mapping, got %s", ErrConfigFile, pyRepr(d))
	}
	conf := map[string]any{"attempts": 3, "pause": 5, "port": 4520, "match": "any", "mapping": map[string]any{}}
	for k := range dm {
		if _, ok := conf[k]; !ok {
			return fmt.Errorf("%w: unknown discovery option: %s", ErrConfigFile, k)
		}
	}
	if opts["__role"] != RoleMinion {
		delete(conf, "attempts")
		delete(conf, "pause")
		delete(conf, "match")
	}
	opts["discovery"] = dictUpdate(conf, dm, true)
	return nil
}

// appendDomain is Salt's _append_domain.
func appendDomain(id, domain string) string {
	if strings.HasSuffix(id, domain) || strings.HasSuffix(id, ".") {
		return id
	}
	return id + "." + domain
}

// MinionIDCachePath returns the file Salt caches a guessed minion id in:
// <root_dir>/etc/salt/minion_id (Salt's CONFIG_DIR under root_dir,
// independent of the -c directory).
func MinionIDCachePath(rootDir string) string {
	if rootDir == "" {
		rootDir = "/"
	}
	return pyOsJoin(rootDir, "etc/salt", "minion_id")
}

// getID is Salt's get_id: the cached id when caching is on, else the host
// name (Salt: the FQDN), lower-cased / domain-stripped on request, cached
// when cache is true. It reports whether the id is an IPv4 address.
func (l *loader) getID(opts map[string]any, cache bool) (string, bool, error) {
	root, _ := opts["root_dir"].(string)
	if opts["root_dir"] == nil {
		root = "/"
	}
	idCache := MinionIDCachePath(root)
	caching := true
	if v, ok := opts["minion_id_caching"]; ok {
		caching = truthy(v)
	}
	if caching {
		if data, err := os.ReadFile(idCache); err == nil {
			line, _, _ := strings.Cut(string(data), "\n")
			line = strings.TrimSpace(line)
			line = strings.TrimPrefix(line, "\ufeff")
			if line != "" && line != "localhost" {
				l.log.Debug("config: using cached minion id", "path", idCache, "id", line)
				return line, false, nil
			}
		}
	}
	if truthy(opts["id_function"]) {
		return "", false, fmt.Errorf("%w: id_function (set id instead)", ErrUnsupported)
	}
	id, err := os.Hostname()
	if err != nil || id == "" {
		id = "localhost"
	}
	if truthy(opts["minion_id_lowercase"]) {
		id = strings.ToLower(id)
	}
	switch rd := opts["minion_id_remove_domain"].(type) {
	case bool:
		if rd {
			id, _, _ = strings.Cut(id, ".")
		}
	case string:
		if rd != "" && strings.HasSuffix(strings.ToUpper(id), "."+strings.ToUpper(rd)) {
			id = id[:len(id)-len(rd)-1]
		}
	}
	if cache && caching {
		if err := os.MkdirAll(filepath.Dir(idCache), 0o755); err != nil {
			l.log.Error("config: cannot create the minion_id directory", "err", err)
		} else if err := os.WriteFile(idCache, []byte(id), 0o644); err != nil {
			l.log.Error("config: cannot cache the minion id", "err", err)
		}
	}
	return id, isIPv4(id), nil
}

func isIPv4(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && ip.To4() != nil && !strings.Contains(s, ":")
}

// applyMinion is Salt's apply_minion_config plus the tail of
// minion_config/proxy_config (list "return" joined). minionID is the proxy
// id (or ""), cache whether a guessed id is written to the cache file.
func (l *loader) applyMinion(overrides, defaults map[string]any, cache bool, minionID string) (map[string]any, error) {
	opts := deepCopy(defaults).(map[string]any)
	l.commonPre(opts, overrides, defaults, RoleMinion)

	usingIP := false
	if !truthy(opts["id"]) {
		if minionID != "" {
			opts["id"] = minionID
		} else {
			id, ip, err := l.getID(opts, cache)
			if err != nil {
				return nil, err
			}
			opts["id"], usingIP = id, ip
		}
	}
	id, _ := opts["id"].(string)
	if dom, ok := opts["append_domain"]; ok && !usingIP {
		id = appendDomain(id, pyfmt.Str(dom))
		opts["id"] = id
	}

	dirs := toStrList(opts["append_minionid_config_dirs"])
	for _, d := range dirs {
		switch d {
		case "pki_dir", "cachedir", "extension_modules":
			if s, ok := opts[d].(string); ok {
				opts[d] = pyOsJoin(s, id)
			}
		case "default_include":
			if s, ok := opts[d].(string); ok {
				head, tail := pySplit(s)
				opts[d] = pyOsJoin(head, id, tail)
			}
		}
	}
	for _, d := range dirs {
		if d == "pidfile" {
			if s, ok := opts["pidfile"].(string); ok {
				head, tail := pySplit(s)
				opts["pidfile"] = pyOsJoin(head, "salt", id, tail)
			}
			break
		}
	}
	sockDirRule(opts)

	opts["open_mode"] = opts["open_mode"] == true
	opts["file_roots"] = l.normalizeRoots(opts["file_roots"], "file_roots", "/srv/salt")
	opts["pillar_roots"] = l.normalizeRoots(opts["pillar_roots"], "pillar_roots", "/srv/pillar")
	extmodsAndUtils(opts)

	prepend := []string{"pki_dir", "cachedir", "sock_dir", "extension_modules", "pidfile"}
	prepend = append(prepend, logPathKeys(opts, "log_file", "key_logfile")...)
	prependRootDir(opts, prepend)

	if _, ok := opts["beacons"]; !ok {
		opts["beacons"] = map[string]any{}
	}
	ipcWriteBuffer(opts, overrides)
	if s, ok := opts["hash_type"].(string); ok {
		opts["hash_type"] = strings.ToLower(s)
	}
	updateSSL(opts)
	if err := updateDiscovery(opts); err != nil {
		return nil, err
	}
	joinReturn(opts)
	return opts, nil
}

// joinReturn turns a list "return" option into Salt's comma-separated form.
func joinReturn(opts map[string]any) {
	list, ok := opts["return"].([]any)
	if !ok {
		return
	}
	parts := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return
		}
		parts = append(parts, s)
	}
	opts["return"] = strings.Join(parts, ",")
}

// applyMaster is Salt's apply_master_config plus the tail of master_config
// (nodegroups fix-ups, list "return" joined).
func (l *loader) applyMaster(overrides, defaults map[string]any) (map[string]any, error) {
	opts := deepCopy(defaults).(map[string]any)
	l.commonPre(opts, overrides, defaults, RoleMaster)
	if ea, ok := opts["external_auth"].(map[string]any); ok {
		if _, rest := ea["rest"]; rest {
			if opts["keep_acl_in_token"] == false {
				l.log.Warn("config: the 'rest' external_auth backend requires keep_acl_in_token; enabling it")
			}
			opts["keep_acl_in_token"] = true
		}
	}
	sockDirRule(opts)
	cache, _ := opts["cachedir"].(string)
	opts["token_dir"] = pyOsJoin(cache, "tokens")
	opts["syndic_dir"] = pyOsJoin(cache, "syndics")
	extmodsAndUtils(opts)
	ipcWriteBuffer(opts, overrides)

	usingIP, appendMaster := false, false
	if !truthy(opts["id"]) {
		id, ip, err := l.getID(opts, false)
		if err != nil {
			return nil, err
		}
		opts["id"], usingIP, appendMaster = id, ip, true
	}
	if dom, ok := opts["append_domain"]; ok && !usingIP {
		id, _ := opts["id"].(string)
		opts["id"] = appendDomain(id, pyfmt.Str(dom))
	}
	if appendMaster {
		opts["id"] = opts["id"].(string) + "_master"
	}

	prepend := []string{
		"pki_dir", "cachedir", "pidfile", "sock_dir", "extension_modules", "autosign_file",
		"autoreject_file", "token_dir", "syndic_dir", "sqlite_queue_dir", "autosign_grains_dir",
	}
	prepend = append(prepend, logPathKeys(opts, "log_file", "key_logfile", "ssh_log_file")...)
	prependRootDir(opts, prepend)

	opts["open_mode"] = opts["open_mode"] == true
	opts["auto_accept"] = opts["auto_accept"] == true
	opts["file_roots"] = l.normalizeRoots(opts["file_roots"], "file_roots", "/srv/salt")
	// Salt validates pillar_roots with the file_roots helper on the master,
	// so a malformed value falls back to /srv/salt there too.
	opts["pillar_roots"] = l.normalizeRoots(opts["pillar_roots"], "pillar_roots", "/srv/salt")

	if truthy(opts["file_ignore_regex"]) {
		if s, ok := opts["file_ignore_regex"].(string); ok {
			opts["file_ignore_regex"] = []any{s}
		}
	}
	if truthy(opts["file_ignore_glob"]) {
		if s, ok := opts["file_ignore_glob"].(string); ok {
			opts["file_ignore_glob"] = []any{s}
		}
	}
	if wt, ok := asInt(opts["worker_threads"]); ok && wt < 3 && truthy(opts["peer"]) {
		l.log.Warn("config: worker_threads cannot be lower than 3 when peer is set; using 3")
		opts["worker_threads"] = 3
	}
	if _, ok := opts["pillar_source_merging_strategy"]; !ok {
		opts["pillar_source_merging_strategy"] = "smart"
	}
	if s, ok := opts["hash_type"].(string); ok {
		opts["hash_type"] = strings.ToLower(s)
	}
	updateSSL(opts)
	if err := updateDiscovery(opts); err != nil {
		return nil, err
	}
	joinReturn(opts)

	if opts["nodegroups"] == nil {
		opts["nodegroups"] = map[string]any{}
	}
	if list, ok := opts["nodegroups"].([]any); ok && isDictList(list) {
		packed := map[string]any{}
		for _, e := range list {
			for k, v := range e.(map[string]any) {
				packed[k] = v
			}
		}
		opts["nodegroups"] = packed
	}
	return opts, nil
}

func isDictList(list []any) bool {
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok || len(m) != 1 {
			return false
		}
	}
	return true
}

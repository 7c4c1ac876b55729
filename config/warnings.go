package config

import (
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
)

// UnknownOption is an option of a configuration file that Salt 3006 does
// not know, and the known option nearest to it (a likely misspelling), if
// one is close.
type UnknownOption struct {
	Key, Suggestion string
}

// Unknown returns the options of the files read that Salt does not know.
func (o *Opts) Unknown() []UnknownOption { return append([]UnknownOption(nil), o.unknown...) }

// Warnings returns what a daemon should warn about in its configuration
// once logging is set up: unknown options (with "did you mean" for near
// misses) and file_roots / pillar_roots directories that do not exist.
func (o *Opts) Warnings() []string {
	var out []string
	for _, u := range o.unknown {
		if isGsaltOption(u.Key) {
			continue
		}
		msg := fmt.Sprintf("unknown option %q in the %s configuration", u.Key, o.role)
		if u.Suggestion != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", u.Suggestion)
		}
		out = append(out, msg)
	}
	if o.role == RoleMaster || o.Str("file_client") == "local" {
		for _, key := range []string{"file_roots", "pillar_roots"} {
			for _, env := range sortedKeys(o.Map(key)) {
				dirs, _ := o.Map(key)[env].([]any)
				for _, d := range dirs {
					ds, ok := d.(string)
					if !ok || strings.Contains(ds, "__env__") {
						continue
					}
					if st, err := os.Stat(ds); err != nil || !st.IsDir() {
						out = append(out, fmt.Sprintf("%s: directory %s of saltenv %q does not exist", key, ds, env))
					}
				}
			}
		}
	}
	return out
}

// isGsaltOption reports gsalt's own options and module options: keys
// with a dot ("pgjsonb.host", "mysql.user") are read by modules through
// config.get, so neither Salt nor gsalt declares them.
func isGsaltOption(k string) bool {
	switch k {
	case "metrics_port", "metrics_host", "metrics_ready_share", "metrics_heartbeat_timeout", "nats",
		"returner_spool_max_records", "returner_spool_max_bytes", "job_cache_recover", "gomemlimit":
		return true
	case "virt": // Salt's virt module reads virt:connection:uri etc. through config.get
		return true
	}
	return strings.Contains(k, ".")
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// nearestOption is the known option closest to key by edit distance when
// it is close enough to be a misspelling (at most 2 edits, or a third of
// the key's length for long keys), "" otherwise.
func nearestOption(key string, known map[string]any) string {
	best, bestD := "", -1
	limit := max(2, len(key)/3)
	lk := strings.ToLower(strings.ReplaceAll(key, "-", "_"))
	for k := range known {
		d := editDistance(lk, k)
		if d <= limit && (bestD < 0 || d < bestD || (d == bestD && k < best)) {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// SourceKind says how a configuration file was used.
type SourceKind int

// The ways a configuration file is used.
const (
	// SourceMain is the main file (DIR/master, DIR/minion, DIR/proxy).
	SourceMain SourceKind = iota
	// SourceMissing is a main file that does not exist (defaults used).
	SourceMissing
	// SourceInclude is a file matched by default_include or include.
	SourceInclude
)

// Source is one configuration file read (or looked for) by a Load
// function.
type Source struct {
	Path string
	Kind SourceKind
}

// Sources returns the files the configuration was read from, in order.
func (o *Opts) Sources() []Source { return append([]Source(nil), o.sources...) }

// LogSources logs the files the configuration was read from at debug
// level, with Salt's texts ("Reading configuration from ...", "Including
// configuration from '...'", "Missing configuration file: ..."), as Salt's
// tools print them with -l debug.
func (o *Opts) LogSources(log *slog.Logger) {
	if log == nil {
		return
	}
	for _, s := range o.sources {
		switch s.Kind {
		case SourceMain:
			log.Debug("Reading configuration from " + s.Path)
		case SourceMissing:
			log.Debug("Missing configuration file: " + s.Path)
		case SourceInclude:
			log.Debug(fmt.Sprintf("Including configuration from '%s'", s.Path))
			log.Debug("Reading configuration from " + s.Path)
		}
	}
}

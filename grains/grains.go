// Package grains computes a minion's grains the way Salt 3006 does on Linux:
// the core grains of salt/grains/core.py and the other grain modules that
// ship with Salt (extra, disks, lvm, mdadm, zfs, minion_process), then the
// static grains from the minion's `grains` file and its configuration.
//
// Values follow Salt's types: strings, int64, bool, nil, []any and
// *payload.Map, so they encode on the wire exactly like Salt's.
//
// Differences from Salt, on purpose:
//   - pythonversion, pythonpath, pythonexecutable, saltpath and zmqversion
//     describe a Python installation gsalt does not have; they are omitted.
//   - saltversion and saltversioninfo report version.Salt and
//     version.SaltInfo, the Salt release gsalt follows.
//   - server_id hashes the id like the Python 3.10 interpreter of Salt's
//     onedir packages (SipHash-2-4 with a zero key); Python 3.11 and later
//     use SipHash-1-3 and give another number. server_id_use_crc works.
//   - interfaces and default gateways are read over netlink instead of
//     parsing `ip addr show` and `ip route show`; the values are the same,
//     but they do not depend on the ip binary being installed.
//   - locale_info:timezone is the abbreviation of the local zone (what
//     dateutil gives Salt's onedir); a Salt without dateutil says "unknown".
//   - the __suse_reserved_* grains of SUSE's Salt builds are not set.
//   - the lsb_release Python module is treated as missing (as in Salt's
//     onedir packages): lsb_distrib_* come from /etc/lsb-release, or from
//     os-release on distributions Salt handles with its legacy code.
//   - proxy minions, cloud metadata grains and the opt-in iscsi, nvme and
//     fibre channel grains are not computed.
package grains

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/gsalt/gsalt/internal/stringutils"

	"github.com/gsalt/gsalt/internal/grainsfile"

	"github.com/gsalt/gsalt/wire/payload"
)

// Getter reads minion configuration options (modules.Options satisfies it).
type Getter interface {
	Get(key string) (any, bool)
}

// Options is what grain computation needs from the minion.
type Options struct {
	// ID is the minion id (the id grain, and server_id's input).
	ID string
	// Master is the master option: a string or a list of strings.
	Master any
	// Grains are the static grains of the `grains:` key of the minion
	// configuration; they win over everything else.
	Grains *payload.Map
	// ConfDir is the directory of the minion configuration file, holding
	// the `grains` file. Empty means no grains file.
	ConfDir string
	// Opts gives the other options grains look at (enable_fqdns_grains,
	// server_id_use_crc, grains_blacklist, grains_deep_merge, append_domain,
	// enable_lspci, enable_gpu_grains, enable_lvm_grains, grain_opts). May be
	// nil.
	Opts Getter
	// Logger receives debug messages; nil means slog.Default().
	Logger *slog.Logger
}

// ErrGrainsFile reports a grains file that cannot be read or parsed.
var ErrGrainsFile = grainsfile.ErrGrainsFile

// ReadFile reads a grains file (see grainsfile.ReadFile).
func ReadFile(path string) (*payload.Map, error) { return grainsfile.ReadFile(path) }

// WriteFile writes a grains file atomically (see grainsfile.WriteFile).
func WriteFile(path string, m *payload.Map) error { return grainsfile.WriteFile(path, m) }

// FileName is the name of the static grains file in the configuration
// directory.
const FileName = grainsfile.FileName

// Core computes the grains Salt's grain modules compute (everything but the
// static grains). It fails only when ctx is done.
func Core(ctx context.Context, opts Options) (*payload.Map, error) {
	h := newHost(opts)
	g := h.collect(ctx)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("grains: %w", err)
	}
	return g, nil
}

// Load computes the full grains: Core, then the grains file of
// opts.ConfDir, then opts.Grains, each overriding the previous (merged
// recursively when grains_deep_merge is true). A grains file with bad
// syntax is skipped with a warning, as Salt does.
func Load(ctx context.Context, opts Options) (*payload.Map, error) {
	h := newHost(opts)
	g := h.collect(ctx)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("grains: %w", err)
	}
	deep := false
	if opts.Opts != nil {
		if v, ok := opts.Opts.Get("grains_deep_merge"); ok && v == true {
			deep = true
		}
	}
	if opts.ConfDir != "" {
		file, err := ReadFile(filepath.Join(opts.ConfDir, FileName))
		if err != nil {
			h.log.Warn("Bad syntax in grains file! Skipping.", "err", err)
		} else {
			h.merge(g, h.blacklist(file), deep)
		}
	}
	if opts.Grains != nil {
		h.merge(g, payload.DeepClone(opts.Grains).(*payload.Map), deep)
	}
	return sortMap(g), nil
}

// host gathers grains from the running system. Its file and command access
// go through fields so tests can point it at fixtures.
type host struct {
	opts Options
	log  *slog.Logger
	// root prefixes every absolute path read ("" for the real system).
	root string
	// run executes a command and returns its stdout and exit status.
	run func(ctx context.Context, name string, args ...string) (string, int, error)
	// lookPath finds an executable in PATH.
	lookPath func(string) (string, error)
	getenv   func(string) string
	// net returns the interfaces; nil means netlink.
	net func() ([]iface, error)
	// routes returns the default gateways; nil means netlink.
	gateways func() (gw4, gw6 any, err error)

	// interface list and fqdn, computed once per collection
	ifDone   bool
	ifList   []iface
	ifErr    error
	fqdnDone bool
	fqdnVal  string
}

func newHost(opts Options) *host {
	lg := opts.Logger
	if lg == nil {
		lg = slog.Default()
	}
	return &host{
		opts:     opts,
		log:      lg.With("component", "grains"),
		run:      runCommand,
		lookPath: whichSalt,
		getenv:   os.Getenv,
	}
}

// maxCommandOutput bounds what a grain command may print.
const maxCommandOutput = 4 << 20

// commandTimeout bounds one grain command.
const commandTimeout = 20 * time.Second

// runCommand runs name with args in the C locale, as Salt's cmd.run does,
// returning stdout (bounded) and the exit status.
func runCommand(ctx context.Context, name string, args ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	var out limitedBuffer
	out.max = maxCommandOutput
	cmd.Stdout = &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return rstrip(out.String()), ee.ExitCode(), nil
	}
	if err != nil {
		return "", -1, fmt.Errorf("grains: run %s: %w", name, err)
	}
	return rstrip(out.String()), 0, nil
}

// rstrip removes trailing whitespace, as Salt's cmd.run does.
func rstrip(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}

// path maps an absolute system path into the host's root.
func (h *host) path(p string) string {
	if h.root == "" {
		return p
	}
	return filepath.Join(h.root, p)
}

// maxFileRead bounds the grain files read (cpuinfo of big machines is
// large, but not this large).
const maxFileRead = 16 << 20

func (h *host) readFile(p string) (string, error) {
	f, err := os.Open(h.path(p))
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileRead))
	return string(b), err
}

func (h *host) exists(p string) bool {
	_, err := os.Stat(h.path(p))
	return err == nil
}

func (h *host) isFile(p string) bool {
	st, err := os.Stat(h.path(p))
	return err == nil && st.Mode().IsRegular()
}

func (h *host) isDir(p string) bool {
	st, err := os.Stat(h.path(p))
	return err == nil && st.IsDir()
}

// which returns the executable's path, or "".
func (h *host) which(name string) string {
	p, err := h.lookPath(name)
	if err != nil {
		return ""
	}
	return p
}

// whichSalt is salt.utils.path.which's search: PATH, then the usual
// system directories missing from it.
func whichSalt(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err == nil || strings.ContainsRune(name, '/') {
		return p, err
	}
	for _, dir := range []string{"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin"} {
		cand := filepath.Join(dir, name)
		if st, serr := os.Stat(cand); serr == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return cand, nil
		}
	}
	return "", err
}

// exec runs a command found with which (so the extra system directories
// Salt searches count), returning its stdout and exit status.
func (h *host) exec(ctx context.Context, name string, args ...string) (string, int, error) {
	if p := h.which(name); p != "" {
		name = p
	}
	return h.run(ctx, name, args...)
}

// output runs a command and returns its stdout, or "" when it cannot run.
func (h *host) output(ctx context.Context, name string, args ...string) string {
	out, _, err := h.exec(ctx, name, args...)
	if err != nil {
		h.log.Debug("grain command failed", "cmd", name, "err", err)
		return ""
	}
	return out
}

// opt returns a configuration option.
func (h *host) opt(key string) (any, bool) {
	if h.opts.Opts == nil {
		return nil, false
	}
	return h.opts.Opts.Get(key)
}

// optTrue reports whether an option is set to exactly True, or def when
// it is not set (Salt's `__opts__.get(key, def) is True`).
func (h *host) optTrue(key string, def bool) bool {
	v, ok := h.opt(key)
	if !ok {
		return def
	}
	return v == true
}

// collect runs every grain function in Salt's order: core first, then the
// other modules; later results override earlier ones.
func (h *host) collect(ctx context.Context) *payload.Map {
	g := &payload.Map{}
	deep := h.optTrue("grains_deep_merge", false)
	add := func(m *payload.Map) {
		if m == nil || ctx.Err() != nil {
			return
		}
		h.merge(g, h.blacklist(m), deep)
	}
	// core.py, in the loader's (alphabetical) order of function names.
	add(h.appendDomain())
	add(h.cwdGrain())
	add(h.defaultGateway())
	add(h.dnsGrain())
	add(h.fqdnsGrain(ctx))
	add(h.machineID())
	add(payload.NewMap("master", h.master()))
	add(h.serverID())
	add(h.hostnameGrains(ctx))
	add(h.hwaddrInterfaces())
	add(payload.NewMap("id", h.opts.ID))
	add(h.ipInterfaces(ctx))
	add(h.kernelParams())
	add(h.localeInfo())
	add(h.osData(ctx))
	add(h.pathGrains())
	add(payload.NewMap("saltversion", versionSalt(), "saltversioninfo", versionSaltInfo()))
	// The other grain modules.
	add(h.disks())
	add(payload.NewMap("shell", h.shell()))
	add(h.lvm(ctx))
	add(h.mdadm())
	add(h.uefi())
	add(payload.NewMap("transactional", h.which("transactional-update") != ""))
	add(h.processGrains())
	add(h.zfs(ctx))
	return sortMap(g)
}

// master is the master option as Salt's get_master returns it.
func (h *host) master() any {
	if h.opts.Master != nil {
		return payload.DeepClone(h.opts.Master)
	}
	return ""
}

// merge applies src over dst: a plain update, or Salt's recursive
// dictupdate.update when deep.
func (h *host) merge(dst, src *payload.Map, deep bool) {
	for _, it := range src.Items() {
		if deep {
			if dm, ok := mustMap(dst.GetKey(it.Key)); ok {
				if sm, ok := it.Value.(*payload.Map); ok {
					dm = dm.Clone()
					h.merge(dm, sm, true)
					dst.SetKey(it.Key, dm)
					continue
				}
			}
		}
		dst.SetKey(it.Key, it.Value)
	}
}

func mustMap(v any, ok bool) (*payload.Map, bool) {
	if !ok {
		return nil, false
	}
	m, isMap := v.(*payload.Map)
	return m, isMap
}

// blacklist removes the grains matching grains_blacklist (globs, or
// regular expressions matching the whole name).
func (h *host) blacklist(m *payload.Map) *payload.Map {
	v, ok := h.opt("grains_blacklist")
	if !ok {
		return m
	}
	list, _ := v.([]any)
	if len(list) == 0 {
		return m
	}
	out := &payload.Map{}
	for _, it := range m.Items() {
		name := payload.KeyString(it.Key)
		drop := false
		for _, b := range list {
			if s, ok := b.(string); ok && stringutils.ExprMatch(name, s) {
				drop = true
				break
			}
		}
		if !drop {
			out.SetKey(it.Key, it.Value)
		}
	}
	return out
}

// sortMap returns m with its keys in sorted order (grains are a plain dict
// in Salt; sorting makes gsalt's output deterministic).
func sortMap(m *payload.Map) *payload.Map {
	items := append([]payload.Item(nil), m.Items()...)
	sort.SliceStable(items, func(i, j int) bool {
		return payload.KeyString(items[i].Key) < payload.KeyString(items[j].Key)
	})
	out := &payload.Map{}
	for _, it := range items {
		out.SetKey(it.Key, it.Value)
	}
	return out
}

// strList converts strings to a payload list (never nil).
func strList(s []string) []any {
	out := make([]any, 0, len(s))
	for _, x := range s {
		out = append(out, x)
	}
	return out
}

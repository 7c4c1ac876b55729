package devsim

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Platform names accepted in Options.Platform.
const (
	// PlatformIOS simulates a Cisco IOS-XE router (scrapligo platform cisco_iosxe).
	PlatformIOS = "ios"
	// PlatformEOS simulates an Arista EOS switch (scrapligo platform arista_eos).
	PlatformEOS = "eos"
	// PlatformIOSXR simulates a Cisco IOS XR router (scrapligo platform cisco_iosxr).
	PlatformIOSXR = "iosxr"
	// PlatformNXOS simulates a Cisco Nexus NX-OS switch (scrapligo platform cisco_nxos).
	PlatformNXOS = "nxos"
)

// Limits applied when Options leave them zero, and hard caps.
const (
	// DefaultMaxSessions is the default number of concurrent SSH connections per device.
	DefaultMaxSessions = 8
	// DefaultIdleTimeout closes connections that send nothing for this long.
	DefaultIdleTimeout = 10 * time.Minute
	// MaxDevices caps the number of devices of one fleet.
	MaxDevices = 30000
	// maxLineLen bounds one command line; longer input is dropped.
	maxLineLen = 8192
	// maxFiles bounds the number of flash files per device.
	maxFiles = 64
	// maxFileSize bounds one flash file.
	maxFileSize = 1 << 20
	// maxBlockLines bounds the lines of one configuration level (global or one block).
	maxBlockLines = 10000
	// maxEOSSessions bounds pending EOS configuration sessions per device.
	maxEOSSessions = 5
	// handshakeTimeout bounds the SSH handshake and authentication.
	handshakeTimeout = 15 * time.Second
	// maxChannelsPerConn bounds session channels on one SSH connection.
	maxChannelsPerConn = 2
)

// Sentinel errors returned by Start and ParseFaults.
var (
	// ErrOptions reports invalid Options.
	ErrOptions = errors.New("devsim: invalid options")
	// ErrListen reports that a device port could not be bound.
	ErrListen = errors.New("devsim: cannot listen")
	// ErrFaultSpec reports a malformed fault specification.
	ErrFaultSpec = errors.New("devsim: invalid fault specification")
	// ErrConfig reports configuration text a device rejected.
	ErrConfig = errors.New("devsim: configuration rejected")
)

// Fault is a misbehaviour injected into one device.
type Fault int

// Faults a device can be given.
const (
	// FaultNone is a healthy device.
	FaultNone Fault = iota
	// FaultHang writes the first half of show/more/dir output and then stops until the client
	// disconnects.
	FaultHang
	// FaultDrop writes the first half of show/more/dir output and then closes the connection.
	FaultDrop
	// FaultBadAuth rejects every authentication attempt.
	FaultBadAuth
	// FaultRefuse closes every TCP connection right after accepting it.
	FaultRefuse
)

func faultNames() []string { return []string{"none", "hang", "drop", "badauth", "refuse"} }

// String returns the fault's name as used in fault specifications.
func (f Fault) String() string {
	names := faultNames()
	if f < 0 || int(f) >= len(names) {
		return "fault(" + strconv.Itoa(int(f)) + ")"
	}
	return names[f]
}

// ParseFaults parses a specification such as "hang:3,badauth:5,drop:7-9" into a map from
// zero-based device index to fault. Indexes may be single numbers or inclusive ranges.
func ParseFaults(spec string) (map[int]Fault, error) {
	out := map[int]Fault{}
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return out, nil
	}
	for item := range strings.SplitSeq(spec, ",") {
		name, idx, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok {
			return nil, fmt.Errorf("%w: %q lacks ':index'", ErrFaultSpec, item)
		}
		f := FaultNone
		for i, n := range faultNames() {
			if i > 0 && strings.EqualFold(n, name) {
				f = Fault(i)
			}
		}
		if f == FaultNone {
			return nil, fmt.Errorf("%w: unknown fault %q", ErrFaultSpec, name)
		}
		lo, hi, isRange := strings.Cut(idx, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%w: bad index %q", ErrFaultSpec, idx)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > MaxDevices {
				return nil, fmt.Errorf("%w: bad range %q", ErrFaultSpec, idx)
			}
		}
		for i := a; i <= b; i++ {
			out[i] = f
		}
	}
	return out, nil
}

// Options configure a Fleet. The zero value plus Devices is usable: one IOS device per Devices
// on free ports, user admin, password admin, no enable secret.
type Options struct {
	// Platform is PlatformIOS (default), PlatformEOS, PlatformIOSXR or PlatformNXOS.
	Platform string
	// Devices is the number of simulated devices (at least 1).
	Devices int
	// Host is the listen address (default 127.0.0.1).
	Host string
	// BasePort is the first port; device i listens on BasePort+i. 0 picks free ports.
	BasePort int
	// User is the accepted login name (default "admin"); Password the accepted password
	// (default "admin").
	User, Password string
	// Secret is the enable secret; empty means enable asks for no password.
	Secret string
	// HostnamePrefix names device i HostnamePrefix+strconv.Itoa(i+1) (default "sw").
	HostnamePrefix string
	// Latency delays the answer to every non-empty command line.
	Latency time.Duration
	// Faults maps zero-based device indexes to injected faults.
	Faults map[int]Fault
	// MaxSessions bounds concurrent connections per device (default DefaultMaxSessions); further
	// connections are closed at once.
	MaxSessions int
	// IdleTimeout closes connections idle this long (default DefaultIdleTimeout).
	IdleTimeout time.Duration
	// HostKey overrides the ed25519 host key generated at start.
	HostKey ssh.Signer
	// Now overrides the clock (tests use a fixed time for golden output).
	Now func() time.Time
	// Logger receives connection-level logs (default: discard).
	Logger *slog.Logger
	// Platforms, when set, holds extra platform definitions: platforms/<name>/platform.yaml and
	// its templates, the layout of the built-in ones. A name found there wins over a built-in.
	Platforms fs.FS
}

// platformFS is the file system the fleet's platform definition is read from.
func (o *Options) platformFS() fs.FS {
	if o.Platforms != nil {
		if _, err := fs.Stat(o.Platforms, path.Join("platforms", o.Platform, "platform.yaml")); err == nil {
			return o.Platforms
		}
	}
	return builtinPlatforms
}

// PlatformNames lists the platforms devsim can simulate: the built-in ones and those of extra
// (which may be nil), sorted.
func PlatformNames(extra fs.FS) []string {
	var names []string
	for _, fsys := range []fs.FS{builtinPlatforms, extra} {
		if fsys == nil {
			continue
		}
		ents, _ := fs.ReadDir(fsys, "platforms")
		for _, e := range ents {
			if _, err := fs.Stat(fsys, path.Join("platforms", e.Name(), "platform.yaml")); err == nil && !slices.Contains(names, e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	slices.Sort(names)
	return names
}

func (o *Options) normalize() error {
	if o.Platform == "" {
		o.Platform = PlatformIOS
	}
	o.Platform = strings.ToLower(o.Platform)
	if _, err := fs.Stat(o.platformFS(), path.Join("platforms", o.Platform, "platform.yaml")); err != nil || !fs.ValidPath(o.Platform) || strings.Contains(o.Platform, "/") {
		return fmt.Errorf("%w: platform %q (want one of %s)", ErrOptions, o.Platform, strings.Join(PlatformNames(o.Platforms), ", "))
	}
	if o.Devices < 1 || o.Devices > MaxDevices {
		return fmt.Errorf("%w: devices %d (want 1..%d)", ErrOptions, o.Devices, MaxDevices)
	}
	if o.BasePort < 0 || (o.BasePort > 0 && o.BasePort+o.Devices-1 > 65535) {
		return fmt.Errorf("%w: base port %d with %d devices", ErrOptions, o.BasePort, o.Devices)
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.User == "" {
		o.User = "admin"
	}
	if o.Password == "" {
		o.Password = "admin"
	}
	if o.HostnamePrefix == "" {
		o.HostnamePrefix = "sw"
	}
	if !validHostnamePrefix(o.HostnamePrefix) {
		return fmt.Errorf("%w: hostname prefix %q", ErrOptions, o.HostnamePrefix)
	}
	if o.Latency < 0 {
		return fmt.Errorf("%w: negative latency", ErrOptions)
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

func validHostnamePrefix(s string) bool {
	if len(s) > 40 {
		return false
	}
	for _, r := range s {
		ok := r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

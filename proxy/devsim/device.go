package devsim

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// Device is one simulated device of a Fleet. Its methods are safe for concurrent use.
type Device struct {
	fleet  *Fleet
	index  int
	name   string
	fault  atomic.Int32 // a Fault; SetFault changes it while the fleet runs
	addr   string
	active atomic.Int32

	mu    sync.Mutex
	st    *devState                // nil until first needed
	conns map[*ssh.ServerConn]bool // open SSH connections, for DropSessions
}

// flashFile is one file on the device's flash file system.
type flashFile struct {
	data  string
	mtime time.Time
}

// devState is the mutable state of a device, allocated lazily.
type devState struct {
	running     *config
	startup     *config
	startupTime time.Time
	files       map[string]flashFile
	sessions    map[string]*config // EOS configuration sessions by name
	sessOrder   []string
	sessSeq     int
	lastChange  time.Time
	changedBy   string
	xr          *xrDevice   // IOS-XR commit history and trial commit, nil until the first commit
	nx          *nxosDevice // NX-OS named checkpoints, nil until first needed
}

// state returns the device state, building it on first use. d.mu must be held.
func (d *Device) state() *devState {
	if d.st != nil {
		return d.st
	}
	p := d.fleet.plat
	run, errs := p.d.parseConfig(p.startupText(d.fleet, d.index), nil)
	if len(errs) > 0 {
		// The templates are part of this package; a rejected line is a bug worth logging.
		d.fleet.opts.Logger.Error("devsim: template line rejected", "platform", p.name, "lines", errs)
	}
	boot := d.fleet.bootTime(d.index)
	d.st = &devState{
		running:     run,
		startup:     run.clone(),
		startupTime: boot,
		files:       map[string]flashFile{},
		sessions:    map[string]*config{},
		lastChange:  boot,
		changedBy:   "",
	}
	return d.st
}

// Index returns the device's zero-based index in its fleet.
func (d *Device) Index() int { return d.index }

// Name returns the device's initial hostname.
func (d *Device) Name() string { return d.name }

// Addr returns the device's listen address (host:port).
func (d *Device) Addr() string { return d.addr }

// Fault returns the fault injected into the device.
func (d *Device) Fault() Fault { return Fault(d.fault.Load()) }

// SetFault changes the device's fault while the fleet runs: new
// connections and commands see it at once (FaultNone heals the device).
func (d *Device) SetFault(f Fault) { d.fault.Store(int32(f)) }

// DropSessions closes every open SSH connection of the device, as a
// reboot or a link flap would, and returns how many it closed.
func (d *Device) DropSessions() int {
	d.mu.Lock()
	conns := make([]*ssh.ServerConn, 0, len(d.conns))
	for c := range d.conns {
		conns = append(conns, c)
	}
	d.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	return len(conns)
}

func (d *Device) addConn(c *ssh.ServerConn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conns == nil {
		d.conns = map[*ssh.ServerConn]bool{}
	}
	d.conns[c] = true
}

func (d *Device) removeConn(c *ssh.ServerConn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.conns, c)
}

// ActiveSessions returns the number of currently open connections.
func (d *Device) ActiveSessions() int { return int(d.active.Load()) }

// RunningConfig returns the running configuration as the device writes it to a file (the
// "show running-config" text without its IOS "Building configuration" preamble).
func (d *Device) RunningConfig() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fleet.plat.configFile(d, d.state().running, d.st.lastChange)
}

// StartupConfig returns the saved startup configuration.
func (d *Device) StartupConfig() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fleet.plat.configFile(d, d.state().startup, d.st.startupTime)
}

// SetRunningConfig replaces the running configuration with text (a configuration file in the
// platform's syntax). Physical interfaces the text omits are kept with no settings.
func (d *Device) SetRunningConfig(text string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.state()
	c, errs := d.fleet.plat.d.parseConfig(text, st.running)
	if len(errs) > 0 {
		return fmt.Errorf("%w: %q", ErrConfig, errs[0])
	}
	st.running = c
	st.lastChange = d.fleet.opts.Now()
	return nil
}

// File returns the content of a flash file and whether it exists.
func (d *Device) File(name string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.state().files[name]
	return f.data, ok
}

// Files returns the names of the flash files in sorted order.
func (d *Device) Files() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Sorted(maps.Keys(d.state().files))
}

// ConfigSessions returns the names of pending EOS configuration sessions.
func (d *Device) ConfigSessions() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.state().sessOrder)
}

// hostname returns the hostname configured in the running configuration. d.mu must be held.
func (d *Device) hostname() string {
	if h := d.state().running.top("hostname"); h != "" {
		return h[len("hostname "):]
	}
	return d.fleet.plat.noHostname
}

// touch records a running-configuration change. d.mu must be held.
func (d *Device) touch(by string) {
	d.st.lastChange = d.fleet.opts.Now()
	d.st.changedBy = by
}

// removeSession deletes an EOS configuration session. d.mu must be held.
func (st *devState) removeSession(name string) {
	delete(st.sessions, name)
	st.sessOrder = slices.DeleteFunc(st.sessOrder, func(s string) bool { return s == name })
}

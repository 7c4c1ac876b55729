package devsim

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Fleet is a running set of simulated devices. Close stops it.
type Fleet struct {
	opts      Options
	plat      *platform
	start     time.Time
	devices   []*Device
	listeners []net.Listener
	hostKey   ssh.Signer
	okConfig  *ssh.ServerConfig // shared by healthy devices
	badConfig *ssh.ServerConfig // shared by FaultBadAuth devices

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// Start serves opts.Devices devices until ctx is cancelled or Close is called.
func Start(ctx context.Context, opts Options) (*Fleet, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	for i := range opts.Faults {
		if i < 0 || i >= opts.Devices {
			return nil, fmt.Errorf("%w: fault for device %d of %d", ErrOptions, i, opts.Devices)
		}
	}
	f := &Fleet{opts: opts, start: opts.Now(), conns: map[net.Conn]struct{}{}}
	plat, err := loadPlatform(opts.platformFS(), opts.Platform)
	if err != nil {
		return nil, err
	}
	f.plat = plat
	f.hostKey = opts.HostKey
	if f.hostKey == nil {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("devsim: host key: %w", err)
		}
		if f.hostKey, err = ssh.NewSignerFromKey(priv); err != nil {
			return nil, fmt.Errorf("devsim: host key: %w", err)
		}
	}
	f.okConfig = f.serverConfig(true)
	f.badConfig = f.serverConfig(false)
	f.devices = make([]*Device, opts.Devices)
	f.listeners = make([]net.Listener, opts.Devices)
	var lc net.ListenConfig
	for i := range f.devices {
		port := 0
		if opts.BasePort > 0 {
			port = opts.BasePort + i
		}
		ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(opts.Host, strconv.Itoa(port)))
		if err != nil {
			for _, l := range f.listeners[:i] {
				_ = l.Close()
			}
			return nil, fmt.Errorf("%w: device %d: %w", ErrListen, i, err)
		}
		f.listeners[i] = ln
		f.devices[i] = &Device{fleet: f, index: i, name: f.hostnameOf(i), addr: ln.Addr().String()}
		f.devices[i].fault.Store(int32(opts.Faults[i]))
	}
	f.ctx, f.cancel = context.WithCancel(ctx)
	for i, ln := range f.listeners {
		f.wg.Go(func() { f.acceptLoop(f.devices[i], ln) })
	}
	f.wg.Go(func() {
		<-f.ctx.Done()
		f.shutdown()
	})
	opts.Logger.Info("devsim: fleet started", "platform", opts.Platform, "devices", opts.Devices,
		"first", f.devices[0].addr, "last", f.devices[len(f.devices)-1].addr)
	return f, nil
}

// Len returns the number of devices.
func (f *Fleet) Len() int { return len(f.devices) }

// Addr returns the listen address (host:port) of device i.
func (f *Fleet) Addr(i int) string { return f.devices[i].addr }

// Port returns the TCP port of device i.
func (f *Fleet) Port(i int) int { return f.listeners[i].Addr().(*net.TCPAddr).Port }

// Device returns device i.
func (f *Fleet) Device(i int) *Device { return f.devices[i] }

// HostKey returns the public host key shared by all devices.
func (f *Fleet) HostKey() ssh.PublicKey { return f.hostKey.PublicKey() }

// Options returns the normalized options the fleet runs with.
func (f *Fleet) Options() Options { return f.opts }

// Close stops all listeners and connections and waits for their goroutines.
func (f *Fleet) Close() error {
	f.cancel()
	f.wg.Wait()
	return nil
}

func (f *Fleet) shutdown() {
	for _, ln := range f.listeners {
		_ = ln.Close()
	}
	f.mu.Lock()
	for c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
}

func (f *Fleet) track(c net.Conn, add bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if add {
		if f.ctx.Err() != nil {
			return false
		}
		f.conns[c] = struct{}{}
	} else {
		delete(f.conns, c)
	}
	return true
}

func (f *Fleet) acceptLoop(d *Device, ln net.Listener) {
	backoff := 5 * time.Millisecond
	for {
		c, err := ln.Accept()
		if err != nil {
			if f.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			f.opts.Logger.Warn("devsim: accept", "device", d.name, "err", err)
			select {
			case <-f.ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		if d.Fault() == FaultRefuse || int(d.active.Load()) >= f.opts.MaxSessions {
			_ = c.Close()
			continue
		}
		if !f.track(c, true) {
			_ = c.Close()
			return
		}
		d.active.Add(1)
		f.wg.Go(func() {
			defer func() {
				_ = c.Close()
				f.track(c, false)
				d.active.Add(-1)
			}()
			f.serveConn(d, c)
		})
	}
}

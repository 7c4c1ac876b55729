package proxymod

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/wire/payload"
)

// NapalmTypeName is the proxytype of Salt's NAPALM proxy.
const NapalmTypeName = "napalm"

// ErrNapalmConfig: the proxy configuration of a napalm device lacks the
// driver or the host, or names an unknown driver.
var ErrNapalmConfig = errors.New("proxymod: bad napalm proxy configuration")

// ErrNapalmConnect: the napalm device could not be opened (Salt's
// ConnectionException raised by get_device). The error also wraps the
// driver's error (driver.ErrAuth, driver.ErrConnect, ...).
var ErrNapalmConnect = errors.New("proxymod: cannot connect to the napalm device")

// napalmForbiddenOptArgs are the optional_args hidden from the
// optional_args grain.
var napalmForbiddenOptArgs = map[string]bool{"secret": true, "enable_password": true}

// NapalmType is Salt's napalm proxy (salt/proxy/napalm.py) on gsalt's
// NAPALM-compatible drivers (package proxy/driver). Its execution
// functions (net.*, napalm.*, ntp.*, bgp.*) live in package proxy/netmod,
// which imports this one; they are attached where both are visible.
func NapalmType() Type {
	// The devices of a proxytype share compiled prompt patterns.
	prompts := driver.NewPromptCache()
	drivers := driver.Default()
	return Type{Name: NapalmTypeName, New: func() Module {
		n := NewNapalm(drivers)
		n.prompts = prompts
		return n
	}}
}

// Napalm is one napalm device. With always_alive (the default) the driver
// connection is opened by Init and kept; without it Init opens and closes
// it, and each execution function opens its own (Connect).
type Napalm struct {
	drivers *driver.Registry
	prompts *driver.PromptCache
	log     *slog.Logger

	id          string
	driverName  string
	host        string
	username    string
	alwaysAlive bool
	optArgs     *payload.Map
	hostDNS     bool
	dopts       driver.Options

	drv    driver.Driver
	up     bool
	inited atomic.Bool // read by PingState while other methods run
}

// NewNapalm returns an uninitialised napalm module using drivers (nil
// means driver.Default()).
func NewNapalm(drivers *driver.Registry) *Napalm {
	if drivers == nil {
		drivers = driver.Default()
	}
	return &Napalm{drivers: drivers}
}

// firstStr returns the first non-empty text value among keys of m.
func firstStr(m *payload.Map, keys ...string) string {
	for _, k := range keys {
		if v, ok := m.Get(k); ok && payload.Truthy(v) {
			return payload.Text(v)
		}
	}
	return ""
}

// Init implements Module: it reads the proxy configuration the way Salt's
// get_device_opts does and opens the driver (Salt's get_device).
func (n *Napalm) Init(ctx context.Context, cfg *Config) error {
	n.log = cfg.Log
	if n.log == nil {
		n.log = slog.Default()
	}
	n.id = cfg.ID
	px := cfg.Proxy
	if px == nil {
		px = &payload.Map{}
	}
	n.host = firstStr(px, "host", "hostname", "fqdn", "ip")
	n.username = firstStr(px, "username", "user")
	n.driverName = firstStr(px, "driver", "os")
	password := firstStr(px, "passwd", "password", "pass")
	n.alwaysAlive = true
	if v, ok := px.Get("always_alive"); ok {
		n.alwaysAlive = payload.Truthy(v)
	}
	if v, ok := px.Get("napalm_host_dns_grain"); ok {
		n.hostDNS = payload.Truthy(v)
	} else if cfg.Opts != nil {
		if v, ok := cfg.Opts.Get("napalm_host_dns_grain"); ok {
			n.hostDNS = payload.Truthy(v)
		}
	}
	timeout := driver.DefaultTimeout
	if v, ok := px.Get("timeout"); ok {
		if secs, err := strconv.ParseFloat(payload.Text(v), 64); err == nil && secs > 0 {
			timeout = time.Duration(secs * float64(time.Second))
		}
	}
	n.optArgs = &payload.Map{}
	if m := px.Map("optional_args"); m != nil {
		n.optArgs = payload.DeepClone(m).(*payload.Map)
	}
	if !n.optArgs.Has("config_lock") {
		n.optArgs.Set("config_lock", false)
	}
	if n.alwaysAlive && !n.optArgs.Has("keepalive") {
		n.optArgs.Set("keepalive", int64(5))
	}
	if p := firstStr(px, "provider"); p != "" {
		n.log.Warn("napalm proxy: provider libraries are Python modules; using the built-in drivers", "provider", p)
	}
	if n.driverName == "" {
		return fmt.Errorf("%w: %s: please specify at least the napalm driver name", ErrNapalmConfig, n.id)
	}
	if n.host == "" {
		return fmt.Errorf("%w: %s: no host", ErrNapalmConfig, n.id)
	}
	oa := map[string]any{}
	for _, it := range n.optArgs.Items() {
		if k, ok := it.Key.(string); ok {
			oa[k] = it.Value
		}
	}
	var keepalive time.Duration
	if ka, ok := payload.AsInt(oa["keepalive"]); ok && ka > 0 {
		keepalive = time.Duration(ka) * time.Second
	}
	n.dopts = driver.Options{
		Host: n.host, Username: n.username, Password: password,
		Timeout: timeout, Keepalive: keepalive, Logger: n.log, OptionalArgs: oa,
		Prompts: n.prompts,
	}
	if _, err := n.drivers.New(n.driverName, n.dopts); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNapalmConfig, n.id, err)
	}
	if err := n.open(ctx); err != nil {
		return err
	}
	n.inited.Store(true)
	if !n.alwaysAlive {
		n.closeDriver(ctx)
	}
	return nil
}

// portSuffix is ":<port>" when optional_args has a port, as Salt's
// messages show it.
func (n *Napalm) portSuffix() string {
	if v, ok := n.optArgs.Get("port"); ok && payload.Truthy(v) {
		return ":" + payload.Text(v)
	}
	return ""
}

// open creates and opens a fresh driver.
func (n *Napalm) open(ctx context.Context) error {
	n.closeDriver(ctx)
	d, err := n.drivers.New(n.driverName, n.dopts)
	if err == nil {
		err = d.Open(ctx)
	}
	if err != nil {
		n.log.Error("napalm proxy: cannot connect", "host", n.host, "err", err)
		return fmt.Errorf("%w: Cannot connect to %s%s as %s.: %w", ErrNapalmConnect, n.host, n.portSuffix(), n.username, err)
	}
	n.drv, n.up = d, true
	return nil
}

// closeDriver closes the driver, if any, logging failures.
func (n *Napalm) closeDriver(ctx context.Context) {
	if n.drv == nil {
		return
	}
	if err := n.drv.Close(ctx); err != nil {
		n.log.Error("napalm proxy: cannot close the connection", "host", n.host+n.portSuffix(), "err", err)
	}
	n.drv, n.up = nil, false
}

// Ping implements Module: whether Init succeeded (Salt's ping returns
// the UP flag set by init, without contacting the device).
func (n *Napalm) Ping(context.Context) (bool, error) { return n.inited.Load(), nil }

// PingState implements StatePinger: napalm's ping only reports whether
// the connection was initialised.
func (n *Napalm) PingState() bool { return n.inited.Load() }

// Alive implements Aliver: always true without always_alive, otherwise
// the driver's is_alive probe.
func (n *Napalm) Alive(ctx context.Context) (bool, error) {
	if !n.alwaysAlive {
		return true, nil
	}
	if n.drv == nil {
		return false, nil
	}
	return n.drv.IsAlive(ctx), nil
}

// Grains implements Module: salt/grains/napalm.py's grains, from
// get_facts and the connection options. Facts that cannot be read are
// None, as in Salt.
func (n *Napalm) Grains(ctx context.Context) (*payload.Map, error) {
	facts := map[string]any{}
	var release func(context.Context)
	var err error
	if release, err = n.Connect(ctx); err == nil {
		r := n.Call(ctx, "get_facts", func(ctx context.Context, d driver.Driver) (any, error) { return d.GetFacts(ctx) })
		release(ctx)
		if r.Bool("result") {
			if m := r.Map("out"); m != nil {
				for _, it := range m.Items() {
					facts[payload.KeyString(it.Key)] = it.Value
				}
			}
		}
	}
	opt := &payload.Map{}
	for _, it := range n.optArgs.Items() {
		if !napalmForbiddenOptArgs[payload.KeyString(it.Key)] {
			opt.SetKey(it.Key, payload.DeepClone(it.Value))
		}
	}
	g := payload.NewMap(
		"hostname", facts["hostname"],
		"host", n.host,
		"interfaces", facts["interface_list"],
		"model", facts["model"],
		"optional_args", opt,
		"os", n.driverName,
		"serial", facts["serial_number"],
		"uptime", facts["uptime"],
		"username", n.username,
		"vendor", facts["vendor"],
		"version", facts["os_version"],
	)
	if n.hostDNS {
		g.Set("host_dns", payload.NewMap("A", lookupIPs(ctx, "ip4", n.host), "AAAA", lookupIPs(ctx, "ip6", n.host)))
	}
	return g, nil
}

// lookupIPs resolves host to addresses of one family ([] on failure).
func lookupIPs(ctx context.Context, family, host string) []any {
	out := []any{}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIP(ctx, family, host)
	if err != nil {
		return out
	}
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return out
}

// Shutdown implements Module: it closes the connection; failures are only
// logged, as in Salt.
func (n *Napalm) Shutdown(ctx context.Context) error {
	n.inited.Store(false)
	n.closeDriver(ctx)
	return nil
}

// KeepaliveInterval implements Keepaliver: optional_args keepalive
// (seconds, 5 by default) when always_alive keeps a session open.
func (n *Napalm) KeepaliveInterval() time.Duration {
	if !n.alwaysAlive {
		return 0
	}
	return n.dopts.Keepalive
}

// AlwaysAlive reports the always_alive setting.
func (n *Napalm) AlwaysAlive() bool { return n.alwaysAlive }

// ConnOptions returns the connection options the driver was built with
// and the proxy's optional_args (Salt's napalm.netmiko_args reads them).
func (n *Napalm) ConnOptions() (driver.Options, *payload.Map) { return n.dopts, n.optArgs }

// DriverName is the NAPALM driver name (the os grain).
func (n *Napalm) DriverName() string { return n.driverName }

// Capabilities returns the driver's optional features.
func (n *Napalm) Capabilities() driver.Capabilities {
	if n.drv != nil {
		return n.drv.Capabilities()
	}
	if d, err := n.drivers.New(n.driverName, n.dopts); err == nil {
		return d.Capabilities()
	}
	return driver.Capabilities{}
}

// Connect prepares the device for one execution function (Salt's
// proxy_napalm_wrap): with always_alive it reuses the open connection;
// without it, it opens one that release closes. A failure is an
// ErrNapalmConnect error whose ConnectMessage is what Salt returns.
func (n *Napalm) Connect(ctx context.Context) (release func(context.Context), err error) {
	if n.alwaysAlive {
		return func(context.Context) {}, nil
	}
	if err := n.open(ctx); err != nil {
		return nil, err
	}
	return n.closeDriver, nil
}

// Reconnect closes the connection and opens a new one (napalm.reconnect).
func (n *Napalm) Reconnect(ctx context.Context) error { return n.open(ctx) }

// Disconnect closes the connection (NAPALM's close called through
// napalm.call); the framework's alive check reopens an always-alive one.
func (n *Napalm) Disconnect(ctx context.Context) { n.closeDriver(ctx) }

// ConnectMessage is the text Salt's wrapper returns instead of a result
// when a not-always-alive device cannot be opened.
func ConnectMessage(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "Cannot connect to "); i >= 0 {
		msg = msg[i:]
	}
	if j := strings.Index(msg, ".: "); j >= 0 {
		msg = msg[:j+1]
	}
	return msg + ". See log for details."
}

// Call runs one driver method the way salt.utils.napalm.call does and
// returns its {out, result, comment} dict: out is the method's result as
// payload values; on failure out is {}, result False, comment tells why
// and traceback holds the error chain. A broken connection is reopened
// and the method retried once (NAPALM's ConnectionClosedException path).
func (n *Napalm) Call(ctx context.Context, method string, fn func(ctx context.Context, d driver.Driver) (any, error)) *payload.Map {
	var out any
	err := n.callOnce(ctx, fn, &out)
	if err != nil && errors.Is(err, driver.ErrConnect) && !errors.Is(err, driver.ErrAuth) && n.up && ctx.Err() == nil {
		n.log.Error("napalm proxy: disconnected; reconnecting", "host", n.host, "method", method, "err", err)
		if oerr := n.open(ctx); oerr == nil {
			err = n.callOnce(ctx, fn, &out)
		}
	}
	if err != nil {
		var comment string
		if errors.Is(err, driver.ErrNotSupported) {
			comment = fmt.Sprintf("%s is not implemented for the NAPALM %s driver!", method, n.driverName)
		} else {
			comment = fmt.Sprintf("Cannot execute \"%s\" on %s%s as %s. Reason: %s!", method, n.host, n.portSuffix(), n.username, err)
		}
		n.log.Error("napalm proxy: call failed", "method", method, "comment", comment)
		return payload.NewMap("out", &payload.Map{}, "result", false, "comment", comment, "traceback", err.Error())
	}
	return payload.NewMap("out", out, "result", true, "comment", "")
}

// errNotConnected is Salt's "not connected" exception of call.
var errNotConnected = errors.New("not connected")

func (n *Napalm) callOnce(ctx context.Context, fn func(ctx context.Context, d driver.Driver) (any, error), out *any) error {
	if n.drv == nil || !n.up {
		return errNotConnected
	}
	v, err := fn(ctx, n.drv)
	if err != nil {
		return err
	}
	*out = toPayloadValue(v)
	return nil
}

// toPayloadValue keeps payload values and converts driver results.
func toPayloadValue(v any) any {
	switch v.(type) {
	case nil, *payload.Map, []any, string, bool, int64, float64:
		return v
	}
	return driver.ToPayload(v)
}

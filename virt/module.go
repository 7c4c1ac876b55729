package virt

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// Module is the virt execution module over a Dialer.
type Module struct {
	// Dialer opens connections; nil means Libvirt().
	Dialer Dialer
	// QemuImg is the qemu-img command ("" means "qemu-img" on PATH).
	QemuImg string
}

// Functions returns the virt.* execution functions over the real libvirt.
func Functions() []modules.Function { return (&Module{}).Functions() }

func (m *Module) dialer() Dialer {
	if m.Dialer != nil {
		return m.Dialer
	}
	return Libvirt()
}

func (m *Module) qemuImg() string {
	if m.QemuImg != "" {
		return m.QemuImg
	}
	return "qemu-img"
}

// configGet runs config.get through the call's registry (opts, grains,
// pillar, like Salt's __salt__["config.get"]).
func configGet(ctx context.Context, c *modules.Call, key string, def any) any {
	if c.Env == nil || c.Env.Registry == nil {
		return def
	}
	if _, ok := c.Env.Registry.Lookup("config.get"); !ok {
		return def
	}
	res := c.Env.Registry.Execute(ctx, modules.Binder{}, c.Env, "config.get", []any{key, def}, nil)
	if !res.Success {
		return def
	}
	return res.Return
}

func fqdn(c *modules.Call) string {
	if c.Env != nil && c.Env.Grains != nil {
		if s := c.Env.Grains.Str("fqdn"); s != "" {
			return s
		}
	}
	return "localhost"
}

// conn opens the connection the call asks for, like Salt's __get_conn.
func (m *Module) conn(ctx context.Context, c *modules.Call) (Conn, error) {
	uri := ""
	if c.Args != nil {
		uri = payload.Text(c.Args.Get("connection"))
		if !payload.Truthy(c.Args.Get("connection")) {
			uri = ""
		}
	}
	if uri == "" {
		if v := configGet(ctx, c, "virt:connection:uri", nil); payload.Truthy(v) {
			uri = payload.Text(v)
		}
	}
	auth := &Auth{}
	if c.Args != nil {
		auth.Username = payload.Text(c.Args.Get("username"))
		auth.Password = payload.Text(c.Args.Get("password"))
	}
	if auth.Username == "" {
		if v := configGet(ctx, c, "virt:connection:auth:username", nil); payload.Truthy(v) {
			auth.Username = payload.Text(v)
		}
	}
	if auth.Password == "" {
		if v := configGet(ctx, c, "virt:connection:auth:password", nil); payload.Truthy(v) {
			auth.Password = payload.Text(v)
		}
	}
	conn, err := m.dialer().Open(uri, auth)
	if err != nil {
		if errors.Is(err, ErrNoLibvirt) || errors.Is(err, ErrNotBuilt) {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		shown := uri
		if shown == "" {
			shown = "None"
		}
		c.Log().Debug("libvirt connection failed", "uri", shown, "err", err)
		return nil, fmt.Errorf("%w: Sorry, %s failed to open a connection to the hypervisor software at %s",
			modules.ErrExecution, fqdn(c), shown)
	}
	return conn, nil
}

// withConn runs fn on a connection closed afterwards.
func (m *Module) withConn(fn func(ctx context.Context, c *modules.Call, conn Conn) (any, error)) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		conn, err := m.conn(ctx, c)
		if err != nil {
			return nil, err
		}
		defer func() { _ = conn.Close() }()
		ret, err := fn(ctx, c, conn)
		return ret, libvirtErr(err)
	}
}

// libvirtErr shows an uncaught libvirt error the way Salt's minion shows
// an uncaught libvirt.libvirtError.
func libvirtErr(err error) error {
	var le *LibvirtError
	if err != nil && errors.As(err, &le) && !errors.Is(err, modules.ErrExecution) && !errors.Is(err, modules.ErrInvocation) {
		return fmt.Errorf("libvirtError: %w", err)
	}
	return err
}

// domainsOpts select active and inactive domains for getDomains.
type domainsOpts struct{ active, inactive bool }

var allDomains = domainsOpts{true, true}

// domainNames lists the domains like _get_domain: running ones by id, then
// the defined ones.
func domainNames(conn Conn, o domainsOpts) ([]string, error) {
	var all []string
	if o.active {
		ids, err := conn.ActiveDomainIDs()
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			d, err := conn.DomainByID(id)
			if err != nil {
				return nil, err
			}
			n, err := d.Name()
			if err != nil {
				return nil, err
			}
			all = append(all, n)
		}
	}
	if o.inactive {
		names, err := conn.DefinedDomainNames()
		if err != nil {
			return nil, err
		}
		all = append(all, names...)
	}
	return all, nil
}

// getDomains is _get_domain(conn, *vms, iterable=True).
func getDomains(conn Conn, o domainsOpts, vms ...string) ([]Domain, error) {
	all, err := domainNames(conn, o)
	if err != nil {
		return nil, err
	}
	if len(vms) > 0 && len(all) == 0 {
		return nil, fmt.Errorf("%w: No virtual machines found.", modules.ErrExecution)
	}
	lookup := all
	if len(vms) > 0 {
		lookup = nil
		for _, name := range vms {
			if !slices.Contains(all, name) {
				return nil, fmt.Errorf("%w: The VM \"%s\" is not present", modules.ErrExecution, name)
			}
			lookup = append(lookup, name)
		}
	}
	out := make([]Domain, 0, len(lookup))
	for _, n := range lookup {
		d, err := conn.DomainByName(n)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// getDomain returns one named domain.
func getDomain(conn Conn, name string) (Domain, error) {
	ds, err := getDomains(conn, allDomains, name)
	if err != nil {
		return nil, err
	}
	return ds[0], nil
}

// stateName is VIRT_STATE_NAME_MAP.
func stateName(s int) string {
	switch s {
	case 0, 1, 2:
		return "running"
	case 3:
		return "paused"
	case 4, 5:
		return "shutdown"
	case 6:
		return "crashed"
	}
	return "unknown"
}

// param helpers.
func req(name string) modules.Param          { return modules.Param{Name: name, Required: true} }
func opt(name string, def any) modules.Param { return modules.Param{Name: name, Default: def} }

func kwSpec(params ...modules.Param) modules.Spec {
	return modules.Spec{Params: params, Kwargs: true}
}

// b2i is Python's int of a libvirt boolean (autostart(), isActive()).
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

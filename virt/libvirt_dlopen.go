//go:build libvirt_dlopen

package virt

import (
	"errors"
	"strings"
	"sync"

	lv "libvirt.org/go/libvirt"
)

// Built reports whether this binary carries the libvirt bindings.
const Built = true

// Libvirt returns the Dialer on the real libvirt (libvirt.so.0 opened at
// run time).
func Libvirt() Dialer { return libvirtDialer{} }

type libvirtDialer struct{}

// convErr turns libvirt-go errors into LibvirtError, and a failed dlopen
// of libvirt.so.0 into ErrNoLibvirt.
func convErr(err error) error {
	if err == nil {
		return nil
	}
	var le lv.Error
	if errors.As(err, &le) {
		msg := le.Message
		if strings.Contains(msg, "libvirt.so") || strings.HasPrefix(msg, "Failed to load vir") {
			return ErrNoLibvirt
		}
		return &LibvirtError{Code: int(le.Code), Message: msg}
	}
	return err
}

func (libvirtDialer) Open(uri string, auth *Auth) (Conn, error) {
	if err := probeOnce(); err != nil {
		return nil, err
	}
	var (
		c   *lv.Connect
		err error
	)
	if auth != nil && (auth.Username != "" || auth.Password != "") {
		a := &lv.ConnectAuth{
			CredType: []lv.ConnectCredentialType{lv.CRED_AUTHNAME, lv.CRED_NOECHOPROMPT, lv.CRED_ECHOPROMPT, lv.CRED_PASSPHRASE, lv.CRED_EXTERNAL},
			Callback: func(creds []*lv.ConnectCredential) {
				for _, cr := range creds {
					switch cr.Type {
					case lv.CRED_AUTHNAME:
						cr.Result = auth.Username
						if cr.Result == "" {
							cr.Result = cr.DefResult
						}
					case lv.CRED_NOECHOPROMPT, lv.CRED_PASSPHRASE:
						cr.Result = auth.Password
						if cr.Result == "" {
							cr.Result = cr.DefResult
						}
					}
					cr.ResultLen = len(cr.Result)
				}
			},
		}
		c, err = lv.NewConnectWithAuth(uri, a, 0)
	} else {
		c, err = lv.NewConnectWithAuthDefault(uri, 0)
	}
	if err != nil {
		return nil, convErr(err)
	}
	return &lvConn{c: c}, nil
}

// lvConn frees every object it handed out when it is closed.
type lvConn struct {
	c     *lv.Connect
	mu    sync.Mutex
	frees []func()
}

func (c *lvConn) track(f func()) {
	c.mu.Lock()
	c.frees = append(c.frees, f)
	c.mu.Unlock()
}

func (c *lvConn) dom(d *lv.Domain, err error) (Domain, error) {
	if err != nil {
		return nil, convErr(err)
	}
	c.track(func() { _ = d.Free() })
	return &lvDomain{d: d}, nil
}

func (c *lvConn) net(n *lv.Network, err error) (Network, error) {
	if err != nil {
		return nil, convErr(err)
	}
	c.track(func() { _ = n.Free() })
	return &lvNetwork{n: n}, nil
}

func (c *lvConn) pool(p *lv.StoragePool, err error) (Pool, error) {
	if err != nil {
		return nil, convErr(err)
	}
	c.track(func() { _ = p.Free() })
	return &lvPool{c: c, p: p}, nil
}

func (c *lvConn) vol(v *lv.StorageVol, err error) (Volume, error) {
	if err != nil {
		return nil, convErr(err)
	}
	c.track(func() { _ = v.Free() })
	return &lvVolume{v: v}, nil
}

func (c *lvConn) Close() error {
	c.mu.Lock()
	fs := c.frees
	c.frees = nil
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
	_, err := c.c.Close()
	return convErr(err)
}

func (c *lvConn) URI() (string, error)      { s, err := c.c.GetURI(); return s, convErr(err) }
func (c *lvConn) Hostname() (string, error) { s, err := c.c.GetHostname(); return s, convErr(err) }
func (c *lvConn) LibVersion() (uint32, error) {
	v, err := c.c.GetLibVersion()
	return v, convErr(err)
}

func (c *lvConn) NodeInfo() (NodeInfo, error) {
	i, err := c.c.GetNodeInfo()
	if err != nil {
		return NodeInfo{}, convErr(err)
	}
	return NodeInfo{Model: i.Model, Memory: i.Memory, CPUs: i.Cpus, MHz: i.MHz, Nodes: i.Nodes, Sockets: i.Sockets, Cores: i.Cores, Threads: i.Threads}, nil
}

func (c *lvConn) Capabilities() (string, error) {
	s, err := c.c.GetCapabilities()
	return s, convErr(err)
}
func (c *lvConn) DomainCapabilities(emulator, arch, machine, virttype string) (string, error) {
	s, err := c.c.GetDomainCapabilities(emulator, arch, machine, virttype, 0)
	return s, convErr(err)
}
func (c *lvConn) ActiveDomainIDs() ([]uint32, error) {
	ids, err := c.c.ListDomains()
	return ids, convErr(err)
}
func (c *lvConn) DefinedDomainNames() ([]string, error) {
	n, err := c.c.ListDefinedDomains()
	return n, convErr(err)
}
func (c *lvConn) DomainByID(id uint32) (Domain, error) { return c.dom(c.c.LookupDomainById(id)) }
func (c *lvConn) DomainByName(name string) (Domain, error) {
	return c.dom(c.c.LookupDomainByName(name))
}
func (c *lvConn) DefineDomain(xml string) (Domain, error) { return c.dom(c.c.DomainDefineXML(xml)) }
func (c *lvConn) CreateDomain(xml string) (Domain, error) { return c.dom(c.c.DomainCreateXML(xml, 0)) }
func (c *lvConn) NetworkByName(name string) (Network, error) {
	return c.net(c.c.LookupNetworkByName(name))
}
func (c *lvConn) DefineNetwork(xml string) (Network, error) { return c.net(c.c.NetworkDefineXML(xml)) }
func (c *lvConn) PoolByName(name string) (Pool, error) {
	return c.pool(c.c.LookupStoragePoolByName(name))
}
func (c *lvConn) DefinePool(xml string) (Pool, error) {
	return c.pool(c.c.StoragePoolDefineXML(xml, 0))
}
func (c *lvConn) VolumeByPath(path string) (Volume, error) {
	return c.vol(c.c.LookupStorageVolByPath(path))
}

func (c *lvConn) NodeDevice(name string) (string, []string, error) {
	d, err := c.c.LookupDeviceByName(name)
	if err != nil {
		return "", nil, convErr(err)
	}
	defer func() { _ = d.Free() }()
	x, err := d.GetXMLDesc(0)
	if err != nil {
		return "", nil, convErr(err)
	}
	caps, err := d.ListCaps()
	return x, caps, convErr(err)
}

func (c *lvConn) secret(s *lv.Secret, err error) (Secret, error) {
	if err != nil {
		return nil, convErr(err)
	}
	c.track(func() { _ = s.Free() })
	return &lvSecret{s: s}, nil
}

func (c *lvConn) SecretByUsage(usageType int, usage string) (Secret, error) {
	return c.secret(c.c.LookupSecretByUsage(lv.SecretUsageType(usageType), usage))
}
func (c *lvConn) SecretByUUID(uuid string) (Secret, error) {
	return c.secret(c.c.LookupSecretByUUIDString(uuid))
}
func (c *lvConn) DefineSecret(xml string) (Secret, error) {
	return c.secret(c.c.SecretDefineXML(xml, 0))
}

type lvSecret struct{ s *lv.Secret }

func (s *lvSecret) UUID() (string, error)    { u, err := s.s.GetUUIDString(); return u, convErr(err) }
func (s *lvSecret) UsageID() (string, error) { u, err := s.s.GetUsageID(); return u, convErr(err) }
func (s *lvSecret) SetValue(v []byte) error  { return convErr(s.s.SetValue(v, 0)) }
func (s *lvSecret) Undefine() error          { return convErr(s.s.Undefine()) }

func (c *lvConn) Networks() ([]Network, error) {
	ns, err := c.c.ListAllNetworks(0)
	if err != nil {
		return nil, convErr(err)
	}
	out := make([]Network, len(ns))
	for i := range ns {
		n := &ns[i]
		c.track(func() { _ = n.Free() })
		out[i] = &lvNetwork{n: n}
	}
	return out, nil
}

func (c *lvConn) Pools() ([]Pool, error) {
	ps, err := c.c.ListAllStoragePools(0)
	if err != nil {
		return nil, convErr(err)
	}
	out := make([]Pool, len(ps))
	for i := range ps {
		p := &ps[i]
		c.track(func() { _ = p.Free() })
		out[i] = &lvPool{c: c, p: p}
	}
	return out, nil
}

type lvDomain struct{ d *lv.Domain }

func (d *lvDomain) Name() (string, error) { s, err := d.d.GetName(); return s, convErr(err) }
func (d *lvDomain) ID() (int, error) {
	active, err := d.d.IsActive()
	if err != nil {
		return 0, convErr(err)
	}
	if !active {
		return -1, nil
	}
	id, err := d.d.GetID()
	return int(id), convErr(err)
}
func (d *lvDomain) UUID() (string, error) { s, err := d.d.GetUUIDString(); return s, convErr(err) }
func (d *lvDomain) XML(inactive bool) (string, error) {
	var f lv.DomainXMLFlags
	if inactive {
		f = lv.DOMAIN_XML_INACTIVE
	}
	s, err := d.d.GetXMLDesc(f)
	return s, convErr(err)
}
func (d *lvDomain) Info() (DomainInfo, error) {
	i, err := d.d.GetInfo()
	if err != nil {
		return DomainInfo{}, convErr(err)
	}
	return DomainInfo{State: int(i.State), MaxMem: i.MaxMem, Memory: i.Memory, NrVirtCPU: i.NrVirtCpu, CPUTime: i.CpuTime}, nil
}
func (d *lvDomain) Create() error   { return convErr(d.d.Create()) }
func (d *lvDomain) Destroy() error  { return convErr(d.d.Destroy()) }
func (d *lvDomain) Shutdown() error { return convErr(d.d.Shutdown()) }
func (d *lvDomain) Reboot() error   { return convErr(d.d.Reboot(0)) }
func (d *lvDomain) Reset() error    { return convErr(d.d.Reset(0)) }
func (d *lvDomain) Suspend() error  { return convErr(d.d.Suspend()) }
func (d *lvDomain) Resume() error   { return convErr(d.d.Resume()) }
func (d *lvDomain) Undefine(nvram bool) error {
	if nvram {
		return convErr(d.d.UndefineFlags(lv.DOMAIN_UNDEFINE_NVRAM))
	}
	return convErr(d.d.Undefine())
}
func (d *lvDomain) SetMemory(kib uint64, flags uint32) error {
	return convErr(d.d.SetMemoryFlags(kib, lv.DomainMemoryModFlags(flags)))
}
func (d *lvDomain) SetVcpus(n uint, flags uint32) error {
	return convErr(d.d.SetVcpusFlags(n, lv.DomainVcpuFlags(flags)))
}
func (d *lvDomain) OSType() (string, error)       { s, err := d.d.GetOSType(); return s, convErr(err) }
func (d *lvDomain) AttachDevice(xml string) error { return convErr(d.d.AttachDevice(xml)) }
func (d *lvDomain) DetachDevice(xml string) error { return convErr(d.d.DetachDevice(xml)) }
func (d *lvDomain) UpdateDevice(xml string, flags uint32) error {
	return convErr(d.d.UpdateDeviceFlags(xml, lv.DomainDeviceModifyFlags(flags)))
}
func (d *lvDomain) Autostart() (bool, error)   { b, err := d.d.GetAutostart(); return b, convErr(err) }
func (d *lvDomain) SetAutostart(on bool) error { return convErr(d.d.SetAutostart(on)) }
func (d *lvDomain) InterfaceStats(dev string) (InterfaceStats, error) {
	s, err := d.d.InterfaceStats(dev)
	if err != nil {
		return InterfaceStats{}, convErr(err)
	}
	return InterfaceStats{s.RxBytes, s.RxPackets, s.RxErrs, s.RxDrop, s.TxBytes, s.TxPackets, s.TxErrs, s.TxDrop}, nil
}
func (d *lvDomain) BlockStats(dev string) (BlockStats, error) {
	s, err := d.d.BlockStats(dev)
	if err != nil {
		return BlockStats{}, convErr(err)
	}
	return BlockStats{s.RdReq, s.RdBytes, s.WrReq, s.WrBytes, s.Errs}, nil
}
func (d *lvDomain) State() (int, int, error) {
	s, r, err := d.d.GetState()
	return int(s), r, convErr(err)
}
func (d *lvDomain) Migrate(dst Conn, dstURI string, flags uint32) (Domain, error) {
	dc, ok := dst.(*lvConn)
	if !ok {
		return nil, errors.New("virt: migration target is not a libvirt connection")
	}
	if flags&uint32(lv.MIGRATE_PEER2PEER) != 0 {
		name, err := d.d.GetName()
		if err != nil {
			return nil, convErr(err)
		}
		if err := d.d.MigrateToURI3(dstURI, &lv.DomainMigrateParameters{}, lv.DomainMigrateFlags(flags)); err != nil {
			return nil, convErr(err)
		}
		return dc.dom(dc.c.LookupDomainByName(name))
	}
	nd, err := d.d.Migrate3(dc.c, &lv.DomainMigrateParameters{}, lv.DomainMigrateFlags(flags))
	return dc.dom(nd, err)
}
func (d *lvDomain) SnapshotNames() ([]string, error) {
	n, err := d.d.SnapshotListNames(0)
	return n, convErr(err)
}
func (d *lvDomain) snap(name string, fn func(s *lv.DomainSnapshot) error) error {
	s, err := d.d.SnapshotLookupByName(name, 0)
	if err != nil {
		return convErr(err)
	}
	defer func() { _ = s.Free() }()
	return convErr(fn(s))
}
func (d *lvDomain) SnapshotXML(name string) (string, error) {
	var out string
	err := d.snap(name, func(s *lv.DomainSnapshot) (err error) { out, err = s.GetXMLDesc(0); return err })
	return out, err
}
func (d *lvDomain) CreateSnapshot(xml string) (string, error) {
	s, err := d.d.CreateSnapshotXML(xml, 0)
	if err != nil {
		return "", convErr(err)
	}
	defer func() { _ = s.Free() }()
	n, err := s.GetName()
	return n, convErr(err)
}
func (d *lvDomain) CurrentSnapshot() (string, error) {
	s, err := d.d.SnapshotCurrent(0)
	if err != nil {
		return "", convErr(err)
	}
	defer func() { _ = s.Free() }()
	n, err := s.GetName()
	return n, convErr(err)
}
func (d *lvDomain) RevertSnapshot(name string) error {
	return d.snap(name, func(s *lv.DomainSnapshot) error { return s.RevertToSnapshot(0) })
}
func (d *lvDomain) DeleteSnapshot(name string) error {
	return d.snap(name, func(s *lv.DomainSnapshot) error { return s.Delete(0) })
}

type lvNetwork struct{ n *lv.Network }

func (n *lvNetwork) Name() (string, error)      { s, err := n.n.GetName(); return s, convErr(err) }
func (n *lvNetwork) UUID() (string, error)      { s, err := n.n.GetUUIDString(); return s, convErr(err) }
func (n *lvNetwork) Bridge() (string, error)    { s, err := n.n.GetBridgeName(); return s, convErr(err) }
func (n *lvNetwork) XML() (string, error)       { s, err := n.n.GetXMLDesc(0); return s, convErr(err) }
func (n *lvNetwork) Autostart() (bool, error)   { b, err := n.n.GetAutostart(); return b, convErr(err) }
func (n *lvNetwork) SetAutostart(on bool) error { return convErr(n.n.SetAutostart(on)) }
func (n *lvNetwork) Active() (bool, error)      { b, err := n.n.IsActive(); return b, convErr(err) }
func (n *lvNetwork) Persistent() (bool, error)  { b, err := n.n.IsPersistent(); return b, convErr(err) }
func (n *lvNetwork) Create() error              { return convErr(n.n.Create()) }
func (n *lvNetwork) Destroy() error             { return convErr(n.n.Destroy()) }
func (n *lvNetwork) Undefine() error            { return convErr(n.n.Undefine()) }
func (n *lvNetwork) Leases() ([]Lease, error) {
	ls, err := n.n.GetDHCPLeases()
	if err != nil {
		return nil, convErr(err)
	}
	out := make([]Lease, len(ls))
	for i, l := range ls {
		out[i] = Lease{Iface: l.Iface, Expiry: l.ExpiryTime.Unix(), IPType: int(l.Type), Mac: l.Mac, IaID: l.Iaid,
			IPAddr: l.IPaddr, Prefix: l.Prefix, Hostname: l.Hostname, ClientID: l.Clientid}
	}
	return out, nil
}

type lvPool struct {
	c *lvConn
	p *lv.StoragePool
}

func (p *lvPool) Name() (string, error) { s, err := p.p.GetName(); return s, convErr(err) }
func (p *lvPool) UUID() (string, error) { s, err := p.p.GetUUIDString(); return s, convErr(err) }
func (p *lvPool) Info() (PoolInfo, error) {
	i, err := p.p.GetInfo()
	if err != nil {
		return PoolInfo{}, convErr(err)
	}
	return PoolInfo{State: int(i.State), Capacity: i.Capacity, Allocation: i.Allocation, Available: i.Available}, nil
}
func (p *lvPool) XML() (string, error)       { s, err := p.p.GetXMLDesc(0); return s, convErr(err) }
func (p *lvPool) Autostart() (bool, error)   { b, err := p.p.GetAutostart(); return b, convErr(err) }
func (p *lvPool) SetAutostart(on bool) error { return convErr(p.p.SetAutostart(on)) }
func (p *lvPool) Persistent() (bool, error)  { b, err := p.p.IsPersistent(); return b, convErr(err) }
func (p *lvPool) Active() (bool, error)      { b, err := p.p.IsActive(); return b, convErr(err) }
func (p *lvPool) Build() error               { return convErr(p.p.Build(0)) }
func (p *lvPool) Create() error              { return convErr(p.p.Create(0)) }
func (p *lvPool) Destroy() error             { return convErr(p.p.Destroy()) }
func (p *lvPool) Delete() error              { return convErr(p.p.Delete(0)) }
func (p *lvPool) Undefine() error            { return convErr(p.p.Undefine()) }
func (p *lvPool) Refresh() error             { return convErr(p.p.Refresh(0)) }
func (p *lvPool) VolumeByName(name string) (Volume, error) {
	return p.c.vol(p.p.LookupStorageVolByName(name))
}
func (p *lvPool) CreateVolume(xml string) (Volume, error) {
	return p.c.vol(p.p.StorageVolCreateXML(xml, 0))
}
func (p *lvPool) Volumes() ([]Volume, error) {
	vs, err := p.p.ListAllStorageVolumes(0)
	if err != nil {
		return nil, convErr(err)
	}
	out := make([]Volume, len(vs))
	for i := range vs {
		v := &vs[i]
		p.c.track(func() { _ = v.Free() })
		out[i] = &lvVolume{v: v}
	}
	return out, nil
}

type lvVolume struct{ v *lv.StorageVol }

func (v *lvVolume) Name() (string, error) { s, err := v.v.GetName(); return s, convErr(err) }
func (v *lvVolume) Key() (string, error)  { s, err := v.v.GetKey(); return s, convErr(err) }
func (v *lvVolume) Path() (string, error) { s, err := v.v.GetPath(); return s, convErr(err) }
func (v *lvVolume) XML() (string, error)  { s, err := v.v.GetXMLDesc(0); return s, convErr(err) }
func (v *lvVolume) Delete() error         { return convErr(v.v.Delete(0)) }
func (v *lvVolume) Info() (VolumeInfo, error) {
	i, err := v.v.GetInfo()
	if err != nil {
		return VolumeInfo{}, convErr(err)
	}
	return VolumeInfo{Type: int(i.Type), Capacity: i.Capacity, Allocation: i.Allocation}, nil
}

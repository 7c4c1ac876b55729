package virt

import (
	"errors"
)

// Sentinel errors.
var (
	// ErrNoLibvirt means libvirt.so.0 could not be loaded on this host.
	ErrNoLibvirt = errors.New("libvirt is not installed on this minion: libvirt.so.0 not found")
	// ErrNotBuilt means gsalt was built without the libvirt_dlopen tag.
	ErrNotBuilt = errors.New("libvirt is not available: gsalt was built without the libvirt_dlopen build tag")
	// ErrNoDomain means the domain, network, pool or volume does not exist
	// (libvirt's VIR_ERR_NO_DOMAIN and friends).
	ErrNoDomain = errors.New("virt: no such object")
)

// LibvirtError is an error libvirt returned: its code and message.
type LibvirtError struct {
	Code    int
	Message string
}

func (e *LibvirtError) Error() string { return e.Message }

// Domain states (virDomainState).
const (
	StateNoState = iota
	StateRunning
	StateBlocked
	StatePaused
	StateShutdown
	StateShutoff
	StateCrashed
	StatePMSuspended
)

// NodeInfo is virNodeInfo; Memory is in KiB.
type NodeInfo struct {
	Model                 string
	Memory                uint64
	CPUs, MHz             uint
	Nodes, Sockets, Cores uint32
	Threads               uint32
}

// DomainInfo is virDomainInfo; memory in KiB, CPUTime in ns.
type DomainInfo struct {
	State          int
	MaxMem, Memory uint64
	NrVirtCPU      uint
	CPUTime        uint64
}

// PoolInfo is virStoragePoolInfo (bytes).
type PoolInfo struct {
	State                           int
	Capacity, Allocation, Available uint64
}

// VolumeInfo is virStorageVolInfo (bytes).
type VolumeInfo struct {
	Type                 int
	Capacity, Allocation uint64
}

// Lease is one DHCP lease of a network.
type Lease struct {
	Iface, ExpiryTime, Type, Mac, IaID, IPAddr, Hostname, ClientID string
	Expiry                                                         int64
	Prefix                                                         uint
	IPType                                                         int
}

// InterfaceStats are a guest interface's counters.
type InterfaceStats struct {
	RxBytes, RxPackets, RxErrs, RxDrop, TxBytes, TxPackets, TxErrs, TxDrop int64
}

// BlockStats are a guest disk's counters.
type BlockStats struct {
	RdReq, RdBytes, WrReq, WrBytes, Errs int64
}

// Auth holds the credentials for a connection (Salt's username= and
// password= arguments, virt:connection:auth:*).
type Auth struct {
	Username, Password string
}

// Dialer opens hypervisor connections. The real one is Libvirt().
type Dialer interface {
	Open(uri string, auth *Auth) (Conn, error)
}

// Conn is one libvirt connection: the calls gsalt makes, nothing more.
type Conn interface {
	Close() error
	URI() (string, error)
	Hostname() (string, error)
	NodeInfo() (NodeInfo, error)
	Capabilities() (string, error)
	DomainCapabilities(emulator, arch, machine, virttype string) (string, error)
	LibVersion() (uint32, error)
	// ActiveDomainIDs and DefinedDomainNames are listDomainsID and
	// listDefinedDomains.
	ActiveDomainIDs() ([]uint32, error)
	DefinedDomainNames() ([]string, error)
	DomainByID(id uint32) (Domain, error)
	DomainByName(name string) (Domain, error)
	DefineDomain(xml string) (Domain, error)
	CreateDomain(xml string) (Domain, error)
	Networks() ([]Network, error)
	NetworkByName(name string) (Network, error)
	DefineNetwork(xml string) (Network, error)
	Pools() ([]Pool, error)
	PoolByName(name string) (Pool, error)
	DefinePool(xml string) (Pool, error)
	VolumeByPath(path string) (Volume, error)
	// NodeDevice is virNodeDeviceLookupByName: the device's XML
	// description and its capability names (listCaps).
	NodeDevice(name string) (xml string, caps []string, err error)
	// SecretByUsage and SecretByUUID look a libvirt secret up;
	// DefineSecret is virSecretDefineXML.
	SecretByUsage(usageType int, usage string) (Secret, error)
	SecretByUUID(uuid string) (Secret, error)
	DefineSecret(xml string) (Secret, error)
}

// Secret is a libvirt secret (pool authentication).
type Secret interface {
	UUID() (string, error)
	UsageID() (string, error)
	SetValue(value []byte) error
	Undefine() error
}

// Secret usage types (VIR_SECRET_USAGE_TYPE_*).
const (
	SecretUsageISCSI = 3
	SecretUsageCeph  = 2
)

// Domain is a libvirt domain.
type Domain interface {
	Name() (string, error)
	// ID is the running domain's id, -1 when it is not running.
	ID() (int, error)
	UUID() (string, error)
	// XML is XMLDesc; inactive asks for the persistent definition.
	XML(inactive bool) (string, error)
	Info() (DomainInfo, error)
	Create() error
	Destroy() error
	Shutdown() error
	Reboot() error
	Reset() error
	Suspend() error
	Resume() error
	// Undefine removes the definition; nvram asks for
	// VIR_DOMAIN_UNDEFINE_NVRAM (virDomainUndefineFlags).
	Undefine(nvram bool) error
	// SetMemory and SetVcpus take libvirt flags (VIR_DOMAIN_MEM_*,
	// VIR_DOMAIN_VCPU_*).
	SetMemory(kib uint64, flags uint32) error
	SetVcpus(n uint, flags uint32) error
	// OSType is virDomainGetOSType.
	OSType() (string, error)
	// AttachDevice, DetachDevice and UpdateDevice change a device of the
	// domain (virDomainAttachDevice, virDomainDetachDevice,
	// virDomainUpdateDeviceFlags with VIR_DOMAIN_AFFECT_* flags).
	AttachDevice(xml string) error
	DetachDevice(xml string) error
	UpdateDevice(xml string, flags uint32) error
	Autostart() (bool, error)
	SetAutostart(on bool) error
	InterfaceStats(dev string) (InterfaceStats, error)
	BlockStats(dev string) (BlockStats, error)
	// State is virDomainGetState: the state and its reason.
	State() (state, reason int, err error)
	// Migrate is virDomainMigrate3 to a connection on the destination, or
	// virDomainMigrateToURI3 to dstURI for a peer-to-peer migration (which
	// virDomainMigrate3 refuses); it returns the domain on dst.
	Migrate(dst Conn, dstURI string, flags uint32) (Domain, error)
	SnapshotNames() ([]string, error)
	SnapshotXML(name string) (string, error)
	CreateSnapshot(xml string) (string, error)
	CurrentSnapshot() (string, error)
	RevertSnapshot(name string) error
	DeleteSnapshot(name string) error
}

// Network is a libvirt virtual network.
type Network interface {
	Name() (string, error)
	UUID() (string, error)
	Bridge() (string, error)
	XML() (string, error)
	Autostart() (bool, error)
	SetAutostart(on bool) error
	Active() (bool, error)
	Persistent() (bool, error)
	Leases() ([]Lease, error)
	Create() error
	Destroy() error
	Undefine() error
}

// Pool is a libvirt storage pool.
type Pool interface {
	Name() (string, error)
	UUID() (string, error)
	Info() (PoolInfo, error)
	XML() (string, error)
	Autostart() (bool, error)
	SetAutostart(on bool) error
	Persistent() (bool, error)
	Active() (bool, error)
	Build() error
	Create() error
	Destroy() error
	Delete() error
	Undefine() error
	Refresh() error
	Volumes() ([]Volume, error)
	VolumeByName(name string) (Volume, error)
	CreateVolume(xml string) (Volume, error)
}

// Volume is a libvirt storage volume.
type Volume interface {
	Name() (string, error)
	Key() (string, error)
	Path() (string, error)
	Info() (VolumeInfo, error)
	XML() (string, error)
	Delete() error
}

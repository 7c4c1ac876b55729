// Package driver holds gsalt's NAPALM-compatible network device drivers.
//
// A Driver talks to one device over SSH and offers the NAPALM base API
// (napalm.base.base.NetworkDriver) that Salt's napalm proxy and its net.*,
// ntp.*, bgp.* execution modules call: cli, the configuration workflow
// (load_merge_candidate, load_replace_candidate, compare_config,
// commit_config, discard_config, rollback, get_config) and the getters
// (get_facts, get_interfaces, get_arp_table, get_lldp_neighbors, ...), with
// NAPALM's return shapes: the Go types of this file carry NAPALM's keys as
// their json tags, and ToPayload turns any of them into gsalt payload values
// (ordered maps with NAPALM's keys, int64, float64, bool, string).
//
// The layering follows scrapligo, on which the drivers are built: scrapligo's
// transport (SSH, "standard" crypto/ssh by default) and channel (prompt
// matching, timeouts) sit under its network driver (privilege levels,
// enable, failed-when-contains), which this package drives with the device
// commands NAPALM's ios and eos drivers send. scrapligo v1 has no cfg
// package any more, so the candidate/diff/commit/rollback workflows are
// sent as plain CLI commands: IOS writes candidates to flash through tclsh
// and uses "show archive config ..." diffs and "configure replace"; EOS uses
// configuration sessions.
//
// Drivers are created through a Registry (Default registers "ios", its alias
// "iosxe", "eos", "nxos_ssh" and its alias "nxos", "iosxr", "junos"
// (NETCONF over SSH through scrapligo's netconf driver) and "frr"). Every method takes a context: each operation is
// bounded by the earlier of the context's deadline and Options.Timeout, and a
// cancelled context closes the connection so no call can hang on a silent
// device. A Driver serialises its own operations, so it may be called from
// different goroutines one after another (callers should still serialise
// per device, as gsalt's proxy framework does).
//
// Errors wrap the sentinels ErrConnect, ErrAuth, ErrTimeout, ErrCommand,
// ErrNotSupported, ErrNotOpen and ErrInvalidArgument, themselves wrapping
// scrapligo's error where there is one.
package driver

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"
)

// Sentinel errors callers branch on. Errors returned by drivers wrap one (or,
// for ErrNotOpen, two) of them.
var (
	// ErrConnect: the device could not be reached or the connection broke
	// (refused, reset, closed in the middle of an operation). NAPALM's
	// ConnectionException / ConnectionClosedException.
	ErrConnect = errors.New("driver: cannot connect to the device")
	// ErrAuth: the device refused the login or the enable secret.
	ErrAuth = errors.New("driver: authentication failed")
	// ErrTimeout: the device did not answer within the operation's time
	// limit (Options.Timeout or the context's deadline). The connection is
	// closed afterwards, because its state is unknown.
	ErrTimeout = errors.New("driver: operation timed out")
	// ErrCommand: the device rejected a command or a configuration
	// (NAPALM's CommandErrorException, MergeConfigException,
	// ReplaceConfigException).
	ErrCommand = errors.New("driver: the device rejected a command")
	// ErrNotSupported: the driver or the device does not support the
	// operation (NAPALM's NotImplementedError).
	ErrNotSupported = errors.New("driver: not supported")
	// ErrNotOpen: the driver has no open connection (never opened, closed,
	// or closed after a timeout or connection failure). It is always
	// returned together with ErrConnect.
	ErrNotOpen = errors.New("driver: connection is not open")
	// ErrInvalidArgument: an argument is out of its domain (for example
	// get_config's retrieve).
	ErrInvalidArgument = errors.New("driver: invalid argument")
	// ErrUnknownDriver: no driver is registered under the requested name.
	ErrUnknownDriver = errors.New("driver: unknown driver")
)

// Defaults applied when Options leave fields zero.
const (
	// DefaultTimeout is NAPALM's default timeout: the limit of one
	// operation (open included).
	DefaultTimeout = 60 * time.Second
	// DefaultPort is the SSH port.
	DefaultPort = 22
	// maxOutput bounds the size of texts a driver accepts or keeps (a
	// candidate configuration, for example).
	maxOutput = 64 << 20
)

// Options configure a driver (NAPALM's driver(hostname, username, password,
// timeout, optional_args)).
type Options struct {
	// Host is the device's address or name.
	Host string
	// Port is the SSH (or telnet) port; 0 means OptionalArgs["port"] or 22
	// (23 for telnet).
	Port int
	// Username and Password log in.
	Username, Password string
	// Secret is the enable secret; empty means OptionalArgs["secret"], and
	// without one enable is tried without a password.
	Secret string
	// Transport selects scrapligo's transport: "" / "ssh" / "standard"
	// (crypto/ssh), "system" (the ssh binary) or "telnet"; empty means
	// OptionalArgs["transport"] or ssh.
	Transport string
	// Timeout bounds each operation (default DefaultTimeout); a context
	// deadline that comes earlier wins.
	Timeout time.Duration
	// Keepalive is NAPALM's keepalive interval. scrapligo's transports
	// expose no SSH keepalive, so it is recorded only; liveness is checked
	// by IsAlive, which the proxy framework calls periodically.
	Keepalive time.Duration
	// Logger receives debug logs of the commands sent (default: discard).
	Logger *slog.Logger
	// OptionalArgs are NAPALM's optional_args. Recognised: port, secret,
	// transport; for ios dest_file_system (default "flash:"),
	// candidate_cfg, merge_cfg, rollback_cfg, auto_rollback_on_error; for
	// iosxr xml_agent (every getter through the XML agent, NAPALM's way).
	OptionalArgs map[string]any
	// Prompts, when set, shares compiled prompt patterns with the other
	// connections using the same cache (a process serving many devices).
	Prompts *PromptCache
}

// Capabilities describe what a driver supports beyond the common API.
type Capabilities struct {
	// HasConfirmedCommit reports whether CommitConfig accepts revertIn > 0
	// (commit confirmed).
	HasConfirmedCommit bool
	// CommitMessage reports whether CommitConfig accepts a message.
	CommitMessage bool
	// CandidateConfig reports whether GetConfig returns the candidate.
	CandidateConfig bool
}

// Driver is one device connection with NAPALM's API. Methods other than
// Open, Close, IsAlive, Platform and Capabilities fail with ErrNotOpen
// (wrapped with ErrConnect) when the connection is not open.
type Driver interface {
	// Platform returns the driver's name ("ios", "eos"), NAPALM's
	// DRIVER_NAME.
	Platform() string
	// Capabilities returns the driver's optional features.
	Capabilities() Capabilities
	// Open connects and logs in (entering privileged exec). Opening an open
	// driver closes the old connection first.
	Open(ctx context.Context) error
	// Close logs out and closes the connection; it is bounded by ctx and
	// Options.Timeout and safe to call more than once.
	Close(ctx context.Context) error
	// IsAlive reports whether the connection is open and the device
	// answers (one prompt round trip). A failed probe closes the
	// connection.
	IsAlive(ctx context.Context) bool

	// Cli runs show commands and returns their outputs by command
	// (NAPALM cli).
	Cli(ctx context.Context, commands []string) (map[string]string, error)

	// LoadMergeCandidate stages configuration lines to be merged into the
	// running configuration.
	LoadMergeCandidate(ctx context.Context, config string) error
	// LoadReplaceCandidate stages a complete configuration that will
	// replace the running configuration.
	LoadReplaceCandidate(ctx context.Context, config string) error
	// CompareConfig returns the difference between the running
	// configuration and the staged candidate ("" when there is none).
	CompareConfig(ctx context.Context) (string, error)
	// CommitConfig applies the candidate and saves the configuration;
	// message and revertIn (seconds, commit confirmed) must be empty/0
	// unless Capabilities allow them.
	CommitConfig(ctx context.Context, message string, revertIn int) error
	// HasPendingCommit reports whether a commit made with revertIn > 0
	// waits for ConfirmCommit (NAPALM has_pending_commit). Drivers without
	// confirmed commit return false.
	HasPendingCommit(ctx context.Context) (bool, error)
	// ConfirmCommit makes a pending confirmed commit permanent (NAPALM
	// confirm_commit); without one it fails with ErrCommand, and on
	// drivers without confirmed commit with ErrNotSupported.
	ConfirmCommit(ctx context.Context) error
	// DiscardConfig drops the staged candidate.
	DiscardConfig(ctx context.Context) error
	// Rollback restores the configuration saved by the last CommitConfig.
	Rollback(ctx context.Context) error
	// GetConfig returns configurations: retrieve is "all", "running",
	// "candidate" or "startup"; the others are "".
	GetConfig(ctx context.Context, retrieve string) (Config, error)

	// GetFacts returns NAPALM get_facts.
	GetFacts(ctx context.Context) (Facts, error)
	// GetInterfaces returns NAPALM get_interfaces, by interface name.
	GetInterfaces(ctx context.Context) (map[string]Interface, error)
	// GetInterfacesIP returns NAPALM get_interfaces_ip, by interface name.
	GetInterfacesIP(ctx context.Context) (map[string]InterfaceIP, error)
	// GetArpTable returns NAPALM get_arp_table (vrf "" means all/default).
	GetArpTable(ctx context.Context, vrf string) ([]ARPEntry, error)
	// GetLLDPNeighbors returns NAPALM get_lldp_neighbors, by local port.
	GetLLDPNeighbors(ctx context.Context) (map[string][]LLDPNeighbor, error)
	// GetLLDPNeighborsDetail returns NAPALM get_lldp_neighbors_detail for
	// one local interface or all ("").
	GetLLDPNeighborsDetail(ctx context.Context, iface string) (map[string][]LLDPNeighborDetail, error)
	// GetMACAddressTable returns NAPALM get_mac_address_table.
	GetMACAddressTable(ctx context.Context) ([]MACEntry, error)
	// GetEnvironment returns NAPALM get_environment (sensors the device
	// does not report are left out or set to NAPALM's -1 placeholders).
	GetEnvironment(ctx context.Context) (Environment, error)
	// GetNTPServers returns NAPALM get_ntp_servers.
	GetNTPServers(ctx context.Context) (map[string]NTPServer, error)
	// GetNTPPeers returns NAPALM get_ntp_peers.
	GetNTPPeers(ctx context.Context) (map[string]NTPPeer, error)
	// GetNTPStats returns NAPALM get_ntp_stats.
	GetNTPStats(ctx context.Context) ([]NTPStats, error)
	// GetBGPNeighbors returns NAPALM get_bgp_neighbors by VRF ("global"
	// is the default VRF).
	GetBGPNeighbors(ctx context.Context) (map[string]BGPVRF, error)
	// Ping runs a ping on the device; a device-side failure is reported in
	// PingResult.Error, like NAPALM.
	Ping(ctx context.Context, o PingOptions) (PingResult, error)
	// Traceroute runs a traceroute on the device; a device-side failure is
	// reported in TracerouteResult.Error.
	Traceroute(ctx context.Context, o TracerouteOptions) (TracerouteResult, error)
}

// Config is NAPALM get_config's result.
type Config struct {
	Running   string `json:"running"`
	Candidate string `json:"candidate"`
	Startup   string `json:"startup"`
}

// Facts is NAPALM get_facts's result.
type Facts struct {
	// Uptime is in seconds.
	Uptime        float64  `json:"uptime"`
	Vendor        string   `json:"vendor"`
	OSVersion     string   `json:"os_version"`
	SerialNumber  string   `json:"serial_number"`
	Model         string   `json:"model"`
	Hostname      string   `json:"hostname"`
	FQDN          string   `json:"fqdn"`
	InterfaceList []string `json:"interface_list"`
}

// Interface is one entry of NAPALM get_interfaces.
type Interface struct {
	IsEnabled   bool   `json:"is_enabled"`
	IsUp        bool   `json:"is_up"`
	Description string `json:"description"`
	MACAddress  string `json:"mac_address"`
	// LastFlapped is seconds since the last change, -1 when unknown.
	LastFlapped float64 `json:"last_flapped"`
	MTU         int     `json:"mtu"`
	// Speed is in Mbit/s.
	Speed float64 `json:"speed"`
}

// IPPrefix is the value of one address in NAPALM get_interfaces_ip.
type IPPrefix struct {
	PrefixLength int `json:"prefix_length"`
}

// InterfaceIP is one entry of NAPALM get_interfaces_ip. A nil map is left
// out of the result (NAPALM's ios omits ipv6 when an interface has none);
// an empty non-nil map is kept (NAPALM's eos always has both keys).
type InterfaceIP struct {
	IPv4 map[string]IPPrefix `json:"ipv4,omitzero"`
	IPv6 map[string]IPPrefix `json:"ipv6,omitzero"`
}

// ARPEntry is one entry of NAPALM get_arp_table.
type ARPEntry struct {
	Interface string `json:"interface"`
	MAC       string `json:"mac"`
	IP        string `json:"ip"`
	// Age is as the device reports it, -1 for the device's own addresses.
	Age float64 `json:"age"`
}

// LLDPNeighbor is one entry of NAPALM get_lldp_neighbors.
type LLDPNeighbor struct {
	Hostname string `json:"hostname"`
	Port     string `json:"port"`
}

// LLDPNeighborDetail is one entry of NAPALM get_lldp_neighbors_detail.
type LLDPNeighborDetail struct {
	ParentInterface         string   `json:"parent_interface"`
	RemotePort              string   `json:"remote_port"`
	RemotePortDescription   string   `json:"remote_port_description"`
	RemoteChassisID         string   `json:"remote_chassis_id"`
	RemoteSystemName        string   `json:"remote_system_name"`
	RemoteSystemDescription string   `json:"remote_system_description"`
	RemoteSystemCapab       []string `json:"remote_system_capab"`
	RemoteSystemEnableCapab []string `json:"remote_system_enable_capab"`
}

// MACEntry is one entry of NAPALM get_mac_address_table.
type MACEntry struct {
	MAC       string  `json:"mac"`
	Interface string  `json:"interface"`
	VLAN      int     `json:"vlan"`
	Static    bool    `json:"static"`
	Active    bool    `json:"active"`
	Moves     int     `json:"moves"`
	LastMove  float64 `json:"last_move"`
}

// Environment is NAPALM get_environment's result.
type Environment struct {
	Fans        map[string]Fan         `json:"fans"`
	Temperature map[string]Temperature `json:"temperature"`
	Power       map[string]Power       `json:"power"`
	// CPU is keyed by CPU index (NAPALM ios, eos, nxos) or name (junos:
	// routing-engine slot, SRX cluster node).
	CPU    map[CPUKey]CPU `json:"cpu"`
	Memory Memory         `json:"memory"`
}

// CPUKey identifies a CPU of Environment.CPU the way NAPALM's driver keys
// it: a number (ios, eos, nxos return int keys) or, when Name is set, that
// text (junos returns the routing-engine slot as text, "0", or an SRX
// cluster's node name, "node0").
type CPUKey struct {
	Index int
	Name  string
}

// CPUIndex is the key of CPU number i.
func CPUIndex(i int) CPUKey { return CPUKey{Index: i} }

// CPUName is the key of a CPU NAPALM names by text.
func CPUName(name string) CPUKey { return CPUKey{Name: name} }

// String returns the key as text.
func (k CPUKey) String() string {
	if k.Name != "" {
		return k.Name
	}
	return strconv.Itoa(k.Index)
}

// payloadKey is the key in a Salt return: int64 for a number, else text.
func (k CPUKey) payloadKey() any {
	if k.Name != "" {
		return k.Name
	}
	return int64(k.Index)
}

// MarshalText implements encoding.TextMarshaler (JSON object keys).
func (k CPUKey) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler: digits are an index,
// other text a name.
func (k *CPUKey) UnmarshalText(b []byte) error {
	if n, err := strconv.Atoi(string(b)); err == nil {
		*k = CPUKey{Index: n}
		return nil
	}
	*k = CPUKey{Name: string(b)}
	return nil
}

// Fan is one fan of Environment.
type Fan struct {
	Status bool `json:"status"`
}

// Temperature is one sensor of Environment.
type Temperature struct {
	Temperature float64 `json:"temperature"`
	IsAlert     bool    `json:"is_alert"`
	IsCritical  bool    `json:"is_critical"`
}

// Power is one power supply of Environment.
type Power struct {
	Status   bool    `json:"status"`
	Capacity float64 `json:"capacity"`
	Output   float64 `json:"output"`
}

// CPU is one CPU of Environment.
type CPU struct {
	Usage float64 `json:"%usage"`
}

// Memory is Environment's memory usage.
type Memory struct {
	AvailableRAM int64 `json:"available_ram"`
	UsedRAM      int64 `json:"used_ram"`
}

// NTPServer is the (empty, as in NAPALM's base model) value of one
// get_ntp_servers entry.
type NTPServer struct {
	// Details are NAPALM's NTPServerDict keys, for drivers that report
	// them (eos); nil gives NAPALM's empty dict.
	*NTPServerDetails
}

// NTPServerDetails are the keys of NAPALM's NTPServerDict.
type NTPServerDetails struct {
	Address         string `json:"address"`
	Port            int    `json:"port"`
	Version         int    `json:"version"`
	AssociationType string `json:"association_type"`
	IBurst          bool   `json:"iburst"`
	Prefer          bool   `json:"prefer"`
	NetworkInstance string `json:"network_instance"`
	SourceAddress   string `json:"source_address"`
	KeyID           int    `json:"key_id"`
}

// NTPPeer is the (empty) value of one get_ntp_peers entry.
type NTPPeer struct{}

// NTPStats is one entry of NAPALM get_ntp_stats.
type NTPStats struct {
	Remote       string  `json:"remote"`
	ReferenceID  string  `json:"referenceid"`
	Synchronized bool    `json:"synchronized"`
	Stratum      int     `json:"stratum"`
	Type         string  `json:"type"`
	When         string  `json:"when"`
	HostPoll     int     `json:"hostpoll"`
	Reachability int     `json:"reachability"`
	Delay        float64 `json:"delay"`
	Offset       float64 `json:"offset"`
	Jitter       float64 `json:"jitter"`
}

// BGPVRF is one VRF of NAPALM get_bgp_neighbors.
type BGPVRF struct {
	RouterID string             `json:"router_id"`
	Peers    map[string]BGPPeer `json:"peers"`
}

// BGPPeer is one neighbor of BGPVRF.
type BGPPeer struct {
	LocalAS  int64 `json:"local_as"`
	RemoteAS int64 `json:"remote_as"`
	// RemoteID is the peer's router id, "" when the device's summary does
	// not tell it.
	RemoteID    string `json:"remote_id"`
	IsUp        bool   `json:"is_up"`
	IsEnabled   bool   `json:"is_enabled"`
	Description string `json:"description"`
	// Uptime is in seconds, -1 when the session is down.
	Uptime        int                   `json:"uptime"`
	AddressFamily map[string]BGPAFStats `json:"address_family"`
}

// BGPAFStats are one address family's prefix counters (-1 when unknown).
type BGPAFStats struct {
	ReceivedPrefixes int `json:"received_prefixes"`
	AcceptedPrefixes int `json:"accepted_prefixes"`
	SentPrefixes     int `json:"sent_prefixes"`
}

// PingOptions are NAPALM ping's arguments; zero values take NAPALM's
// defaults (TTL 255, Timeout 2, Size 100, Count 5).
type PingOptions struct {
	Destination string
	Source      string
	TTL         int
	Timeout     int
	Size        int
	Count       int
	VRF         string
}

// PingResult is NAPALM ping's result: exactly one of Success and Error is
// set.
type PingResult struct {
	Success *PingSuccess `json:"success,omitzero"`
	Error   string       `json:"error,omitzero"`
}

// PingSuccess is the statistics of a ping that ran.
type PingSuccess struct {
	ProbesSent int           `json:"probes_sent"`
	PacketLoss int           `json:"packet_loss"`
	RTTMin     float64       `json:"rtt_min"`
	RTTMax     float64       `json:"rtt_max"`
	RTTAvg     float64       `json:"rtt_avg"`
	RTTStddev  float64       `json:"rtt_stddev"`
	Results    []PingProbeRT `json:"results"`
}

// PingProbeRT is one reply of a ping.
type PingProbeRT struct {
	IPAddress string  `json:"ip_address"`
	RTT       float64 `json:"rtt"`
}

// TracerouteOptions are NAPALM traceroute's arguments; zero values take
// NAPALM's defaults (TTL 255, Timeout 2).
type TracerouteOptions struct {
	Destination string
	Source      string
	TTL         int
	Timeout     int
	VRF         string
}

// TracerouteResult is NAPALM traceroute's result: exactly one of Success
// and Error is set. Success is keyed by hop number.
type TracerouteResult struct {
	Success map[int]TracerouteHop `json:"success,omitzero"`
	Error   string                `json:"error,omitzero"`
}

// TracerouteHop is one hop, its probes keyed by probe number.
type TracerouteHop struct {
	Probes map[int]TracerouteProbe `json:"probes"`
}

// TracerouteProbe is one probe of a hop.
type TracerouteProbe struct {
	RTT       float64 `json:"rtt"`
	IPAddress string  `json:"ip_address"`
	HostName  string  `json:"host_name"`
}

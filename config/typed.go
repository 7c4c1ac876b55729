package config

import (
	"errors"
)

// masterTypedKeys lists the options read into Master fields; Validate
// rejects wrong types for them. Types come from Salt's VALID_OPTS, or from
// extraTypes for options Salt does not type-check.
func masterTypedKeys() []string {
	return []string{
		"id", "conf_file", "root_dir", "user", "interface", "ipv6", "publish_port", "ret_port",
		"pki_dir", "cachedir", "sock_dir", "extension_modules", "pidfile", "token_dir",
		"log_file", "log_level", "log_level_logfile", "key_logfile",
		"auto_accept", "autosign_file", "autoreject_file", "autosign_grains_dir", "autosign_timeout",
		"open_mode", "permissive_pki_access", "max_minions", "keep_jobs", "keep_jobs_seconds",
		"timeout", "gather_job_timeout", "worker_threads", "zmq_filtering", "zmq_backlog", "pub_hwm",
		"sign_pub_messages", "master_sign_pubkey", "master_sign_key_name", "master_pubkey_signature",
		"master_use_pubkey_signature", "nodegroups", "file_roots", "pillar_roots", "fileserver_backend",
		"max_event_size", "auth_events", "rotate_aes_key", "ping_on_rotate", "minion_data_cache",
		"keysize", "hash_type", "job_cache", "master_job_cache", "ext_job_cache", "publish_session",
		"loop_interval", "peer", "external_auth", "token_expire", "transport", "ext_pillar", "reactor",
		"allow_minion_key_revoke", "require_minion_sign_messages", "drop_messages_signature_fail",
		"maintenance_interval", "renderer", "state_top", "failhard", "test",
	}
}

// minionTypedKeys lists the options read into Minion fields (minions and
// proxies).
func minionTypedKeys() []string {
	return []string{
		"id", "conf_file", "root_dir", "user", "ipv6", "master", "master_type", "master_port", "publish_port",
		"pki_dir", "cachedir", "sock_dir", "extension_modules", "pidfile",
		"log_file", "log_level", "log_level_logfile",
		"grains", "startup_states", "top_file", "sls_list", "mine_enabled", "mine_functions", "mine_interval",
		"mine_return_job", "acceptance_wait_time", "acceptance_wait_time_max", "rejected_retry",
		"random_reauth_delay", "auth_tries", "auth_timeout", "auth_safemode", "master_tries",
		"master_alive_interval", "master_shuffle", "random_master", "master_failback",
		"master_failback_interval", "ping_interval", "return_retry_tries", "return_retry_timer",
		"return_retry_timer_max", "retry_dns", "random_startup_delay", "multiprocessing", "zmq_filtering",
		"sign_pub_messages", "verify_master_pubkey_sign", "always_verify_signature", "master_sign_key_name",
		"master_finger", "minion_sign_messages", "keysize", "hash_type", "transport", "cache_jobs", "pub_ret",
		"file_client", "file_roots", "pillar_roots", "saltenv", "pillarenv", "schedule", "beacons",
		"loop_interval", "max_event_size", "minion_id_caching", "open_mode", "permissive_pki_access",
		"auto_accept", "autosign_timeout", "renderer", "state_top", "failhard", "test",
	}
}

// extraTypes types the typed options that Salt's VALID_OPTS leaves out.
func extraTypes(key string) (optType, bool) {
	switch key {
	case "timeout":
		return tInt, true
	case "autosign_file", "autoreject_file", "autosign_grains_dir":
		return tStr | tNone, true
	case "extension_modules", "token_dir":
		return tStr, true
	case "mine_functions", "beacons":
		return tDict | tNone, true
	}
	return 0, false
}

// strictTypes returns the typed-key table of role.
func strictTypes(role string) map[string]optType {
	keys := minionTypedKeys()
	if role == RoleMaster {
		keys = masterTypedKeys()
	}
	out := make(map[string]optType, len(keys))
	for _, k := range keys {
		if t, ok := extraTypes(k); ok {
			out[k] = t
		} else if t, ok := saltOptType(k); ok {
			out[k] = t
		}
	}
	return out
}

// Master is the configuration of gsalt-master and of the CLIs that read the
// master config. The fields are a typed snapshot taken when loading; the
// embedded *Opts holds every option (Salt's __opts__).
type Master struct {
	*Opts

	ID       string // "<minion id guess>_master" unless set
	ConfFile string // config file read, or /etc/salt/master when missing
	RootDir  string // root_dir as configured (default "/")
	User     string // user (default: the current user)

	Interface   string
	IPv6        bool // ipv6; Salt's None (unset) reads as false
	PublishPort int  // publish_port, 4505
	RetPort     int  // ret_port, 4506

	PKIDir           string // pki_dir, /etc/salt/pki/master
	CacheDir         string // cachedir, /var/cache/salt/master
	SockDir          string // sock_dir, /var/run/salt/master
	ExtensionModules string
	Pidfile          string
	TokenDir         string // <cachedir>/tokens
	LogFile          string // log_file; may be a syslog URL (udp://, file://)
	LogLevel         string // log_level, "warning"
	LogLevelLogfile  string // log_level_logfile; "" when unset
	KeyLogfile       string

	AutoAccept        bool   // auto_accept (only a literal true enables it)
	AutosignFile      string // "" when unset
	AutorejectFile    string // "" when unset
	AutosignGrainsDir string // "" when unset
	AutosignTimeout   int    // autosign_timeout in minutes, 120 when unset
	OpenMode          bool   // open_mode (only a literal true enables it)

	PermissivePKIAccess bool
	MaxMinions          int // 0: unlimited
	// KeepJobsSeconds is keep_jobs_seconds, or keep_jobs*3600 when only the
	// legacy keep_jobs (hours) was changed from its default.
	KeepJobsSeconds  int
	Timeout          int // CLI timeout, seconds (5)
	GatherJobTimeout int // seconds (10)
	WorkerThreads    int // 5 (raised to 3 minimum when peer is configured)
	ZMQFiltering     bool
	ZMQBacklog       int
	PubHWM           int
	MaxEventSize     int

	SignPubMessages          bool // master default true
	MasterSignPubkey         bool
	MasterSignKeyName        string
	MasterPubkeySignature    string
	MasterUsePubkeySignature bool

	Nodegroups        map[string]any      // name → compound target string or list
	FileRoots         map[string][]string // saltenv → directories
	PillarRoots       map[string][]string
	FileserverBackend []string

	AuthEvents      bool
	RotateAESKey    bool
	PingOnRotate    bool
	MinionDataCache bool
	KeySize         int    // keysize, 2048
	HashType        string // lower-cased, "sha256"
	JobCache        bool
	MasterJobCache  string
	ExtJobCache     string
	PublishSession  int
	LoopInterval    float64
	Peer            map[string]any
	ExternalAuth    map[string]any
	TokenExpire     int
	Transport       string
	ExtPillar       []any
	Reactor         []any

	AllowMinionKeyRevoke      bool
	RequireMinionSignMessages bool
	DropMessagesSignatureFail bool
	MaintenanceInterval       int
	Renderer                  string
	StateTop                  string
	Failhard                  bool
	Test                      bool
}

// Minion is the configuration of gsalt-minion, gsalt-proxy and gsalt-call.
// The fields are a typed snapshot taken when loading; the embedded *Opts
// holds every option.
type Minion struct {
	*Opts

	ID       string
	ProxyID  string // the --proxyid given to LoadProxy; "" for minions
	ConfFile string
	RootDir  string
	User     string
	IPv6     bool

	// Master lists the master addresses: the master option as a one-item
	// list when it is a string, or the list as given.
	Master      []string
	MasterType  string // "str", "failover", "func", "disable"
	MasterPort  int    // master_port (the master's ret port), 4506
	PublishPort int    // publish_port when configured, else 0: use the master's

	PKIDir           string // /etc/salt/pki/minion (proxy: /etc/salt/pki/proxy)
	CacheDir         string // /var/cache/salt/minion (proxy: /var/cache/salt/proxy/<id>)
	SockDir          string
	ExtensionModules string
	Pidfile          string
	LogFile          string
	LogLevel         string
	LogLevelLogfile  string

	Grains        map[string]any
	StartupStates string // "", "highstate", "sls" or "top"
	TopFile       string
	SLSList       []string
	MineEnabled   bool
	MineFunctions map[string]any // nil when unset
	MineInterval  int            // minutes, 60
	MineReturnJob bool

	AcceptanceWaitTime     float64 // seconds, 10
	AcceptanceWaitTimeMax  float64 // seconds, 0: no back-off
	RejectedRetry          bool
	RandomReauthDelay      int // seconds, 10
	AuthTries              int // 7
	AuthTimeout            int // seconds, 5
	AuthSafemode           bool
	MasterTries            int // 1
	MasterAliveInterval    int
	MasterShuffle          bool
	RandomMaster           bool
	MasterFailback         bool
	MasterFailbackInterval int
	PingInterval           int // minutes, 0: off
	ReturnRetryTries       int // 3
	ReturnRetryTimer       int // seconds, 5
	ReturnRetryTimerMax    int // seconds, 10
	RetryDNS               float64
	RandomStartupDelay     int

	Multiprocessing        bool
	ZMQFiltering           bool
	SignPubMessages        bool // minion default false
	VerifyMasterPubkeySign bool
	AlwaysVerifySignature  bool
	MasterSignKeyName      string
	MasterFinger           string
	MinionSignMessages     bool
	KeySize                int
	HashType               string
	Transport              string

	CacheJobs           bool
	PubRet              bool
	FileClient          string // "remote" or "local"
	FileRoots           map[string][]string
	PillarRoots         map[string][]string
	Saltenv             string // "" when unset
	Pillarenv           string // "" when unset
	Schedule            map[string]any
	Beacons             map[string]any
	LoopInterval        float64
	MaxEventSize        int
	MinionIDCaching     bool
	OpenMode            bool
	PermissivePKIAccess bool
	AutoAccept          bool
	AutosignTimeout     int
	Renderer            string
	StateTop            string
	Failhard            bool
	Test                bool
}

// fieldReader fills typed fields from validated options, collecting errors.
type fieldReader struct {
	o    *Opts
	errs []error
}

func (r *fieldReader) str(key string) string { return r.o.Str(key) }

func (r *fieldReader) int(key string, def int) int {
	if _, ok := r.o.Get(key); !ok {
		return def
	}
	n, err := r.o.Int(key)
	if err != nil {
		r.errs = append(r.errs, err)
	}
	return n
}

func (r *fieldReader) float(key string, def float64) float64 {
	if _, ok := r.o.Get(key); !ok {
		return def
	}
	f, err := r.o.Float(key)
	if err != nil {
		r.errs = append(r.errs, err)
	}
	return f
}

func (r *fieldReader) bool(key string) bool { return r.o.Bool(key) }

func (r *fieldReader) list(key string) []any {
	l, _ := r.o.Get(key)
	out, _ := l.([]any)
	return out
}

func (r *fieldReader) roots(key string) map[string][]string {
	m := r.o.Map(key)
	out := make(map[string][]string, len(m))
	for env, dirs := range m {
		out[env] = toStrList(dirs)
		if out[env] == nil {
			out[env] = []string{}
		}
	}
	return out
}

func newMaster(o *Opts) (*Master, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := &fieldReader{o: o}
	m := &Master{
		Opts:                      o,
		ID:                        r.str("id"),
		ConfFile:                  r.str("conf_file"),
		RootDir:                   r.str("root_dir"),
		User:                      r.str("user"),
		Interface:                 r.str("interface"),
		IPv6:                      r.bool("ipv6"),
		PublishPort:               r.int("publish_port", 4505),
		RetPort:                   r.int("ret_port", 4506),
		PKIDir:                    r.str("pki_dir"),
		CacheDir:                  r.str("cachedir"),
		SockDir:                   r.str("sock_dir"),
		ExtensionModules:          r.str("extension_modules"),
		Pidfile:                   r.str("pidfile"),
		TokenDir:                  r.str("token_dir"),
		LogFile:                   r.str("log_file"),
		LogLevel:                  r.str("log_level"),
		LogLevelLogfile:           r.str("log_level_logfile"),
		KeyLogfile:                r.str("key_logfile"),
		AutoAccept:                r.bool("auto_accept"),
		AutosignFile:              r.str("autosign_file"),
		AutorejectFile:            r.str("autoreject_file"),
		AutosignGrainsDir:         r.str("autosign_grains_dir"),
		AutosignTimeout:           r.int("autosign_timeout", 120),
		OpenMode:                  r.bool("open_mode"),
		PermissivePKIAccess:       r.bool("permissive_pki_access"),
		MaxMinions:                r.int("max_minions", 0),
		Timeout:                   r.int("timeout", 5),
		GatherJobTimeout:          r.int("gather_job_timeout", 10),
		WorkerThreads:             r.int("worker_threads", 5),
		ZMQFiltering:              r.bool("zmq_filtering"),
		ZMQBacklog:                r.int("zmq_backlog", 1000),
		PubHWM:                    r.int("pub_hwm", 1000),
		MaxEventSize:              r.int("max_event_size", 1048576),
		SignPubMessages:           r.bool("sign_pub_messages"),
		MasterSignPubkey:          r.bool("master_sign_pubkey"),
		MasterSignKeyName:         r.str("master_sign_key_name"),
		MasterPubkeySignature:     r.str("master_pubkey_signature"),
		MasterUsePubkeySignature:  r.bool("master_use_pubkey_signature"),
		Nodegroups:                o.Map("nodegroups"),
		FileRoots:                 r.roots("file_roots"),
		PillarRoots:               r.roots("pillar_roots"),
		FileserverBackend:         o.StrList("fileserver_backend"),
		AuthEvents:                r.bool("auth_events"),
		RotateAESKey:              r.bool("rotate_aes_key"),
		PingOnRotate:              r.bool("ping_on_rotate"),
		MinionDataCache:           r.bool("minion_data_cache"),
		KeySize:                   r.int("keysize", 2048),
		HashType:                  r.str("hash_type"),
		JobCache:                  r.bool("job_cache"),
		MasterJobCache:            r.str("master_job_cache"),
		ExtJobCache:               r.str("ext_job_cache"),
		PublishSession:            r.int("publish_session", 86400),
		LoopInterval:              r.float("loop_interval", 60),
		Peer:                      o.Map("peer"),
		ExternalAuth:              o.Map("external_auth"),
		TokenExpire:               r.int("token_expire", 43200),
		Transport:                 r.str("transport"),
		ExtPillar:                 r.list("ext_pillar"),
		Reactor:                   r.list("reactor"),
		AllowMinionKeyRevoke:      r.bool("allow_minion_key_revoke"),
		RequireMinionSignMessages: r.bool("require_minion_sign_messages"),
		DropMessagesSignatureFail: r.bool("drop_messages_signature_fail"),
		MaintenanceInterval:       r.int("maintenance_interval", 3600),
		Renderer:                  r.str("renderer"),
		StateTop:                  r.str("state_top"),
		Failhard:                  r.bool("failhard"),
		Test:                      r.bool("test"),
	}
	if m.Nodegroups == nil {
		m.Nodegroups = map[string]any{}
	}
	kjs := r.int("keep_jobs_seconds", 86400)
	kj := r.int("keep_jobs", 24)
	if kjs == 86400 && kj != 24 {
		kjs = kj * 3600
	}
	m.KeepJobsSeconds = kjs
	if len(r.errs) > 0 {
		return nil, errors.Join(r.errs...)
	}
	return m, nil
}

func newMinion(o *Opts, proxyID string) (*Minion, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := &fieldReader{o: o}
	m := &Minion{
		Opts:                   o,
		ID:                     r.str("id"),
		ProxyID:                proxyID,
		ConfFile:               r.str("conf_file"),
		RootDir:                r.str("root_dir"),
		User:                   r.str("user"),
		IPv6:                   r.bool("ipv6"),
		Master:                 o.StrList("master"),
		MasterType:             r.str("master_type"),
		MasterPort:             r.int("master_port", 4506),
		PublishPort:            r.int("publish_port", 0),
		PKIDir:                 r.str("pki_dir"),
		CacheDir:               r.str("cachedir"),
		SockDir:                r.str("sock_dir"),
		ExtensionModules:       r.str("extension_modules"),
		Pidfile:                r.str("pidfile"),
		LogFile:                r.str("log_file"),
		LogLevel:               r.str("log_level"),
		LogLevelLogfile:        r.str("log_level_logfile"),
		Grains:                 o.Map("grains"),
		StartupStates:          r.str("startup_states"),
		TopFile:                r.str("top_file"),
		SLSList:                o.StrList("sls_list"),
		MineEnabled:            r.bool("mine_enabled"),
		MineFunctions:          o.Map("mine_functions"),
		MineInterval:           r.int("mine_interval", 60),
		MineReturnJob:          r.bool("mine_return_job"),
		AcceptanceWaitTime:     r.float("acceptance_wait_time", 10),
		AcceptanceWaitTimeMax:  r.float("acceptance_wait_time_max", 0),
		RejectedRetry:          r.bool("rejected_retry"),
		RandomReauthDelay:      r.int("random_reauth_delay", 10),
		AuthTries:              r.int("auth_tries", 7),
		AuthTimeout:            r.int("auth_timeout", 5),
		AuthSafemode:           r.bool("auth_safemode"),
		MasterTries:            r.int("master_tries", 1),
		MasterAliveInterval:    r.int("master_alive_interval", 0),
		MasterShuffle:          r.bool("master_shuffle"),
		RandomMaster:           r.bool("random_master"),
		MasterFailback:         r.bool("master_failback"),
		MasterFailbackInterval: r.int("master_failback_interval", 0),
		PingInterval:           r.int("ping_interval", 0),
		ReturnRetryTries:       r.int("return_retry_tries", 3),
		ReturnRetryTimer:       r.int("return_retry_timer", 5),
		ReturnRetryTimerMax:    r.int("return_retry_timer_max", 10),
		RetryDNS:               r.float("retry_dns", 30),
		RandomStartupDelay:     r.int("random_startup_delay", 0),
		Multiprocessing:        r.bool("multiprocessing"),
		ZMQFiltering:           r.bool("zmq_filtering"),
		SignPubMessages:        r.bool("sign_pub_messages"),
		VerifyMasterPubkeySign: r.bool("verify_master_pubkey_sign"),
		AlwaysVerifySignature:  r.bool("always_verify_signature"),
		MasterSignKeyName:      r.str("master_sign_key_name"),
		MasterFinger:           r.str("master_finger"),
		MinionSignMessages:     r.bool("minion_sign_messages"),
		KeySize:                r.int("keysize", 2048),
		HashType:               r.str("hash_type"),
		Transport:              r.str("transport"),
		CacheJobs:              r.bool("cache_jobs"),
		PubRet:                 r.bool("pub_ret"),
		FileClient:             r.str("file_client"),
		FileRoots:              r.roots("file_roots"),
		PillarRoots:            r.roots("pillar_roots"),
		Saltenv:                r.str("saltenv"),
		Pillarenv:              r.str("pillarenv"),
		Schedule:               o.Map("schedule"),
		Beacons:                o.Map("beacons"),
		LoopInterval:           r.float("loop_interval", 1),
		MaxEventSize:           r.int("max_event_size", 1048576),
		MinionIDCaching:        r.bool("minion_id_caching"),
		OpenMode:               r.bool("open_mode"),
		PermissivePKIAccess:    r.bool("permissive_pki_access"),
		AutoAccept:             r.bool("auto_accept"),
		AutosignTimeout:        r.int("autosign_timeout", 120),
		Renderer:               r.str("renderer"),
		StateTop:               r.str("state_top"),
		Failhard:               r.bool("failhard"),
		Test:                   r.bool("test"),
	}
	if len(r.errs) > 0 {
		return nil, errors.Join(r.errs...)
	}
	return m, nil
}

package keys

import (
	"log/slog"
	"time"
)

// TagKey is the event tag Salt fires for every key accepted, rejected or
// deleted by salt-key (salt.utils.event.tagify(prefix="key")).
const TagKey = "salt/key"

// TagAuth is the event tag of the salt/auth event whose data
// AuthDecision.Event holds.
const TagAuth = "salt/auth"

// DefaultAutosignTimeout is Salt's autosign_timeout: stub files in
// minions_autosign older than this are purged.
const DefaultAutosignTimeout = 120 * time.Minute

// MaxPubSize bounds the public key text read from a key file or accepted
// in an AuthRequest. A 16384-bit SPKI PEM is under 3 KiB.
const MaxPubSize = 64 << 10

// maxListFileSize bounds autosign_file, autoreject_file and autosign grain
// files.
const maxListFileSize = 1 << 20

// Options configures a Store. It mirrors the master options Salt's key and
// auth code read; the caller maps its configuration onto it. The zero value
// of every field except PKIDir is usable, but note NoRotateAESKey: Salt's
// default (rotate_aes_key: True) is the zero value here.
type Options struct {
	// PKIDir is the master pki_dir (required).
	PKIDir string
	// CacheDir is the master cachedir. Delete and reject create the AES
	// rotation dropfile CacheDir/.dfn there, and the minion data cache
	// CacheDir/minions/<id> of keys that no longer exist is removed. Empty
	// disables both.
	CacheDir string
	// KeySize is the size of master.pem when Open has to create it
	// (keysize, 0 means 2048).
	KeySize int
	// SkipMasterKey stops Open from creating master.pem/master.pub when
	// they are missing (salt-key itself never creates them).
	SkipMasterKey bool
	// HashType is the fingerprint hash (hash_type, "" means sha256).
	HashType string
	// NoRotateAESKey is Salt's rotate_aes_key: False; when set, delete and
	// reject do not create the dropfile.
	NoRotateAESKey bool
	// PreserveMinionCache is Salt's preserve_minion_cache: never remove
	// CacheDir/minions/<id>.
	PreserveMinionCache bool

	// OpenMode is open_mode: accept every key, replacing a stored one.
	OpenMode bool
	// AutoAccept is auto_accept: autosign every new key.
	AutoAccept bool
	// AutosignFile is autosign_file (absolute path, "" for none).
	AutosignFile string
	// AutorejectFile is autoreject_file (absolute path, "" for none).
	AutorejectFile string
	// AutosignGrainsDir is autosign_grains_dir ("" for none).
	AutosignGrainsDir string
	// AutosignTimeout is autosign_timeout. Zero means the Salt default of
	// 120 minutes; a negative value never purges stub files (Salt's 0).
	AutosignTimeout time.Duration
	// PermissivePKIAccess is permissive_pki_access: allow group-writable
	// autosign/autoreject/grain files.
	PermissivePKIAccess bool
	// User is the master's user option, used like Salt when deciding
	// whether a group-writable autosign file is acceptable while running as
	// root. Empty means the current user.
	User string
	// MaxMinions is max_minions (0 means unlimited).
	MaxMinions int
	// ConnectedMinions reports, for max_minions, how many minions are
	// connected and whether id is one of them (Salt's con_cache or
	// CkMinions.connected_ids). Nil counts as nobody connected.
	ConnectedMinions func(id string) (count int, connected bool)

	// Event receives the salt/key events (tag TagKey) exactly when Salt's
	// salt-key fires them: once per key moved or removed. Nil discards
	// them. It is called while the store's lock is held, so it must not
	// call back into the Store.
	Event func(tag string, data map[string]any)
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
}

func (o *Options) autosignTimeout() time.Duration {
	if o.AutosignTimeout == 0 {
		return DefaultAutosignTimeout
	}
	return o.AutosignTimeout
}

func (o *Options) hashType() string {
	if o.HashType == "" {
		return "sha256"
	}
	return o.HashType
}

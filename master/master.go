package master

import (
	"bytes"
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/master/eauth"
	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/gsalt/gsalt/wire/transport"
)

// Sentinel errors callers branch on.
var (
	// ErrNoMinions means a publish target matched no accepted minion (Salt's
	// "Master could not resolve minions for target ...").
	ErrNoMinions = errors.New("master: no minions matched the target")
	// ErrClosed means the Master was closed.
	ErrClosed = errors.New("master: closed")
	// ErrBadRequest means a publish or runner request is malformed.
	ErrBadRequest = errors.New("master: bad request")
	// ErrConfig means Options lack something New needs.
	ErrConfig = errors.New("master: bad options")
	// ErrBusy is a publish refused because too many master-side batches
	// are running.
	ErrBusy = errors.New("master: too many batches running")
)

// TagKeyRotate is the event tag Salt fires after a session key rotation
// (data {"rotate_aes_key": true}); note it is not under salt/.
const TagKeyRotate = "key"

// Publisher sends one publish message on the master's publish socket. With
// zmq_filtering off the message is one frame (the envelope); with it on it
// is two frames, [topic, envelope], where the topic is the hex SHA-1 of a
// minion id or "broadcast". transport.PubServer implements it. Publish must
// not block for long: it is called while publishes are serialised.
type Publisher interface {
	Publish(frames ...[]byte) error
}

// PillarRequest is what a minion's _pillar request asks for.
type PillarRequest struct {
	// ID is the minion id (already validated).
	ID string
	// Grains are the minion's grains as sent (with "id" set to ID).
	Grains *payload.Map
	// Saltenv and Pillarenv are the requested environments ("" when unset).
	Saltenv, Pillarenv string
	// Override is pillar_override (nil when absent).
	Override *payload.Map
	// Extra is extra_minion_data (nil when absent).
	Extra *payload.Map
	// CleanCache is the load's clean_cache: bypass and refresh any
	// master-side pillar cache (saltutil.refresh_pillar).
	CleanCache bool
	// Ext is the load's on-demand ext_pillar (pillar.ext), nil when
	// absent; the compiler checks it against on_demand_ext_pillar.
	Ext any
}

// PillarFunc compiles a minion's pillar. It is called for every _pillar
// request; a nil PillarFunc gives every minion an empty pillar.
type PillarFunc func(ctx context.Context, req PillarRequest) (*payload.Map, error)

// Options configure a Master.
type Options struct {
	// Config is the master configuration (required).
	Config *config.Master
	// Keys is the key store on Config.PKIDir (required).
	Keys *keys.Store
	// Bus is the master event bus (required).
	Bus *event.Bus
	// Jobs is the job cache (required).
	Jobs *jobcache.Cache
	// ExtJobs, when set, is the external job cache of master_job_cache
	// naming a returner (pgjsonb): every job load and return is handed to
	// it too, and the jobs runners read it with Jobs.
	ExtJobs jobcache.External
	// Publisher sends publishes (required).
	Publisher Publisher
	// PublishPort is the port advertised in _auth replies; 0 means
	// Config.PublishPort. The daemon sets the port it actually bound.
	PublishPort int
	// ClientKeys maps a user name to the key the local clients of that
	// user put in clear publish and runner requests (the contents of
	// cachedir/.<user>_key). Without keys, clear publish is refused.
	ClientKeys map[string]string
	// Pillar compiles pillars; nil gives empty pillars.
	Pillar PillarFunc
	// Runners is the runner registry; nil means runners.Default().
	Runners *runners.Registry
	// Limits bounds decoded requests; the zero value means
	// payload.DefaultLimits.
	Limits payload.Limits
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// EauthFailDelay is the initial time a failed eauth login takes
	// (Salt's time_auth, one second when zero); tests lower it.
	EauthFailDelay time.Duration
}

type session struct {
	key string
	c   *crypt.Crypticle

	// keySig is the auth reply's X9.31 "sig" over the key's digest: it is
	// deterministic and the same for every minion, so it is computed once
	// per session key instead of once per authentication.
	sigOnce sync.Once
	sig     []byte
	sigErr  error
}

// keySig returns the session key's auth reply signature.
func (s *session) keySig(priv *rsa.PrivateKey) ([]byte, error) {
	s.sigOnce.Do(func() {
		s.sig, s.sigErr = crypt.X931Sign(priv, []byte(message.SessionKeyDigest(s.key)))
	})
	return s.sig, s.sigErr
}

// Master answers requests and publishes jobs. It is safe for concurrent use.
type Master struct {
	cfg    *config.Master
	keys   *keys.Store
	bus    *event.Bus
	jobs   *jobcache.Cache
	ext    jobcache.External
	pub    Publisher
	log    *slog.Logger
	lim    payload.Limits
	pillar PillarFunc
	runReg *runners.Registry
	eauth  *eauth.Auth

	priv        *rsa.PrivateKey
	pubPEM      []byte
	pubSig      string
	publishPort int
	clientKeys  map[string]string

	sess atomic.Pointer[session]
	// pubMu serialises serial allocation and the order of publishes:
	// each publish takes a serial and a place in line (pubTail) under it,
	// encrypts and signs outside it (several publishes sign at once on
	// their own goroutines) and sends when the publish before it has.
	pubMu   sync.Mutex
	pubTail chan struct{} // closed when the last publish in line is sent
	serial  message.Counter

	matcher  *target.Matcher
	data     *dataCache
	accepted *keyCache
	fs       *fileServer
	// replyBufs recycles the buffers of file chunk replies: lent maps the
	// first byte of a reply still being written to its buffer (*[]byte),
	// which the release function puts back into replyBufs.
	replyBufs bufList
	lent      sync.Map
	recycle   atomic.Bool

	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	runCount atomic.Int64
	// startWaits counts the start events waiting for their minion's
	// subscription (fireAfterSubscription).
	startWaits atomic.Int64
	// batches counts running master-side batches; batchMu guards their
	// finished-minion sets.
	batches atomic.Int64
	batchMu sync.Mutex

	// noRecover disables the panic guard of HandleRequest (fuzzing).
	noRecover bool
	// st are the counters of Stats.
	st counters
}

// New builds a Master with a fresh session key. It loads master.pem and
// master.pub from the key store and the minion data cache from
// cachedir/minions.
func New(opts Options) (*Master, error) {
	if opts.Config == nil || opts.Keys == nil || opts.Bus == nil || opts.Jobs == nil || opts.Publisher == nil {
		return nil, fmt.Errorf("%w: Config, Keys, Bus, Jobs and Publisher are required", ErrConfig)
	}
	cfg := opts.Config
	m := &Master{
		cfg:         cfg,
		keys:        opts.Keys,
		bus:         opts.Bus,
		jobs:        opts.Jobs,
		ext:         opts.ExtJobs,
		pub:         opts.Publisher,
		log:         opts.Logger,
		lim:         opts.Limits,
		pillar:      opts.Pillar,
		runReg:      opts.Runners,
		publishPort: opts.PublishPort,
		clientKeys:  map[string]string{},
		matcher:     target.New(target.Options{}),
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	if m.lim == (payload.Limits{}) {
		m.lim = payload.DefaultLimits
	}
	if m.runReg == nil {
		m.runReg = runners.Default()
	}
	if m.publishPort == 0 {
		m.publishPort = cfg.PublishPort
	}
	for u, k := range opts.ClientKeys {
		if k != "" {
			m.clientKeys[u] = k
		}
	}
	var err error
	if m.priv, err = opts.Keys.LoadMasterKey(); err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	if m.pubPEM, err = opts.Keys.MasterPub(); err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	if cfg.MasterSignPubkey {
		if m.pubSig, err = masterPubSig(cfg, m.pubPEM); err != nil {
			return nil, err
		}
	}
	if err := m.newSession(); err != nil {
		return nil, err
	}
	m.eauth = eauth.New(eauth.Options{Opts: cfg.Opts.Get, TokenDir: tokenDir(cfg), Logger: m.log,
		MinFailDelay: opts.EauthFailDelay})
	m.accepted = newKeyCache(opts.Keys)
	m.data = newDataCache(filepath.Join(cfg.CacheDir, "minions"), m.log)
	m.fs = newFileServer(cfg, m.log)
	m.ctx, m.cancel = context.WithCancel(context.Background())
	return m, nil
}

// Close stops background work (running runners are cancelled and awaited).
// It does not close the Keys, Bus, Jobs or Publisher it was given.
func (m *Master) Close() error {
	m.cancel()
	m.wg.Wait()
	m.accepted.close()
	if m.data != nil {
		m.data.wait() // its files are not read after Close
	}
	return nil
}

// tokenDir is token_dir, cachedir/tokens unless set.
func tokenDir(cfg *config.Master) string {
	if cfg.TokenDir != "" {
		return cfg.TokenDir
	}
	return filepath.Join(cfg.CacheDir, "tokens")
}

// Eauth returns the master's external authentication (gsalt-api uses it
// for /login and tokens).
func (m *Master) Eauth() *eauth.Auth { return m.eauth }

// PublishPort returns the publish port advertised to minions.
func (m *Master) PublishPort() int { return m.publishPort }

// SessionKey returns the current session key string (76 characters).
func (m *Master) SessionKey() string { return m.sess.Load().key }

func (m *Master) newSession() error {
	k, err := crypt.GenerateKeyString()
	if err != nil {
		return fmt.Errorf("master: session key: %w", err)
	}
	c, err := crypt.NewCrypticle(k)
	if err != nil {
		return fmt.Errorf("master: session key: %w", err)
	}
	m.sess.Store(&session{key: k, c: c})
	return nil
}

// Rotate replaces the session key, resets the publish serial and fires the
// "key" event (SALT-WIRE §5.2). Minions notice lazily: their next request
// gets "bad load" and their next publish fails to decrypt, and they
// re-authenticate. With ping_on_rotate a test.ping is published to every
// minion so that they do so at once.
func (m *Master) Rotate() error {
	m.pubMu.Lock()
	// Publishes already in line go out with the old key first.
	if m.pubTail != nil {
		<-m.pubTail
	}
	err := m.newSession()
	if err == nil {
		m.serial.Reset()
	}
	m.pubMu.Unlock()
	if err != nil {
		return err
	}
	m.log.Info("rotated the AES session key")
	m.fire(TagKeyRotate, payload.NewMap("rotate_aes_key", true))
	if m.cfg.PingOnRotate {
		if _, _, _, err := m.Publish(m.ctx, PublishRequest{Tgt: "*", Fun: "test.ping", User: m.cfg.User}); err != nil && !errors.Is(err, ErrNoMinions) {
			m.log.Warn("ping_on_rotate publish failed", "err", err)
		}
	}
	return nil
}

// dropfile is Salt's rotation request file (salt.crypt.dropfile).
func (m *Master) dropfile() string { return filepath.Join(m.cfg.CacheDir, ".dfn") }

// CheckRotation rotates the session key when the dropfile cachedir/.dfn
// exists with mode 0400, and removes the file (Salt's
// Maintenance.handle_key_rotate). A dropfile with another mode is logged and
// left alone. It reports whether a rotation happened.
func (m *Master) CheckRotation() (bool, error) {
	fi, err := os.Lstat(m.dropfile())
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("master: dropfile: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o400 {
		m.log.Error("rotation dropfile has the wrong mode, ignoring it", "path", m.dropfile(), "mode", fi.Mode().String())
		return false, nil
	}
	if err := m.Rotate(); err != nil {
		return false, err
	}
	if err := os.Remove(m.dropfile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return true, fmt.Errorf("master: remove dropfile: %w", err)
	}
	return true, nil
}

// Maintenance runs the periodic housekeeping of Salt's Maintenance process:
// it prunes the job cache (keep_jobs_seconds) and forgets cached data of
// minions whose cache directory went away (key deleted). The daemon calls it
// every loop_interval; CheckRotation is called more often.
func (m *Master) Maintenance() error {
	var errs []error
	if n, err := m.jobs.Prune(); err != nil {
		errs = append(errs, fmt.Errorf("master: prune job cache: %w", err))
	} else if n > 0 {
		m.log.Info("pruned old jobs from the job cache", "count", n)
	}
	if m.ext != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := m.ext.Clean(ctx); err != nil {
			errs = append(errs, fmt.Errorf("master: clean_old_jobs of %s: %w", m.ext.Name(), err))
		}
		cancel()
	}
	if err := m.pruneMirror(time.Now()); err != nil {
		errs = append(errs, fmt.Errorf("master: prune local_cache: %w", err))
	}
	m.data.dropStale()
	m.accepted.purge()
	return errors.Join(errs...)
}

// fire publishes an event on the bus, logging failures.
func (m *Master) fire(tag string, data *payload.Map) {
	if err := m.bus.Fire(event.Event{Tag: tag, Data: data}); err != nil {
		m.log.Warn("cannot fire event", "tag", tag, "err", err)
	}
}

// fireOwned is fire for data the caller no longer uses (event.Bus.FireOwned).
func (m *Master) fireOwned(tag string, data *payload.Map) {
	if err := m.bus.FireOwned(event.Event{Tag: tag, Data: data}); err != nil {
		m.log.Warn("cannot fire event", "tag", tag, "err", err)
	}
}

// HandleRequest answers one request frame from the request port. ok is
// false when no reply must be sent (Salt sends none for a v2 _auth without
// nonce, id or pub). It never panics on any input: malformed requests get
// Salt's fixed error replies (SALT-WIRE §2.2).
func (m *Master) HandleRequest(ctx context.Context, frame []byte) (reply []byte, ok bool) {
	if !m.noRecover {
		defer func() {
			if r := recover(); r != nil {
				m.log.Error("panic while handling a request", "panic", r, "stack", string(debug.Stack()))
				reply, ok = clearReply(message.HandlerErrorText), true
			}
		}()
	}
	req, err := message.ParseRequest(frame, m.lim)
	if err != nil {
		m.log.Info("bad request", "err", err, "size", len(frame))
		switch {
		case errors.Is(err, message.ErrUndecodable):
			return clearReply(message.BadLoadMap), true
		case errors.Is(err, message.ErrLoadNotMap):
			return clearReply(message.NotDictText), true
		}
		return clearReply(message.BadLoadText), true
	}
	if req.Enc == message.EncClear {
		return m.handleClear(ctx, req)
	}
	return m.handleAES(ctx, req)
}

// clearReply packs a clear reply; payload values built here always encode.
func clearReply(v any) []byte {
	b, err := message.EncodeClearReply(v)
	if err != nil {
		b, _ = message.EncodeClearReply(message.HandlerErrorText)
	}
	return b
}

func (m *Master) handleClear(ctx context.Context, req *message.Request) ([]byte, bool) {
	load := req.Load
	if text, err := message.CheckID(load); err != nil {
		return clearReply(text), true
	}
	cmdV, ok := load.Get("cmd")
	if !ok {
		m.log.Debug("clear request without cmd")
		return clearReply(message.HandlerErrorText), true
	}
	cmd, _ := cmdV.(string)
	if cmd == "_auth" {
		return m.handleAuth(load, req.Version)
	}
	if req.Version > 1 {
		load.Delete("nonce")
	}
	switch cmd {
	case "ping":
		return clearReply(load), true
	case "publish":
		return clearReply(m.clearPublish(ctx, load)), true
	case "runner":
		return clearReply(m.clearRunner(load)), true
	case "wheel":
		return clearReply(m.clearWheel(ctx, load)), true
	case "mk_token":
		return clearReply(m.clearMkToken(load)), true
	case "get_token":
		return clearReply(m.clearGetToken(load)), true
	}
	m.log.Debug("unknown clear command", "cmd", payload.Text(cmdV))
	return clearReply(payload.NewMap()), true
}

// aesHandler answers one AES command. A returned error is logged and
// answered with "" (Salt's run_func on an exception), but for one of
// running out of file descriptors (errKeyUnreadable, EMFILE, ENFILE),
// which is not answered: the minion sends the request again.
type aesHandler func(m *Master, ctx context.Context, load *payload.Map) (any, error)

var aesHandlers = map[string]aesHandler{
	"_return":              (*Master).aesReturn,
	"_minion_event":        (*Master).aesMinionEvent,
	"_master_opts":         (*Master).aesMasterOpts,
	"_master_tops":         (*Master).aesMasterTops,
	"_ext_nodes":           (*Master).aesMasterTops,
	"_mine":                (*Master).aesMine,
	"_mine_get":            (*Master).aesMineGet,
	"_mine_delete":         (*Master).aesMineDelete,
	"_mine_flush":          (*Master).aesMineFlush,
	"_file_envs":           (*Master).aesFileEnvs,
	"_file_list":           (*Master).aesFileList,
	"_file_list_emptydirs": (*Master).aesFileListEmptyDirs,
	"_dir_list":            (*Master).aesDirList,
	"_symlink_list":        (*Master).aesSymlinkList,
	"_file_find":           (*Master).aesFileFind,
	"_file_hash":           (*Master).aesFileHash,
	"_file_hash_and_stat":  (*Master).aesFileHashAndStat,
	"_serve_file":          (*Master).aesServeFile,
	"_file_recv":           (*Master).aesFileRecv,
	"revoke_auth":          (*Master).aesRevokeAuth,
}

func (m *Master) handleAES(ctx context.Context, req *message.Request) ([]byte, bool) {
	s := m.sess.Load()
	load, nonce, err := message.OpenAESRequest(s.c, req, m.lim)
	if errors.Is(err, message.ErrDecrypt) {
		// The key may have been rotated while this request was in flight:
		// try the current one before sending the minion to re-auth.
		if cur := m.sess.Load(); cur != s {
			s = cur
			load, nonce, err = message.OpenAESRequest(s.c, req, m.lim)
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, message.ErrDecrypt):
		m.log.Debug("cannot decrypt an AES request (stale session key?)", "err", err)
		return clearReply(message.BadLoadText), true
	case errors.Is(err, message.ErrLoadNotMap):
		return clearReply(message.NotDictText), true
	case errors.Is(err, message.ErrEmpty):
		// Salt reads such a plaintext as {}: a load without cmd.
		return clearReply(message.HandlerErrorText), true
	default:
		m.log.Info("bad AES request", "err", err)
		return clearReply(message.BadLoadText), true
	}
	if text, err := message.CheckID(load); err != nil {
		return clearReply(text), true
	}
	cmdV, ok := load.Get("cmd")
	if !ok {
		m.log.Warn("AES request without cmd")
		return clearReply(message.HandlerErrorText), true
	}
	cmd, _ := cmdV.(string)
	if cmd == "_pillar" {
		return m.aesPillar(ctx, s, load, nonce, req.Version)
	}
	var ret any = payload.NewMap()
	if h, ok := aesHandlers[cmd]; ok {
		r, err := h(m, ctx, load)
		if errors.Is(err, errKeyUnreadable) || outOfFiles(err) {
			// Out of descriptors for a moment (a minion's key, a file
			// server chunk that could not be opened): no answer, so that
			// the minion sends the request again; an answer would tell it
			// the request was done (a return lost) or hand it Salt's
			// answer to an exception ("") for a file it asked for.
			m.log.Error("out of file descriptors: no reply, the minion sends the request again", "cmd", cmd, "id", load.Str("id"), "err", err)
			return nil, false
		}
		if err != nil {
			m.log.Error("error in master function", "cmd", cmd, "id", load.Str("id"), "err", err)
			r = ""
		}
		ret = r
	} else {
		m.log.Debug("unknown AES command", "cmd", payload.Text(cmdV))
	}
	if cmd == "_serve_file" && m.fs != nil {
		return m.serveFileReply(s, ret, nonce)
	}
	if h, ok := ret.(heldStart); ok {
		// A start event: fired, and answered, once the minion's
		// subscription is applied; the worker is not held meanwhile.
		if answer, later := transport.Later(ctx); later {
			m.fireAfterSubscription(h.id, h.tag, h.load, func() { answer(m.encodeReply(s, cmd, nil, nonce)) })
			return nil, false
		}
		m.fireAfterSubscription(h.id, h.tag, h.load, nil)
		ret = nil
	}
	return m.encodeReply(s, cmd, ret, nonce)
}

// encodeReply encrypts ret as the answer to an AES request (send).
func (m *Master) encodeReply(s *session, cmd string, ret any, nonce string) ([]byte, bool) {
	out, err := message.EncodeSendReply(s.c, ret, nonce)
	if err != nil {
		m.log.Error("cannot encode a reply", "cmd", cmd, "err", err)
		out, err = message.EncodeSendReply(s.c, "", nonce)
		if err != nil {
			return clearReply(message.HandlerErrorText), true
		}
	}
	return out, true
}

// validID reports whether id is a minion id the master accepts.
func (m *Master) validID(id string) bool {
	if m.accepted.store.PKIDir() == m.cfg.PKIDir {
		return m.accepted.ids.valid(id)
	}
	return keys.ValidID(m.cfg.PKIDir, id)
}

// verifyTok checks load's id and tok like AESFuncs.__verify_load: the
// listed keys must be present, tok must recover to "salt" with the
// accepted key of id. On success tok is removed from load. When the key
// could not be read for want of descriptors it returns false and an
// error wrapping errKeyUnreadable (the request is not answered).
func (m *Master) verifyTok(load *payload.Map, required ...string) (bool, error) {
	for _, k := range required {
		if !load.Has(k) {
			return false, nil
		}
	}
	tok := load.Bytes("tok")
	id, _ := payloadString(load, "id")
	if tok == nil || id == "" {
		m.log.Warn("request without tok or id", "cmd", load.Str("cmd"), "id", id)
		return false, nil
	}
	pub, err := m.accepted.get(id)
	if errors.Is(err, errKeyUnreadable) {
		return false, err
	}
	if err != nil {
		m.log.Warn("request from a minion without an accepted key", "id", id, "cmd", load.Str("cmd"))
		return false, nil
	}
	if err := crypt.VerifyToken(pub, tok); err != nil {
		m.log.Warn("minion is not who it says it is", "id", id, "cmd", load.Str("cmd"))
		return false, nil
	}
	load.Delete("tok")
	return true, nil
}

// payloadString returns load[key] when it is a string.
func payloadString(load *payload.Map, key string) (string, bool) {
	v, ok := load.Get(key)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

// authMarker is the msgpack text of the "_auth" command name.
var authMarker = []byte("\xa5_auth")

// SlowRequest reports whether a request body is a clear-text minion
// authentication (cmd "_auth"): the one request whose cost is an RSA
// private-key operation, which the request port queues apart from
// returns and publishes (transport.ReqOptions.Slow). It reads the body in
// place (the handler decodes it once, later) and never keeps it.
func SlowRequest(body []byte) bool {
	return bytes.Contains(body, authMarker) && message.IsClearCmd(body, "_auth")
}

package master

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

const vectorsDir = "../testdata/vectors"

// recPublisher records published messages.
type recPublisher struct {
	mu   sync.Mutex
	msgs [][][]byte
	// hook, when set, is called (in a new goroutine) for every message.
	hook func(frames [][]byte)
}

func (p *recPublisher) Publish(frames ...[]byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, frames)
	if p.hook != nil {
		go p.hook(frames)
	}
	return nil
}

func (p *recPublisher) all() [][][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][][]byte(nil), p.msgs...)
}

func (p *recPublisher) reset() {
	p.mu.Lock()
	p.msgs = nil
	p.mu.Unlock()
}

// env is a Master on temporary directories with everything it needs.
type env struct {
	t      testing.TB
	root   string
	cfg    *config.Master
	keys   *keys.Store
	bus    *event.Bus
	jobs   *jobcache.Cache
	pub    *recPublisher
	m      *Master
	rootKy string
	events *event.Subscription
}

func copyFile(t testing.TB, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

func quietLogger() *slog.Logger {
	if os.Getenv("GSALT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// newEnv builds a master whose master key is the vector master key. extra
// is appended to the master config file.
func newEnv(t testing.TB, extra string) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{t: t, root: root, pub: &recPublisher{}}
	conf := filepath.Join(root, "etc")
	srv := filepath.Join(root, "srv", "salt")
	if err := os.MkdirAll(srv, 0o755); err != nil {
		t.Fatal(err)
	}
	text := "root_dir: " + root + "\npki_dir: " + root + "/pki\ncachedir: " + root + "/cache\nsock_dir: " + root + "/sock\n" +
		"file_roots: {base: [" + srv + "]}\nuser: root\n" + extra
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "master"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadMaster(conf)
	if err != nil {
		t.Fatal(err)
	}
	e.cfg = cfg
	copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pem"), filepath.Join(cfg.PKIDir, "master.pem"), 0o400)
	copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pub"), filepath.Join(cfg.PKIDir, "master.pub"), 0o644)
	e.bus = event.New(event.Options{Logger: quietLogger()})
	t.Cleanup(e.bus.Close)
	e.events = e.bus.Subscribe(nil, 4096)
	e.keys, err = keys.Open(keys.Options{PKIDir: cfg.PKIDir, CacheDir: cfg.CacheDir, Logger: quietLogger(),
		Event: func(tag string, data map[string]any) {
			e.bus.Publish(event.Event{Tag: tag, Data: payload.FromGo(data).(*payload.Map)})
		}})
	if err != nil {
		t.Fatal(err)
	}
	e.jobs, err = jobcache.Open(filepath.Join(cfg.CacheDir, "jobs.db"), jobcache.Options{Keep: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.jobs.Close() })
	e.rootKy, _ = crypt.GenerateKeyString()
	e.m, err = New(Options{Config: cfg, Keys: e.keys, Bus: e.bus, Jobs: e.jobs, Publisher: e.pub,
		ClientKeys: map[string]string{"root": e.rootKy}, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.m.Close() })
	return e
}

// tminion is a minion identity speaking to the master through
// HandleRequest.
type tminion struct {
	id     string
	priv   *rsa.PrivateKey
	pubPEM []byte
	master []byte // cached master.pub
	sess   *crypt.Crypticle
}

func vectorMinion(t testing.TB, name, id string) *tminion {
	t.Helper()
	priv, err := crypt.LoadPrivateKey(filepath.Join(vectorsDir, "pki", name, "minion.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(filepath.Join(vectorsDir, "pki", name, "minion.pub"))
	if err != nil {
		t.Fatal(err)
	}
	return &tminion{id: id, priv: priv, pubPEM: pub}
}

func (e *env) request(frame []byte) ([]byte, bool) {
	return e.m.HandleRequest(context.Background(), frame)
}

// auth runs one _auth round.
func (e *env) auth(tm *tminion) *message.AuthResult {
	e.t.Helper()
	var mpub *rsa.PublicKey
	if tm.master != nil {
		var err error
		if mpub, err = crypt.ParsePublicKeyPEM(tm.master); err != nil {
			e.t.Fatal(err)
		}
	}
	si, err := message.NewSignIn(tm.id, tm.pubPEM, mpub, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	frame, err := message.EncodeClearRequest(si.Load)
	if err != nil {
		e.t.Fatal(err)
	}
	reply, ok := e.request(frame)
	if !ok {
		e.t.Fatal("no reply to _auth")
	}
	// A master with master_sign_pubkey needs a minion that verifies
	// (verify_master_pubkey_sign with the master's master_sign.pub).
	var ks message.MasterKeySign
	if e.cfg.MasterSignPubkey {
		ks.Verify = true
		if ks.SignPub, err = crypt.LoadPublicKey(filepath.Join(e.cfg.PKIDir, "master_sign.pub")); err != nil {
			e.t.Fatal(err)
		}
	}
	res, err := message.OpenAuthReplySigned(reply, si, tm.priv, tm.master, payload.DefaultLimits, ks)
	if err != nil {
		e.t.Fatalf("auth reply: %v", err)
	}
	if res.Status == message.AuthAccepted {
		// The master gives the request's token back, encrypted to the
		// minion's key (a Salt minion checks it; OpenAuthReplySigned
		// relies on the signature instead).
		if si.Token != "" && !res.CacheKey {
			if tok, err := message.AuthReplyToken(reply, tm.priv, payload.DefaultLimits); err != nil || tok != si.Token {
				e.t.Fatalf("auth reply token: %q, %v; want the request's", tok, err)
			}
		}
		if res.FirstContact {
			tm.master = res.MasterPubPEM
		}
		if tm.sess, err = crypt.NewCrypticle(res.SessionKey); err != nil {
			e.t.Fatal(err)
		}
	}
	return res
}

func (e *env) accept(id string) {
	e.t.Helper()
	if _, err := e.keys.Accept(id); err != nil {
		e.t.Fatal(err)
	}
}

// login authenticates a vector minion and accepts its key.
func (e *env) login(name, id string) *tminion {
	e.t.Helper()
	tm := vectorMinion(e.t, name, id)
	if r := e.auth(tm); r.Status != message.AuthPending {
		e.t.Fatalf("first auth: %v", r.Status)
	}
	e.accept(id)
	if r := e.auth(tm); r.Status != message.AuthAccepted {
		e.t.Fatalf("auth after accept: %v", r.Status)
	}
	return tm
}

// aes sends an AES request and decodes the reply.
func (e *env) aes(tm *tminion, load *payload.Map) (any, error) {
	e.t.Helper()
	frame, nonce, err := message.EncodeAESRequest(tm.sess, load)
	if err != nil {
		e.t.Fatal(err)
	}
	reply, ok := e.request(frame)
	if !ok {
		e.t.Fatal("no reply")
	}
	return message.OpenSendReply(tm.sess, reply, nonce, payload.DefaultLimits)
}

func (e *env) mustAES(tm *tminion, load *payload.Map) any {
	e.t.Helper()
	v, err := e.aes(tm, load)
	if err != nil {
		e.t.Fatalf("%s: %v", load.Str("cmd"), err)
	}
	return v
}

// tok returns tm's request token.
func (tm *tminion) tok(t testing.TB) []byte {
	b, err := crypt.Token(tm.priv)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clear sends a clear request and decodes the reply.
func (e *env) clear(load *payload.Map) any {
	e.t.Helper()
	frame, err := message.EncodeClearRequest(load)
	if err != nil {
		e.t.Fatal(err)
	}
	reply, ok := e.request(frame)
	if !ok {
		e.t.Fatal("no reply")
	}
	v, err := payload.Unmarshal(reply)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// waitEvent returns the next event whose tag has prefix.
func (e *env) waitEvent(prefix string) event.Event {
	e.t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case ev := <-e.events.C():
			if strings.HasPrefix(ev.Tag, prefix) {
				return ev
			}
		case <-deadline:
			e.t.Fatalf("no event %q", prefix)
		}
	}
}

// pingJob publishes test.ping to tgt, discards the events so far and
// returns the jid.
func (e *env) pingJob(tgt string) string {
	e.t.Helper()
	jid, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: tgt, Fun: "test.ping"})
	if err != nil {
		e.t.Fatal(err)
	}
	e.drain()
	return jid
}

// drain discards queued events.
func (e *env) drain() {
	for {
		select {
		case <-e.events.C():
		default:
			return
		}
	}
}

// noEvent checks that no queued event has the prefix.
func (e *env) noEvent(prefix string) {
	e.t.Helper()
	time.Sleep(20 * time.Millisecond) // a negative check: give a wrong event a moment to arrive
	for {
		select {
		case ev := <-e.events.C():
			if strings.HasPrefix(ev.Tag, prefix) {
				e.t.Fatalf("unexpected event %s", ev.Tag)
			}
		default:
			return
		}
	}
}

// publishReq builds a LocalClient-style clear publish load.
func (e *env) publishReq(tgt any, fun string, arg []any, key any) *payload.Map {
	l := payload.NewMap("cmd", "publish", "tgt", tgt, "fun", fun, "arg", arg)
	if key != nil {
		l.Set("key", key)
	}
	l.Set("tgt_type", "glob").Set("ret", "").Set("timeout", 5).Set("jid", "").Set("user", "root")
	return l
}

// openPublish decrypts a recorded publish with the session key.
func (e *env) openPublish(sess *crypt.Crypticle, frames [][]byte) (*payload.Map, int64) {
	e.t.Helper()
	mpub, err := crypt.ParsePublicKeyPEM(e.m.pubPEM)
	if err != nil {
		e.t.Fatal(err)
	}
	load, serial, err := message.OpenPublish(sess, mpub, frames[len(frames)-1], payload.DefaultLimits)
	if err != nil {
		e.t.Fatalf("open publish: %v", err)
	}
	return load, serial
}

func mapJSON(m *payload.Map) string {
	b, _ := m.MarshalJSON()
	return string(b)
}

func decodeB64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.TrimSpace(s))
}

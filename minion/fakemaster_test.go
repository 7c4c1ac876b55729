package minion

import (
	"context"
	"crypto/rsa"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/gsalt/gsalt/wire/transport"
)

const vectorsPKI = "../testdata/vectors/pki"

// fakeMaster is a minimal Salt master built from wire/message and
// wire/transport: _auth with an accept/pending/reject decision per id, a
// session key that tests can rotate, _pillar, and recording of every AES
// request the minion makes.
type fakeMaster struct {
	t      testing.TB
	priv   *rsa.PrivateKey
	pubPEM []byte

	mu       sync.Mutex
	key      string
	c        *crypt.Crypticle
	serial   message.Counter
	decision map[string]string // id -> accept|pend|reject (default pend)
	pillar   *payload.Map
	auths    map[string]int
	// authFrom is the peer IP address of each id's last _auth.
	authFrom map[string]string
	lastAuth map[string]*payload.Map
	reqs     []*payload.Map
	reqCh    chan *payload.Map
	replies  map[string]any // cmd -> reply (default nil/{} rules)
	// badLoads answers the next N requests of a cmd "bad load" although
	// they decrypt: a master restarting again and again.
	badLoads map[string]int
	// drops leaves the next N requests of a cmd unanswered (a master
	// killed before it replied).
	drops map[string]int
	// retDelay holds each _return this long before the reply (a busy
	// master committing returns).
	retDelay time.Duration
	// authDelay holds each _auth this long before the reply.
	authDelay time.Duration

	req *transport.ReqServer
	pub *transport.PubServer
}

func loadKey(t testing.TB, path string) (*rsa.PrivateKey, []byte) {
	t.Helper()
	priv, err := crypt.LoadPrivateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(filepath.Join(filepath.Dir(path), filepath.Base(path[:len(path)-4])+".pub"))
	if err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

// newFakeMaster starts a fake master on free ports (or the given ones).
func newFakeMaster(t testing.TB, keyFile string, retPort, pubPort int) *fakeMaster {
	t.Helper()
	priv, pubPEM := loadKey(t, keyFile)
	fm := &fakeMaster{t: t, priv: priv, pubPEM: pubPEM, decision: map[string]string{}, auths: map[string]int{}, lastAuth: map[string]*payload.Map{},
		reqCh: make(chan *payload.Map, 1000), replies: map[string]any{}, badLoads: map[string]int{}, drops: map[string]int{}, pillar: payload.NewMap("role", "web", "nested", payload.NewMap("k", "v"))}
	fm.rotate()
	fm.start(retPort, pubPort)
	t.Cleanup(fm.stop)
	return fm
}

func (fm *fakeMaster) start(retPort, pubPort int) {
	t := fm.t
	ctx := context.Background()
	var err error
	// A restarted master binds the ports its predecessor just closed:
	// retry until they are free again.
	if !testutil.Poll(5*time.Second, func() bool {
		fm.req, err = transport.ListenReq(ctx, "127.0.0.1:"+strconv.Itoa(retPort), fm.handle, transport.ReqOptions{})
		return err == nil
	}) {
		t.Fatal(err)
	}
	if !testutil.Poll(5*time.Second, func() bool {
		fm.pub, err = transport.ListenPub(ctx, "127.0.0.1:"+strconv.Itoa(pubPort), transport.PubOptions{})
		return err == nil
	}) {
		t.Fatal(err)
	}
}

func (fm *fakeMaster) stop() {
	if fm.req != nil {
		fm.req.Close()
	}
	if fm.pub != nil {
		fm.pub.Close()
	}
}

func (fm *fakeMaster) retPort() int { return fm.req.Addr().(*net.TCPAddr).Port }
func (fm *fakeMaster) pubPort() int { return fm.pub.Addr().(*net.TCPAddr).Port }

// rotate installs a new session key (and resets the publish serial).
func (fm *fakeMaster) rotate() {
	k, err := crypt.GenerateKeyString()
	if err != nil {
		fm.t.Fatal(err)
	}
	c, err := crypt.NewCrypticle(k)
	if err != nil {
		fm.t.Fatal(err)
	}
	fm.mu.Lock()
	fm.key, fm.c = k, c
	fm.serial.Reset()
	fm.mu.Unlock()
}

func (fm *fakeMaster) set(id, decision string) {
	fm.mu.Lock()
	fm.decision[id] = decision
	fm.mu.Unlock()
}

func (fm *fakeMaster) authCount(id string) int {
	fm.mu.Lock()
	defer fm.mu.Unlock()
	return fm.auths[id]
}

func (fm *fakeMaster) handle(ctx context.Context, frame []byte) ([]byte, bool) {
	req, err := message.ParseRequest(frame, payload.DefaultLimits)
	if err != nil {
		b, _ := payload.Marshal(message.BadLoadText)
		return b, true
	}
	if req.Enc == message.EncClear {
		if a, ok := transport.PeerAddr(ctx); ok && req.Load.Str("cmd") == "_auth" {
			if ta, ok := a.(*net.TCPAddr); ok {
				fm.mu.Lock()
				if fm.authFrom == nil {
					fm.authFrom = map[string]string{}
				}
				fm.authFrom[req.Load.Str("id")] = ta.IP.String()
				fm.mu.Unlock()
			}
		}
		fm.mu.Lock()
		d := fm.authDelay
		fm.mu.Unlock()
		if d > 0 {
			time.Sleep(d)
		}
		return fm.handleAuth(req.Load)
	}
	fm.mu.Lock()
	c := fm.c
	fm.mu.Unlock()
	load, nonce, err := message.OpenAESRequest(c, req, payload.DefaultLimits)
	if err != nil {
		b, _ := payload.Marshal(message.BadLoadText)
		return b, true
	}
	cmd := load.Str("cmd")
	fm.mu.Lock()
	if fm.drops[cmd] > 0 {
		fm.drops[cmd]--
		fm.mu.Unlock()
		return nil, false
	}
	if fm.badLoads[cmd] > 0 {
		fm.badLoads[cmd]--
		fm.mu.Unlock()
		b, _ := payload.Marshal(message.BadLoadText)
		return b, true
	}
	fm.reqs = append(fm.reqs, load)
	custom, hasCustom := fm.replies[cmd]
	pillar := fm.pillar
	retDelay := fm.retDelay
	fm.mu.Unlock()
	if cmd == "_return" && retDelay > 0 {
		// The delay is the behaviour under test: a slow master keeps the
		// minion's returns in flight.
		time.Sleep(retDelay)
	}
	select {
	case fm.reqCh <- load:
	default:
	}
	var ret any
	switch cmd {
	case "_pillar":
		pub, err := crypt.ParsePublicKeyPEM(fm.minionPub(load.Str("id")))
		if err != nil {
			return nil, false
		}
		b, err := message.EncodePrivateReply(fm.priv, pub, pillar, nonce)
		if err != nil {
			fm.t.Error(err)
			return nil, false
		}
		return b, true
	case "_return", "_minion_event":
		ret = nil
	case "_mine", "_mine_delete", "_mine_flush":
		ret = true
	default:
		ret = &payload.Map{}
	}
	if hasCustom {
		ret = custom
	}
	b, err := message.EncodeSendReply(c, ret, nonce)
	if err != nil {
		fm.t.Error(err)
		return nil, false
	}
	return b, true
}

// minionPubs remembers the keys minions signed in with.
var minionPubs sync.Map

func (fm *fakeMaster) minionPub(id string) []byte {
	v, _ := minionPubs.Load(fmt.Sprintf("%p/%s", fm, id))
	b, _ := v.([]byte)
	return b
}

func (fm *fakeMaster) handleAuth(load *payload.Map) ([]byte, bool) {
	if load.Str("cmd") != "_auth" {
		b, _ := payload.Marshal(&payload.Map{})
		return b, true
	}
	id := load.Str("id")
	nonce := load.Str("nonce")
	minionPubs.Store(fmt.Sprintf("%p/%s", fm, id), []byte(load.Str("pub")))
	fm.mu.Lock()
	fm.auths[id]++
	fm.lastAuth[id] = load
	d := fm.decision[id]
	key := fm.key
	fm.mu.Unlock()
	var inner *payload.Map
	switch d {
	case "accept":
		pub, err := crypt.ParsePublicKeyPEM([]byte(load.Str("pub")))
		if err != nil {
			return nil, false
		}
		inner, err = message.BuildAuthAccept(message.AuthAccept{MasterPriv: fm.priv, MasterPubPEM: fm.pubPEM, MinionPub: pub,
			SessionKey: key, PublishPort: fm.pubPort(), EncToken: load.Bytes("token"), Nonce: nonce})
		if err != nil {
			fm.t.Error(err)
			return nil, false
		}
	case "reject":
		inner = message.BuildAuthRefusal(false, nonce)
	default:
		inner = message.BuildAuthRefusal(true, nonce)
	}
	b, err := message.EncodeSignedClear(fm.priv, inner)
	if err != nil {
		fm.t.Error(err)
		return nil, false
	}
	return b, true
}

// publishFrame encrypts a job load with the current key and next serial.
func (fm *fakeMaster) publishFrame(load *payload.Map, serial int64) []byte {
	fm.mu.Lock()
	c := fm.c
	if serial == 0 {
		serial = fm.serial.Next()
	}
	fm.mu.Unlock()
	b, err := message.EncodePublish(c, fm.priv, load, serial)
	if err != nil {
		fm.t.Fatal(err)
	}
	return b
}

func (fm *fakeMaster) publish(load *payload.Map) {
	if err := fm.pub.Publish(fm.publishFrame(load, 0)); err != nil {
		fm.t.Fatal(err)
	}
}

// waitReq waits for an AES request matching pred.
func (fm *fakeMaster) waitReq(t *testing.T, d time.Duration, pred func(*payload.Map) bool) *payload.Map {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case l := <-fm.reqCh:
			if pred(l) {
				return l
			}
		case <-timer.C:
			t.Fatalf("no matching request within %s", d)
			return nil
		}
	}
}

// tryReq returns the first request matching pred within d, or nil.
func (fm *fakeMaster) tryReq(d time.Duration, pred func(*payload.Map) bool) *payload.Map {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case l := <-fm.reqCh:
			if pred(l) {
				return l
			}
		case <-timer.C:
			return nil
		}
	}
}

// noReq checks that no request matching pred arrives within d.
func (fm *fakeMaster) noReq(t *testing.T, d time.Duration, pred func(*payload.Map) bool) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case l := <-fm.reqCh:
			if pred(l) {
				t.Fatalf("unexpected request %s", mustJSON(l))
			}
		case <-timer.C:
			return
		}
	}
}

func isReturn(jid string) func(*payload.Map) bool {
	return func(l *payload.Map) bool { return l.Str("cmd") == "_return" && l.Str("jid") == jid }
}

func mustJSON(v any) string {
	if m, ok := v.(*payload.Map); ok {
		b, _ := m.MarshalJSON()
		return string(b)
	}
	return fmt.Sprint(v)
}

// minionConfig writes a minion config pointing at fm and loads it.
func minionConfig(t testing.TB, id string, fm *fakeMaster, extra string) *config.Minion {
	t.Helper()
	dir := t.TempDir()
	conf := fmt.Sprintf(`id: %s
root_dir: %s
master: 127.0.0.1
master_port: %d
acceptance_wait_time: 0.1
acceptance_wait_time_max: 0.2
recon_default: 50
recon_max: 200
auth_timeout: 2
auth_tries: 2
enable_fqdns_grains: False
mine_interval: 0
grains:
  role: web
  roles: [db, app]
%s`, id, dir, fm.retPort(), extra)
	if err := os.WriteFile(filepath.Join(dir, "minion"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadMinion(dir)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// installKey copies a vector key pair into the minion's pki_dir so tests
// need not generate RSA keys.
func installKey(t testing.TB, cfg *config.Minion, from string) {
	t.Helper()
	if err := os.MkdirAll(cfg.PKIDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"minion.pem", "minion.pub"} {
		b, err := os.ReadFile(filepath.Join(vectorsPKI, from, f))
		if err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if f == "minion.pem" {
			mode = 0o400
		}
		if err := os.WriteFile(filepath.Join(cfg.PKIDir, f), b, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// startMinion creates and runs a minion; the returned function stops it
// and returns Run's error.
func startMinion(t testing.TB, cfg *config.Minion, o Options) (*Minion, func() error) {
	t.Helper()
	m, stop, _ := startMinionRun(t, cfg, o)
	return m, stop
}

// startMinionRun is startMinion that also returns a channel closed when
// Run has returned on its own (a fatal auth answer), after which stop
// returns Run's error.
func startMinionRun(t testing.TB, cfg *config.Minion, o Options) (*Minion, func() error, <-chan struct{}) {
	t.Helper()
	o.Config = cfg
	if o.Logger == nil {
		o.Logger = testLogger(t)
	}
	if o.RejectedDelay == 0 {
		o.RejectedDelay = 10 * time.Millisecond
	}
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	var runErr error
	go func() { runErr = m.Run(ctx); close(finished) }()
	stop := func() error {
		cancel()
		select {
		case <-finished:
			return runErr
		case <-time.After(10 * time.Second):
			return fmt.Errorf("minion did not stop")
		}
	}
	t.Cleanup(func() { stop() })
	return m, stop, finished
}

func waitReady(t testing.TB, m *Minion, d time.Duration) {
	t.Helper()
	d = testutil.Scale(2 * d) // authentication against a real master is slow under load
	select {
	case <-m.Ready():
	case <-time.After(d):
		t.Fatalf("minion not ready within %s (last auth error: %v)", d, m.LastAuthError())
	}
}

// testLogger discards the minion's logs unless GSALT_TEST_LOG is set.
func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("GSALT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// swarmConfig is the configuration of a swarm of n identities base-0000...
// against fm, each accepted by fm with the vectors' minion1 key.
func swarmConfig(tb testing.TB, fm *fakeMaster, base string, n int) *config.Minion {
	tb.Helper()
	cfg := minionConfig(tb, base, fm, fmt.Sprintf("publish_port: %d\n", fm.pubPort()))
	for i := range n {
		id := SwarmID(base, i)
		fm.set(id, "accept")
		c := *cfg
		c.PKIDir = filepath.Join(cfg.PKIDir, id)
		installKey(tb, &c, "minion1")
	}
	return cfg
}

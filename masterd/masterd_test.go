package masterd_test

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/masterd"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/gsalt/gsalt/wire/transport"
)

const vectorsDir = "../testdata/vectors"

func logger() *slog.Logger {
	if os.Getenv("GSALT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// shortDir returns a short temporary directory: unix socket paths are
// limited to 108 bytes, which t.TempDir can exceed.
func shortDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "gm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
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

// writeConfig writes DIR/etc/master and returns the loaded configuration.
func writeConfig(t testing.TB, dir, extra string) *config.Master {
	t.Helper()
	etc := filepath.Join(dir, "etc")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("interface: 127.0.0.1\npublish_port: 0\nroot_dir: %[1]s\npki_dir: %[1]s/pki\n"+
		"cachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/master.log\nuser: root\n"+
		"file_roots: {base: [%[1]s/srv/salt]}\n", dir) + extra
	if !strings.Contains(extra, "ret_port:") {
		text += "ret_port: 0\n"
	}
	if err := os.WriteFile(filepath.Join(etc, "master"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadMaster(etc)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startMaster starts a daemon with the vector master key.
func startMaster(t testing.TB, dir, extra string) (*masterd.Daemon, *config.Master) {
	t.Helper()
	cfg := writeConfig(t, dir, extra)
	if _, err := os.Stat(filepath.Join(cfg.PKIDir, "master.pem")); err != nil {
		copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pem"), filepath.Join(cfg.PKIDir, "master.pem"), 0o400)
		copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pub"), filepath.Join(cfg.PKIDir, "master.pub"), 0o644)
	}
	d, err := masterd.Start(context.Background(), cfg, masterd.Options{Logger: logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, cfg
}

// minion is an in-process minion built from wire/message and
// wire/transport, speaking to the daemon over real sockets.
type minion struct {
	t         testing.TB
	id        string
	priv      *rsa.PrivateKey
	pubPEM    []byte
	masterPEM []byte
	sess      *crypt.Crypticle
	req       string
	pubPort   int
}

func newMinion(t testing.TB, d *masterd.Daemon, vector, id string) *minion {
	priv, err := crypt.LoadPrivateKey(filepath.Join(vectorsDir, "pki", vector, "minion.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(filepath.Join(vectorsDir, "pki", vector, "minion.pub"))
	if err != nil {
		t.Fatal(err)
	}
	return &minion{t: t, id: id, priv: priv, pubPEM: pub, req: d.ReqAddr().String()}
}

func (mn *minion) request(frame []byte) []byte {
	mn.t.Helper()
	reply, err := transport.Request(context.Background(), mn.req, frame, 10*time.Second)
	if err != nil {
		mn.t.Fatalf("request: %v", err)
	}
	return reply
}

func (mn *minion) auth() message.AuthStatus {
	mn.t.Helper()
	var mpub *rsa.PublicKey
	if mn.masterPEM != nil {
		mpub, _ = crypt.ParsePublicKeyPEM(mn.masterPEM)
	}
	si, err := message.NewSignIn(mn.id, mn.pubPEM, mpub, nil)
	if err != nil {
		mn.t.Fatal(err)
	}
	frame, _ := message.EncodeClearRequest(si.Load)
	res, err := message.OpenAuthReply(mn.request(frame), si, mn.priv, mn.masterPEM, payload.DefaultLimits)
	if err != nil {
		mn.t.Fatalf("auth: %v", err)
	}
	if res.Status == message.AuthAccepted {
		if res.FirstContact {
			mn.masterPEM = res.MasterPubPEM
		}
		mn.sess, _ = crypt.NewCrypticle(res.SessionKey)
		mn.pubPort = res.PublishPort
	}
	return res.Status
}

func (mn *minion) send(load *payload.Map) (any, error) {
	mn.t.Helper()
	frame, nonce, err := message.EncodeAESRequest(mn.sess, load)
	if err != nil {
		mn.t.Fatal(err)
	}
	return message.OpenSendReply(mn.sess, mn.request(frame), nonce, payload.DefaultLimits)
}

func (mn *minion) tok() []byte {
	b, _ := crypt.Token(mn.priv)
	return b
}

func (mn *minion) masterPub() *rsa.PublicKey {
	p, err := crypt.ParsePublicKeyPEM(mn.masterPEM)
	if err != nil {
		mn.t.Fatal(err)
	}
	return p
}

func waitBus(t testing.TB, sub *event.Subscription, tag string) event.Event {
	t.Helper()
	// Generous: a real Salt minion's start event takes a while on a
	// loaded machine; the deadline only matters when the event never comes.
	deadline := time.After(testutil.Scale(90 * time.Second))
	for {
		select {
		case ev := <-sub.C():
			if ev.Tag == tag {
				return ev
			}
		case <-deadline:
			t.Fatalf("no event %s", tag)
		}
	}
}

func TestDaemonWithInProcessMinion(t *testing.T) {
	dir := shortDir(t)
	d, cfg := startMaster(t, dir, "")
	bus := d.Bus().Subscribe(nil, 1024)
	defer bus.Close()

	// Files for Salt's own tools.
	rk, err := os.ReadFile(filepath.Join(cfg.CacheDir, ".root_key"))
	if err != nil || len(rk) != 76 {
		t.Fatalf(".root_key: %q %v", rk, err)
	}
	if fi, _ := os.Stat(filepath.Join(cfg.CacheDir, ".root_key")); fi.Mode().Perm() != 0o600 {
		t.Fatalf(".root_key mode %v", fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(cfg.SockDir, "publish_pull.ipc")); err != nil {
		t.Fatal(err)
	}
	ipc, err := event.DialPub(context.Background(), filepath.Join(cfg.SockDir, event.MasterPubSocket))
	if err != nil {
		t.Fatal(err)
	}
	defer ipc.Close()

	// First contact: pending; accept through the key store; accepted.
	mn := newMinion(t, d, "minion1", "m1")
	if st := mn.auth(); st != message.AuthPending {
		t.Fatalf("first auth %v", st)
	}
	if ids, _ := d.Keys().ListState(keys.StatePending); !reflect.DeepEqual(ids, []string{"m1"}) {
		t.Fatalf("pending keys %v", ids)
	}
	if _, err := d.Keys().Accept("m1"); err != nil {
		t.Fatal(err)
	}
	if st := mn.auth(); st != message.AuthAccepted {
		t.Fatalf("after accept %v", st)
	}
	if st := mn.auth(); st != message.AuthAccepted { // with token
		t.Fatalf("token auth %v", st)
	}
	if mn.pubPort != d.PubAddr().(*net.TCPAddr).Port {
		t.Fatalf("publish port %d, bound %v", mn.pubPort, d.PubAddr())
	}

	// SUB receives a publish it decrypts with the session key.
	sub, err := transport.DialSub(context.Background(), fmt.Sprintf("127.0.0.1:%d", mn.pubPort),
		transport.SubOptions{Identity: []byte("m1"), Logger: logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	select {
	case <-sub.Connected():
	case <-time.After(10 * time.Second):
		t.Fatal("SUB did not connect")
	}
	recvPublish := func() (*payload.Map, int64, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		frames, err := sub.Recv(ctx)
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		return message.OpenPublish(mn.sess, mn.masterPub(), frames[len(frames)-1], payload.DefaultLimits)
	}
	// The subscription may not have reached the PubServer yet: publish
	// until one arrives.
	var jid string
	var load *payload.Map
	for i := 0; load == nil; i++ {
		if i > 50 {
			t.Fatal("no publish received")
		}
		jid, _, _, err = d.Master().Publish(context.Background(), master.PublishRequest{Tgt: "m1", Fun: "test.ping"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		frames, err := sub.Recv(ctx)
		cancel()
		if err != nil {
			continue
		}
		l, _, err := message.OpenPublish(mn.sess, mn.masterPub(), frames[len(frames)-1], payload.DefaultLimits)
		if err != nil {
			t.Fatalf("publish: %v", err)
		}
		if l.Str("jid") == jid {
			load = l
		}
	}
	if load.Str("fun") != "test.ping" || load.Str("tgt") != "m1" {
		t.Fatalf("publish load %v", load.Keys())
	}

	// _return: stored and fired (bus and IPC socket).
	if r, err := mn.send(payload.NewMap("cmd", "_return", "id", "m1", "success", true, "return", true, "retcode", 0,
		"jid", jid, "fun", "test.ping", "fun_args", []any{})); err != nil || r != nil {
		t.Fatalf("_return: %v %v", r, err)
	}
	ev := waitBus(t, bus, "salt/job/"+jid+"/ret/m1")
	if ev.Data.Bool("return") != true {
		t.Fatalf("ret event %v", ev.Data.Keys())
	}
	ipcWait(t, ipc, "salt/job/"+jid+"/ret/m1")
	if job, err := d.Jobs().Get(jid); err != nil || job.Returns["m1"] == nil {
		t.Fatalf("job cache %v %v", job, err)
	}

	// _minion_event.
	if _, err := mn.send(payload.NewMap("id", "m1", "cmd", "_minion_event", "pretag", nil, "tok", mn.tok(),
		"data", "Minion m1 started", "tag", "salt/minion/m1/start")); err != nil {
		t.Fatal(err)
	}
	if ev := ipcWait(t, ipc, "salt/minion/m1/start"); ev.Data.Str("id") != "m1" || ev.Data.Has("tok") {
		t.Fatalf("start event %v", ev.Data.Keys())
	}

	// _pillar: send_private verified as a 3006 minion does.
	ipv4 := []any{"127.0.0.1"}
	if as, err := net.InterfaceAddrs(); err == nil {
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				ipv4 = append(ipv4, n.IP.String())
			}
		}
	}
	pl := payload.NewMap("cmd", "_pillar", "id", "m1", "grains", payload.NewMap("os", "Debian", "ipv4", ipv4), "saltenv", "base",
		"pillarenv", nil, "pillar_override", payload.NewMap(), "extra_minion_data", payload.NewMap(), "ver", "2")
	frame, nonce, _ := message.EncodeAESRequest(mn.sess, pl)
	pillar, err := message.OpenPrivateReply(mn.priv, mn.masterPub(), mn.request(frame), nonce, payload.DefaultLimits)
	if err != nil || !reflect.DeepEqual(pillar, payload.NewMap()) {
		t.Fatalf("pillar %v %v", pillar, err)
	}
	waitBus(t, bus, "minion/refresh/m1")
	// Presence: the SUB connection from 127.0.0.1 stands for this host's
	// addresses, which m1's ipv4 grain lists (manage.present).
	if len(ipv4) > 1 {
		if ids, err := d.Master().ConnectedIDs(); err != nil || ids["m1"] == "" {
			t.Fatalf("ConnectedIDs %v %v", ids, err)
		}
	}

	// The local client path: clear publish with the root key.
	client := func(load *payload.Map) *payload.Map {
		frame, _ := message.EncodeClearRequest(load)
		v, err := payload.UnmarshalMap(mn.request(frame))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	pub := payload.NewMap("cmd", "publish", "tgt", "*", "fun", "test.ping", "arg", []any{}, "key", string(rk),
		"tgt_type", "glob", "ret", "", "timeout", 5, "jid", "", "user", "root")
	rep := client(pub.Clone())
	if rep.Map("load") == nil || !reflect.DeepEqual(rep.Map("load").List("minions"), []any{"m1"}) {
		t.Fatalf("clear publish %v", rep)
	}
	if l, _, err := recvPublish(); err != nil || l.Str("jid") != rep.Map("load").Str("jid") {
		t.Fatalf("clear publish not received: %v", err)
	}
	if rep := client(pub.Clone().Set("key", "wrong")); rep.Map("error") == nil || rep.Map("error").Str("name") != "AuthenticationError" {
		t.Fatalf("wrong key %v", rep)
	}
	// Runner over the socket, result on the IPC bus.
	rep = client(payload.NewMap("cmd", "runner", "fun", "jobs.lookup_jid", "kwarg", payload.NewMap("jid", jid), "key", string(rk), "user", "root"))
	rjid := rep.Str("jid")
	if rep.Str("tag") != "salt/run/"+rjid {
		t.Fatalf("runner reply %v", rep)
	}
	if ev := ipcWait(t, ipc, "salt/run/"+rjid+"/ret"); !reflect.DeepEqual(mustGet(ev.Data, "return"), payload.NewMap("m1", true)) {
		t.Fatalf("runner ret %v", mustGet(ev.Data, "return"))
	}

	// Rotation: the dropfile (as gsalt-key -d writes it) makes a new key;
	// the old one gets "bad load", re-auth works, publishes use the new key.
	old := mn.sess
	if err := keys.RequestKeyRotation(cfg.CacheDir); err != nil {
		t.Fatal(err)
	}
	waitBus(t, bus, "key")
	if _, err := mn.send(payload.NewMap("cmd", "_file_envs")); !errors.Is(err, message.ErrDecrypt) {
		t.Fatalf("old session key: %v", err)
	}
	if st := mn.auth(); st != message.AuthAccepted || mn.sess.KeyString() == old.KeyString() {
		t.Fatalf("re-auth %v", st)
	}
	if r, err := mn.send(payload.NewMap("cmd", "_file_envs")); err != nil || !reflect.DeepEqual(r, []any{"base"}) {
		t.Fatalf("after re-auth %v %v", r, err)
	}
	jid2, _, _, _ := d.Master().Publish(context.Background(), master.PublishRequest{Tgt: "m1", Fun: "test.ping"})
	for {
		l, serial, err := recvPublish()
		if err != nil {
			t.Fatalf("publish after rotation: %v", err)
		}
		if l.Str("jid") == jid2 {
			if serial != 1 {
				t.Fatalf("serial after rotation %d", serial)
			}
			break
		}
	}

	// A clean stop removes publish_pull.ipc and the sockets; a restart on
	// the same directories has a new session key and keeps the job cache.
	sk := d.Master().SessionKey()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	<-d.Done()
	for _, f := range []string{"publish_pull.ipc", event.MasterPubSocket} {
		if _, err := os.Stat(filepath.Join(cfg.SockDir, f)); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", f, err)
		}
	}
	d2, _ := startMaster(t, dir, "")
	if d2.Master().SessionKey() == sk {
		t.Fatal("restart kept the session key")
	}
	if job, err := d2.Jobs().Get(jid); err != nil || job.Returns["m1"] == nil {
		t.Fatalf("job cache after restart: %v", err)
	}
	rk2, _ := os.ReadFile(filepath.Join(cfg.CacheDir, ".root_key"))
	if string(rk2) == string(rk) {
		t.Fatal(".root_key not rewritten")
	}
}

func ipcWait(t testing.TB, r *event.IPCReader, tag string) event.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		ev, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %s on the IPC socket: %v", tag, err)
		}
		if ev.Tag == tag {
			return ev
		}
	}
}

func mustGet(m *payload.Map, k string) any { v, _ := m.Get(k); return v }

func TestWriteClientKeys(t *testing.T) {
	dir := t.TempDir()
	keys, err := masterd.WriteClientKeys(dir, []string{"root", "salt", "root", "../x", ""})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Fatalf("keys %v", keys)
	}
	for u, k := range keys {
		b, err := os.ReadFile(filepath.Join(dir, "."+u+"_key"))
		if err != nil || string(b) != k || len(k) != 76 || !strings.HasSuffix(k, "=") {
			t.Fatalf("%s: %q %v", u, b, err)
		}
	}
}

func TestStartFailsCleanly(t *testing.T) {
	dir := shortDir(t)
	// Occupy a port, then ask the daemon to bind it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg := writeConfig(t, dir, fmt.Sprintf("ret_port: %d\n", l.Addr().(*net.TCPAddr).Port))
	if _, err := masterd.Start(context.Background(), cfg, masterd.Options{Logger: logger()}); err == nil {
		t.Fatal("Start succeeded on a busy port")
	}
	// Nothing is left listening on the event socket, and a second start on
	// free ports works (the job cache was closed).
	cfg2 := writeConfig(t, dir, "")
	d, err := masterd.Start(context.Background(), cfg2, masterd.Options{Logger: logger()})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}

package nats

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/natstest"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/payload"
)

func testLogger() *slog.Logger {
	if os.Getenv("GSALT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// startBridge parses opt and starts a bridge over bus; it is closed when
// the test ends.
func startBridge(t *testing.T, bus *event.Bus, opt map[string]any) *Bridge {
	t.Helper()
	if _, ok := opt["reconnect_wait"]; !ok {
		opt["reconnect_wait"] = 0.05
		opt["reconnect_wait_max"] = 0.5
	}
	c, err := Parse(opt, "m1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Start(context.Background(), c, bus, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func newBus(t *testing.T) *event.Bus {
	bus := event.New(event.Options{Logger: testLogger()})
	t.Cleanup(bus.Close)
	return bus
}

// client connects a plain NATS client (the test's publisher/observer).
func client(t *testing.T, url string, opts ...natsgo.Option) *natsgo.Conn {
	t.Helper()
	nc, err := natsgo.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func nextMsg(t *testing.T, s *natsgo.Subscription) *natsgo.Msg {
	t.Helper()
	m, err := s.NextMsg(testutil.Scale(10 * time.Second))
	if err != nil {
		t.Fatalf("no message on %s: %v", s.Subject, err)
	}
	return m
}

// nextEvent returns the next event on sub whose tag is not in skip.
func nextEvent(t *testing.T, sub *event.Subscription) event.Event {
	t.Helper()
	select {
	case ev := <-sub.C():
		return ev
	case <-time.After(testutil.Scale(10 * time.Second)):
		t.Fatal("no event on the bus")
	}
	return event.Event{}
}

func waitConnected(t *testing.T, b *Bridge) {
	t.Helper()
	testutil.Eventually(t, 20*time.Second, func() bool { return b.Stats().Connected }, "the bridge to connect")
}

// TestMirrorAndFire: against a real nats-server, bus events are published
// on <prefix>.<tag with / as .> with JSON data and the tag and origin
// headers (filters, escaping and the fire namespace applied); messages on
// <prefix>.fire.> and on mapped foreign subjects are fired into the bus;
// the bridge's own mirrors are never fired back.
func TestMirrorAndFire(t *testing.T) {
	srv := natstest.Start(t, natstest.Options{})
	bus := newBus(t)
	b := startBridge(t, bus, map[string]any{
		"url": srv.URL(), "exclude": []any{"salt/auth"},
		"subscribe": []any{
			map[string]any{"subject": "dc1.*.configure", "tag": "nats/configure/{1}"},
			// Overlaps the mirrored subjects: the origin header stops loops.
			map[string]any{"subject": "salt.loop.>", "tag": "loop/{1}"},
		},
	})
	waitConnected(t, b)
	nc := client(t, srv.URL())
	mirror, err := nc.SubscribeSync("salt.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// The bridge subscribes asynchronously after connecting: flush it too.
	if err := b.nc.Flush(); err != nil {
		t.Fatal(err)
	}

	events := bus.Subscribe(nil, 100)
	defer events.Close()

	for _, ev := range []event.Event{
		{Tag: "salt/auth", Data: payload.NewMap("id", "x")}, // excluded
		{Tag: "fire/me", Data: payload.NewMap()},            // the fire namespace: not mirrored
		{Tag: "salt/job/20260101000000000001/ret/sw1", Data: payload.NewMap("return", true, "id", "sw1", "fun", "test.ping")},
		{Tag: "my tag//x", Data: payload.NewMap("n", int64(1))},
		{Tag: "loop/a", Data: payload.NewMap()},
	} {
		if err := bus.Fire(ev); err != nil {
			t.Fatal(err)
		}
	}
	m := nextMsg(t, mirror)
	if m.Subject != "salt.salt.job.20260101000000000001.ret.sw1" || m.Header.Get(TagHeader) != "salt/job/20260101000000000001/ret/sw1" ||
		m.Header.Get(OriginHeader) != b.Origin() {
		t.Fatalf("first mirror %s %v", m.Subject, m.Header)
	}
	var data map[string]any
	if err := json.Unmarshal(m.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data["return"] != true || data["id"] != "sw1" || data["_stamp"] == nil {
		t.Errorf("mirrored data %s", m.Data)
	}
	if m = nextMsg(t, mirror); m.Subject != "salt.my%20tag.%.x" || m.Header.Get(TagHeader) != "my tag//x" {
		t.Errorf("escaped mirror %s %v", m.Subject, m.Header)
	}
	if m = nextMsg(t, mirror); m.Subject != "salt.loop.a" {
		t.Errorf("third mirror %s", m.Subject)
	}
	for range 5 {
		<-events.C() // the five events fired above
	}

	// Inbound: the fire namespace (JSON object data, a tag header) and a
	// mapped foreign subject (text body).
	if err := nc.Publish("salt.fire.watch.sw1.changed", []byte(`{"path": "/srv/sw1.cfg", "n": 2, "z": [1, 2.5]}`)); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, events)
	if ev.Tag != "watch/sw1/changed" || ev.Data.Str("path") != "/srv/sw1.cfg" || ev.Data.Str(SubjectKey) != "salt.fire.watch.sw1.changed" {
		t.Fatalf("fired %s %v", ev.Tag, ev.Data)
	}
	if keys := ev.Data.Keys(); keys[0] != "path" || keys[1] != "n" || keys[2] != "z" {
		t.Errorf("key order %v", keys)
	}
	if n, ok := ev.Data.Get("n"); !ok || n != int64(2) {
		t.Errorf("n = %#v", n)
	}
	hm := natsgo.NewMsg("salt.fire.ignored.tail")
	hm.Header.Set(TagHeader, "salt/beacon/m1/inotify//srv/salt/intended")
	hm.Data = []byte("not json")
	if err := nc.PublishMsg(hm); err != nil {
		t.Fatal(err)
	}
	if ev = nextEvent(t, events); ev.Tag != "salt/beacon/m1/inotify//srv/salt/intended" || ev.Data.Str(PayloadKey) != "not json" {
		t.Fatalf("fired with a tag header: %s %v", ev.Tag, ev.Data)
	}
	const cfgText = "hostname sw1\nntp server 192.0.2.1\n"
	if err := nc.Publish("dc1.sw1.configure", []byte(cfgText)); err != nil {
		t.Fatal(err)
	}
	if ev = nextEvent(t, events); ev.Tag != "nats/configure/sw1" || ev.Data.Str(PayloadKey) != cfgText {
		t.Fatalf("mapped %s %v", ev.Tag, ev.Data)
	}
	// A foreign message on the overlapping mapping is fired, the bridge's
	// own mirror of loop/a was not (else it would be the next event).
	if err := nc.Publish("salt.loop.b", nil); err != nil {
		t.Fatal(err)
	}
	if ev = nextEvent(t, events); ev.Tag != "loop/b" {
		t.Fatalf("after the loop check: %s %v", ev.Tag, ev.Data)
	}
	// Events fired from NATS are bus events like any other: mirrored too;
	// the mirrors of loop/a and loop/b came back with our origin: ignored.
	testutil.Eventually(t, 10*time.Second, func() bool {
		st := b.Stats()
		return st.Published == 7 && st.Received == 6
	}, "seven mirrors and six inbound messages")
	if st := b.Stats(); st.Skipped != 2 || st.Fired != 4 || st.Ignored != 2 || st.PublishDropped != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestMsgpackEncoding: encoding msgpack mirrors the data as msgpack and
// accepts msgpack maps inbound.
func TestMsgpackEncoding(t *testing.T) {
	srv := natstest.Start(t, natstest.Options{})
	bus := newBus(t)
	b := startBridge(t, bus, map[string]any{"url": srv.URL(), "encoding": "msgpack", "include": []any{"app/*"}})
	waitConnected(t, b)
	nc := client(t, srv.URL())
	mirror, _ := nc.SubscribeSync("salt.app.>")
	_ = nc.Flush()
	_ = b.nc.Flush()
	events := bus.Subscribe(event.Prefix("in/"), 10)
	defer events.Close()
	bus.Publish(event.Event{Tag: "app/x", Data: payload.NewMap("k", []byte{0, 1, 2})})
	m := nextMsg(t, mirror)
	got, err := payload.UnmarshalMap(m.Data)
	if err != nil || string(got.Bytes("k")) != "\x00\x01\x02" {
		t.Fatalf("msgpack mirror %q: %v %v", m.Data, got, err)
	}
	body, _ := payload.MarshalBin(payload.NewMap("a", int64(7)))
	_ = nc.Publish("salt.fire.in.mp", body)
	ev := nextEvent(t, events)
	if v, _ := ev.Data.Get("a"); ev.Tag != "in/mp" || v != int64(7) {
		t.Fatalf("msgpack fire %s %v", ev.Tag, ev.Data)
	}
}

// TestOutageNeverBlocks: with NATS down, a flood of bus events is
// published without waiting (the bridge drops what its bounded outage
// buffer cannot hold and counts it); once the server comes up the bridge
// connects by itself, subscribes and mirrors and fires again; a server
// restart is survived the same way.
func TestOutageNeverBlocks(t *testing.T) {
	natstest.Require(t)
	bus := newBus(t)
	srv := natstest.Start(t, natstest.Options{})
	srv.Stop()
	b := startBridge(t, bus, map[string]any{"url": srv.URL(), "reconnect_buffer": 4096, "queue_size": 100})
	big := strings.Repeat("x", 200)
	for i := range 20000 {
		if err := bus.Fire(event.Event{Tag: fmt.Sprintf("flood/%d", i), Data: payload.NewMap("pad", big)}); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 20*time.Second, func() bool {
		st := b.Stats()
		return st.PublishDropped+st.QueueDropped+st.Published == 20000
	}, "every flood event to be counted as published or dropped")
	if st := b.Stats(); st.PublishDropped+st.QueueDropped == 0 || st.Connected {
		t.Fatalf("stats while NATS is down: %+v", st)
	}

	srv.Restart()
	waitConnected(t, b)
	nc := client(t, srv.URL())
	mirror, _ := nc.SubscribeSync("salt.after.>")
	_ = nc.Flush()
	events := bus.Subscribe(event.Prefix("back/"), 10)
	defer events.Close()
	roundTrip := func(n int) {
		t.Helper()
		// The bridge's subscription is re-sent on (re)connect; publish until
		// it is seen.
		testutil.Eventually(t, 20*time.Second, func() bool {
			_ = nc.Publish(fmt.Sprintf("salt.fire.back.%d", n), []byte(`{}`))
			select {
			case ev := <-events.C():
				return ev.Tag == fmt.Sprintf("back/%d", n)
			case <-time.After(100 * time.Millisecond):
				return false
			}
		}, "a fire after the reconnection")
		bus.Publish(event.Event{Tag: fmt.Sprintf("after/%d", n), Data: payload.NewMap()})
		for {
			m := nextMsg(t, mirror)
			if m.Subject == fmt.Sprintf("salt.after.%d", n) {
				break
			}
		}
	}
	roundTrip(1)
	srv.Stop()
	testutil.Eventually(t, 20*time.Second, func() bool { return !b.Stats().Connected }, "the bridge to see the outage")
	srv.Restart()
	waitConnected(t, b)
	roundTrip(2)
	if st := b.Stats(); st.Reconnects < 1 {
		t.Errorf("no reconnection counted: %+v", st)
	}
}

// TestJetStreamDurable: with jetstream, messages published while no
// bridge (no master) runs are kept by the stream and fired once a new
// bridge starts; each is acknowledged after it was fired, so nothing is
// pending afterwards and nothing is fired twice.
func TestJetStreamDurable(t *testing.T) {
	srv := natstest.Start(t, natstest.Options{JetStream: true})
	opt := func() map[string]any {
		return map[string]any{"url": srv.URL(), "publish": false,
			"jetstream": map[string]any{"stream": "GSALT_TEST", "ack_wait": 5},
			"subscribe": []any{map[string]any{"subject": "dc1.*.configure", "tag": "nats/configure/{1}"}}}
	}
	bus1 := newBus(t)
	b1 := startBridge(t, bus1, opt())
	testutil.Eventually(t, 30*time.Second, b1.JetStreamReady, "the first bridge's consumer")
	ev1 := bus1.Subscribe(nil, 10)
	nc := client(t, srv.URL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := js.Publish(ctx, "salt.fire.before.stop", []byte(`{"n": 0}`)); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, ev1); ev.Tag != "before/stop" {
		t.Fatalf("first bridge fired %s", ev.Tag)
	}
	b1.Close() // the master is down

	for i, s := range []string{"salt.fire.while.down", "dc1.sw7.configure", "salt.fire.while.down2"} {
		if _, err := js.Publish(ctx, s, fmt.Appendf(nil, `{"n": %d}`, i+1)); err != nil {
			t.Fatal(err)
		}
	}
	bus2 := newBus(t)
	ev2 := bus2.Subscribe(nil, 10) // before the bridge starts: nothing is missed
	b2 := startBridge(t, bus2, opt())
	var got []string
	for range 3 {
		ev := nextEvent(t, ev2)
		n, _ := ev.Data.Get("n")
		got = append(got, fmt.Sprintf("%s=%v", ev.Tag, n))
	}
	if want := "while/down=1 nats/configure/sw7=2 while/down2=3"; strings.Join(got, " ") != want {
		t.Fatalf("fired after the restart: %v, want %s", got, want)
	}
	cons, err := js.Consumer(ctx, "GSALT_TEST", "gsalt-m1")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0 && info.Delivered.Stream == 4
	}, "every stream message acknowledged")
	select {
	case ev := <-ev2.C():
		t.Fatalf("fired twice: %s", ev.Tag)
	case <-time.After(200 * time.Millisecond):
	}
	if st := b2.Stats(); st.Fired != 3 || st.FireErrors != 0 {
		t.Errorf("stats %+v", st)
	}

	// A mapping added later: the bridge adds its subject to the stream.
	b2.Close()
	o := opt()
	o["subscribe"] = append(o["subscribe"].([]any), map[string]any{"subject": "dc2.*.configure", "tag": "dc2/{1}"})
	bus3 := newBus(t)
	ev3 := bus3.Subscribe(nil, 10)
	b3 := startBridge(t, bus3, o)
	testutil.Eventually(t, 30*time.Second, b3.JetStreamReady, "the third bridge's consumer")
	if _, err := js.Publish(ctx, "dc2.r1.configure", []byte("x")); err != nil {
		t.Fatalf("publish on the added subject: %v", err)
	}
	if ev := nextEvent(t, ev3); ev.Tag != "dc2/r1" || ev.Data.Str(PayloadKey) != "x" {
		t.Fatalf("fired %s %v", ev.Tag, ev.Data)
	}
}

// writeCerts writes a CA, a server certificate for 127.0.0.1 and a client
// certificate (PEM files in dir) and returns their paths.
func writeCerts(t *testing.T, dir string) (ca, srvCert, srvKey, cliCert, cliKey string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gsalt test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kd, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", kd)
	}
	ca = write("ca.pem", "CERTIFICATE", caDER)
	srvCert, srvKey = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	cliCert, cliKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return
}

// TestAuthAndTLS: the bridge connects with each kind of credentials the
// server demands (user/password, token, nkey seed file, a creds file of a
// server in operator mode, mutual TLS with a client certificate), fires through it, and never connects with wrong
// credentials.
func TestAuthAndTLS(t *testing.T) {
	natstest.Require(t)
	dir := t.TempDir()
	ca, srvCert, srvKey, cliCert, cliKey := writeCerts(t, dir)
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := user.PublicKey()
	seed, _ := user.Seed()
	seedFile := filepath.Join(dir, "user.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	credsFile, operatorConf := writeCreds(t, dir)
	tlsBlock := fmt.Sprintf("tls {\n  cert_file: %q\n  key_file: %q\n  ca_file: %q\n  verify: true\n}\n", srvCert, srvKey, ca)
	for _, c := range []struct {
		name   string
		server string
		bridge map[string]any
		client []natsgo.Option
		bad    map[string]any // credentials that must not connect
	}{
		{"user", "authorization { user: salt, password: s3cret }",
			map[string]any{"user": "salt", "password": "s3cret"}, []natsgo.Option{natsgo.UserInfo("salt", "s3cret")},
			map[string]any{"user": "salt", "password": "wrong"}},
		{"token", "authorization { token: tok123 }",
			map[string]any{"token": "tok123"}, []natsgo.Option{natsgo.Token("tok123")},
			map[string]any{"token": "nope"}},
		{"nkey", fmt.Sprintf("authorization { users: [ {nkey: %s} ] }", pub),
			map[string]any{"nkey": seedFile}, []natsgo.Option{natsgo.Nkey(pub, user.Sign)},
			map[string]any{}},
		{"creds", operatorConf,
			map[string]any{"creds": credsFile}, []natsgo.Option{natsgo.UserCredentials(credsFile)},
			map[string]any{}},
		{"tls", tlsBlock,
			map[string]any{"tls": map[string]any{"cert": cliCert, "key": cliKey, "ca": ca}},
			[]natsgo.Option{natsgo.ClientCert(cliCert, cliKey), natsgo.RootCAs(ca)},
			map[string]any{"tls": map[string]any{"ca": ca}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := natstest.Start(t, natstest.Options{Extra: c.server})
			bus := newBus(t)
			c.bridge["url"] = srv.URL()
			b := startBridge(t, bus, c.bridge)
			waitConnected(t, b)
			events := bus.Subscribe(event.Prefix("auth/"), 10)
			defer events.Close()
			nc := client(t, srv.URL(), c.client...)
			testutil.Eventually(t, 10*time.Second, func() bool {
				_ = nc.Publish("salt.fire.auth."+c.name, []byte(`{}`))
				select {
				case ev := <-events.C():
					return ev.Tag == "auth/"+c.name
				case <-time.After(100 * time.Millisecond):
					return false
				}
			}, "a fire through the authenticated connection")

			c.bad["url"] = srv.URL()
			bb := startBridge(t, newBus(t), c.bad)
			if testutil.Poll(time.Second, func() bool { return bb.Stats().Connected }) {
				t.Errorf("connected with wrong credentials %v", c.bad)
			}
		})
	}
}

// TestFireFiltersAndQueueGroup: fire_exclude keeps tags out of the bus;
// two bridges in one queue group fire each message once between them.
func TestFireFiltersAndQueueGroup(t *testing.T) {
	srv := natstest.Start(t, natstest.Options{})
	bus1, bus2 := newBus(t), newBus(t)
	opt := func() map[string]any {
		return map[string]any{"url": srv.URL(), "publish": false, "queue_group": "masters", "fire_exclude": []any{"salt/*"}}
	}
	b1, b2 := startBridge(t, bus1, opt()), startBridge(t, bus2, opt())
	waitConnected(t, b1)
	waitConnected(t, b2)
	_ = b1.nc.Flush()
	_ = b2.nc.Flush()
	nc := client(t, srv.URL())
	const n = 40
	for i := range n {
		_ = nc.Publish(fmt.Sprintf("salt.fire.ok.%d", i), nil)
		_ = nc.Publish(fmt.Sprintf("salt.fire.salt.job.%d.ret.x", i), nil)
	}
	_ = nc.Flush()
	testutil.Eventually(t, 10*time.Second, func() bool {
		return b1.Stats().Received+b2.Stats().Received == 2*n
	}, "every message received once by the group")
	// Without the queue group each bridge would get all of them: make sure
	// no more come.
	if testutil.Poll(300*time.Millisecond, func() bool { return b1.Stats().Received+b2.Stats().Received > 2*n }) {
		t.Fatal("messages delivered to both bridges of the queue group")
	}
	s1, s2 := b1.Stats(), b2.Stats()
	if s1.Fired+s2.Fired != n || s1.Ignored+s2.Ignored != n {
		t.Errorf("stats %+v %+v", s1, s2)
	}
}

// writeCreds sets up NATS decentralized auth: an operator, an account and
// a user signed by it; it returns the user's creds file and the server
// configuration (operator JWT, the account preloaded in a memory
// resolver).
func writeCreds(t *testing.T, dir string) (string, string) {
	t.Helper()
	op, err := nkeys.CreateOperator()
	if err != nil {
		t.Fatal(err)
	}
	opPub, _ := op.PublicKey()
	oc := jwt.NewOperatorClaims(opPub)
	oc.Name = "gsalt-test"
	opJWT, err := oc.Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	acc, _ := nkeys.CreateAccount()
	accPub, _ := acc.PublicKey()
	ac := jwt.NewAccountClaims(accPub)
	ac.Name = "SALT"
	accJWT, err := ac.Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	usr, _ := nkeys.CreateUser()
	usrPub, _ := usr.PublicKey()
	usrSeed, _ := usr.Seed()
	uc := jwt.NewUserClaims(usrPub)
	uc.Name = "gsalt-master"
	usrJWT, err := uc.Encode(acc)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := jwt.FormatUserConfig(usrJWT, usrSeed)
	if err != nil {
		t.Fatal(err)
	}
	credsFile := filepath.Join(dir, "master.creds")
	opFile := filepath.Join(dir, "operator.jwt")
	for p, b := range map[string][]byte{credsFile: creds, opFile: []byte(opJWT)} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return credsFile, fmt.Sprintf("operator: %q\nresolver: MEMORY\nresolver_preload: {\n  %s: %q\n}\n", opFile, accPub, accJWT)
}

// BenchmarkMirror: bus events (a job return of ~200 bytes of data)
// mirrored to a real nats-server and received by a subscriber.
func BenchmarkMirror(b *testing.B) {
	srv := natstest.Start(b, natstest.Options{})
	bus := event.New(event.Options{Logger: testLogger()})
	defer bus.Close()
	c, err := Parse(map[string]any{"url": srv.URL(), "fire": false, "queue_size": 100000}, "m1")
	if err != nil {
		b.Fatal(err)
	}
	br, err := Start(context.Background(), c, bus, testLogger())
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	testutil.Eventually(b, 20*time.Second, func() bool { return br.Stats().Connected }, "the bridge to connect")
	nc, err := natsgo.Connect(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	got := make(chan struct{}, 1)
	var n int
	sub, err := nc.Subscribe("salt.salt.job.>", func(*natsgo.Msg) {
		n++
		if n == b.N {
			got <- struct{}{}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	_ = sub.SetPendingLimits(-1, -1)
	_ = nc.Flush()
	data := payload.NewMap("cmd", "_return", "id", "sw1", "fun", "net.load_config", "jid", "20260101000000000001",
		"return", payload.NewMap("result", true, "comment", "", "diff", "+ntp server 192.0.2.1", "already_configured", false),
		"retcode", int64(0), "success", true)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		for bus.Fire(event.Event{Tag: "salt/job/20260101000000000001/ret/sw" + strconv.Itoa(i%1000), Data: data}) != nil {
			b.Fatal("bus closed")
		}
		if i%10000 == 9999 && i > 50000 { // stay within the bridge's queue
			for br.Stats().Published < uint64(i-50000) {
				time.Sleep(time.Millisecond) // pace the producer so the bridge queue is not outrun
			}
		}
	}
	select {
	case <-got:
	case <-time.After(60 * time.Second):
		b.Fatalf("received %d of %d (stats %+v)", n, b.N, br.Stats())
	}
}

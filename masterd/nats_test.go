package masterd_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"

	natsbridge "github.com/gsalt/gsalt/bridge/nats"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/natstest"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/masterd"
)

// TestNATSHook: the nats option starts the bridge with the master (a
// message on salt.fire.> reaches the master's bus and its mirror comes
// back on NATS); a bad nats option stops the master from starting with a
// clear error; no option, no bridge.
func TestNATSHook(t *testing.T) {
	srv := natstest.Start(t, natstest.Options{})
	d, _ := startMaster(t, shortDir(t), fmt.Sprintf("nats:\n  url: %s\n  subject_prefix: gs\n  reconnect_wait: 0.05\n", srv.URL()))
	if d.NATS() == nil {
		t.Fatal("no bridge although the nats option is set")
	}
	nc, err := natsgo.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	mirror, err := nc.SubscribeSync("gs.hook.>")
	if err != nil {
		t.Fatal(err)
	}
	bus := d.Bus().Subscribe(event.Prefix("hook/"), 10)
	defer bus.Close()
	testutil.Eventually(t, 20*time.Second, func() bool {
		_ = nc.Publish("gs.fire.hook.test", []byte(`{"x": 1}`))
		select {
		case ev := <-bus.C():
			return ev.Tag == "hook/test"
		case <-time.After(100 * time.Millisecond):
			return false
		}
	}, "a NATS fire on the master's bus")
	m, err := mirror.NextMsg(testutil.Scale(10 * time.Second))
	if err != nil || m.Subject != "gs.hook.test" || m.Header.Get(natsbridge.TagHeader) != "hook/test" {
		t.Fatalf("mirror: %v %v", m, err)
	}

	if d2, _ := startMaster(t, shortDir(t), ""); d2.NATS() != nil {
		t.Error("a bridge without the nats option")
	}
	cfg := writeConfig(t, shortDir(t), "nats:\n  encoding: xml\n")
	_, err = masterd.Start(context.Background(), cfg, masterd.Options{Logger: logger()})
	if !errors.Is(err, natsbridge.ErrConfig) {
		t.Fatalf("bad nats option: %v", err)
	}
}

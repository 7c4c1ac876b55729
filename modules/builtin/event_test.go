package builtin_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// recMaster records the loads sent to the master and answers from a table.
type recMaster struct {
	mu      sync.Mutex
	loads   []*payload.Map
	replies map[string]any
	fail    bool
}

func (r *recMaster) SendMaster(_ context.Context, load *payload.Map) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return nil, errors.New("master unreachable")
	}
	r.loads = append(r.loads, load.Clone())
	return r.replies[load.Str("cmd")], nil
}

func (r *recMaster) last(t *testing.T) *payload.Map {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.loads) == 0 {
		t.Fatal("nothing sent to the master")
	}
	return r.loads[len(r.loads)-1]
}

type recBus struct {
	tags []string
	data []any
}

func (b *recBus) Fire(_ context.Context, tag string, data any) bool {
	b.tags = append(b.tags, tag)
	b.data = append(b.data, data)
	return true
}

func TestEventSend(t *testing.T) {
	r := registry(t)
	ms := &recMaster{}
	bus := &recBus{}
	grains := payload.NewMap("os", "Debian", "id", "m1", "kernel", "Linux")
	env := &modules.Env{ID: "m1", Registry: r, Grains: grains, Opts: payload.NewMap("file_client", "remote"),
		Services: map[string]any{"master": ms, "events": bus}}
	pub := payload.NewMap("fun", "event.send", "jid", "20260101000000000001")
	res := r.Execute(context.Background(), modules.Binder{}, env, "event.send",
		[]any{"my/tag", payload.NewMap("a", int64(1)), payload.NewMap("__kwarg__", true, "with_grains", []any{"os"}, "extra", "x")}, pub)
	if res.Return != true {
		t.Fatalf("event.send: %+v", res)
	}
	l := ms.last(t)
	if got := strings.Join(l.Keys(), ","); got != "id,cmd,pretag,tok,data,tag" {
		t.Errorf("daemon load keys %s", got)
	}
	d := l.Map("data")
	if got := strings.Join(d.Keys(), ","); got != "grains,extra,__pub_fun,__pub_jid,a" {
		t.Errorf("data keys %s", got)
	}
	if d.Map("grains").Len() != 1 || l.Str("tag") != "my/tag" || !l.Has("tok") {
		t.Errorf("load %s", jsonText(l))
	}

	// salt-call (and preload) send {id, tag, data, tok, cmd} plus preload.
	env.Opts = payload.NewMap("file_client", "remote", "__cli", "salt-call")
	r.Execute(context.Background(), modules.Binder{}, env, "event.fire_master", []any{payload.NewMap("x", "y"), "t/2", payload.NewMap("jid", "j1")}, nil)
	l = ms.last(t)
	if got := strings.Join(l.Keys(), ","); got != "id,tag,data,tok,cmd,jid" {
		t.Errorf("salt-call load keys %s", got)
	}

	// Empty data becomes {}.
	env.Opts = payload.NewMap("file_client", "remote")
	r.Execute(context.Background(), modules.Binder{}, env, "event.fire_master", []any{"", "t/3"}, nil)
	if l = ms.last(t); l.Map("data") == nil || l.Map("data").Len() != 0 {
		t.Errorf("empty data: %s", jsonText(l))
	}

	// Local mode: event.send fires on the local bus, fire_master refuses.
	env.Opts = payload.NewMap("file_client", "local")
	n := len(ms.loads)
	if res = r.Execute(context.Background(), modules.Binder{}, env, "event.send", []any{"local/tag"}, nil); res.Return != true || bus.tags[len(bus.tags)-1] != "local/tag" {
		t.Errorf("local event.send: %+v %v", res, bus.tags)
	}
	if res = r.Execute(context.Background(), modules.Binder{}, env, "event.fire_master", []any{"d", "t"}, nil); res.Return != false {
		t.Errorf("local fire_master: %+v", res)
	}
	if len(ms.loads) != n {
		t.Error("local mode reached the master")
	}
	// A failed send is False.
	env.Opts = payload.NewMap()
	ms.fail = true
	if res = r.Execute(context.Background(), modules.Binder{}, env, "event.send", []any{"t"}, nil); res.Return != false {
		t.Errorf("failed send: %+v", res)
	}
}

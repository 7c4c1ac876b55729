package builtin_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

func TestMineRemote(t *testing.T) {
	r := registry(t)
	ms := &recMaster{replies: map[string]any{
		"_mine":     true,
		"_mine_get": payload.NewMap("m1", []any{"10.0.0.1"}, "m2", []any{"10.0.0.2"}),
	}}
	opts := payload.NewMap("file_client", "remote", "mine_functions", payload.NewMap(
		"test.echo", []any{"hello"},
		"pingalias", []any{payload.NewMap("mine_function", "test.ping")},
		"kwalias", payload.NewMap("mine_function", "test.echo", "text", "kw"),
		"acl", []any{payload.NewMap("mine_function", "test.ping", "allow_tgt", "m2", "allow_tgt_type", "glob")},
		"missing.fun", []any{},
		"test.exception", []any{},
	))
	env := &modules.Env{ID: "m1", Registry: r, Opts: opts, Services: map[string]any{"master": ms}}
	run := func(fun string, args ...any) modules.Result {
		return r.Execute(context.Background(), modules.Binder{}, env, fun, args, nil)
	}
	if res := run("mine.update"); res.Return != true {
		t.Fatalf("mine.update: %+v", res)
	}
	l := ms.last(t)
	if got := strings.Join(l.Keys(), ","); got != "cmd,data,id,clear,tok" {
		t.Errorf("_mine keys %s", got)
	}
	d := l.Map("data")
	if got := strings.Join(d.Keys(), ","); got != "test.echo,pingalias,kwalias,acl" {
		t.Errorf("mine data keys %s (%s)", got, jsonText(d))
	}
	if d.Str("test.echo") != "hello" || d.Str("kwalias") != "kw" || !d.Bool("pingalias") {
		t.Errorf("mine data %s", jsonText(d))
	}
	if acl := d.Map("acl"); strings.Join(acl.Keys(), ",") != "__data__,__saltmine_acl__,allow_tgt,allow_tgt_type" {
		t.Errorf("acl wrapper %s", jsonText(acl))
	}

	// mine_functions given as a list updates only those, with clear.
	run("mine.update", payload.NewMap("__kwarg__", true, "clear", true, "mine_functions", []any{"test.ping"}))
	if l = ms.last(t); !l.Bool("clear") || strings.Join(l.Map("data").Keys(), ",") != "test.ping" {
		t.Errorf("update list: %s", jsonText(l))
	}
	if res := run("mine.send", "eth0_ip", payload.NewMap("__kwarg__", true, "mine_function", "test.echo", "text", "x")); res.Return != true {
		t.Errorf("mine.send: %+v", res)
	}
	if l = ms.last(t); l.Map("data").Str("eth0_ip") != "x" {
		t.Errorf("mine.send load %s", jsonText(l))
	}
	if res := run("mine.send", "nosuch.fun"); res.Return != false {
		t.Errorf("mine.send missing: %+v", res)
	}
	res := run("mine.get", "*", "network.ip_addrs", payload.NewMap("__kwarg__", true, "exclude_minion", true))
	if m, ok := res.Return.(*payload.Map); !ok || m.Has("m1") || !m.Has("m2") {
		t.Errorf("mine.get: %+v", res)
	}
	if l = ms.last(t); strings.Join(l.Keys(), ",") != "cmd,id,tgt,fun,tgt_type,tok" || l.Str("tgt_type") != "glob" {
		t.Errorf("_mine_get %s", jsonText(l))
	}
	run("mine.delete", "test.ping")
	if l = ms.last(t); strings.Join(l.Keys(), ",") != "cmd,id,fun,tok" || l.Str("cmd") != "_mine_delete" {
		t.Errorf("_mine_delete %s", jsonText(l))
	}
	run("mine.flush")
	if l = ms.last(t); strings.Join(l.Keys(), ",") != "cmd,id,tok" || l.Str("cmd") != "_mine_flush" {
		t.Errorf("_mine_flush %s", jsonText(l))
	}
	// No mine_functions: nothing to do (None).
	env.Opts = payload.NewMap("file_client", "remote")
	n := len(ms.loads)
	if res := run("mine.update"); res.Return != nil || len(ms.loads) != n {
		t.Errorf("update without functions: %+v", res)
	}
}

func TestMineLocal(t *testing.T) {
	r := registry(t)
	env := &modules.Env{ID: "m1", Registry: r, Grains: payload.NewMap("os", "Debian"),
		Opts: payload.NewMap("file_client", "local", "cachedir", t.TempDir())}
	run := func(fun string, args ...any) any {
		return r.Execute(context.Background(), modules.Binder{}, env, fun, args, nil).Return
	}
	if got := run("mine.send", "test.echo", "hi"); got != true {
		t.Fatalf("local send %v", got)
	}
	run("mine.send", "test.ping")
	if got := run("mine.get", "m1", "test.echo").(*payload.Map); got.Str("m1") != "hi" {
		t.Errorf("local get %s", jsonText(got))
	}
	if got := run("mine.get", "os:Debian", "test.echo,test.ping", "grain").(*payload.Map); got.Map("test.echo").Str("m1") != "hi" || !got.Map("test.ping").Bool("m1") {
		t.Errorf("local get two %s", jsonText(got))
	}
	if got := run("mine.get", "other", "test.echo").(*payload.Map); got.Len() != 0 {
		t.Errorf("local get other %s", jsonText(got))
	}
	run("mine.delete", "test.echo")
	if got := run("mine.get", "m1", "test.echo").(*payload.Map); got.Len() != 0 {
		t.Errorf("after delete %s", jsonText(got))
	}
	run("mine.flush")
	if got := run("mine.get", "m1", "test.ping").(*payload.Map); got.Len() != 0 {
		t.Errorf("after flush %s", jsonText(got))
	}
}

func TestMineValid(t *testing.T) {
	tests := []struct {
		name string
		conf any
		want string
	}{
		{"none", nil, `null`},
		{"plain and alias", payload.NewMap(
			"network.ip_addrs", []any{"eth0"},
			"ips", payload.NewMap("mine_function", "network.ip_addrs", "cidr", "10.0.0.0/8"),
			"listed", []any{payload.NewMap("mine_function", "test.echo"), "hi"},
			"nope.nothing", []any{},
		), `{"network.ip_addrs":["eth0"],"ips":{"network.ip_addrs":[{"cidr":"10.0.0.0/8"}]},"listed":{"test.echo":["hi"]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := registry(t)
			opts := payload.NewMap("file_client", "local")
			if tt.conf != nil {
				opts.Set("mine_functions", tt.conf)
			}
			env := &modules.Env{ID: "m1", Registry: r, Opts: opts}
			res := r.Execute(context.Background(), modules.Binder{}, env, "mine.valid", nil, nil)
			b, err := json.Marshal(res.Return)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Fatalf("got %s\nwant %s", b, tt.want)
			}
		})
	}
}

package builtin

import (
	"context"
	"os"
	"sort"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// MasterChannel is the minion's authenticated request channel to its
// master, registered in modules.Env.Services under "master". The event, mine,
// pillar and cp modules send their AES requests (_minion_event, _mine,
// _mine_get, _file_list, _serve_file, ...) through it.
type MasterChannel interface {
	// SendMaster sends load as an AES request and returns the decoded
	// reply. When load has a "tok" key its value is replaced by the
	// minion's request token (SALT-WIRE §3.4), keeping the key's position.
	SendMaster(ctx context.Context, load *payload.Map) (any, error)
}

// EventBus is the minion's local event bus, registered under "events".
// Fire publishes one event and reports whether it was delivered, like
// Salt's SaltEvent.fire_event. The minion also reacts to its own control
// tags (pillar_refresh, module_refresh, ...) fired this way.
type EventBus interface {
	Fire(ctx context.Context, tag string, data any) bool
}

// masterServiceName and eventsServiceName are the Env.Services keys of the
// MasterChannel and EventBus.
const (
	masterServiceName = "master"
	eventsServiceName = "events"
)

// eventFunctions is Salt's event module (salt/modules/event.py).
func eventFunctions() []modules.Function {
	return []modules.Function{
		{Name: "event.fire_master", Spec: modules.Spec{Params: []modules.Param{req("data"), req("tag"), opt("preload", nil)}},
			Doc: "Fire an event off up to the master server\n\nCLI Example:\n\n    salt '*' event.fire_master '{\"data\":\"my event data\"}' 'tag'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return eventFireMaster(ctx, c, c.Args.Get("data"), c.Args.Str("tag"), c.Args.Get("preload")), nil
			}},
		{Name: "event.fire", Spec: modules.Spec{Params: []modules.Param{req("data"), req("tag")}},
			Doc: "Fire an event on the local minion event bus. Data must be formed as a dict.\n\nCLI Example:\n\n    salt '*' event.fire '{\"data\":\"my event data\"}' 'tag'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return eventFire(ctx, c, c.Args.Get("data"), c.Args.Str("tag")), nil
			}},
		{Name: "event.send", Spec: modules.Spec{Params: []modules.Param{req("tag"), opt("data", nil), opt("preload", nil), opt("with_env", false),
			opt("with_grains", false), opt("with_pillar", false), opt("with_env_opts", false)}, Kwargs: true},
			Doc: eventSendDoc, Fn: eventSend},
	}
}

const eventSendDoc = "Send an event to the Salt Master\n\n" +
	":param tag: A tag to give the event.\n:param data: A dictionary of data to send in the event.\n" +
	":param with_env: Include environment variables from the current shell environment in the event data as ``environ``.\n" +
	":param with_grains: Include grains from the current minion in the event data as ``grains``.\n" +
	":param with_pillar: Include Pillar values from the current minion in the event data as ``pillar``.\n" +
	":param with_env_opts: Include ``saltenv`` and ``pillarenv`` set on minion at the moment when event is send into event data.\n" +
	":param kwargs: Any additional keyword arguments passed to this function will be interpreted as key-value pairs and included in the event data.\n\n" +
	"CLI Example:\n\n    salt-call event.send myco/mytag foo=Foo bar=Bar\n    salt-call event.send 'myco/mytag' '{foo: Foo, bar: Bar}'"

// optGet reads a minion option from the call's environment.
func optGet(c *modules.Call, key string) (any, bool) {
	if c.Env == nil || c.Env.Opts == nil {
		return nil, false
	}
	return c.Env.Opts.Get(key)
}

// optStr reads a minion option as text ("" when missing or None).
func optStr(c *modules.Call, key string) string {
	v, _ := optGet(c, key)
	return payload.Text(v)
}

// isLocalMode is Salt's test for masterless operation: opts local, or
// file_client local (or master_type disable when withDisable), unless
// use_master_when_local.
func isLocalMode(c *modules.Call, withDisable bool) bool {
	if v, _ := optGet(c, "use_master_when_local"); payload.Truthy(v) {
		return false
	}
	v, _ := optGet(c, "local")
	if payload.Truthy(v) || optStr(c, "file_client") == "local" {
		return true
	}
	return withDisable && optStr(c, "master_type") == "disable"
}

func eventSend(ctx context.Context, c *modules.Call) (any, error) {
	a := c.Args
	data := &payload.Map{}
	if w := a.Get("with_env"); payload.Truthy(w) {
		env := &payload.Map{}
		names, isList := w.([]any)
		want := map[string]bool{}
		for _, n := range names {
			want[payload.Text(n)] = true
		}
		vars := os.Environ()
		sort.Strings(vars)
		for _, kv := range vars {
			for i := 0; i < len(kv); i++ {
				if kv[i] == '=' {
					if !isList || want[kv[:i]] {
						env.Set(kv[:i], kv[i+1:])
					}
					break
				}
			}
		}
		data.Set("environ", env)
	}
	if w := a.Get("with_grains"); payload.Truthy(w) {
		data.Set("grains", eventSubset(w, c.Env.Grains))
	}
	if w := a.Get("with_pillar"); payload.Truthy(w) {
		data.Set("pillar", eventSubset(w, c.Env.Pillar))
	}
	if payload.Truthy(a.Get("with_env_opts")) {
		saltenv, ok := optGet(c, "saltenv")
		if !ok {
			saltenv = "base"
		}
		pillarenv, _ := optGet(c, "pillarenv")
		data.Set("saltenv", saltenv).Set("pillarenv", pillarenv)
	}
	if a.Kwargs != nil {
		for _, it := range a.Kwargs.Items() {
			data.SetKey(it.Key, it.Value)
		}
	}
	if m, ok := a.Get("data").(*payload.Map); ok {
		for _, it := range m.Items() {
			data.SetKey(it.Key, it.Value)
		}
	}
	tag := a.Str("tag")
	if isLocalMode(c, true) {
		return eventFire(ctx, c, data, tag), nil
	}
	return eventFireMaster(ctx, c, data, tag, a.Get("preload")), nil
}

// eventSubset is with_grains/with_pillar: everything when w is not a list,
// else only the listed top-level keys.
func eventSubset(w any, src *payload.Map) *payload.Map {
	out := &payload.Map{}
	if src == nil {
		return out
	}
	names, isList := w.([]any)
	if !isList {
		return src.Clone()
	}
	want := map[string]bool{}
	for _, n := range names {
		want[payload.KeyString(n)] = true
	}
	for _, it := range src.Items() {
		if want[payload.KeyString(it.Key)] {
			out.SetKey(it.Key, it.Value)
		}
	}
	return out
}

// eventFireMaster sends an event to the master bus with a _minion_event
// request. A call with preload (or from gsalt-call) sends the load the way
// salt-call does ({id, tag, data, tok, cmd} plus the preload keys); a job on
// the minion daemon sends what the minion's _fire_master sends.
func eventFireMaster(ctx context.Context, c *modules.Call, data any, tag string, preload any) bool {
	if isLocalMode(c, false) {
		c.Log().Warn("Local mode detected. Event will NOT be sent.", "tag", tag)
		return false
	}
	ch, ok := modules.Service[MasterChannel](c.Env, masterServiceName)
	if !ok {
		c.Log().Warn("event.fire_master: no master connection", "tag", tag)
		return false
	}
	var load *payload.Map
	pm, hasPreload := preload.(*payload.Map)
	if hasPreload || optStr(c, "__cli") == "salt-call" {
		load = payload.NewMap("id", c.Env.ID, "tag", tag, "data", data, "tok", nil, "cmd", "_minion_event")
		if hasPreload {
			for _, it := range pm.Items() {
				load.SetKey(it.Key, it.Value)
			}
		}
	} else {
		if data == nil || !payload.Truthy(data) {
			data = &payload.Map{}
		}
		load = payload.NewMap("id", c.Env.ID, "cmd", "_minion_event", "pretag", nil, "tok", nil, "data", data, "tag", tag)
	}
	if _, err := ch.SendMaster(ctx, load); err != nil {
		c.Log().Info("fire_master failed", "tag", tag, "err", err)
		return false
	}
	return true
}

// eventFire fires on the local minion bus.
func eventFire(ctx context.Context, c *modules.Call, data any, tag string) bool {
	bus, ok := modules.Service[EventBus](c.Env, eventsServiceName)
	if !ok {
		return false
	}
	return bus.Fire(ctx, tag, data)
}

package master

import (
	"context"
	"os/user"
	"strings"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/master/wheel"
	"github.com/gsalt/gsalt/wire/payload"
)

var _ wheel.Env = (*wheelEnv)(nil)

// wheelEnv is the master as wheel functions see it.
type wheelEnv struct{ m *Master }

func (e *wheelEnv) Keys() *keys.Store { return e.m.keys }

func (e *wheelEnv) Opt(key string) (any, bool) { return e.m.cfg.Opts.Get(key) }

// stamp sets data's _stamp to now (in place, as Salt's fire_event does, so
// the map returned to the client carries the stamp of its last event).
func stamp(data *payload.Map) {
	data.Set(event.StampKey, event.Stamp(time.Now()))
}

// RunWheel runs a wheel function synchronously the way Salt's
// WheelClient.low does when given "arg" and "kwarg" (the reactor's way):
// it fires salt/wheel/<jid>/new with {fun: "wheel.<fun>", jid, user,
// fun_args}, runs the function, stores the return in the job cache under
// the master's id and fires salt/wheel/<jid>/ret with the return and
// success added. It returns that ret data (with its _stamp). An unknown
// function fires no new event, as in Salt.
func (m *Master) RunWheel(ctx context.Context, fun string, args []any, kwargs *payload.Map, user string) *payload.Map {
	return m.wheelLow(ctx, fun, wheel.Request{Args: args, Kwargs: kwargs}, user)
}

// wheelLow is SyncClientMixin.low for the wheel client.
func (m *Master) wheelLow(ctx context.Context, fun string, req wheel.Request, user string) *payload.Map {
	jid := m.jobs.NewJID()
	tag := event.Tagify(jid, "wheel")
	data := payload.NewMap("fun", "wheel."+fun, "jid", jid, "user", user)
	call := &wheel.Call{Env: &wheelEnv{m: m}, JID: jid, User: user, Log: m.log.With("wheel", fun, "jid", jid)}
	res := wheel.Default().Run(ctx, fun, req, call, func(funArgs []any) {
		data.Set("fun_args", funArgs)
		stamp(data)
		m.fire(tag+"/new", data.Clone())
	})
	data.Set("return", res.Return)
	data.Set("success", res.Success)
	if m.cfg.JobCache {
		if err := m.jobs.SaveReturn(jid, m.cfg.ID, payload.NewMap("return", data.Clone())); err != nil {
			m.log.Error("cannot store a wheel return", "jid", jid, "err", err)
		}
	}
	stamp(data)
	m.fire(tag+"/ret", data.Clone())
	m.log.Info("wheel function completed", "fun", fun, "jid", jid, "success", res.Success)
	return data
}

// processUser is salt.utils.user.get_user: the user the master runs as.
func (m *Master) processUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return m.cfg.User
}

// clearWheel answers the clear wheel command like Salt's ClearFuncs.wheel:
// the client key, token or eauth credentials are checked (eauth and
// tokens against the @wheel ACL), then the
// function runs synchronously under a jid of the command's own, whose
// salt/wheel/<jid>/new and /ret events carry {fun, jid, tag, user}; the
// function itself runs as WheelClient.low with the rest of the load (and
// fires its own new/ret events under a second jid, as Salt's does). The
// reply is {"tag": tag, "data": {fun, jid, tag, user, _stamp, return,
// success}}.
func (m *Master) clearWheel(ctx context.Context, load *payload.Map) any {
	var username string
	if load.Has("token") || load.Has("eauth") {
		refusal, u := m.specAuth(load, "wheel")
		if refusal != nil {
			return refusal
		}
		username = u
	} else {
		keyV, _ := load.Delete("key")
		if _, _, ok := m.userACL(keyV); !ok {
			m.log.Warn("clear wheel refused: authentication error", "user", load.Str("user"))
			return payload.NewMap("error", payload.NewMap("name", "UserAuthenticationError",
				"message", "Authentication failure of type \"user\" occurred"))
		}
		username = m.processUser()
		if v, ok := load.Get("user"); ok {
			username = payload.Text(v)
			if strings.HasPrefix(username, "sudo_") {
				username = m.cfg.User
			}
		}
	}
	funV, _ := load.Delete("fun")
	fun, ok := funV.(string)
	if !ok || fun == "" {
		return payload.NewMap("error", payload.NewMap("name", "SaltInvocationError", "message", "No wheel function given"))
	}
	jid := m.jobs.NewJID()
	tag := event.Tagify(jid, "wheel")
	data := payload.NewMap("fun", "wheel."+fun, "jid", jid, "tag", tag, "user", username)
	stamp(data)
	m.fire(tag+"/new", data.Clone())
	innerUser := "UNKNOWN"
	if v, ok := load.Get("__user__"); ok {
		innerUser = payload.Text(v)
	}
	ret := m.wheelLow(ctx, fun, wheel.Request{Low: load}, innerUser)
	data.Set("return", mustGet(ret, "return"))
	data.Set("success", mustGet(ret, "success"))
	stamp(data)
	m.fire(tag+"/ret", data.Clone())
	return payload.NewMap("tag", tag, "data", data)
}

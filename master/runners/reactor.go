package runners

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// EventRequestEnv is what the reactor runners need: Salt's reactor runner
// talks to the running reactor through events on the master bus.
type EventRequestEnv interface {
	// RequestEvent fires data under tag and returns the data of the first
	// event tagged reply within timeout (nil when none came).
	RequestEvent(ctx context.Context, tag string, data *payload.Map, reply string, timeout time.Duration) (*payload.Map, error)
	// MasterKey is the root user's client key, which the reactor checks
	// on manage requests (salt.utils.master.get_master_key("root")).
	MasterKey() string
}

// ErrNoReactor is Salt's "Reactor system is not running." error.
var ErrNoReactor = errors.New("Reactor system is not running.")

// reactorWait is how long Salt's reactor runner waits for the answer.
const reactorWait = 30 * time.Second

// reactorRunners is Salt's reactor runner (salt/runners/reactor.py).
func reactorRunners() []Runner {
	env := []Param{{Name: "saltenv", Default: "base"}, {Name: "test"}}
	return []Runner{
		{Name: "reactor.list", Params: env, Fn: func(ctx context.Context, c *Call) (any, error) {
			res, err := reactorRequest(ctx, c, "list", payload.NewMap(), "list-results")
			if err != nil || res == nil {
				return nil, err
			}
			v, _ := res.Get("reactors")
			return v, nil
		}, Doc: "List currently configured reactors\n\nCLI Example:\n\n    salt-run reactor.list"},
		{Name: "reactor.add", Params: append([]Param{{Name: "event", Required: true}, {Name: "reactors", Required: true}}, env...),
			Fn: func(ctx context.Context, c *Call) (any, error) {
				reactors := c.Args["reactors"]
				if s, ok := reactors.(string); ok {
					reactors = []any{s}
				}
				return reactorResult(reactorRequest(ctx, c, "add", payload.NewMap("event", c.Args["event"], "reactors", reactors), "add-complete"))
			}, Doc: "Add a new reactor\n\nCLI Example:\n\n    salt-run reactor.add 'salt/cloud/*/destroyed' reactors='/srv/reactor/destroy/*.sls'"},
		{Name: "reactor.delete", Params: append([]Param{{Name: "event", Required: true}}, env...),
			Fn: func(ctx context.Context, c *Call) (any, error) {
				return reactorResult(reactorRequest(ctx, c, "delete", payload.NewMap("event", c.Args["event"]), "delete-complete"))
			}, Doc: "Delete a reactor\n\nCLI Example:\n\n    salt-run reactor.delete 'salt/cloud/*/destroyed'"},
		{Name: "reactor.is_leader", Fn: func(ctx context.Context, c *Call) (any, error) {
			return reactorResult(reactorRequest(ctx, c, "is_leader", payload.NewMap(), "leader/value"))
		}, Doc: "Return whether the running reactor is acting as a leader (responding to events).\n\nCLI Example:\n\n    salt-run reactor.is_leader"},
		{Name: "reactor.set_leader", Params: []Param{{Name: "value", Default: true}},
			Fn: func(ctx context.Context, c *Call) (any, error) {
				id, _ := c.Env.Opt("id")
				return reactorResult(reactorRequest(ctx, c, "set_leader", payload.NewMap("id", id, "value", c.Args["value"]), "leader/value"))
			}, Doc: "Set the current reactor to act as a leader (responding to events). Defaults to True\n\nCLI Example:\n\n    salt-run reactor.set_leader True"},
	}
}

// reactorRequest fires salt/run/<jid>/salt/reactors/manage/<verb> with the
// root key and waits for salt/reactors/manage/<reply>.
func reactorRequest(ctx context.Context, c *Call, verb string, data *payload.Map, reply string) (*payload.Map, error) {
	if !reactorRunning(c.Env) {
		return nil, fmt.Errorf("%w", ErrNoReactor)
	}
	re, ok := c.Env.(EventRequestEnv)
	if !ok {
		return nil, ErrNoEvents
	}
	data.Set("key", re.MasterKey())
	tag := "salt/reactors/manage/" + verb
	if c.JID != "" {
		tag = "salt/run/" + c.JID + "/" + tag
	}
	return re.RequestEvent(ctx, tag, data, "salt/reactors/manage/"+reply, reactorWait)
}

func reactorResult(res *payload.Map, err error) (any, error) {
	if err != nil || res == nil {
		return nil, err
	}
	v, _ := res.Get("result")
	return v, nil
}

// reactorRunning is _reactor_system_available: a reactor engine or a
// non-empty reactor option.
func reactorRunning(env Env) bool {
	if engines, ok := env.Opt("engines"); ok && payload.Truthy(payload.FromGo(engines)) {
		for _, e := range asList(payload.FromGo(engines)) {
			switch x := e.(type) {
			case string:
				if x == "reactor" {
					return true
				}
			case *payload.Map:
				if x.Has("reactor") {
					return true
				}
			}
		}
		return false
	}
	v, ok := env.Opt("reactor")
	return ok && payload.Truthy(payload.FromGo(v))
}

func asList(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case *payload.Map:
		out := make([]any, 0, x.Len())
		for _, k := range x.Keys() {
			out = append(out, k)
		}
		return out
	}
	return nil
}

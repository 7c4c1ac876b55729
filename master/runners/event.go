package runners

import (
	"context"
	"errors"
	"fmt"

	"github.com/gsalt/gsalt/wire/payload"
)

// EventEnv is the part of the master the event runner needs besides Env:
// firing an event on the master event bus.
type EventEnv interface {
	// FireEvent publishes data under tag on the master bus.
	FireEvent(tag string, data *payload.Map) error
}

// ErrNoEvents is returned when the master offers no event bus.
var ErrNoEvents = errors.New("runners: the master has no event bus")

// eventRunners is Salt's event runner (salt/runners/event.py).
func eventRunners() []Runner {
	return []Runner{
		{Name: "event.send", Fn: eventSend, Params: []Param{{Name: "tag", Required: true}, {Name: "data"}},
			Doc: "Send an event with the given tag and data on the master event bus. The tag is not\nnamespaced.\n\nCLI Example:\n\n    salt-run event.send my/custom/event '{\"foo\": \"bar\"}'"},
	}
}

// eventSend is event.send: it fires data (an empty dict when unset) under
// tag as given and returns True once the event is on the bus.
func eventSend(_ context.Context, c *Call) (any, error) {
	ee, ok := c.Env.(EventEnv)
	if !ok {
		return nil, ErrNoEvents
	}
	tag := payload.Text(c.Args["tag"])
	if tag == "" {
		return nil, fmt.Errorf("%w: Empty tag.", ErrArguments)
	}
	var data *payload.Map
	switch d := c.Args["data"].(type) {
	case *payload.Map:
		data = d.Clone()
	default:
		if payload.Truthy(d) {
			return nil, fmt.Errorf("%w: Dict object expected, not '%s'.", ErrArguments, payload.Text(d))
		}
		data = payload.NewMap()
	}
	if err := ee.FireEvent(tag, data); err != nil {
		c.Log.Warn("event.send: cannot fire the event", "tag", tag, "err", err)
		return false, nil
	}
	return true, nil
}

// Package beacons is gsalt's minion-side beacon system, the counterpart of
// Salt 3006's salt/beacons/__init__.py (the Beacon class the minion runs
// every loop_interval) and of the manage_beacons handlers that the
// beacons.* execution functions talk to.
//
// A Manager holds the minion's own "beacons" option (changed at run time by
// beacons.add, beacons.modify, ...), merges it with the pillar's the way
// Salt's config.merge does, and on each Process call runs every configured
// beacon whose interval is due. Beacon modules are plugged in as Module
// values (gsalt's are in beacons/builtin); each configured beacon gets its
// own Beacon instance holding what Salt keeps in __context__ and module
// globals.
//
// Events come out as Salt's Beacon.process returns them: tag
// salt/beacon/<minion id>/<beacon name>/<suffix>, data with the "id" key
// added, and the beacon_name; EventsLoad builds the batched _minion_event
// load the minion sends them to the master in.
package beacons

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// Sentinel errors beacons and callers branch on.
var (
	// ErrNotAvailable is returned by a Caller for a function it does not
	// have (Salt's KeyError on __salt__).
	ErrNotAvailable = errors.New("beacons: function not available")
	// ErrExecution marks a function's CommandExecutionError, which some
	// beacons (status) tolerate.
	ErrExecution = errors.New("beacons: command execution error")
	// ErrBadConfig marks a manage request the manager cannot apply (the
	// cases where Salt's minion raises and sends no completion event).
	ErrBadConfig = errors.New("beacons: bad beacon configuration")
)

// Caller runs the minion's execution functions for the beacons that use
// __salt__ (service, status). Errors should wrap ErrNotAvailable or
// ErrExecution where they apply; RegistryCaller adapts a modules.Registry.
type Caller interface {
	Call(ctx context.Context, fun string, args ...any) (any, error)
}

// Env is what a beacon instance is created with.
type Env struct {
	// ID is the minion id.
	ID string
	// Caller runs execution functions (nil when there is none: beacons
	// that need it then fail with ErrNotAvailable).
	Caller Caller
	// Log is the beacon's logger (never nil).
	Log *slog.Logger
}

// Call runs fun through the Env's Caller, or fails with ErrNotAvailable.
func (e *Env) Call(ctx context.Context, fun string, args ...any) (any, error) {
	if e == nil || e.Caller == nil {
		return nil, ErrNotAvailable
	}
	return e.Caller.Call(ctx, fun, args...)
}

// Request is one run of a beacon.
type Request struct {
	// Config is the beacon's configuration as Salt passes it to
	// beacon(config): normally a list of one-key maps ([]any of
	// *payload.Map), with the interval and disable_during_state_run items
	// removed; the old dict form arrives as a *payload.Map.
	Config any
	// Now is the time of this beacon loop.
	Now time.Time
	// Grains are the minion's grains (may be nil).
	Grains *payload.Map
}

// Beacon is the running state of one configured beacon.
type Beacon interface {
	// Beacon runs one check and returns the event data it produces, in
	// order. A "tag" key in a map is the tag suffix (removed from the data
	// by the Manager). An error becomes Salt's beacon error event.
	Beacon(ctx context.Context, req *Request) ([]*payload.Map, error)
}

// Closer is implemented by beacons holding resources (Salt's close()),
// called when disable_during_state_run pauses them during a state run and
// when the beacon is removed or the Manager closes. A closed beacon must
// be usable again: its next Beacon call starts afresh.
type Closer interface {
	Close() error
}

// Module is one beacon module (salt/beacons/<name>.py).
type Module struct {
	// Name is the module's name ("inotify", "load", ...).
	Name string
	// Validate is the module's validate(config): the configuration is
	// valid, or the comment says why not. nil means the basic check Salt
	// applies when a module has none (the configuration must be a list).
	Validate func(config any) (bool, string)
	// New creates the state of one configured beacon.
	New func(env *Env) Beacon
}

// Event is one beacon event, as Beacon.process returns it.
type Event struct {
	// Tag is salt/beacon/<id>/<name>/<suffix>.
	Tag string
	// Data is the event data, "id" included; empty for an error event.
	Data *payload.Map
	// BeaconName is the beacon module's name (beacon_module, or the
	// configured name).
	BeaconName string
	// Error is set for an error event (the beacon failed).
	Error string
}

// Map returns the event as an element of the events list of a
// _minion_event load: {tag, data, beacon_name}, or {tag, error, data,
// beacon_name} for an error event, in Salt's key order.
func (e Event) Map() *payload.Map {
	data := e.Data
	if data == nil {
		data = &payload.Map{}
	}
	m := payload.NewMap("tag", e.Tag)
	if e.Error != "" {
		m.Set("error", e.Error)
	}
	m.Set("data", data)
	m.Set("beacon_name", e.BeaconName)
	return m
}

// EventsLoad builds the load Salt's minion sends beacon events to the
// master with (Minion._fire_master(events=...)): {id, cmd: _minion_event,
// pretag: None, tok, events}. tok is nil here; the minion's request path
// fills in its token. It returns nil for no events (Salt sends nothing).
func EventsLoad(id string, events []Event) *payload.Map {
	if len(events) == 0 {
		return nil
	}
	list := make([]any, len(events))
	for i, e := range events {
		list[i] = e.Map()
	}
	return payload.NewMap("id", id, "cmd", "_minion_event", "pretag", nil, "tok", nil, "events", list)
}

// IsStateFunction reports whether a running job's function counts as a
// state run for disable_during_state_run (Salt: re.match("state.*", fun)).
func IsStateFunction(fun string) bool {
	return len(fun) >= 5 && fun[:5] == "state"
}

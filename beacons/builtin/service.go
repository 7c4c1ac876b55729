package builtin

import (
	"context"
	"fmt"
	"math"
	"os"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/wire/payload"
)

// Service is the service beacon (salt/beacons/service.py): for each
// configured service it calls service.status through the Env's Caller and
// emits {<service>: {"running": ...}, "service_name": <service>} with the
// service name as tag suffix. Per service: onchangeonly (only on a change
// of the running state), emitatstartup (default True), delay (seconds to
// wait after a change before emitting, with onchangeonly) and
// uncleanshutdown (a pid file: when the service is not running,
// "uncleanshutdown" tells whether the file exists).
func Service() beacons.Module {
	return beacons.Module{
		Name:     "service",
		Validate: validateService,
		New: func(env *beacons.Env) beacons.Beacon {
			return &serviceBeacon{env: env, last: map[string]*serviceStatus{}}
		},
	}
}

func validateService(config any) (bool, string) {
	if !isList(config) {
		return false, "Configuration for service beacon must be a list."
	}
	cfg := beacons.ListToDict(config)
	sv, ok := cfg.Get("services")
	if !ok {
		return false, "Configuration for service beacon requires services."
	}
	services, ok := sv.(*payload.Map)
	if !ok {
		return false, "Services configuration item for service beacon must be a dictionary."
	}
	for _, it := range services.Items() {
		if !isMap(it.Value) {
			return false, "Configuration for service beacon must be a list of dictionaries."
		}
	}
	return true, "Valid beacon configuration"
}

// serviceStatus is an entry of Salt's LAST_STATUS.
type serviceStatus struct {
	running any
	time    float64
	hasTime bool
}

type serviceBeacon struct {
	env  *beacons.Env
	last map[string]*serviceStatus
}

func (b *serviceBeacon) Beacon(ctx context.Context, req *beacons.Request) ([]*payload.Map, error) {
	cfg := beacons.ListToDict(req.Config)
	services, _ := cfg.Get("services")
	sm, _ := services.(*payload.Map)
	now := float64(req.Now.UnixNano()) / 1e9
	var ret []*payload.Map
	for _, it := range sm.Items() {
		name := payload.KeyString(it.Key)
		sc, _ := it.Value.(*payload.Map)
		if sc == nil {
			sc = &payload.Map{}
		}
		running, err := b.env.Call(ctx, "service.status", name)
		if err != nil {
			return nil, fmt.Errorf("service.status %s: %w", name, err)
		}
		status := payload.NewMap("running", running)
		if pid, ok := sc.Get("uncleanshutdown"); ok && !payload.Truthy(running) {
			_, statErr := os.Stat(payload.Text(pid))
			status.Set("uncleanshutdown", statErr == nil)
		}
		event := payload.NewMap(name, status, "service_name", name, "tag", name)
		emitAtStartup := true
		if v, ok := sc.Get("emitatstartup"); ok {
			emitAtStartup = payload.Truthy(v)
		}
		delay := 0.0
		if v, ok := sc.Get("delay"); ok {
			d, ok := beacons.Number(v)
			if !ok {
				return nil, fmt.Errorf("'>' not supported between instances of '%s' and 'int'", payload.TypeName(v))
			}
			delay = d
		}
		onChangeOnly, _ := sc.Get("onchangeonly")
		if onChangeOnly != true {
			ret = append(ret, event)
			continue
		}
		last, seen := b.last[name]
		if !seen {
			last = &serviceStatus{running: running}
			b.last[name] = last
			if !emitAtStartup {
				continue
			}
			if delay > 0 {
				last.time, last.hasTime = now, true
			} else {
				ret = append(ret, event)
			}
		}
		if !sameValue(last.running, running) {
			last = &serviceStatus{running: running}
			b.last[name] = last
			if delay > 0 {
				last.time, last.hasTime = now, true
			} else {
				ret = append(ret, event)
			}
		}
		if last.hasTime {
			// int(round(...)): Python rounds half to even.
			if elapsed := math.RoundToEven(now - last.time); elapsed > delay {
				last.hasTime = false
				ret = append(ret, event)
			}
		}
	}
	return ret, nil
}

// sameValue is Python == for the scalar results of service.status.
func sameValue(a, b any) bool {
	fa, okA := beacons.Number(a)
	fb, okB := beacons.Number(b)
	if _, isStr := a.(string); !isStr && okA {
		if _, isStr := b.(string); !isStr && okB {
			return fa == fb
		}
	}
	return fmt.Sprintf("%T:%v", a, a) == fmt.Sprintf("%T:%v", b, b)
}

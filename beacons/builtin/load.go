package builtin

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/wire/payload"
)

var loadKeys = []string{"1m", "5m", "15m"}

// Load is the load beacon (salt/beacons/load.py): it emits the 1, 5 and
// 15 minute load averages when one leaves its [low, high] range
// ("averages"), every time or, with onchangeonly, when it crosses a
// bound; emitatstartup (default True) makes the first onchangeonly run
// emit when out of range.
func Load(o Options) beacons.Module {
	return beacons.Module{
		Name:     "load",
		Validate: validateLoad,
		New:      func(*beacons.Env) beacons.Beacon { return &loadBeacon{opts: o} },
	}
}

func validateLoad(config any) (bool, string) {
	if !isList(config) {
		return false, "Configuration for load beacon must be a list."
	}
	cfg := beacons.ListToDict(config)
	if v, ok := cfg.Get("emitatstartup"); ok && !isBool(v) {
		return false, "Configuration for load beacon option emitatstartup must be a boolean."
	}
	if v, ok := cfg.Get("onchangeonly"); ok && !isBool(v) {
		return false, "Configuration for load beacon option onchangeonly must be a boolean."
	}
	av, ok := cfg.Get("averages")
	if !ok {
		return false, "Averages configuration is required for load beacon."
	}
	averages, _ := av.(*payload.Map)
	found := false
	for _, k := range loadKeys {
		if averages.Has(k) {
			found = true
		}
	}
	if !found {
		return false, "Averages configuration for load beacon must contain 1m, 5m or 15m items."
	}
	for _, k := range loadKeys {
		v, ok := averages.Get(k)
		if !ok {
			// Salt raises KeyError here; the beacon cannot run either way.
			return false, fmt.Sprintf("'%s'", k)
		}
		l, isList := v.([]any)
		if !isList {
			return false, "Averages configuration for load beacon: 1m, 5m and 15m items must be a list of two items."
		}
		if len(l) != 2 {
			return false, "Configuration for load beacon: 1m, 5m and 15m items must be a list of two items."
		}
	}
	return true, "Valid beacon configuration"
}

// loadBeacon keeps Salt's LAST_STATUS.
type loadBeacon struct {
	opts Options
	last map[string]float64
}

// readLoadavg is os.getloadavg(): the first three fields of loadavg.
func readLoadavg(path string) ([3]float64, error) {
	var out [3]float64
	b, err := os.ReadFile(path)
	if err != nil {
		return out, fmt.Errorf("Load averages are unobtainable: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return out, fmt.Errorf("Load averages are unobtainable: short %s", path)
	}
	for i := range 3 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return out, fmt.Errorf("Load averages are unobtainable: %w", err)
		}
		out[i] = v
	}
	return out, nil
}

func (b *loadBeacon) Beacon(_ context.Context, req *beacons.Request) ([]*payload.Map, error) {
	cfg := beacons.ListToDict(req.Config)
	emitAtStartup, onChangeOnly := true, false
	if v, ok := cfg.Get("emitatstartup"); ok {
		emitAtStartup = payload.Truthy(v)
	}
	if v, ok := cfg.Get("onchangeonly"); ok {
		onChangeOnly = payload.Truthy(v)
	}
	avgs, err := readLoadavg(b.opts.proc("loadavg"))
	if err != nil {
		return nil, err
	}
	cur := map[string]float64{"1m": avgs[0], "5m": avgs[1], "15m": avgs[2]}
	if onChangeOnly && len(b.last) == 0 {
		b.last = map[string]float64{"1m": avgs[0], "5m": avgs[1], "15m": avgs[2]}
		if !emitAtStartup {
			return nil, nil
		}
	}
	averages := cfg.Map("averages")
	send := false
	for _, k := range loadKeys {
		v, ok := averages.Get(k)
		if !ok {
			continue
		}
		lo, hi, err := loadBounds(v)
		if err != nil {
			return nil, err
		}
		if onChangeOnly {
			if cur[k] > hi && b.last[k] < hi {
				send = true
				break
			}
			if cur[k] < lo && b.last[k] > lo {
				send = true
				break
			}
		} else if cur[k] < lo || cur[k] > hi {
			send = true
			break
		}
	}
	if onChangeOnly {
		b.last = cur
	}
	if !send {
		return nil, nil
	}
	return []*payload.Map{payload.NewMap("1m", avgs[0], "5m", avgs[1], "15m", avgs[2])}, nil
}

// loadBounds reads a [low, high] pair as Python's float() does.
func loadBounds(v any) (float64, float64, error) {
	l, ok := v.([]any)
	if !ok || len(l) < 2 {
		return 0, 0, fmt.Errorf("list index out of range")
	}
	lo, ok1 := beacons.Number(l[0])
	hi, ok2 := beacons.Number(l[1])
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("could not convert string to float: %v", l)
	}
	return lo, hi, nil
}

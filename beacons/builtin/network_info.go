package builtin

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/wire/payload"
)

// netAttrs are psutil's snetio fields, in the order Salt reports them.
var netAttrs = []string{"bytes_sent", "bytes_recv", "packets_sent", "packets_recv", "errin", "errout", "dropin", "dropout"}

// NetworkInfo is the network_info beacon (salt/beacons/network_info.py):
// for each configured interface it compares the counters of
// <proc>/net/dev (psutil's net_io_counters(pernic=True)) with the
// configured values and emits {"interface": name, "network_info":
// {counters}} when one matches. "type" is "equal" (the default: any other
// value also compares for equality, as in Salt, which has no "less") or
// "greater".
func NetworkInfo(o Options) beacons.Module {
	return beacons.Module{
		Name:     "network_info",
		Validate: validateNetworkInfo,
		New:      func(*beacons.Env) beacons.Beacon { return &networkInfoBeacon{opts: o} },
	}
}

func validateNetworkInfo(config any) (bool, string) {
	if !isList(config) {
		return false, "Configuration for network_info beacon must be a list."
	}
	cfg := beacons.ListToDict(config)
	ifaces := cfg.Map("interfaces")
	for _, it := range ifaces.Items() {
		ic, ok := it.Value.(*payload.Map)
		if !ok {
			return false, "Configuration for network_info beacon must be a list of dictionaries."
		}
		valid := false
		for _, k := range ic.Keys() {
			if k == "type" || contains(netAttrs, k) {
				valid = true
			}
		}
		if !valid {
			return false, "Invalid configuration item in Beacon configuration."
		}
	}
	return true, "Valid beacon configuration"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type networkInfoBeacon struct {
	opts Options
}

// netCounters holds one interface's counters in netAttrs order.
type netCounters [8]int64

// readNetDev parses a /proc/net/dev file like psutil.
func readNetDev(path string) (map[string]netCounters, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	out := map[string]netCounters{}
	for i, line := range lines {
		if i < 2 || strings.TrimSpace(line) == "" {
			continue
		}
		colon := strings.LastIndexByte(line, ':')
		if colon <= 0 {
			return nil, fmt.Errorf("network_info: bad line %q in %s", line, path)
		}
		name := strings.TrimSpace(line[:colon])
		f := strings.Fields(line[colon+1:])
		if len(f) != 16 {
			return nil, fmt.Errorf("network_info: %d fields for %s in %s", len(f), name, path)
		}
		var n [16]int64
		for j := range f {
			v, err := strconv.ParseInt(f[j], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("network_info: %s: %w", path, err)
			}
			n[j] = v
		}
		// recv: bytes packets errs drop fifo frame compressed multicast;
		// sent: bytes packets errs drop ...
		out[name] = netCounters{n[8], n[0], n[9], n[1], n[2], n[10], n[3], n[11]}
	}
	return out, nil
}

// pyInt is Python's int() of a configured value.
func pyInt(v any) (int64, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case int64:
		return x, nil
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), nil
		}
	case *big.Int:
		if x.IsInt64() {
			return x.Int64(), nil
		}
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return int64(x), nil
		}
	case string:
		if n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(x), "_", ""), 10, 64); err == nil {
			return n, nil
		}
		return 0, fmt.Errorf("invalid literal for int() with base 10: '%s'", x)
	}
	return 0, fmt.Errorf("int() argument must be a string or a number, not '%s'", payload.TypeName(v))
}

func (b *networkInfoBeacon) Beacon(_ context.Context, req *beacons.Request) ([]*payload.Map, error) {
	cfg := beacons.ListToDict(req.Config)
	stats, err := readNetDev(b.opts.proc("net/dev"))
	if err != nil {
		return nil, err
	}
	var ret []*payload.Map
	for _, it := range cfg.Map("interfaces").Items() {
		name := payload.KeyString(it.Key)
		counters, ok := stats[name]
		if !ok {
			continue
		}
		ic, _ := it.Value.(*payload.Map)
		typ := ic.Str("type")
		diff := false
		for i, attr := range netAttrs {
			v, ok := ic.Get(attr)
			if !ok {
				continue
			}
			want, err := pyInt(v)
			if err != nil {
				return nil, err
			}
			if typ == "greater" {
				if counters[i] > want {
					diff = true
				}
			} else if counters[i] == want {
				diff = true
			}
		}
		if diff {
			info := &payload.Map{}
			for i, attr := range netAttrs {
				info.Set(attr, counters[i])
			}
			ret = append(ret, payload.NewMap("interface", name, "network_info", info))
		}
	}
	return ret, nil
}

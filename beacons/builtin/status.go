package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/wire/payload"
)

// Status is the status beacon (salt/beacons/status.py): every run it emits
// one event, tagged with the UTC time in ISO format, whose "data" holds the
// results of the configured status.<function> calls, whole ("all") or
// picked by key or list index. The default is loadavg, cpustats, meminfo,
// vmstats and time.
//
// Functions are called through the Env's Caller; when it has no
// status.<function>, loadavg, cpustats, meminfo, vmstats and time are
// computed here the way Salt's status module does on Linux (from the
// files under Options.ProcRoot, time in the minion's local zone). Any
// other missing function fails the beacon like Salt's KeyError.
func Status(o Options) beacons.Module {
	return beacons.Module{
		Name: "status",
		Validate: func(config any) (bool, string) {
			if !isList(config) {
				return false, "Configuration for status beacon must be a list."
			}
			return true, "Valid beacon configuration"
		},
		New: func(env *beacons.Env) beacons.Beacon { return &statusBeacon{opts: o, env: env} },
	}
}

type statusBeacon struct {
	opts Options
	env  *beacons.Env
}

// isoformat is datetime.isoformat() of a naive datetime.
func isoformat(t time.Time) string {
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

func (b *statusBeacon) Beacon(ctx context.Context, req *beacons.Request) ([]*payload.Map, error) {
	ctime := isoformat(req.Now.UTC())
	config := req.Config
	if !payload.Truthy(config) {
		config = []any{payload.NewMap(
			"loadavg", []any{"all"}, "cpustats", []any{"all"}, "meminfo", []any{"all"},
			"vmstats", []any{"all"}, "time", []any{"all"})}
	}
	entries, ok := config.([]any)
	if !ok {
		entries = []any{config}
	}
	ret := &payload.Map{}
	for _, e := range entries {
		entry, ok := e.(*payload.Map)
		if !ok {
			continue
		}
		for _, it := range entry.Items() {
			fn := payload.KeyString(it.Key)
			ret.SetKey(it.Key, &payload.Map{})
			data, err := b.call(ctx, fn, req.Now)
			if err != nil {
				if errors.Is(err, beacons.ErrExecution) {
					logOf(b.env).Debug("status beacon function failed", "func", fn, "err", err)
					continue
				}
				return nil, err
			}
			items, ok := it.Value.([]any)
			if !ok {
				items = []any{it.Value}
			}
			for _, item := range items {
				if item == "all" {
					ret.SetKey(it.Key, data)
					continue
				}
				cur, _ := ret.GetKey(it.Key)
				target, ok := cur.(*payload.Map)
				if !ok {
					return nil, fmt.Errorf("'%s' object does not support item assignment", payload.TypeName(cur))
				}
				v, err := pick(data, item)
				if errors.Is(err, errKey) {
					ret.SetKey(it.Key, "Status beacon is incorrectly configured: "+strings.TrimPrefix(err.Error(), errKey.Error()+": "))
					continue
				}
				if err != nil {
					return nil, err
				}
				target.SetKey(item, v)
			}
		}
	}
	return []*payload.Map{payload.NewMap("tag", ctime, "data", ret)}, nil
}

var errKey = errors.New("KeyError")

// pick is data[item], falling back to data[int(item)] on a TypeError, as
// the status beacon does. A missing key is errKey with Python's str() of
// the KeyError.
func pick(data, item any) (any, error) {
	switch d := data.(type) {
	case *payload.Map:
		if v, ok := d.GetKey(item); ok {
			return v, nil
		}
		return nil, fmt.Errorf("%w: %s", errKey, pyKeyRepr(item))
	case []any, string:
		idx, isInt := item.(int64)
		if !isInt {
			n, err := pyInt(item)
			if err != nil {
				return nil, err
			}
			idx = n
		}
		if l, ok := d.([]any); ok {
			if idx < 0 {
				idx += int64(len(l))
			}
			if idx < 0 || idx >= int64(len(l)) {
				return nil, errors.New("list index out of range")
			}
			return l[idx], nil
		}
		s := []rune(d.(string))
		if idx < 0 {
			idx += int64(len(s))
		}
		if idx < 0 || idx >= int64(len(s)) {
			return nil, errors.New("string index out of range")
		}
		return string(s[idx]), nil
	}
	return nil, fmt.Errorf("'%s' object is not subscriptable", payload.TypeName(data))
}

// pyKeyRepr is repr() of a dict key as KeyError prints it.
func pyKeyRepr(k any) string {
	if s, ok := k.(string); ok {
		return "'" + s + "'"
	}
	return payload.KeyString(k)
}

// call runs status.<fn> through the Caller, or the built-in equivalent.
func (b *statusBeacon) call(ctx context.Context, fn string, now time.Time) (any, error) {
	ret, err := b.env.Call(ctx, "status."+fn)
	if err == nil || !errors.Is(err, beacons.ErrNotAvailable) {
		return ret, err
	}
	switch fn {
	case "loadavg":
		avgs, err := readLoadavg(b.opts.proc("loadavg"))
		if err != nil {
			return nil, fmt.Errorf("%w: status.loadavag is not available on your platform", beacons.ErrExecution)
		}
		return payload.NewMap("1-min", avgs[0], "5-min", avgs[1], "15-min", avgs[2]), nil
	case "cpustats":
		return b.cpustats(), nil
	case "meminfo":
		return b.meminfo(), nil
	case "vmstats":
		return b.vmstats(), nil
	case "time":
		return pyStrftimeDefault(now.Local()), nil
	}
	return nil, fmt.Errorf("'status.%s'", fn)
}

// statusNumber is status._number: an int for digits, else a float, else
// the text.
func statusNumber(s string) any {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !strings.ContainsAny(s, "xXpP_") {
		return f
	}
	return s
}

// procLines returns the non-empty lines of a proc file split in fields,
// or nil when it cannot be read (Salt ignores the OSError).
func (b *statusBeacon) procLines(rel string) [][]string {
	data, err := os.ReadFile(b.opts.proc(rel))
	if err != nil {
		return nil
	}
	var out [][]string
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

func (b *statusBeacon) cpustats() *payload.Map {
	ret := &payload.Map{}
	for _, c := range b.procLines("stat") {
		switch {
		case c[0] == "cpu" && len(c) >= 9:
			ret.Set("cpu", payload.NewMap(
				"idle", statusNumber(c[4]), "iowait", statusNumber(c[5]), "irq", statusNumber(c[6]),
				"nice", statusNumber(c[2]), "softirq", statusNumber(c[7]), "steal", statusNumber(c[8]),
				"system", statusNumber(c[3]), "user", statusNumber(c[1])))
		case (c[0] == "intr" || c[0] == "softirq") && len(c) >= 2:
			list := make([]any, 0, len(c)-2)
			for _, x := range c[2:] {
				list = append(list, statusNumber(x))
			}
			key := "irqs"
			if c[0] == "softirq" {
				key = "softirqs"
			}
			ret.Set(c[0], payload.NewMap("total", statusNumber(c[1]), key, list))
		case len(c) >= 2:
			ret.Set(c[0], statusNumber(c[1]))
		}
	}
	return ret
}

func (b *statusBeacon) meminfo() *payload.Map {
	ret := &payload.Map{}
	for _, c := range b.procLines("meminfo") {
		if len(c) < 2 {
			continue
		}
		e := payload.NewMap("value", c[1])
		if len(c) > 2 {
			e.Set("unit", c[2])
		}
		ret.Set(strings.ReplaceAll(c[0], ":", ""), e)
	}
	return ret
}

func (b *statusBeacon) vmstats() *payload.Map {
	ret := &payload.Map{}
	for _, c := range b.procLines("vmstat") {
		if len(c) >= 2 {
			ret.Set(c[0], statusNumber(c[1]))
		}
	}
	return ret
}

// pyStrftimeDefault is strftime("%A, %d. %B %Y %I:%M%p") in the C locale,
// status.time's default format.
func pyStrftimeDefault(t time.Time) string {
	s := t.Format("Monday, 02. January 2006 03:04PM")
	if !utf8.ValidString(s) {
		return ""
	}
	return s
}

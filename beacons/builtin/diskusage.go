package builtin

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/wire/payload"
)

// DiskUsage is the diskusage beacon (salt/beacons/diskusage.py): each list
// item maps a mount point, or a regular expression matched from the start
// of the mount points ("$" appended when missing), to a usage threshold
// ("63%" or a number); it emits {"diskusage": percent, "mount": mount}
// for every mounted filesystem (all of <proc>/self/mounts, as psutil's
// disk_partitions(all=True)) at or above its threshold. The percentage is
// psutil's: used / (used + available to users), rounded to one decimal.
//
// The expressions are Go (RE2) regular expressions: Python-only syntax
// such as look-ahead ("^/(?!home).*$", from Salt's documentation) does not
// compile and makes the beacon fail with an error event, as an invalid
// expression does in Salt.
func DiskUsage(o Options) beacons.Module {
	return beacons.Module{
		Name: "diskusage",
		Validate: func(config any) (bool, string) {
			if !isList(config) {
				return false, "Configuration for diskusage beacon must be a list."
			}
			return true, "Valid beacon configuration"
		},
		New: func(env *beacons.Env) beacons.Beacon { return &diskUsageBeacon{opts: o, env: env} },
	}
}

type diskUsageBeacon struct {
	opts Options
	env  *beacons.Env
}

// readMounts returns the mount points of a mounts file in order, with
// getmntent's octal escapes decoded.
func readMounts(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		out = append(out, unescapeMount(fields[1]))
	}
	return out, sc.Err()
}

// unescapeMount decodes the \ooo escapes of a mounts file field.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// usagePercent is psutil's disk_usage(path).percent.
func usagePercent(st DiskStat) float64 {
	total := st.Blocks * st.Frsize
	availRoot := st.Bfree * st.Frsize
	availUser := st.Bavail * st.Frsize
	used := total - availRoot
	totalUser := used + availUser
	if totalUser == 0 {
		return 0
	}
	return pyRound1(float64(used) / float64(totalUser) * 100)
}

// pyRound1 is Python's round(x, 1) (correctly rounded, ties to even).
func pyRound1(x float64) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 1, 64), 64)
	if err != nil {
		return x
	}
	return v
}

func (b *diskUsageBeacon) Beacon(_ context.Context, req *beacons.Request) ([]*payload.Map, error) {
	mounts, err := readMounts(b.opts.proc("self/mounts"))
	if err != nil {
		return nil, err
	}
	list, _ := req.Config.([]any)
	var ret []*payload.Map
	for _, item := range list {
		m, ok := item.(*payload.Map)
		if !ok || m.Len() == 0 {
			continue
		}
		first := m.Items()[0]
		mount := payload.KeyString(first.Key)
		expr := mount
		if !strings.HasSuffix(expr, "$") {
			expr += "$"
		}
		re, err := regexp.Compile(`^(?:` + expr + `)`)
		if err != nil {
			return nil, fmt.Errorf("diskusage: bad mount expression %q: %w", mount, err)
		}
		for _, mp := range mounts {
			if !re.MatchString(mp) {
				continue
			}
			st, err := b.opts.statfs(mp)
			if err != nil {
				logOf(b.env).Warn("not a valid mount point", "mount", mp, "err", err)
				continue
			}
			current := usagePercent(st)
			limit := first.Value
			if s, ok := limit.(string); ok && strings.Contains(s, "%") {
				limit = strings.ReplaceAll(s, "%", "")
			}
			threshold, ok := beacons.Number(limit)
			if !ok {
				return nil, fmt.Errorf("could not convert string to float: '%s'", payload.Text(limit))
			}
			if current >= threshold {
				ret = append(ret, payload.NewMap("diskusage", current, "mount", mp))
			}
		}
	}
	return ret, nil
}

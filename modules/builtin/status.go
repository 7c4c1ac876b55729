package builtin

import (
	"context"
	"fmt"
	"github.com/gsalt/gsalt/internal/py"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/internal/pytime"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxProcFile bounds a /proc file read.
const maxProcFile = 16 << 20

// statusFunctions is Salt's status module (salt/modules/status.py) for
// Linux: /proc readers, uptime, load, disk usage and the process list.
func statusFunctions() []modules.Function {
	procMap := func(path string, parse func(string) *payload.Map) modules.Func {
		return func(context.Context, *modules.Call) (any, error) {
			b, err := readBounded(path, maxProcFile)
			if err != nil {
				return &payload.Map{}, nil
			}
			return parse(string(b)), nil
		}
	}
	return []modules.Function{
		{Name: "status.uptime", Doc: "Return the uptime for this system.\n\nCLI Example:\n\n    salt '*' status.uptime", Fn: statusUptime},
		{Name: "status.loadavg", Doc: "Return the load averages for this minion\n\nCLI Example:\n\n    salt '*' status.loadavg",
			Fn: func(context.Context, *modules.Call) (any, error) {
				b, err := readBounded("/proc/loadavg", maxProcFile)
				f := strings.Fields(string(b))
				if err != nil || len(f) < 3 {
					return nil, fmt.Errorf("%w: status.loadavag is not available on your platform", modules.ErrExecution)
				}
				var l [3]float64
				for i := range l {
					l[i], _ = strconv.ParseFloat(f[i], 64)
				}
				return payload.NewMap("1-min", l[0], "5-min", l[1], "15-min", l[2]), nil
			}},
		{Name: "status.meminfo", Doc: "Return the memory info for this minion\n\nCLI Example:\n\n    salt '*' status.meminfo",
			Fn: procMap("/proc/meminfo", func(s string) *payload.Map {
				ret := &payload.Map{}
				for _, line := range py.SplitLines(s, false) {
					comps := strings.Fields(line)
					if len(comps) < 2 {
						continue
					}
					k := strings.ReplaceAll(comps[0], ":", "")
					e := payload.NewMap("value", comps[1])
					if len(comps) > 2 {
						e.Set("unit", comps[2])
					}
					ret.Set(k, e)
				}
				return ret
			})},
		{Name: "status.cpuinfo", Doc: "Return the CPU info for this minion\n\nCLI Example:\n\n    salt '*' status.cpuinfo",
			Fn: procMap("/proc/cpuinfo", func(s string) *payload.Map {
				ret := &payload.Map{}
				for _, line := range py.SplitLines(s, false) {
					if line == "" {
						continue
					}
					k, v, ok := strings.Cut(line, ":")
					if !ok {
						continue
					}
					k = strings.TrimSpace(k)
					if i := strings.IndexByte(v, ':'); i >= 0 {
						v = v[:i]
					}
					if k == "flags" {
						ret.Set(k, grainsStrList(strings.Fields(v)))
					} else {
						ret.Set(k, strings.TrimSpace(v))
					}
				}
				return ret
			})},
		{Name: "status.cpustats", Doc: "Return the CPU stats for this minion\n\nCLI Example:\n\n    salt '*' status.cpustats",
			Fn: procMap("/proc/stat", statusCPUStats)},
		{Name: "status.netdev", Doc: "Return the network device stats for this minion\n\nCLI Example:\n\n    salt '*' status.netdev",
			Fn: procMap("/proc/net/dev", statusNetdev)},
		{Name: "status.vmstats", Doc: "Return the virtual memory stats for this minion\n\nCLI Example:\n\n    salt '*' status.vmstats",
			Fn: procMap("/proc/vmstat", func(s string) *payload.Map {
				ret := &payload.Map{}
				for _, line := range py.SplitLines(s, false) {
					comps := strings.Fields(line)
					if len(comps) >= 2 {
						ret.Set(comps[0], statusNumber(comps[1]))
					}
				}
				return ret
			})},
		{Name: "status.diskstats", Doc: "Return the disk stats for this minion\n\nCLI Example:\n\n    salt '*' status.diskstats",
			Fn: procMap("/proc/diskstats", statusDiskstats)},
		{Name: "status.netstats", Doc: "Return the network stats for this minion\n\nCLI Example:\n\n    salt '*' status.netstats",
			Fn: procMap("/proc/net/netstat", statusNetstats)},
		{Name: "status.all_status", Doc: "Return a composite of all status data and info for this minion.\nWarning: There is a LOT here!\n\nCLI Example:\n\n    salt '*' status.all_status",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				ret := &payload.Map{}
				for _, k := range []string{"cpuinfo", "cpustats", "diskstats", "diskusage", "loadavg", "meminfo", "netdev", "netstats", "uptime", "vmstats", "w"} {
					v, err := callFunction(ctx, c, "status."+k, nil, nil)
					if err != nil {
						return nil, err
					}
					ret.Set(k, v)
				}
				return ret, nil
			}},
		{Name: "status.version", Doc: "Return the system version for this minion\n\nCLI Example:\n\n    salt '*' status.version",
			Fn: func(context.Context, *modules.Call) (any, error) {
				b, err := readBounded("/proc/version", maxProcFile)
				if err != nil {
					return &payload.Map{}, nil
				}
				return strings.TrimSpace(string(b)), nil
			}},
		{Name: "status.nproc", Doc: "Return the number of processing units available on this system\n\nCLI Example:\n\n    salt '*' status.nproc",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				res, err := pkgRun(ctx, []string{"nproc"}, pkgRunOpts{combined: true})
				if err != nil {
					return int64(0), nil
				}
				v := statusNumber(strings.TrimSpace(res.stdout))
				if _, isStr := v.(string); isStr {
					return int64(0), nil
				}
				return v, nil
			}},
		{Name: "status.procs", Doc: "Return the process data\n\nCLI Example:\n\n    salt '*' status.procs", Fn: statusProcs},
		{Name: "status.pid", Spec: modules.Spec{Params: []modules.Param{req("sig")}},
			Doc: "Return the PID or an empty string if the process is running or not.\nPass a signature to use to find the process via ps.  Note you can pass\na Python-compatible regular expression to return all pids of\nprocesses matching the regexp.\n\nCLI Example:\n\n    salt '*' status.pid <sig>",
			Fn:  statusPid},
		{Name: "status.w", Doc: "Return a list of logged in users for this minion, using the w command\n\nCLI Example:\n\n    salt '*' status.w",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				res, err := pkgRun(ctx, []string{"w", "-fh"}, pkgRunOpts{combined: true})
				if err != nil {
					return nil, err
				}
				out := []any{}
				for _, row := range py.SplitLines(res.stdout, false) {
					comps := strings.Fields(row)
					if len(comps) < 6 {
						continue
					}
					out = append(out, payload.NewMap("idle", comps[3], "jcpu", comps[4], "login", comps[2], "pcpu", comps[5],
						"tty", comps[1], "user", comps[0], "what", strings.Join(comps[6:], " ")))
				}
				return out, nil
			}},
		{Name: "status.diskusage", Spec: modules.Spec{Varargs: true},
			Doc: "Return the disk usage for this minion\n\nUsage::\n\n    salt '*' status.diskusage [paths and/or filesystem types]\n\nCLI Example:\n\n    salt '*' status.diskusage         # usage for all filesystems\n    salt '*' status.diskusage / /tmp  # usage for / and /tmp\n    salt '*' status.diskusage ext?    # usage for ext[234] filesystems\n    salt '*' status.diskusage / ext?  # usage for / and all ext filesystems",
			Fn:  statusDiskusage},
		{Name: "status.time", Spec: modules.Spec{Params: []modules.Param{opt("format", "%A, %d. %B %Y %I:%M%p")}},
			Doc: "Return the current time on the minion,\nformatted based on the format parameter.\n\nDefault date format: Monday, 27. July 2015 07:55AM\n\nCLI Example:\n\n    salt '*' status.time\n\n    salt '*' status.time '%s'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return pytime.Strftime(time.Now(), c.Args.Str("format")), nil
			}},
	}
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

func statusCPUStats(s string) *payload.Map {
	ret := &payload.Map{}
	nums := func(l []string) []any {
		out := make([]any, len(l))
		for i, x := range l {
			out[i] = statusNumber(x)
		}
		return out
	}
	for _, line := range py.SplitLines(s, false) {
		comps := strings.Fields(line)
		if len(comps) < 2 {
			continue
		}
		switch comps[0] {
		case "cpu":
			if len(comps) < 9 {
				continue
			}
			ret.Set("cpu", payload.NewMap("idle", statusNumber(comps[4]), "iowait", statusNumber(comps[5]), "irq", statusNumber(comps[6]),
				"nice", statusNumber(comps[2]), "softirq", statusNumber(comps[7]), "steal", statusNumber(comps[8]),
				"system", statusNumber(comps[3]), "user", statusNumber(comps[1])))
		case "intr":
			ret.Set("intr", payload.NewMap("total", statusNumber(comps[1]), "irqs", nums(comps[2:])))
		case "softirq":
			ret.Set("softirq", payload.NewMap("total", statusNumber(comps[1]), "softirqs", nums(comps[2:])))
		default:
			ret.Set(comps[0], statusNumber(comps[1]))
		}
	}
	return ret
}

func statusNetdev(s string) *payload.Map {
	ret := &payload.Map{}
	for _, line := range py.SplitLines(s, false) {
		head, tail, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		comps := strings.Fields(line)
		first := strings.Fields(tail)
		if len(first) == 0 {
			continue
		}
		comps[0] = strings.TrimSpace(head)
		comps = append([]string{comps[0], first[0]}, comps[1:]...)
		if len(comps) < 18 {
			continue
		}
		n := func(i int) any { return statusNumber(comps[i]) }
		ret.Set(comps[0], payload.NewMap("iface", comps[0], "rx_bytes", n(2), "rx_compressed", n(8), "rx_drop", n(5), "rx_errs", n(4),
			"rx_fifo", n(6), "rx_frame", n(7), "rx_multicast", n(9), "rx_packets", n(3), "tx_bytes", n(10), "tx_carrier", n(16),
			"tx_colls", n(15), "tx_compressed", n(17), "tx_drop", n(13), "tx_errs", n(12), "tx_fifo", n(14), "tx_packets", n(11)))
	}
	return ret
}

func statusUptime(ctx context.Context, c *modules.Call) (any, error) {
	now := time.Now()
	b, err := readBounded("/proc/uptime", maxProcFile)
	if err != nil {
		return nil, fmt.Errorf("%w: File /proc/uptime was not found.", modules.ErrExecution)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return nil, fmt.Errorf("%w: /proc/uptime is empty", modules.ErrExecution)
	}
	secF, _ := strconv.ParseFloat(f[0], 64)
	seconds := int64(secF)
	nowF := float64(now.UnixNano()) / 1e9
	boot := time.Unix(0, int64((nowF-float64(seconds))*1e9)).UTC()
	up := time.Duration(seconds) * time.Second
	days := int64(up / (24 * time.Hour))
	rem := int64((up % (24 * time.Hour)) / time.Second)
	ret := payload.NewMap("seconds", seconds, "since_iso", pyIsoformat(boot), "since_t", int64(nowF-float64(seconds)),
		"days", days, "time", fmt.Sprintf("%d:%d", rem/3600, rem%3600/60))
	if _, err := which("who"); err == nil {
		res, err := pkgRun(ctx, []string{"who", "-s"}, pkgRunOpts{combined: true})
		if err == nil {
			ret.Set("users", int64(len(strings.Split(res.stdout, "\n"))))
		}
	}
	return ret, nil
}

// pyIsoformat is datetime.isoformat() of a naive UTC time.
func pyIsoformat(t time.Time) string {
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05")
	}
	return t.Format("2006-01-02T15:04:05") + fmt.Sprintf(".%06d", t.Nanosecond()/1000)
}

// statusPS runs the ps grain's command (ps -efHww on Linux).
func statusPS(ctx context.Context, c *modules.Call) (string, error) {
	ps := grainsData(c).Str("ps")
	if ps == "" {
		ps = "ps -efHww"
	}
	res, err := pkgRun(ctx, []string{"/bin/sh", "-c", ps}, pkgRunOpts{combined: true})
	if err != nil {
		return "", err
	}
	return res.stdout, nil
}

func statusProcs(ctx context.Context, c *modules.Call) (any, error) {
	out, err := statusPS(ctx, c)
	if err != nil {
		return nil, err
	}
	lines := py.SplitLines(out, false)
	ret := &payload.Map{}
	if len(lines) == 0 {
		return ret, nil
	}
	guide := strings.Fields(lines[0])
	idx := func(names ...string) int {
		for _, n := range names {
			for i, g := range guide {
				if g == n {
					return i
				}
			}
		}
		return 0
	}
	uind, pind, cind := idx("USER", "UID"), idx("PID"), idx("COMMAND", "CMD")
	for _, line := range lines[1:] {
		comps := strings.Fields(line)
		if len(comps) <= max(uind, pind, cind) {
			continue
		}
		ret.Set(comps[pind], payload.NewMap("user", comps[uind], "cmd", strings.Join(comps[cind:], " ")))
	}
	return ret, nil
}

func statusPid(ctx context.Context, c *modules.Call) (any, error) {
	out, err := statusPS(ctx, c)
	if err != nil {
		return nil, err
	}
	tr, err := target.TranslatePCRE(c.Args.Str("sig"))
	if err != nil {
		return nil, fmt.Errorf("re.error: %w", err)
	}
	if strings.HasPrefix(tr, "^(?:") && strings.HasSuffix(tr, ")") {
		tr = tr[4 : len(tr)-1]
	}
	re, err := regexp.Compile(tr)
	if err != nil {
		return nil, fmt.Errorf("re.error: %w", err)
	}
	me := strconv.Itoa(os.Getpid())
	var pids []string
	for _, line := range py.SplitLines(out, false) {
		if strings.Contains(line, me) || !re.MatchString(line) {
			continue
		}
		if f := strings.Fields(line); len(f) > 1 {
			pids = append(pids, f[1])
		}
	}
	return strings.Join(pids, "\n"), nil
}

func statusDiskusage(_ context.Context, c *modules.Call) (any, error) {
	var selected []string
	var fstypes []string
	if len(c.Args.Varargs) == 0 {
		fstypes = []string{"*"}
	}
	for _, a := range c.Args.Varargs {
		s := pyfmt.Str(a)
		if strings.HasPrefix(s, "/") {
			selected = appendUnique(selected, s)
		} else {
			fstypes = appendUnique(fstypes, s)
		}
	}
	if len(fstypes) > 0 {
		b, err := readBounded("/proc/mounts", maxProcFile)
		if err != nil {
			return &payload.Map{}, nil
		}
		for _, line := range py.SplitLines(string(b), false) {
			comps := strings.Fields(line)
			if len(comps) < 3 {
				continue
			}
			for _, ft := range fstypes {
				// fnmatch.translate(...) used with re.match: a prefix match.
				re, err := py.CompileFnmatch(ft)
				if err == nil && re.MatchString(comps[2]) {
					selected = appendUnique(selected, comps[1])
					break
				}
			}
		}
	}
	ret := &payload.Map{}
	for _, p := range selected {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		var st syscall.Statfs_t
		if err := syscall.Statfs(p, &st); err != nil {
			c.Log().Warn(fmt.Sprintf("Cannot get stats from '%s': %v", p, err))
			ret.Set(p, payload.NewMap("available", nil, "total", nil))
			continue
		}
		ret.Set(p, payload.NewMap("available", int64(st.Bavail)*st.Bsize, "total", int64(st.Blocks)*st.Bsize))
	}
	return ret, nil
}

func appendUnique(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}

func statusDiskstats(s string) *payload.Map {
	ret := &payload.Map{}
	names := []string{"major", "minor", "device", "reads_issued", "reads_merged", "sectors_read", "ms_spent_reading", "writes_completed",
		"writes_merged", "sectors_written", "ms_spent_writing", "io_in_progress", "ms_spent_in_io", "weighted_ms_spent_in_io"}
	for _, line := range py.SplitLines(s, false) {
		comps := strings.Fields(line)
		if len(comps) < len(names) {
			continue
		}
		e := &payload.Map{}
		for i, n := range names {
			e.Set(n, statusNumber(comps[i]))
		}
		ret.Set(comps[2], e)
	}
	return ret
}

// statusNetstats is linux_netstats: header/value line pairs; like Salt,
// the last field of each row is left out.
func statusNetstats(s string) *payload.Map {
	ret := &payload.Map{}
	headers := []string{""}
	for _, line := range py.SplitLines(s, false) {
		comps := strings.Fields(line)
		if len(comps) == 0 {
			continue
		}
		if comps[0] != headers[0] {
			headers = comps
			continue
		}
		row := &payload.Map{}
		for f := 1; f < len(headers)-1 && f < len(comps); f++ {
			row.Set(headers[f], statusNumber(comps[f]))
		}
		ret.Set(strings.ReplaceAll(headers[0], ":", ""), row)
	}
	return ret
}

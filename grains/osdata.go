package grains

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// uname returns sysname, nodename, release, version and machine.
func uname() (sys, node, release, version, machine string) {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "Linux", "", "", "", ""
	}
	conv := func(a []int8) string {
		b := make([]byte, 0, len(a))
		for _, c := range a {
			if c == 0 {
				break
			}
			b = append(b, byte(c))
		}
		return string(b)
	}
	return conv(u.Sysname[:]), conv(u.Nodename[:]), conv(u.Release[:]), conv(u.Version[:]), conv(u.Machine[:])
}

// osData is core.os_data for Linux.
func (h *host) osData(ctx context.Context) *payload.Map {
	g := payload.NewMap("num_gpus", int64(0), "gpus", []any{})
	sys, node, release, version, machine := uname()
	g.Set("kernel", sys)
	g.Set("nodename", node)
	g.Set("kernelrelease", release)
	g.Set("kernelversion", version)
	g.Set("cpuarch", machine)

	if h.which("selinuxenabled") != "" {
		sel := payload.NewMap()
		_, code, err := h.exec(ctx, "selinuxenabled")
		sel.Set("enabled", err == nil && code == 0)
		if h.which("getenforce") != "" {
			sel.Set("enforced", strings.TrimSpace(h.output(ctx, "getenforce")))
		}
		g.Set("selinux", sel)
	}
	if h.which("systemctl") != "" && h.which("localectl") != "" {
		g.Set("systemd", h.systemd(ctx))
	}
	g.Set("init", h.initSystem())
	h.mergeInto(g, h.distribution())
	h.mergeInto(g, h.cpuData())
	h.mergeInto(g, h.gpuData(ctx))
	if h.isDir("/proc/device-tree") {
		h.mergeInto(g, h.devicetreeData())
	}

	g.Set("osarch", h.osarch(ctx, g.Str("os_family"), machine))
	h.mergeInto(g, h.memData())
	h.mergeInto(g, h.hwData())
	h.mergeInto(g, h.virtual(ctx, g))
	h.mergeInto(g, h.virtualHV(g))
	g.Set("ps", psGrain(g))
	if rel := g.Str("osrelease"); rel != "" {
		h.mergeInto(g, osreleaseData(g.Str("os"), g.Str("osfullname"), rel))
	}
	return g
}

func (h *host) mergeInto(dst, src *payload.Map) {
	for _, it := range src.Items() {
		dst.SetKey(it.Key, it.Value)
	}
}

// systemd is core._systemd.
func (h *host) systemd(ctx context.Context) *payload.Map {
	version, features := "UNDEFINED", ""
	out, code, err := h.exec(ctx, "systemctl", "--version")
	if err == nil && code == 0 {
		lines := py.SplitLines(out, false)
		if len(lines) > 0 && strings.HasPrefix(lines[0], "systemd ") {
			if f := strings.Fields(lines[0]); len(f) > 1 {
				version = f[1]
			}
			if len(lines) > 1 {
				features = lines[1]
			}
		}
	}
	return payload.NewMap("version", version, "features", features)
}

// initSystem is core._linux_init_system.
func (h *host) initSystem() string {
	if h.exists("/run/systemd/system") {
		return "systemd"
	}
	raw, err := h.readFile("/proc/1/cmdline")
	if err != nil {
		return "unknown"
	}
	cmdline := strings.Fields(strings.ReplaceAll(raw, "\x00", " "))
	if len(cmdline) == 0 {
		return "unknown"
	}
	initBin := h.which(cmdline[0])
	contains := func(p string) bool {
		if p == "" {
			p = "\x00none"
		}
		for _, c := range cmdline {
			if c == p {
				return true
			}
		}
		return false
	}
	switch {
	case initBin != "" && strings.HasSuffix(initBin, "bin/init"):
		data, err := h.readFile(initBin)
		if err != nil {
			return "unknown"
		}
		low := strings.ToLower(data)
		// Salt scans the binary for the first of these names present.
		for _, name := range []string{"upstart", "sysvinit", "systemd"} {
			if strings.Contains(low, name) {
				return name
			}
		}
		return "unknown"
	case contains(h.which("supervisord")):
		return "supervisord"
	case contains(h.which("dumb-init")):
		return "dumb-init"
	case contains(h.which("tini")):
		return "tini"
	case len(cmdline) == 1 && cmdline[0] == "runit":
		return "runit"
	case contains("/sbin/my_init"):
		return "runit"
	}
	return "unknown"
}

// cpuData is core._linux_cpudata.
func (h *host) cpuData() *payload.Map {
	data, err := h.readFile("/proc/cpuinfo")
	if err != nil {
		return payload.NewMap("num_cpus", int64(0), "cpu_model", "Unknown", "cpu_flags", []any{})
	}
	return parseCPUInfo(data)
}

func parseCPUInfo(data string) *payload.Map {
	var (
		num      int64
		model    any
		flags    []any
		hasFlags bool
	)
	for _, line := range strings.Split(data, "\n") {
		comps := strings.Split(line, ":")
		if len(comps) < 2 {
			continue
		}
		key := strings.TrimSpace(comps[0])
		val := strings.TrimSpace(comps[1])
		switch key {
		case "processor":
			num++
		case "# processors":
			if n, err := strconv.ParseInt(val, 10, 64); err == nil {
				num = n
			}
		case "vendor_id", "model name", "cpu":
			model = val
		case "flags", "Features":
			flags = strList(strings.Fields(val))
			hasFlags = true
		case "Processor":
			model = strings.SplitN(val, "-", 2)[0]
			num = 1
		}
	}
	if model == nil {
		model = "Unknown"
	}
	if !hasFlags {
		flags = []any{}
	}
	return payload.NewMap("num_cpus", num, "cpu_model", model, "cpu_flags", flags)
}

// gpuData is core._linux_gpu_data.
func (h *host) gpuData(ctx context.Context) *payload.Map {
	for _, k := range []string{"enable_lspci", "enable_gpu_grains"} {
		if v, ok := h.opt(k); ok && v == false {
			return nil
		}
	}
	if h.which("lspci") == "" {
		return nil
	}
	return parseLspci(h.output(ctx, "lspci", "-vmm"))
}

var (
	reLspciLine = regexp.MustCompile(`^\w+:\s+.*`)
	reNonAlnum  = regexp.MustCompile(`[^A-Za-z0-9]`)
)

func parseLspci(out string) *payload.Map {
	vendors := []string{"nvidia", "amd", "ati", "intel", "cirrus logic", "vmware", "matrox", "aspeed"}
	classes := map[string]bool{"vga compatible controller": true, "3d controller": true, "display controller": true}
	gpus := []any{}
	cur := map[string]string{}
	lines := append(py.SplitLines(out, false), "")
	for _, line := range lines {
		if line == "" {
			if classes[strings.ToLower(cur["Class"])] {
				words := reNonAlnum.Split(strings.ToLower(cur["Vendor"]), -1)
				vendor := "unknown"
			find:
				for _, name := range vendors {
					for _, w := range words {
						if w == name {
							vendor = name
							break find
						}
					}
				}
				gpus = append(gpus, payload.NewMap("vendor", vendor, "model", cur["Device"]))
			}
			cur = map[string]string{}
			continue
		}
		if reLspciLine.MatchString(line) {
			k, v, _ := strings.Cut(line, ":")
			cur[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return payload.NewMap("num_gpus", int64(len(gpus)), "gpus", gpus)
}

// devicetreeData is core._linux_devicetree_platform_data.
func (h *host) devicetreeData() *payload.Map {
	read := func(name string) string {
		s, err := h.readFile("/proc/device-tree/" + name)
		if err != nil {
			return ""
		}
		return strings.TrimRight(s, "\x00")
	}
	g := &payload.Map{}
	if model := read("model"); model != "" {
		if mf, prod, ok := strings.Cut(model, ","); ok {
			g.Set("manufacturer", mf)
			g.Set("productname", prod)
		} else {
			g.Set("productname", model)
		}
	}
	if id := read("system-id"); id != "" {
		g.Set("serialnumber", id)
	}
	if serial := read("serial-number"); serial != "" {
		g.Set("serialnumber", serial)
	}
	return g
}

// memData is core._linux_memdata (MiB, floor division).
func (h *host) memData() *payload.Map {
	g := payload.NewMap("mem_total", int64(0), "swap_total", int64(0))
	data, err := h.readFile("/proc/meminfo")
	if err != nil {
		return g
	}
	for _, line := range strings.Split(data, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch strings.TrimSpace(k) {
		case "MemTotal":
			g.Set("mem_total", n/1024)
		case "SwapTotal":
			g.Set("swap_total", n/1024)
		}
	}
	return g
}

// hwData is core._hw_data's sysfs branch.
func (h *host) hwData() *payload.Map {
	g := &payload.Map{}
	if !h.exists("/sys/class/dmi/id") {
		return g
	}
	files := []struct{ grain, file string }{
		{"biosversion", "bios_version"},
		{"biosvendor", "bios_vendor"},
		{"boardname", "board_name"},
		{"productname", "product_name"},
		{"manufacturer", "sys_vendor"},
		{"biosreleasedate", "bios_date"},
		{"uuid", "product_uuid"},
		{"serialnumber", "product_serial"},
	}
	for _, f := range files {
		s, err := h.readFile("/sys/class/dmi/id/" + f.file)
		if err != nil {
			continue
		}
		s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
		if f.grain == "uuid" {
			s = strings.ToLower(s)
		}
		g.Set(f.grain, s)
	}
	return g
}

// psGrain is core._ps for Linux.
func psGrain(g *payload.Map) string {
	switch {
	case g.Str("virtual") == "openvzhn":
		return `ps -fH -p $(grep -l "^envID:[[:space:]]*0\$" /proc/[0-9]*/status | sed -e "s=/proc/\([0-9]*\)/.*=\1=")  | awk '{ $7=""; print }'`
	case g.Str("os_family") == "NILinuxRT":
		return "ps -o user,pid,ppid,tty,time,comm"
	}
	return "ps -efHww"
}

// osarch is core._osarch.
func (h *host) osarch(ctx context.Context, family, cpuarch string) any {
	switch family {
	case "Debian":
		return strings.TrimSpace(h.output(ctx, "dpkg", "--print-architecture"))
	case "RedHat", "Suse":
		ret := cpuarch
		if h.which("rpm") != "" {
			ret = strings.TrimSpace(h.output(ctx, "rpm", "--eval", "%{_host_cpu}"))
		}
		if ret == "" {
			ret = "unknown"
		}
		if ret == "powerpc64le" {
			ret = "ppc64le"
		}
		return ret
	case "NILinuxRT", "Poky":
		type arch struct {
			name string
			prio int64
		}
		var archs []arch
		for _, line := range py.SplitLines(h.output(ctx, "opkg", "print-architecture"), false) {
			if !strings.HasPrefix(line, "arch") {
				continue
			}
			f := strings.Fields(line)
			if len(f) != 3 {
				continue
			}
			p, _ := strconv.ParseInt(f[2], 10, 64)
			archs = append(archs, arch{f[1], p})
		}
		// sorted by priority, highest first (stable for equal ones)
		for i := 1; i < len(archs); i++ {
			for j := i; j > 0 && archs[j].prio > archs[j-1].prio; j-- {
				archs[j], archs[j-1] = archs[j-1], archs[j]
			}
		}
		out := []any{}
		for _, a := range archs {
			out = append(out, a.name)
		}
		return out
	}
	return cpuarch
}

// osreleaseData is core._osrelease_data.
func osreleaseData(osName, fullname, osrelease string) *payload.Map {
	g := &payload.Map{}
	parts := strings.Split(osrelease, ".")
	info := make([]any, len(parts))
	for i, p := range parts {
		if isDigits(p) {
			if n, err := strconv.ParseInt(p, 10, 64); err == nil {
				info[i] = n
				continue
			}
		}
		info[i] = p
	}
	g.Set("osrelease_info", info)
	switch first := info[0].(type) {
	case int64:
		g.Set("osmajorrelease", first)
	case string:
		if n, err := strconv.ParseInt(strings.TrimSpace(first), 10, 64); err == nil {
			g.Set("osmajorrelease", n)
		}
	}
	name := fullname
	switch osName {
	case "Debian", "FreeBSD", "OpenBSD", "NetBSD", "Mac", "Raspbian":
		name = osName
	}
	ver := payload.KeyString(info[0])
	if osName == "Ubuntu" || osName == "Pop" {
		ver = osrelease
	}
	g.Set("osfinger", name+"-"+ver)
	return g
}

// isDigits is Python's str.isdigit for ASCII and Unicode digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

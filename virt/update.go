package virt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// virt.update: Salt 3006's update of an existing domain's definition
// (cpu, memory, numatune, boot, boot_dev, clock, stop_on_reboot, disks,
// interfaces, graphics, serials, consoles, host_devices, autostart) and
// the live changes it can make on a running domain.

const updateDoc = `Update the definition of an existing domain.

CLI Example:

    salt '*' virt.update domain cpu=2 mem=1024

gsalt: cpu (model, topology, features, numa, tuning, vcpus), mem
(hugepages and memory backing), numatune, clock timers and host_devices
change the definition as Salt 3006 does. With test=True nothing is
changed, disk images included (Salt 3006 creates new disk images even
then), and
the autostart flag is set on the call's connection.`

func updateSpec() modules.Spec {
	return kwSpec(req("name"), opt("cpu", int64(0)), opt("mem", int64(0)), opt("disk_profile", nil), opt("disks", nil), opt("nic_profile", nil),
		opt("interfaces", nil), opt("graphics", nil), opt("live", true), opt("boot", nil), opt("numatune", nil), opt("test", false),
		opt("boot_dev", nil), opt("hypervisor_features", nil), opt("clock", nil), opt("serials", nil), opt("consoles", nil),
		opt("stop_on_reboot", false), opt("host_devices", nil), opt("autostart", false))
}

func (m *Module) updateFunctions() []modules.Function {
	return []modules.Function{{Name: "virt.update", Doc: updateDoc, Spec: updateSpec(), Fn: m.withConn(m.update)}}
}

// prepGraphics applies _gen_xml's graphics defaults (listen on all
// addresses) and drops a graphics of type none.
func prepGraphics(graphics *payload.Map) *payload.Map {
	if graphics == nil {
		return nil
	}
	graphics = graphics.Clone()
	listen := asMap(val(graphics, "listen"))
	if listen == nil {
		graphics.Set("listen", payload.NewMap("type", "address", "address", "0.0.0.0"))
	} else if !listen.Has("address") && listen.Str("type") == "address" {
		listen = listen.Clone()
		listen.Set("address", "0.0.0.0")
		graphics.Set("listen", listen)
	}
	if t, ok := graphics.Get("type"); !ok || t == nil || t == "none" {
		return nil
	}
	return graphics
}

// deviceTypes are the device kinds update compares, in Salt's order.
var deviceTypes = []string{"disk", "interface", "graphics", "serial", "console", "hostdev"}

func (m *Module) update(ctx context.Context, c *modules.Call, conn Conn) (any, error) {
	a := c.Args
	name := a.Str("name")
	if err := checkUpdateValue("cpu", a.Get("cpu")); err != nil {
		return nil, err
	}
	if err := checkUpdateValue("mem", a.Get("mem")); err != nil {
		return nil, err
	}
	dom, err := getDomain(conn, name)
	if err != nil {
		return nil, err
	}
	x, err := dom.XML(true)
	if err != nil {
		return nil, err
	}
	desc, err := parseXML(x)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	needUpdate := false
	hv := desc.attr("type")
	allDisks, err := m.diskProfile(ctx, c, conn, a.Get("disk_profile"), hv, a.Get("disks"), name)
	if err != nil {
		return nil, err
	}
	boot := asMap(a.Get("boot"))
	if a.Get("boot") != nil {
		if boot == nil {
			return nil, fmt.Errorf("%w: boot must be a dictionary", modules.ErrInvocation)
		}
		if err := checkBoot(boot); err != nil {
			return nil, err
		}
		if e, ok := boot.Get("efi"); ok && e != nil {
			changed, err := handleEFI(e, desc)
			if err != nil {
				return nil, err
			}
			needUpdate = changed
		}
	}
	nics, err := m.mergedNics(ctx, c, hv, a.Get("nic_profile"), a.Get("interfaces"))
	if err != nil {
		return nil, err
	}
	osType, err := dom.OSType()
	if err != nil {
		return nil, err
	}
	spec := &domainSpec{name: name, hypervisor: hv, osType: osType, arch: desc.find("os/type").attr("arch"), nics: nics,
		graphics: prepGraphics(asMap(a.Get("graphics"))), serials: chardevs(a.Get("serials")), consoles: chardevs(a.Get("consoles"))}
	if spec.disks, err = diskContexts(conn, allDisks, hv); err != nil {
		return nil, err
	}
	if spec.hostdevs, err = hostdevContext(conn, a.Get("host_devices")); err != nil {
		return nil, err
	}
	gx, err := genDomainXML(spec)
	if err != nil {
		return nil, err
	}
	newDesc, err := parseXML(gx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	test := a.Bool("test")
	if !test {
		if err := dom.SetAutostart(a.Bool("autostart")); err != nil {
			return nil, err
		}
	}
	oldMemKiB := int64(0)
	if b := memBytes(desc.find("memory")); b != nil {
		oldMemKiB = *b / 1024
	}
	oldCPU, _ := strconv.ParseInt(strings.TrimSpace(desc.find("vcpu").text()), 10, 64)

	data := payload.NewMap()
	for _, k := range []string{"cpu", "mem", "boot", "numatune", "clock", "hypervisor_features"} {
		if v := a.Get(k); payload.Truthy(v) {
			data.Set(k, payload.DeepClone(v))
		}
	}
	data.Set("stop_on_reboot", a.Bool("stop_on_reboot"))
	if bd := a.Get("boot_dev"); payload.Truthy(bd) {
		var devs []any
		for _, d := range strings.Fields(payload.Text(bd)) {
			devs = append(devs, d)
		}
		data.Set("boot_dev", devs)
	}
	if clock := asMap(val(data, "clock")); clock != nil {
		offset := "utc"
		if v, ok := clock.Get("utc"); ok && !payload.Truthy(v) {
			offset = "localtime"
		}
		if clock.Has("timezone") {
			offset = "timezone"
		}
		clock.Set("offset", offset)
		if timers := asMap(val(clock, "timers")); timers != nil && timers.Len() > 0 {
			for _, it := range timers.Items() {
				if tm := asMap(it.Value); tm != nil {
					for _, at := range timerAttrs {
						if !tm.Has(at) {
							tm.Set(at, nil)
						}
					}
				}
			}
			for _, t := range timerNames {
				if !timers.Has(t) {
					timers.Set(t, nil)
				}
			}
		}
	}
	if err := normalizeCPUSets(desc, data); err != nil {
		return nil, err
	}
	changed, err := changeXML(desc, data, updateMapping(hv))
	if err != nil {
		return nil, err
	}
	needUpdate = changed || needUpdate

	skip := map[string]bool{
		"disk":      a.Get("disks") == nil && a.Get("disk_profile") == nil,
		"interface": a.Get("interfaces") == nil && a.Get("nic_profile") == nil,
		"graphics":  a.Get("graphics") == nil,
		"serial":    a.Get("serials") == nil,
		"console":   a.Get("consoles") == nil,
		"hostdev":   a.Get("host_devices") == nil,
	}
	devices := findPath(desc, "devices", true)
	changes := deviceChanges(desc, newDesc, skip)
	for _, typ := range deviceTypes {
		ch := changes[typ]
		if skip[typ] || ch == nil || (len(ch.added) == 0 && len(ch.deleted) == 0) {
			continue
		}
		for _, old := range devices.findAll(typ) {
			devices.remove(old)
		}
		for _, n := range ch.sorted {
			devices.Children = append(devices.Children, n.clone())
		}
		needUpdate = true
	}

	status := payload.NewMap("definition", false,
		"disk", payload.NewMap("attached", []any{}, "detached", []any{}, "updated", []any{}),
		"interface", payload.NewMap("attached", []any{}, "detached", []any{}))
	if needUpdate {
		rb := &rollback{log: c.Log()}
		if ch := changes["disk"]; ch != nil && !test {
			for i, item := range ch.sorted {
				if i >= len(allDisks) || !slices.Contains(ch.added, item) {
					continue
				}
				d := allDisks[i]
				if device(d) == "cdrom" {
					continue
				}
				src := d.Str("source_file")
				if src != "" {
					if _, err := os.Stat(src); errors.Is(err, os.ErrNotExist) {
						if _, err := m.qemuImageCreate(ctx, c, d, payload.Truthy(val(d, "overlay_image")), "base", rb); err != nil {
							rb.undo()
							return nil, err
						}
					}
				} else if err := m.diskVolumeCreate(ctx, c, conn, d); err != nil {
					rb.undo()
					return nil, err
				}
			}
		}
		if !test {
			xml := desc.String()
			c.Log().Debug("Update virtual machine definition", "xml", xml)
			if _, err := conn.DefineDomain(xml); err != nil {
				rb.undo()
				return nil, err
			}
		}
		status.Set("definition", true)
	}
	if a.Bool("live") {
		live, errs, err := updateLive(dom, newDesc, a.Get("mem"), a.Get("cpu"), oldMemKiB, oldCPU, skip, test)
		if err != nil {
			return nil, err
		}
		for _, it := range live.Items() {
			status.SetKey(it.Key, it.Value)
		}
		if len(errs) > 0 {
			status.Set("errors", errs)
		}
	}
	return status, nil
}

// checkUpdateValue refuses out-of-range cpu and mem numbers.
func checkUpdateValue(what string, v any) error {
	if mm := asMap(v); mm != nil {
		for _, k := range []string{"maximum", "current", "boot", "max"} {
			if x, ok := mm.Get(k); ok && x != nil {
				if n, isInt := payload.AsInt(x); isInt && n <= 0 {
					if what == "mem" {
						return fmt.Errorf("%w: invalid number or unit", modules.ErrInvocation)
					}
					return fmt.Errorf("%w: %s.%s must be a positive number, got %d", modules.ErrInvocation, what, k, n)
				}
			}
		}
		return nil
	}
	if n, ok := payload.AsInt(v); ok && n < 0 {
		if what == "mem" {
			return fmt.Errorf("%w: invalid number or unit", modules.ErrInvocation)
		}
		return fmt.Errorf("%w: %s must be a positive number, got %d", modules.ErrInvocation, what, n)
	}
	if s, ok := v.(string); ok && s != "" && humanToBytes(s, "m") <= 0 {
		return fmt.Errorf("%w: invalid number or unit", modules.ErrInvocation)
	}
	return nil
}

// handleEFI is _handle_efi_param.
func handleEFI(efi any, desc *node) (bool, error) {
	b, isBool := efi.(bool)
	if !isBool {
		return false, fmt.Errorf("%w: Invalid efi value", modules.ErrInvocation)
	}
	osNode := desc.child("os")
	if osNode == nil {
		return false, nil
	}
	if !b && len(osNode.Attrs) > 0 {
		osNode.del("firmware")
		return true, nil
	}
	if len(osNode.Attrs) == 0 {
		if b && osNode.child("loader") == nil {
			osNode.set("firmware", "efi")
			return true, nil
		}
		if !b && osNode.child("loader") != nil {
			osNode.remove(osNode.child("loader"))
			if nv := osNode.child("nvram"); nv != nil {
				osNode.remove(nv)
			}
			return true, nil
		}
	}
	return false, nil
}

// memBytes is _get_with_unit: a memory element's size in bytes, nil when
// it has none.
func memBytes(n *node) *int64 {
	if n == nil {
		return nil
	}
	unit := unitOr(n, "unit", "KiB")
	if unit == "bytes" {
		unit = "b"
	}
	v := n.attr("memory")
	if v == "" {
		v = n.attr("size")
	}
	if v == "" {
		v = strings.TrimSpace(n.text())
	}
	if v == "" {
		return nil
	}
	b := humanToBytes(v+unit, "m")
	return &b
}

func almostEqual(cur *int64, n int64) bool {
	if cur == nil || *cur == 0 {
		return false
	}
	return math.Abs(float64(*cur-n))/float64(*cur) < 1e-3
}

// updateMapping is update's params_mapping for a hypervisor.
func updateMapping(hv string) []xmapEntry {
	loader := func(n *node, v any) {
		n.setText(pyStr(v))
		n.set("readonly", "yes")
		n.set("type", "pflash")
	}
	isPresent := func(n *node) any { return n != nil }
	noop := func(n *node, v any) {}
	intText := func(n *node) any {
		s := strings.TrimSpace(n.text())
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
		return n.textOrNil()
	}
	m := []xmapEntry{
		{path: "stop_on_reboot", xpath: "on_reboot", convert: func(v any) (any, error) {
			if payload.Truthy(v) {
				return "destroy", nil
			}
			return "restart", nil
		}},
		{path: "boot:kernel", xpath: "os/kernel"},
		{path: "boot:initrd", xpath: "os/initrd"},
		{path: "boot:cmdline", xpath: "os/cmdline"},
		{path: "boot:loader", xpath: "os/loader", set: loader},
		{path: "boot:nvram", xpath: "os/nvram", set: func(n *node, v any) { n.set("template", pyStr(v)) }},
		memEntry("mem", "memory", ""),
		memEntry("mem", "currentMemory", ""),
		memEntry("mem:max", "maxMemory", ""),
		memEntry("mem:boot", "memory", ""),
		memEntry("mem:current", "currentMemory", ""),
		attrEntry("mem:slots", "maxMemory", "slots", "unit"),
		memEntry("mem:hard_limit", "memtune/hard_limit", ""),
		memEntry("mem:soft_limit", "memtune/soft_limit", ""),
		memEntry("mem:swap_hard_limit", "memtune/swap_hard_limit", ""),
		memEntry("mem:min_guarantee", "memtune/min_guarantee", ""),
		attrEntry("boot_dev:{dev}", "os/boot[$dev]", "dev"),
		memEntry("mem:hugepages:{id}:size", "memoryBacking/hugepages/page[$id]", "size", "unit", "nodeset"),
		cpusetEntry("mem:hugepages:{id}:nodeset", "memoryBacking/hugepages/page[$id]", "nodeset"),
		{path: "mem:nosharepages", xpath: "memoryBacking/nosharepages", get: isPresent, set: noop},
		{path: "mem:locked", xpath: "memoryBacking/locked", get: isPresent, set: noop},
		attrEntry("mem:source", "memoryBacking/source", "type"),
		attrEntry("mem:access", "memoryBacking/access", "mode"),
		attrEntry("mem:allocation", "memoryBacking/allocation", "mode"),
		{path: "mem:discard", xpath: "memoryBacking/discard"},
		{path: "cpu", xpath: "vcpu", get: intText, set: func(n *node, v any) {
			n.setText(pyStr(v))
			n.set("current", pyStr(v))
		}},
		{path: "cpu:maximum", xpath: "vcpu", get: intText},
		attrEntry("cpu:placement", "vcpu", "placement"),
		cpusetEntry("cpu:cpuset", "vcpu", "cpuset"),
		attrEntry("cpu:current", "vcpu", "current"),
		attrEntry("cpu:match", "cpu", "match"),
		attrEntry("cpu:mode", "cpu", "mode"),
		attrEntry("cpu:check", "cpu", "check"),
		{path: "cpu:model:name", xpath: "cpu/model"},
		attrEntry("cpu:model:fallback", "cpu/model", "fallback"),
		attrEntry("cpu:model:vendor_id", "cpu/model", "vendor_id"),
		{path: "cpu:vendor", xpath: "cpu/vendor"},
		attrEntry("cpu:topology:sockets", "cpu/topology", "sockets"),
		attrEntry("cpu:topology:cores", "cpu/topology", "cores"),
		attrEntry("cpu:topology:threads", "cpu/topology", "threads"),
		attrEntry("cpu:cache:level", "cpu/cache", "level"),
		attrEntry("cpu:cache:mode", "cpu/cache", "mode"),
		attrEntry("cpu:features:{id}", "cpu/feature[@name='$id']", "policy", "name"),
		yesNoEntry("cpu:vcpus:{id}:enabled", "vcpus/vcpu[@id='$id']", "enabled", "id"),
		yesNoEntry("cpu:vcpus:{id}:hotpluggable", "vcpus/vcpu[@id='$id']", "hotpluggable", "id"),
		intAttrEntry("cpu:vcpus:{id}:order", "vcpus/vcpu[@id='$id']", "order", "id"),
		cpusetEntry("cpu:numa:{id}:cpus", "cpu/numa/cell[@id='$id']", "cpus", "id"),
		memEntry("cpu:numa:{id}:memory", "cpu/numa/cell[@id='$id']", "memory", "id"),
		yesNoEntry("cpu:numa:{id}:discard", "cpu/numa/cell[@id='$id']", "discard", "id"),
		attrEntry("cpu:numa:{id}:memAccess", "cpu/numa/cell[@id='$id']", "memAccess", "id"),
		attrEntry("cpu:numa:{id}:distances:{sid}", "cpu/numa/cell[@id='$id']/distances/sibling[@id='$sid']", "value", "id"),
		{path: "cpu:iothreads", xpath: "iothreads"},
	}
	for _, t := range []string{"shares", "period", "quota", "global_period", "global_quota", "emulator_period", "emulator_quota", "iothread_period", "iothread_quota"} {
		m = append(m, xmapEntry{path: "cpu:tuning:" + t, xpath: "cputune/" + t})
	}
	m = append(m,
		cpusetEntry("cpu:tuning:vcpupin:{id}", "cputune/vcpupin[@vcpu='$id']", "cpuset", "vcpu"),
		cpusetEntry("cpu:tuning:emulatorpin", "cputune/emulatorpin", "cpuset"),
		cpusetEntry("cpu:tuning:iothreadpin:{id}", "cputune/iothreadpin[@iothread='$id']", "cpuset", "iothread"),
		attrEntry("cpu:tuning:vcpusched:{id}:scheduler", "cputune/vcpusched[$id]", "scheduler", "priority", "vcpus"),
		attrEntry("cpu:tuning:vcpusched:{id}:priority", "cputune/vcpusched[$id]", "priority"),
		cpusetEntry("cpu:tuning:vcpusched:{id}:vcpus", "cputune/vcpusched[$id]", "vcpus"),
		attrEntry("cpu:tuning:iothreadsched:{id}:scheduler", "cputune/iothreadsched[$id]", "scheduler", "priority", "iothreads"),
		attrEntry("cpu:tuning:iothreadsched:{id}:priority", "cputune/iothreadsched[$id]", "priority"),
		cpusetEntry("cpu:tuning:iothreadsched:{id}:iothreads", "cputune/iothreadsched[$id]", "iothreads"),
		attrEntry("cpu:tuning:emulatorsched:scheduler", "cputune/emulatorsched", "scheduler", "priority"),
		attrEntry("cpu:tuning:emulatorsched:priority", "cputune/emulatorsched", "priority"),
		attrEntry("cpu:tuning:cachetune:{id}:monitor:{sid}", "cputune/cachetune[@vcpus='$id']/monitor[@vcpus='$sid']", "level", "vcpus"),
		attrEntry("cpu:tuning:memorytune:{id}:{sid}", "cputune/memorytune[@vcpus='$id']/node[@id='$sid']", "bandwidth", "id", "vcpus"),
		attrEntry("clock:offset", "clock", "offset"),
		attrEntry("clock:adjustment", "clock", "adjustment"),
		attrEntry("clock:timezone", "clock", "timezone"),
	)
	for _, t := range timerNames {
		x := "clock/timer[@name='" + t + "']"
		p := "clock:timers:" + t + ":"
		m = append(m,
			attrEntry(p+"track", x, "track", "name"),
			attrEntry(p+"tickpolicy", x, "tickpolicy", "name"),
			intAttrEntry(p+"frequency", x, "frequency", "name"),
			attrEntry(p+"mode", x, "mode", "name"),
			yesNoEntry(p+"present", x, "present", "name"))
		for _, at := range []string{"slew", "threshold", "limit"} {
			m = append(m, intAttrEntry(p+at, x+"/catchup", at))
		}
	}
	for _, at := range []string{"level", "type", "size"} {
		m = append(m, attrEntry("cpu:tuning:cachetune:{id}:{sid}:"+at, "cputune/cachetune[@vcpus='$id']/cache[@id='$sid']", at, "id", "unit", "vcpus"))
	}
	if hv == "qemu" || hv == "kvm" {
		kvmHint := attrEntry("hypervisor_features:kvm-hint-dedicated", "features/kvm/hint-dedicated", "state")
		kvmHint.convert = func(v any) (any, error) {
			if payload.Truthy(v) {
				return "on", nil
			}
			return "off", nil
		}
		m = append(m,
			attrEntry("numatune:memory:mode", "numatune/memory", "mode"),
			cpusetEntry("numatune:memory:nodeset", "numatune/memory", "nodeset"),
			attrEntry("numatune:memnodes:{id}:mode", "numatune/memnode[@cellid='$id']", "mode", "cellid"),
			cpusetEntry("numatune:memnodes:{id}:nodeset", "numatune/memnode[@cellid='$id']", "nodeset", "cellid"),
			kvmHint)
	}
	return m
}

// timerNames are the clock timers update manages.
var timerNames = []string{"platform", "hpet", "kvmclock", "pit", "rtc", "tsc", "hypervclock", "armvtimer"}

// timerAttrs are the timer properties a timer not given leaves unset.
var timerAttrs = []string{"track", "tickpolicy", "frequency", "mode", "present", "slew", "threshold", "limit"}

// findPath returns the element at a slash path, creating the missing ones
// when create is set.
func findPath(doc *node, xpath string, create bool) *node {
	cur := doc
	for _, part := range strings.Split(xpath, "/") {
		next := cur.child(part)
		if next == nil {
			if !create {
				return nil
			}
			next = &node{Tag: part}
			cur.Children = append(cur.Children, next)
		}
		cur = next
	}
	return cur
}

// parentOf finds n's parent below doc.
func parentOf(doc, n *node) *node {
	for _, c := range doc.Children {
		if c == n {
			return doc
		}
		if p := parentOf(c, n); p != nil {
			return p
		}
	}
	return nil
}

// cleanNode is xmlutil.clean_node: an element left with no attribute
// (but the ignored ones), child or text goes, and so on up.
func cleanNode(doc, n *node, ignored []string) bool {
	removed := false
	for n != nil && n != doc {
		p := parentOf(doc, n)
		if p == nil {
			break
		}
		left := 0
		for _, at := range n.Attrs {
			if !slices.Contains(ignored, at.Name.Local) {
				left++
			}
		}
		if left == 0 && len(n.Children) == 0 && strings.TrimSpace(n.Text) == "" {
			p.remove(n)
			removed = true
		}
		n = p
	}
	return removed
}

// expandCPUSet is _expand_cpuset.
func expandCPUSet(v any) (string, error) {
	if v == nil {
		return "", nil
	}
	if n, ok := v.(int64); ok {
		return strconv.FormatInt(n, 10), nil
	}
	set := map[int]bool{}
	remove := map[int]bool{}
	rng := regexp.MustCompile(`^([0-9]+)-([0-9]+)`)
	for _, part := range strings.Split(payload.Text(v), ",") {
		if m := rng.FindStringSubmatch(part); m != nil {
			lo, _ := strconv.Atoi(m[1])
			hi, _ := strconv.Atoi(m[2])
			if hi-lo > 1<<16 {
				return "", fmt.Errorf("%w: cpuset range too large: %s", modules.ErrInvocation, part)
			}
			for i := lo; i <= hi; i++ {
				set[i] = true
			}
		} else if strings.HasPrefix(part, "^") {
			n, err := strconv.Atoi(part[1:])
			if err != nil {
				return "", fmt.Errorf("%w: invalid cpuset: %v", modules.ErrInvocation, v)
			}
			remove[n] = true
		} else {
			n, err := strconv.Atoi(part)
			if err != nil {
				return "", fmt.Errorf("%w: invalid cpuset: %v", modules.ErrInvocation, v)
			}
			set[n] = true
		}
	}
	var out []int
	for k := range set {
		if !remove[k] {
			out = append(out, k)
		}
	}
	sort.Ints(out)
	parts := make([]string, len(out))
	for i, n := range out {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ","), nil
}

// devDiff is _diff_lists' result.
type devDiff struct {
	unchanged, added, deleted, sorted []*node
}

func diffLists(old, neu []*node, eq func(a, b *node) bool) *devDiff {
	d := &devDiff{}
	left := slices.Clone(old)
	for _, n := range neu {
		idx := -1
		for i, o := range left {
			if eq(o, n) {
				idx = i
				break
			}
		}
		if idx >= 0 {
			d.unchanged = append(d.unchanged, left[idx])
			d.sorted = append(d.sorted, left[idx])
			left = append(left[:idx], left[idx+1:]...)
		} else {
			d.added = append(d.added, n)
			d.sorted = append(d.sorted, n)
		}
	}
	d.deleted = left
	return d
}

// deviceChanges is _compute_device_changes; the new disks' targets are
// renumbered first like _diff_disk_lists does.
func deviceChanges(oldDoc, newDoc *node, skip map[string]bool) map[string]*devDiff {
	out := map[string]*devDiff{}
	for _, typ := range deviceTypes {
		if skip[typ] {
			continue
		}
		old := oldDoc.findAll("devices/" + typ)
		neu := newDoc.findAll("devices/" + typ)
		switch typ {
		case "disk":
			retarget(neu)
			out[typ] = diffLists(old, neu, disksEqual)
		case "interface":
			out[typ] = diffLists(old, neu, nicsEqual)
		case "graphics":
			out[typ] = diffLists(old, neu, graphicsEqual)
		case "serial", "console":
			out[typ] = diffLists(old, neu, chardevEqual)
		case "hostdev":
			out[typ] = diffLists(old, neu, hostdevsEqual)
		default:
			out[typ] = diffLists(old, neu, func(a, b *node) bool { return false })
		}
	}
	return out
}

func retarget(disks []*node) {
	var targets []string
	for _, d := range disks {
		t := d.find("target")
		if t == nil {
			continue
		}
		dev := t.attr("dev")
		prefix := ""
		for _, p := range []string{"fd", "hd", "vd", "sd", "xvd", "ubd"} {
			if strings.HasPrefix(dev, p) {
				prefix = p
				break
			}
		}
		for i := 0; i < len(disks) && i < 26; i++ {
			cand := prefix + string(rune('a'+i))
			if !slices.Contains(targets, cand) {
				t.set("dev", cand)
				targets = append(targets, cand)
				break
			}
		}
	}
}

func dictOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func disksEqual(a, b *node) bool {
	ta, tb := a.find("target"), b.find("target")
	da, _ := a.fullDict().(map[string]any)
	db, _ := b.fullDict().(map[string]any)
	src := func(d map[string]any) any {
		s, ok := d["source"]
		if !ok {
			return map[string]any{}
		}
		if sm := dictOf(s); sm != nil {
			c := map[string]any{}
			for k, v := range sm {
				if k != "index" {
					c[k] = v
				}
			}
			return c
		}
		return s
	}
	io := func(d map[string]any) any {
		if dr := dictOf(d["driver"]); dr != nil {
			if v, ok := dr["io"]; ok {
				return v
			}
		}
		return "native"
	}
	dev := func(n *node) string { return unitOr(n, "device", "disk") }
	return ta != nil && tb != nil && fmt.Sprint(src(da)) == fmt.Sprint(src(db)) && ta.attr("bus") == tb.attr("bus") &&
		dev(a) == dev(b) && ta.attr("dev") == tb.attr("dev") && fmt.Sprint(io(da)) == fmt.Sprint(io(db))
}

func nicsEqual(a, b *node) bool {
	filter := func(n *node) [3]any {
		src := n.find("source")
		typ := n.attr("type")
		if _, ok := src.get("network"); ok {
			typ = "network"
		}
		var s any
		if src != nil {
			switch typ {
			case "network":
				s = attrOrNil(src, "network")
			case "bridge":
				s = attrOrNil(src, "bridge")
			case "direct":
				s = attrOrNil(src, "dev")
			case "hostdev":
				if ad := src.find("address"); ad != nil {
					s = fmt.Sprintf("%s:%s:%s.%s", strings.ReplaceAll(ad.attr("domain"), "0x", ""), strings.ReplaceAll(ad.attr("bus"), "0x", ""),
						strings.ReplaceAll(ad.attr("slot"), "0x", ""), strings.ReplaceAll(ad.attr("function"), "0x", ""))
				}
			}
		}
		var model any
		if md := n.find("model"); md != nil {
			model = attrOrNil(md, "type")
		}
		return [3]any{typ, s, model}
	}
	mac := func(n *node) string {
		if m := n.find("mac"); m != nil {
			return strings.ToLower(m.attr("address"))
		}
		return ""
	}
	ma, mb := mac(a), mac(b)
	return filter(a) == filter(b) && (ma == "" || mb == "" || ma == mb)
}

func graphicsEqual(a, b *node) bool {
	filter := func(n *node) any {
		c := n.clone()
		if p := c.attr("port"); p == "5900" || p == "-1" {
			c.del("port")
		}
		if c.attr("address") == "127.0.0.1" {
			c.del("address")
		}
		if l := c.find("listen"); l != nil && l.attr("address") == "127.0.0.1" {
			l.del("address")
		}
		return c.fullDict()
	}
	return fmt.Sprint(filter(a)) == fmt.Sprint(filter(b))
}

func chardevEqual(a, b *node) bool {
	filter := func(n *node) [3]any {
		var port, proto any
		if s := n.find("source"); s != nil {
			port = attrOrNil(s, "service")
		}
		if p := n.find("protocol"); p != nil {
			proto = attrOrNil(p, "type")
		}
		return [3]any{n.attr("type"), port, proto}
	}
	return filter(a) == filter(b)
}

// libvirt flags of the live update.
const (
	affectLive   = 1 // VIR_DOMAIN_AFFECT_LIVE
	affectCurent = 0 // VIR_DOMAIN_AFFECT_CURRENT
)

// updateLive is _update_live: the changes a running domain takes now.
func updateLive(dom Domain, newDesc *node, mem, cpu any, oldMemKiB, oldCPU int64, skip map[string]bool, test bool) (*payload.Map, []any, error) {
	status := payload.NewMap()
	var errs []any
	id, err := dom.ID()
	if err != nil {
		return nil, nil, err
	}
	if id < 0 {
		return status, nil, nil
	}
	type command struct {
		device, cmd string
		arg         any
	}
	var cmds []command
	var newCPU any
	if cm := asMap(cpu); cm != nil {
		newCPU = val(cm, "maximum")
	} else if payload.Truthy(cpu) {
		newCPU = cpu
	}
	if n, ok := payload.AsInt(newCPU); ok && n > 0 && n != oldCPU {
		cmds = append(cmds, command{"cpu", "setVcpusFlags", n})
	}
	if payload.Truthy(mem) {
		var newMem *int64
		if mm := asMap(mem); mm != nil {
			if cur, ok := mm.Get("current"); ok {
				b, err := handleUnit(cur)
				if err != nil {
					return nil, nil, err
				}
				k := b / 1024
				newMem = &k
			}
		} else if n, ok := payload.AsInt(mem); ok {
			k := n * 1024
			newMem = &k
		} else if b, err := handleUnit(mem); err == nil {
			k := b / 1024
			newMem = &k
		}
		old := oldMemKiB
		if newMem != nil && !almostEqual(&old, *newMem) {
			cmds = append(cmds, command{"mem", "setMemoryFlags", *newMem})
		}
	}
	lx, err := dom.XML(false)
	if err != nil {
		return nil, nil, err
	}
	oldDesc, err := parseXML(lx)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	changes := deviceChanges(oldDesc, newDesc, skip)
	var removable []*node
	if dc := changes["disk"]; dc != nil {
		var added []*node
		for _, nd := range dc.added {
			dev := unitOr(nd, "device", "disk")
			if dev != "cdrom" && dev != "floppy" {
				added = append(added, nd)
				continue
			}
			target := nd.find("target").attr("dev")
			idx := -1
			for i, od := range dc.deleted {
				if unitOr(od, "device", "disk") == dev && od.find("target") != nil && od.find("target").attr("dev") == target {
					idx = i
					break
				}
			}
			if idx < 0 {
				added = append(added, nd)
				continue
			}
			upd := dc.deleted[idx].clone()
			dc.deleted = append(dc.deleted[:idx], dc.deleted[idx+1:]...)
			upd.set("type", "file")
			if s := upd.child("source"); s != nil {
				upd.remove(s)
			}
			if ns := nd.child("source"); ns != nil && ns.attr("file") != "" {
				src := &node{Tag: "source"}
				src.set("file", ns.attr("file"))
				upd.Children = append(upd.Children, src)
			}
			removable = append(removable, upd)
		}
		dc.added = added
	}
	for _, typ := range []string{"disk", "interface", "hostdev"} {
		dc := changes[typ]
		if dc == nil {
			continue
		}
		for _, n := range dc.added {
			cmds = append(cmds, command{typ, "attachDevice", n.String()})
		}
		for _, n := range dc.deleted {
			cmds = append(cmds, command{typ, "detachDevice", n.String()})
		}
	}
	for _, n := range removable {
		cmds = append(cmds, command{"disk", "updateDeviceFlags", n.String()})
	}
	actions := map[string]string{"attachDevice": "attached", "detachDevice": "detached", "updateDeviceFlags": "updated"}
	for _, cmd := range cmds {
		var err error
		if !test {
			switch cmd.cmd {
			case "setVcpusFlags":
				n, _ := payload.AsInt(cmd.arg)
				err = dom.SetVcpus(uint(n), affectLive)
			case "setMemoryFlags":
				err = dom.SetMemory(uint64(cmd.arg.(int64)), affectLive)
			case "attachDevice":
				err = dom.AttachDevice(cmd.arg.(string))
			case "detachDevice":
				err = dom.DetachDevice(cmd.arg.(string))
			case "updateDeviceFlags":
				err = dom.UpdateDevice(cmd.arg.(string), affectCurent)
			}
		}
		if err != nil {
			var le *LibvirtError
			if !errors.As(err, &le) {
				return nil, nil, err
			}
			errs = append(errs, le.Message)
			continue
		}
		if cmd.device == "cpu" || cmd.device == "mem" {
			status.Set(cmd.device, true)
			continue
		}
		ds := asMap(val(status, cmd.device))
		if ds == nil {
			ds = payload.NewMap()
			status.Set(cmd.device, ds)
		}
		act := actions[cmd.cmd]
		ds.Set(act, append(asList(val(ds, act)), cmd.arg))
	}
	return status, errs, nil
}

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
// (cpu, memory, boot, boot_dev, clock, stop_on_reboot, disks, interfaces,
// graphics, serials, consoles, autostart) and the live changes it can
// make on a running domain.

const updateDoc = `Update the definition of an existing domain.

CLI Example:

    salt '*' virt.update domain cpu=2 mem=1024

gsalt: cpu and mem dictionaries take the keys virt.init takes (no model,
topology, numa, tuning or hugepages yet); numatune, host_devices and clock
timers are refused with a clear error. With test=True nothing is changed,
disk images included (Salt 3006 creates new disk images even then), and
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
	if payload.Truthy(a.Get("numatune")) || payload.Truthy(a.Get("host_devices")) {
		return nil, fmt.Errorf("%w: numatune and host_devices are not supported by gsalt's virt.update yet", modules.ErrInvocation)
	}
	if err := checkUpdateValue("cpu", a.Get("cpu"), "maximum", "current", "placement", "cpuset", "match", "mode", "check", "iothreads"); err != nil {
		return nil, err
	}
	if err := checkUpdateValue("mem", a.Get("mem"), "boot", "current", "max", "slots", "hard_limit", "soft_limit", "swap_hard_limit", "min_guarantee"); err != nil {
		return nil, err
	}
	if clock := asMap(a.Get("clock")); clock != nil && clock.Has("timers") {
		return nil, fmt.Errorf("%w: clock timers are not supported by gsalt's virt.update yet", modules.ErrInvocation)
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
	for _, k := range []string{"cpu", "mem", "boot", "clock", "hypervisor_features"} {
		if v := a.Get(k); payload.Truthy(v) {
			if mm := asMap(v); mm != nil {
				v = mm.Clone()
			}
			data.Set(k, v)
		}
	}
	data.Set("stop_on_reboot", a.Bool("stop_on_reboot"))
	if clock := asMap(val(data, "clock")); clock != nil {
		offset := "utc"
		if v, ok := clock.Get("utc"); ok && !payload.Truthy(v) {
			offset = "localtime"
		}
		if clock.Has("timezone") {
			offset = "timezone"
		}
		clock.Set("offset", offset)
	}
	changed, err := changeXML(desc, data, updateMapping(hv))
	if err != nil {
		return nil, err
	}
	needUpdate = changed || needUpdate
	if bd := a.Get("boot_dev"); payload.Truthy(bd) {
		if setBootDevs(desc, strings.Fields(payload.Text(bd))) {
			needUpdate = true
		}
	}

	skip := map[string]bool{
		"disk":      a.Get("disks") == nil && a.Get("disk_profile") == nil,
		"interface": a.Get("interfaces") == nil && a.Get("nic_profile") == nil,
		"graphics":  a.Get("graphics") == nil,
		"serial":    a.Get("serials") == nil,
		"console":   a.Get("consoles") == nil,
		"hostdev":   true,
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

// checkUpdateValue refuses the cpu/mem dictionary keys gsalt does not
// handle yet, and out-of-range numbers.
func checkUpdateValue(what string, v any, allowed ...string) error {
	if mm := asMap(v); mm != nil {
		for _, k := range mm.Keys() {
			if !slices.Contains(allowed, k) {
				return fmt.Errorf("%w: %s.%s is not supported by gsalt's virt.update yet", modules.ErrInvocation, what, k)
			}
		}
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

// xentry is one item of update's change_xml mapping.
type xentry struct {
	path  string // colon-separated path in the data
	xpath string // slash-separated element path from the root
	attr  string // the attribute holding the value; "" for the text
	// kind: "" plain, "mem" byte sizes, "cpuset", "vcpu" (cpu as an int),
	// "loader", "nvram", "onreboot", "onoff".
	kind string
	// ignored attributes when deciding whether an emptied element goes.
	ignored []string
}

func updateMapping(hv string) []xentry {
	ents := []xentry{
		{path: "stop_on_reboot", xpath: "on_reboot", kind: "onreboot"},
		{path: "boot:kernel", xpath: "os/kernel"},
		{path: "boot:initrd", xpath: "os/initrd"},
		{path: "boot:cmdline", xpath: "os/cmdline"},
		{path: "boot:loader", xpath: "os/loader", kind: "loader"},
		{path: "boot:nvram", xpath: "os/nvram", kind: "nvram"},
		{path: "mem", xpath: "memory", kind: "mem"},
		{path: "mem", xpath: "currentMemory", kind: "mem"},
		{path: "mem:max", xpath: "maxMemory", kind: "mem"},
		{path: "mem:boot", xpath: "memory", kind: "mem"},
		{path: "mem:current", xpath: "currentMemory", kind: "mem"},
		{path: "mem:slots", xpath: "maxMemory", attr: "slots", ignored: []string{"unit"}},
		{path: "mem:hard_limit", xpath: "memtune/hard_limit", kind: "mem"},
		{path: "mem:soft_limit", xpath: "memtune/soft_limit", kind: "mem"},
		{path: "mem:swap_hard_limit", xpath: "memtune/swap_hard_limit", kind: "mem"},
		{path: "mem:min_guarantee", xpath: "memtune/min_guarantee", kind: "mem"},
		{path: "cpu", xpath: "vcpu", kind: "vcpu"},
		{path: "cpu:maximum", xpath: "vcpu", kind: "int"},
		{path: "cpu:placement", xpath: "vcpu", attr: "placement"},
		{path: "cpu:cpuset", xpath: "vcpu", attr: "cpuset", kind: "cpuset"},
		{path: "cpu:current", xpath: "vcpu", attr: "current"},
		{path: "cpu:match", xpath: "cpu", attr: "match"},
		{path: "cpu:mode", xpath: "cpu", attr: "mode"},
		{path: "cpu:check", xpath: "cpu", attr: "check"},
		{path: "cpu:iothreads", xpath: "iothreads"},
		{path: "clock:offset", xpath: "clock", attr: "offset"},
		{path: "clock:adjustment", xpath: "clock", attr: "adjustment"},
		{path: "clock:timezone", xpath: "clock", attr: "timezone"},
	}
	if hv == "qemu" || hv == "kvm" {
		ents = append(ents, xentry{path: "hypervisor_features:kvm-hint-dedicated", xpath: "features/kvm/hint-dedicated", attr: "state", kind: "onoff"})
	}
	return ents
}

// getValue is salt.utils.data.get_value for a path without placeholders:
// found is false when the value is not in the data.
func getValue(data any, path []string) (any, bool) {
	obj := data
	for _, k := range path {
		m := asMap(obj)
		if m == nil {
			if obj == nil {
				return nil, true
			}
			return nil, false
		}
		v, ok := m.Get(k)
		if !ok {
			return nil, false
		}
		obj = v
	}
	return obj, true
}

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

// changeXML is xmlutil.change_xml over update's mapping.
func changeXML(doc *node, data *payload.Map, ents []xentry) (bool, error) {
	need := false
	for _, e := range ents {
		v, found := getValue(data, strings.Split(e.path, ":"))
		if !found {
			continue
		}
		if _, isMap := v.(*payload.Map); isMap {
			continue
		}
		if _, isList := v.([]any); isList {
			continue
		}
		if v == nil {
			n := findPath(doc, e.xpath, false)
			if n == nil {
				continue
			}
			if e.attr == "" {
				if p := parentOf(doc, n); p != nil {
					p.remove(n)
					need = true
				}
				continue
			}
			if n.del(e.attr) {
				cleanNode(doc, n, e.ignored)
				need = true
			}
			continue
		}
		n := findPath(doc, e.xpath, true)
		switch e.kind {
		case "mem":
			b, err := handleUnit(v)
			if err != nil {
				return false, err
			}
			if !almostEqual(memBytes(n), b) {
				n.setText(strconv.FormatInt(b, 10))
				n.set("unit", "bytes")
				need = true
			}
			continue
		case "vcpu":
			s := payload.Text(v)
			if strings.TrimSpace(n.text()) != s {
				n.setText(s)
				n.set("current", s)
				need = true
			}
			continue
		case "onreboot":
			want := "restart"
			if payload.Truthy(v) {
				want = "destroy"
			}
			if n.text() != want {
				n.setText(want)
				need = true
			}
			continue
		case "loader":
			s := payload.Text(v)
			if n.textOrNil() == nil || n.text() != s {
				n.setText(s)
				n.set("readonly", "yes")
				n.set("type", "pflash")
				need = true
			}
			continue
		case "nvram":
			// Salt compares the text with the new template path.
			s := payload.Text(v)
			if n.textOrNil() == nil || n.text() != s {
				n.set("template", s)
				need = true
			}
			continue
		}
		want := pyText(v)
		switch e.kind {
		case "cpuset":
			s, err := expandCPUSet(v)
			if err != nil {
				return false, err
			}
			want = s
		case "onoff":
			want = "off"
			if payload.Truthy(v) {
				want = "on"
			}
		}
		var cur any
		if e.attr != "" {
			cur = attrOrNil(n, e.attr)
			if e.kind == "cpuset" && cur != nil {
				s, err := expandCPUSet(cur)
				if err != nil {
					return false, err
				}
				cur = s
			}
		} else {
			cur = n.textOrNil()
			if e.kind == "int" && cur != nil {
				cur = strings.TrimSpace(n.text())
			}
		}
		if cur == nil || payload.Text(cur) != want {
			if e.attr != "" {
				n.set(e.attr, want)
			} else {
				n.setText(want)
			}
			need = true
		}
	}
	return need, nil
}

// pyText is str(v) the way Salt writes a value into the XML.
func pyText(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return payload.Text(v)
}

// setBootDevs applies boot_dev: one <boot dev=...> per device, in order.
func setBootDevs(doc *node, devs []string) bool {
	osNode := findPath(doc, "os", true)
	old := osNode.findAll("boot")
	need := false
	for i, d := range devs {
		if i < len(old) {
			if old[i].attr("dev") != d {
				old[i].set("dev", d)
				need = true
			}
			continue
		}
		osNode.Children = append(osNode.Children, &node{Tag: "boot", Attrs: nil})
		osNode.Children[len(osNode.Children)-1].set("dev", d)
		need = true
	}
	for _, extra := range old[min(len(devs), len(old)):] {
		osNode.remove(extra)
		need = true
	}
	return need
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

package virt

import (
	"fmt"
	"html"
	"net/url"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// domainSpec is everything the domain XML of virt.init is built from (the
// context Salt's _gen_xml hands its libvirt_domain template).
type domainSpec struct {
	name, hypervisor, osType, arch string
	cpu, mem                       any
	disks                          []*payload.Map
	nics                           []*payload.Map
	graphics                       *payload.Map
	boot                           *payload.Map
	bootDev                        any
	serials, consoles              []any
	stopOnReboot                   bool
	hypervisorFeatures             *payload.Map
	clock                          *payload.Map
	// hostdevs are the passed-through host devices (hostdevContext).
	hostdevs []*payload.Map
}

// xw writes XML with escaped attribute values.
type xw struct{ strings.Builder }

func (w *xw) line(format string, a ...any) { fmt.Fprintf(&w.Builder, format+"\n", a...) }

func esc(v any) string { return html.EscapeString(payload.Text(v)) }

// optAttrXML is the template's opt_attribute: ` name='value'` when set.
func optAttrXML(m *payload.Map, name string, conv func(any) (string, error)) (string, error) {
	if m == nil {
		return "", nil
	}
	v, ok := m.Get(name)
	if !ok || v == nil {
		return "", nil
	}
	s := payload.Text(v)
	if conv != nil {
		var err error
		if s, err = conv(v); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf(" %s='%s'", name, html.EscapeString(s)), nil
}

func yesno(v any) (string, error) {
	if payload.Truthy(v) {
		return "yes", nil
	}
	return "no", nil
}

func asMap(v any) *payload.Map {
	m, _ := v.(*payload.Map)
	return m
}

// unsupported reports keys of m outside allowed.
func unsupported(what string, m *payload.Map, allowed ...string) error {
	if m == nil {
		return nil
	}
	for _, k := range m.Keys() {
		ok := false
		for _, a := range allowed {
			if a == k {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("%w: %s.%s is not supported by gsalt's virt.init yet", modules.ErrInvocation, what, k)
		}
	}
	return nil
}

// genDomainXML builds the domain definition virt.init defines; libvirt
// reads it the same as the XML Salt's template renders for these
// arguments.
func genDomainXML(s *domainSpec) (string, error) {
	var w xw
	w.line("<domain type='%s'>", esc(s.hypervisor))
	w.line("  <name>%s</name>", esc(s.name))
	// CPU: an int is the maximum; a dict takes Salt's keys.
	var cpu *payload.Map
	switch x := s.cpu.(type) {
	case *payload.Map:
		cpu = x
		if err := unsupported("cpu", cpu, "maximum", "current", "placement", "cpuset", "match", "mode", "check", "iothreads"); err != nil {
			return "", err
		}
	case nil:
	default:
		cpu = payload.NewMap("maximum", payload.Text(x))
	}
	if cpu != nil && cpu.Len() > 0 {
		attrs := ""
		for _, k := range []string{"placement", "cpuset", "current"} {
			a, _ := optAttrXML(cpu, k, nil)
			attrs += a
		}
		max := ""
		if v, ok := cpu.Get("maximum"); ok {
			max = esc(v)
		}
		w.line("  <vcpu%s>%s</vcpu>", attrs, max)
		attrs = ""
		for _, k := range []string{"match", "mode", "check"} {
			a, _ := optAttrXML(cpu, k, nil)
			attrs += a
		}
		w.line("  <cpu%s/>", attrs)
		if v, ok := cpu.Get("iothreads"); ok && payload.Truthy(v) {
			w.line("  <iothreads>%s</iothreads>", esc(v))
		}
	}
	// Memory: an int (MiB) is boot and current memory.
	var mem *payload.Map
	switch x := s.mem.(type) {
	case *payload.Map:
		mem = x
		if err := unsupported("mem", mem, "boot", "current", "max", "slots", "hard_limit", "soft_limit", "swap_hard_limit", "min_guarantee"); err != nil {
			return "", err
		}
	case nil:
	default:
		if n, ok := payload.AsInt(x); ok {
			mem = payload.NewMap("boot", n, "current", n)
		} else {
			mem = payload.NewMap("boot", x, "current", x)
		}
	}
	if mem != nil && mem.Len() > 0 {
		if v, ok := mem.Get("max"); ok && payload.Truthy(v) {
			kib, err := toKiB(v)
			if err != nil {
				return "", err
			}
			slots, _ := optAttrXML(mem, "slots", nil)
			w.line("  <maxMemory%s unit='KiB'>%d</maxMemory>", slots, kib)
		}
		for _, e := range [][2]string{{"boot", "memory"}, {"current", "currentMemory"}} {
			if v, ok := mem.Get(e[0]); ok && payload.Truthy(v) {
				kib, err := toKiB(v)
				if err != nil {
					return "", err
				}
				w.line("  <%s unit='KiB'>%d</%s>", e[1], kib, e[1])
			}
		}
		w.line("  <memtune>")
		for _, k := range []string{"hard_limit", "soft_limit", "swap_hard_limit", "min_guarantee"} {
			if v, ok := mem.Get(k); ok && payload.Truthy(v) {
				kib, err := toKiB(v)
				if err != nil {
					return "", err
				}
				w.line("    <%s unit='KiB'>%d</%s>", k, kib, k)
			}
		}
		w.line("  </memtune>")
	}
	// OS and boot.
	osAttr := ""
	if s.boot != nil {
		if e, ok := s.boot.Get("efi"); ok {
			if b, isBool := e.(bool); isBool {
				if b {
					osAttr = " firmware='efi'"
				}
			} else if e != nil {
				return "", fmt.Errorf("%w: Invalid efi value", modules.ErrInvocation)
			}
		}
	}
	w.line("  <os%s>", osAttr)
	w.line("    <type arch='%s'>%s</type>", esc(s.arch), esc(s.osType))
	if s.boot != nil {
		for _, k := range []string{"kernel", "initrd", "cmdline"} {
			if v, ok := s.boot.Get(k); ok {
				w.line("    <%s>%s</%s>", k, esc(v), k)
			}
		}
		if v, ok := s.boot.Get("loader"); ok {
			w.line("    <loader readonly='yes' type='pflash'>%s</loader>", esc(v))
		}
		if v, ok := s.boot.Get("nvram"); ok {
			w.line("    <nvram template='%s'></nvram>", esc(v))
		}
	}
	bootDevs := []string{"hd"}
	if s.bootDev != nil {
		bootDevs = strings.Fields(payload.Text(s.bootDev))
	}
	for _, d := range bootDevs {
		w.line("    <boot dev='%s'/>", esc(d))
	}
	w.line("  </os>")
	if s.clock != nil && s.clock.Len() > 0 {
		if err := unsupported("clock", s.clock, "utc", "timezone", "adjustment"); err != nil {
			return "", err
		}
		offset := "utc"
		if v, ok := s.clock.Get("utc"); ok && !payload.Truthy(v) {
			offset = "localtime"
		}
		if s.clock.Has("timezone") {
			offset = "timezone"
		}
		adj, _ := optAttrXML(s.clock, "adjustment", nil)
		tz, _ := optAttrXML(s.clock, "timezone", nil)
		w.line("  <clock offset='%s'%s%s/>", offset, adj, tz)
	}
	onReboot := "restart"
	if s.stopOnReboot {
		onReboot = "destroy"
	}
	w.line("  <on_reboot>%s</on_reboot>", onReboot)
	w.line("  <devices>")
	for _, d := range s.disks {
		if err := writeDisk(&w, d); err != nil {
			return "", err
		}
	}
	if s.hypervisor == "vmware" {
		w.line("    <controller type='scsi' index='0' model='lsilogic'/>")
	}
	for _, n := range s.nics {
		typ := payload.Text(val(n, "type"))
		w.line("    <interface type='%s'>", esc(typ))
		w.line("      <source %s='%s'/>", esc(typ), esc(val(n, "source")))
		if v := val(n, "mac"); payload.Truthy(v) {
			w.line("      <mac address='%s'/>", esc(v))
		}
		if v := val(n, "model"); payload.Truthy(v) {
			w.line("      <model type='%s'/>", esc(v))
		}
		w.line("    </interface>")
	}
	if g := s.graphics; g != nil {
		port, _ := optAttrXML(g, "port", nil)
		listen := asMap(val(g, "listen"))
		addr := ""
		if listen != nil && payload.Truthy(val(listen, "address")) {
			addr = fmt.Sprintf(" listen='%s'", esc(val(listen, "address")))
		}
		tls := ""
		if g.Str("type") == "spice" && payload.Truthy(val(g, "tls_port")) {
			tls = fmt.Sprintf(" tlsPort='%s'", esc(val(g, "tls_port")))
		}
		auto, _ := yesno(!payload.Truthy(val(g, "port")) && !payload.Truthy(val(g, "tls_port")))
		w.line("    <graphics type='%s'%s%s%s autoport='%s'>", esc(val(g, "type")), port, addr, tls, auto)
		la, _ := optAttrXML(listen, "address", nil)
		w.line("      <listen type='%s'%s/>", esc(val(listen, "type")), la)
		w.line("    </graphics>")
		if g.Str("type") == "spice" && (s.hypervisor == "qemu" || s.hypervisor == "kvm") {
			w.line("    <channel type='spicevmc'><target type='virtio' name='com.redhat.spice.0'/></channel>")
		}
	}
	for _, kind := range []struct {
		tag  string
		devs []any
	}{{"serial", s.serials}, {"console", s.consoles}} {
		for _, d := range kind.devs {
			dev := asMap(d)
			if dev == nil {
				return "", fmt.Errorf("%w: %ss must be a list of dictionaries", modules.ErrInvocation, kind.tag)
			}
			w.line("    <%s type='%s'>", kind.tag, esc(val(dev, "type")))
			writeChardev(&w, dev)
			w.line("    </%s>", kind.tag)
		}
	}
	if s.hypervisor == "qemu" || s.hypervisor == "kvm" {
		w.line("    <channel type='unix'>")
		w.line("      <target type='virtio' name='org.qemu.guest_agent.0'/>")
		w.line("    </channel>")
	}
	for _, h := range s.hostdevs {
		managed := ""
		if h.Str("type") == "pci" {
			managed = " managed='yes'"
		}
		w.line("    <hostdev mode='subsystem' type='%s'%s>", esc(val(h, "type")), managed)
		w.line("      <source>")
		switch h.Str("type") {
		case "usb":
			w.line("        <vendor id='%s'/>", esc(val(h, "vendor")))
			w.line("        <product id='%s'/>", esc(val(h, "product")))
		case "pci":
			w.line("        <address domain='%s' bus='%s' slot='%s' function='%s'/>", esc(val(h, "domain")), esc(val(h, "bus")),
				esc(val(h, "slot")), esc(val(h, "function")))
		}
		w.line("      </source>")
		w.line("    </hostdev>")
	}
	w.line("  </devices>")
	w.line("  <features>")
	w.line("    <acpi/>")
	w.line("    <apic/>")
	w.line("    <pae/>")
	if s.hypervisorFeatures != nil && payload.Truthy(val(s.hypervisorFeatures, "kvm-hint-dedicated")) {
		w.line("    <kvm><hint-dedicated state='on'/></kvm>")
	}
	w.line("  </features>")
	w.line("</domain>")
	return w.String(), nil
}

func writeDisk(w *xw, d *payload.Map) error {
	typ := d.Str("type")
	w.line("    <disk type='%s' device='%s'>", esc(typ), esc(val(d, "device")))
	switch {
	case typ == "file" && d.Has("source_file"):
		w.line("      <source file='%s'/>", esc(val(d, "source_file")))
	case typ == "block":
		w.line("      <source dev='%s'/>", esc(val(d, "source_file")))
	case typ == "volume" && d.Has("pool"):
		w.line("      <source pool='%s' volume='%s'/>", esc(val(d, "pool")), esc(val(d, "volume")))
	case typ == "network":
		q := ""
		if v := d.Str("query"); v != "" {
			q = fmt.Sprintf(" query='%s'", esc(v))
		}
		w.line("      <source protocol='%s' name='%s'%s>", esc(val(d, "protocol")), esc(val(d, "volume")), q)
		for _, h := range asList(val(d, "hosts")) {
			hm := asMap(h)
			port, _ := optAttrXML(hm, "port", nil)
			w.line("        <host name='%s'%s/>", esc(val(hm, "name")), port)
		}
		w.line("      </source>")
	}
	w.line("      <target dev='%s' bus='%s'/>", esc(val(d, "target_dev")), esc(val(d, "disk_bus")))
	if payload.Truthy(val(d, "address")) {
		w.line("      <address type='drive' controller='0' bus='0' target='0' unit='%s'/>", esc(val(d, "index")))
	}
	if payload.Truthy(val(d, "driver")) {
		io, _ := optAttrXML(d, "iothread", nil)
		w.line("      <driver name='qemu' type='%s' cache='none' io='%s'%s/>", esc(val(d, "format")), esc(val(d, "io")), io)
	}
	w.line("    </disk>")
	return nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// writeChardev is the chardev macro of Salt's template.
func writeChardev(w *xw, dev *payload.Map) {
	typ := dev.Str("type")
	switch typ {
	case "unix":
		w.line("      <source mode='bind' path='%s'/>", esc(val(dev, "path")))
	case "udp", "tcp":
		host := "0.0.0.0"
		if v, ok := dev.Get("host"); ok {
			host = payload.Text(v)
		}
		tls := ""
		if v, ok := dev.Get("tls"); ok && v != nil {
			t, _ := yesno(v)
			tls = fmt.Sprintf(" tls='%s'", t)
		}
		w.line("      <source mode='bind' host='%s' service='%s'%s/>", esc(host), esc(val(dev, "port")), tls)
	case "pipe", "dev", "pty", "file":
		if payload.Truthy(val(dev, "path")) {
			w.line("      <source path='%s'/>", esc(val(dev, "path")))
		}
	}
	if typ == "tcp" {
		w.line("      <protocol type='%s'/>", esc(val(dev, "protocol")))
	}
	if dev.Has("target_port") || dev.Has("target_type") {
		port := any(int64(0))
		if v, ok := dev.Get("target_port"); ok {
			port = v
		}
		tt := ""
		if v := val(dev, "target_type"); payload.Truthy(v) {
			tt = fmt.Sprintf(" type='%s'", esc(v))
		}
		w.line("      <target port='%s'%s/>", esc(port), tt)
	}
}

// parseDiskURL splits a source_file that is a remote URL, like init does.
func parseDiskURL(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Hostname() == "" {
		return nil, false
	}
	return u, true
}

// val is m[key] or nil (also for a nil map).
func val(m *payload.Map, key string) any {
	if m == nil {
		return nil
	}
	v, _ := m.Get(key)
	return v
}

// hostdevContext is _gen_xml's host devices part: the PCI addresses and
// USB ids of the named node devices (other kinds are left out, as Salt
// does).
func hostdevContext(conn Conn, names any) ([]*payload.Map, error) {
	var out []*payload.Map
	for _, n := range asList(names) {
		x, caps, err := conn.NodeDevice(payload.Text(n))
		if err != nil {
			return nil, fmt.Errorf("%w: Failed to get host devices: %s", modules.ErrExecution, err.Error())
		}
		doc, err := parseXML(x)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		has := func(c string) bool {
			for _, x := range caps {
				if x == c {
					return true
				}
			}
			return false
		}
		switch {
		case has("pci"):
			var pci *node
			for _, c := range doc.findAll("capability") {
				if c.attr("type") == "pci" {
					pci = c
					break
				}
			}
			num := func(tag string) int64 {
				v, _ := strconv.ParseInt(strings.TrimSpace(pci.find(tag).text()), 10, 64)
				return v
			}
			if pci == nil {
				continue
			}
			out = append(out, payload.NewMap("type", "pci", "domain", fmt.Sprintf("0x%04x", num("domain")), "bus", fmt.Sprintf("0x%02x", num("bus")),
				"slot", fmt.Sprintf("0x%02x", num("slot")), "function", "0x"+strings.TrimSpace(pci.find("function").text())))
		case has("usb_device"):
			v, p := doc.descendants("vendor"), doc.descendants("product")
			if len(v) == 0 || len(p) == 0 {
				continue
			}
			out = append(out, payload.NewMap("type", "usb", "vendor", v[0].attr("id"), "product", p[0].attr("id")))
		}
	}
	return out, nil
}

// hostdevsEqual is _hostdevs_equal: the same PCI address or USB ids.
func hostdevsEqual(a, b *node) bool {
	key := func(d *node) string {
		t := d.attr("type")
		k := t
		switch t {
		case "pci":
			ad := d.find("source/address")
			for _, at := range []string{"domain", "bus", "slot", "function"} {
				k += "|" + pyStr(attrOrNil(ad, at))
			}
		case "usb":
			for _, at := range []string{"vendor", "product"} {
				k += "|" + pyStr(attrOrNil(d.find("source/"+at), "id"))
			}
		}
		return k
	}
	return key(a) == key(b)
}

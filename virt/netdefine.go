package virt

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// network_define and network_update (Salt 3006's virt module).

func netParams(extra ...modules.Param) modules.Spec {
	ps := []modules.Param{req("name"), req("bridge"), req("forward"), opt("ipv4_config", nil), opt("ipv6_config", nil), opt("vport", nil), opt("tag", nil)}
	ps = append(ps, extra...)
	ps = append(ps, opt("mtu", nil), opt("domain", nil), opt("nat", nil), opt("interfaces", nil), opt("addresses", nil),
		opt("physical_function", nil), opt("dns", nil))
	return kwSpec(ps...)
}

const networkDefineDoc = `Create libvirt network.

CLI Example:

    salt '*' virt.network_define network main bridge openvswitch

gsalt: vport= and tag= are honoured (Salt 3006's network_define drops them).`

func (m *Module) netDefineFunctions() []modules.Function {
	return []modules.Function{
		{Name: "virt.network_define", Doc: networkDefineDoc, Spec: netParams(opt("autostart", true), opt("start", true)),
			Fn: m.withConn(networkDefine)},
		{Name: "virt.network_update", Doc: "Update a virtual network if needed.\n\nCLI Example:\n\n    salt '*' virt.network_update default virbr0 nat test=True",
			Spec: netParams(opt("test", false)), Fn: m.withConn(networkUpdate)},
		{Name: "virt.pool_update", Doc: "Update a libvirt storage pool if needed.\n\nCLI Example:\n\n    salt '*' virt.pool_update somepool dir target=/srv/vms test=True",
			Spec: kwSpec(req("name"), opt("ptype", nil), opt("target", nil), opt("permissions", nil), opt("source_devices", nil), opt("source_dir", nil),
				opt("source_initiator", nil), opt("source_adapter", nil), opt("source_hosts", nil), opt("source_auth", nil), opt("source_name", nil),
				opt("source_format", nil), opt("test", false)),
			Fn: m.withConn(poolUpdate)},
	}
}

var pciAddr = regexp.MustCompile(`^([0-9]+):([0-9a-f]+):([0-9a-f]+)\.([0-9])$`)

// networkXML is the definition _gen_net_xml renders.
func networkXML(a *modules.Args) (string, error) {
	var w xw
	w.line("<network>")
	w.line("  <name>%s</name>", esc(a.Get("name")))
	if b := a.Get("bridge"); payload.Truthy(b) {
		w.line("  <bridge name='%s'/>", esc(b))
	}
	if v := a.Get("mtu"); payload.Truthy(v) {
		w.line("  <mtu size='%s'/>", esc(v))
	}
	if d := asMap(a.Get("domain")); d != nil && d.Len() > 0 {
		lo, _ := optAttrXML(d, "localOnly", yesno)
		w.line("  <domain name='%s'%s/>", esc(val(d, "name")), lo)
	} else if s, ok := a.Get("domain").(string); ok && s != "" {
		return "", fmt.Errorf("%w: domain must be a dictionary with a name key", modules.ErrInvocation)
	}
	fwd := a.Get("forward")
	if payload.Truthy(fwd) {
		managed := ""
		if payload.Text(fwd) == "hostdev" {
			managed = " managed='yes'"
		}
		w.line("  <forward mode='%s'%s>", esc(fwd), managed)
	}
	if nat := asMap(a.Get("nat")); nat != nil && nat.Len() > 0 {
		w.line("    <nat>")
		if ad := asMap(val(nat, "address")); ad != nil && ad.Len() > 0 {
			w.line("      <address start='%s' end='%s'/>", esc(val(ad, "start")), esc(val(ad, "end")))
		}
		if p := asMap(val(nat, "port")); p != nil && p.Len() > 0 {
			w.line("      <port start='%s' end='%s'/>", esc(val(p, "start")), esc(val(p, "end")))
		}
		w.line("    </nat>")
	}
	if s := a.Str("interfaces"); payload.Truthy(a.Get("interfaces")) {
		for _, i := range strings.Split(s, " ") {
			w.line("    <interface dev='%s'/>", esc(i))
		}
	}
	if s := a.Str("addresses"); payload.Truthy(a.Get("addresses")) {
		for _, addr := range strings.Split(strings.ToLower(s), " ") {
			if m := pciAddr.FindStringSubmatch(addr); m != nil {
				w.line("    <address type='pci' domain='0x%s' bus='0x%s' slot='0x%s' function='0x%s'/>", m[1], m[2], m[3], m[4])
			}
		}
	}
	if pf := a.Get("physical_function"); payload.Truthy(pf) {
		w.line("    <pf dev='%s'/>", esc(pf))
	}
	if payload.Truthy(fwd) {
		w.line("  </forward>")
	}
	vport := a.Get("vport")
	if s, ok := vport.(string); ok {
		vport = payload.NewMap("type", s)
	}
	if vp := asMap(vport); vp != nil && vp.Len() > 0 {
		w.line("  <virtualport type='%s'>", esc(val(vp, "type")))
		if ps := asMap(val(vp, "parameters")); ps != nil && ps.Len() > 0 {
			attrs := ""
			for _, it := range ps.Items() {
				attrs += fmt.Sprintf(" %s='%s'", esc(payload.KeyString(it.Key)), esc(it.Value))
			}
			w.line("    <parameters%s/>", attrs)
		}
		w.line("  </virtualport>")
	}
	tag := a.Get("tag")
	switch tag.(type) {
	case string, int64:
		tag = payload.NewMap("tags", []any{payload.NewMap("id", tag)})
	}
	if vl := asMap(tag); vl != nil && vl.Len() > 0 {
		trunk, _ := optAttrXML(vl, "trunk", yesno)
		w.line("  <vlan%s>", trunk)
		for _, t := range asList(val(vl, "tags")) {
			tm := asMap(t)
			nm, _ := optAttrXML(tm, "nativeMode", nil)
			w.line("    <tag id='%s'%s/>", esc(val(tm, "id")), nm)
		}
		w.line("  </vlan>")
	}
	if dns := asMap(a.Get("dns")); dns != nil && dns.Len() > 0 {
		w.line("  <dns>")
		for _, f := range asList(val(dns, "forwarders")) {
			fm := asMap(f)
			d, _ := optAttrXML(fm, "domain", nil)
			ad, _ := optAttrXML(fm, "addr", nil)
			w.line("    <forwarder%s%s/>", d, ad)
		}
		if txt := asMap(val(dns, "txt")); txt != nil {
			for _, k := range slices.Sorted(slices.Values(txt.Keys())) {
				w.line("    <txt name='%s' value='%s'/>", esc(k), esc(val(txt, k)))
			}
		}
		if hosts := asMap(val(dns, "hosts")); hosts != nil {
			for _, ip := range slices.Sorted(slices.Values(hosts.Keys())) {
				w.line("    <host ip='%s'>", esc(ip))
				for _, h := range asList(val(hosts, ip)) {
					w.line("      <hostname>%s</hostname>", esc(h))
				}
				w.line("    </host>")
			}
		}
		for _, s := range asList(val(dns, "srvs")) {
			sm := asMap(s)
			attrs := ""
			for _, k := range []string{"port", "target", "priority", "weight", "domain"} {
				x, _ := optAttrXML(sm, k, nil)
				attrs += x
			}
			w.line("    <srv service='%s' protocol='%s'%s/>", esc(val(sm, "name")), esc(val(sm, "protocol")), attrs)
		}
		w.line("  </dns>")
	}
	for _, key := range []string{"ipv4_config", "ipv6_config"} {
		cfg := asMap(a.Get(key))
		if cfg == nil || cfg.Len() == 0 {
			continue
		}
		cidr := payload.Text(val(cfg, "cidr"))
		pfx, err := netip.ParsePrefix(cidr)
		if err != nil {
			return "", fmt.Errorf("%w: %s does not appear to be an IPv4 or IPv6 network", modules.ErrInvocation, cidr)
		}
		if pfx.Masked() != pfx {
			return "", fmt.Errorf("%w: %s has host bits set", modules.ErrInvocation, cidr)
		}
		family := "4"
		if pfx.Addr().Is6() {
			family = "6"
		}
		first := pfx.Addr()
		if pfx.Bits() < pfx.Addr().BitLen()-1 || (pfx.Addr().Is6() && pfx.Bits() < 128) {
			first = first.Next()
		}
		w.line("  <ip family='ipv%s' address='%s' prefix='%d'>", family, first, pfx.Bits())
		w.line("    <dhcp>")
		for _, r := range asList(val(cfg, "dhcp_ranges")) {
			rm := asMap(r)
			w.line("      <range start='%s' end='%s'/>", esc(val(rm, "start")), esc(val(rm, "end")))
		}
		if hosts := asMap(val(cfg, "hosts")); hosts != nil {
			for _, ip := range slices.Sorted(slices.Values(hosts.Keys())) {
				h := asMap(val(hosts, ip))
				mac, _ := optAttrXML(h, "mac", nil)
				id, _ := optAttrXML(h, "id", nil)
				name, _ := optAttrXML(h, "name", nil)
				w.line("      <host ip='%s'%s%s%s/>", esc(ip), mac, id, name)
			}
		}
		if b := asMap(val(cfg, "bootp")); b != nil && b.Len() > 0 {
			srv, _ := optAttrXML(b, "server", nil)
			w.line("      <bootp file='%s'%s/>", esc(val(b, "file")), srv)
		}
		w.line("    </dhcp>")
		if t := val(cfg, "tftp"); payload.Truthy(t) {
			w.line("    <tftp root='%s'/>", esc(t))
		}
		w.line("  </ip>")
	}
	w.line("</network>")
	return w.String(), nil
}

func networkDefine(_ context.Context, c *modules.Call, conn Conn) (any, error) {
	x, err := networkXML(c.Args)
	if err != nil {
		return nil, err
	}
	c.Log().Debug("network definition", "xml", x)
	_, existed := conn.NetworkByName(c.Args.Str("name"))
	if _, err := conn.DefineNetwork(x); err != nil {
		return nil, err
	}
	n, err := conn.NetworkByName(c.Args.Str("name"))
	if err != nil {
		return nil, err
	}
	start, auto := c.Args.Bool("start"), c.Args.Bool("autostart")
	if start || auto {
		active, err := n.Active()
		if err != nil {
			return nil, err
		}
		if !active {
			if err := n.Create(); err != nil {
				// A network this call defined does not stay behind
				// half-made (gsalt; Salt leaves it defined).
				if existed != nil {
					if uerr := n.Undefine(); uerr != nil {
						c.Log().Warn("virt.network_define: cannot undefine after a failed start", "err", uerr)
					}
				}
				return nil, err
			}
		}
	}
	cur, err := n.Autostart()
	if err != nil {
		return nil, err
	}
	if auto != cur {
		if err := n.SetAutostart(auto); err != nil {
			return nil, err
		}
	}
	return true, nil
}

func networkUpdate(_ context.Context, c *modules.Call, conn Conn) (any, error) {
	a := c.Args
	n, err := conn.NetworkByName(a.Str("name"))
	if err != nil {
		return nil, err
	}
	ox, err := n.XML()
	if err != nil {
		return nil, err
	}
	old, err := parseXML(ox)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	nx, err := networkXML(a)
	if err != nil {
		return nil, err
	}
	neu, err := parseXML(nx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	for _, tag := range []string{"uuid", "mac"} {
		if e := old.child(tag); e != nil {
			neu.insert(1, e.clone())
		}
	}
	old.del("connections")
	if fw := old.child("forward"); fw != nil && fw.child("pf") != nil {
		for _, ad := range fw.findAll("address") {
			fw.remove(ad)
		}
	}
	fwdArg := a.Get("forward")
	if br := old.child("bridge"); br != nil {
		if br.attr("stp") == "on" {
			br.del("stp")
		}
		if br.attr("delay") == "0" {
			br.del("delay")
		}
		var oldFwd any
		if fw := old.child("forward"); fw != nil {
			oldFwd = attrOrNil(fw, "mode")
		}
		sameFwd := (oldFwd == nil && fwdArg == nil) || (oldFwd != nil && fwdArg != nil && payload.Text(oldFwd) == payload.Text(fwdArg))
		okFwd := fwdArg == nil || slices.Contains([]string{"nat", "route", "open"}, payload.Text(fwdArg))
		if sameFwd && okFwd && a.Get("bridge") == nil && strings.HasPrefix(br.attr("name"), "virbr") {
			br.del("name")
		}
	}
	for _, ip := range old.findAll("ip") {
		if fam, ok := ip.get("family"); ok && fam != "ipv4" {
			continue
		}
		if mask, ok := ip.get("netmask"); ok {
			ip.del("netmask")
			if mask != "" {
				bits := maskBits(mask)
				ip.set("prefix", strconv.Itoa(bits))
			}
		}
	}
	for _, doc := range []*node{old, neu} {
		for _, ip := range doc.findAll("ip") {
			if _, ok := ip.get("family"); !ok {
				ip.set("family", "ipv4")
			}
		}
	}
	old.stripSpaces().removeEmpty()
	neu.stripSpaces()
	needs := !sameDoc(old, neu)
	if needs && !a.Bool("test") {
		if _, err := conn.DefineNetwork(neu.String()); err != nil {
			return nil, err
		}
	}
	return needs, nil
}

// maskBits is the prefix length of a dotted IPv4 netmask.
func maskBits(mask string) int {
	a, err := netip.ParseAddr(mask)
	if err != nil || !a.Is4() {
		return 0
	}
	b := a.As4()
	n := 0
	for _, x := range b {
		for i := 7; i >= 0; i-- {
			if x&(1<<i) == 0 {
				return n
			}
			n++
		}
	}
	return n
}

// poolUpdate is virt.pool_update: a source_auth with a password creates
// or updates the pool's secret (even with test=True, the value is only
// set without it), like Salt 3006.
func poolUpdate(_ context.Context, c *modules.Call, conn Conn) (any, error) {
	a := c.Args
	p, err := conn.PoolByName(a.Str("name"))
	if err != nil {
		return nil, err
	}
	ox, err := p.XML()
	if err != nil {
		return nil, err
	}
	old, err := parseXML(ox)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	var usage, uuid string
	if sn := old.find("source/auth/secret"); sn != nil {
		usage, uuid = sn.attr("usage"), sn.attr("uuid")
	}
	auth, _, err := poolSetSecret(conn, a.Str("ptype"), a.Str("name"), a.Get("source_auth"), uuid, usage, a.Bool("test"))
	if err != nil {
		return nil, err
	}
	nx, err := poolXML(a, auth)
	if err != nil {
		return nil, err
	}
	neu, err := parseXML(nx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	for _, tag := range []string{"available", "allocation", "capacity", "uuid"} {
		if e := old.child(tag); e != nil {
			neu.insert(1, e.clone())
		}
	}
	old.stripSpaces().removeEmpty()
	neu.stripSpaces()
	needs := !sameDoc(old, neu)
	if needs && !a.Bool("test") {
		if _, err := conn.DefinePool(neu.String()); err != nil {
			return nil, err
		}
	}
	return needs, nil
}

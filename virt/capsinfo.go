package virt

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// The host and domain capabilities as Salt's virt.capabilities,
// virt.domain_capabilities and virt.all_capabilities return them.

func (m *Module) capsFunctions() []modules.Function {
	return []modules.Function{
		{Name: "virt.capabilities", Doc: "Return the hypervisor connection capabilities.\n\nCLI Example:\n\n    salt '*' virt.capabilities", Spec: kwSpec(),
			Fn: m.withConn(func(_ context.Context, _ *modules.Call, conn Conn) (any, error) {
				x, err := conn.Capabilities()
				if err != nil {
					// Salt turns a libvirt error into a CommandExecutionError here.
					return nil, fmt.Errorf("%w: %s", modules.ErrExecution, err.Error())
				}
				doc, err := parseXML(x)
				if err != nil {
					return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
				}
				return hostCaps(doc), nil
			})},
		{Name: "virt.domain_capabilities", Doc: "Return the domain capabilities given an emulator, architecture, machine or virtualization type.\n\nCLI Example:\n\n    salt '*' virt.domain_capabilities arch='x86_64' domain='kvm'",
			Spec: kwSpec(opt("emulator", nil), opt("arch", nil), opt("machine", nil), opt("domain", nil)),
			Fn: m.withConn(func(_ context.Context, c *modules.Call, conn Conn) (any, error) {
				a := c.Args
				x, err := conn.DomainCapabilities(optText(a.Get("emulator")), optText(a.Get("arch")), optText(a.Get("machine")), optText(a.Get("domain")))
				if err != nil {
					return nil, err
				}
				doc, err := parseXML(x)
				if err != nil {
					return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
				}
				return domainCaps(doc), nil
			})},
		{Name: "virt.all_capabilities", Doc: "Return the host and domain capabilities in a single call.\n\nCLI Example:\n\n    salt '*' virt.all_capabilities", Spec: kwSpec(),
			Fn: m.withConn(func(_ context.Context, _ *modules.Call, conn Conn) (any, error) {
				x, err := conn.Capabilities()
				if err != nil {
					return nil, err
				}
				doc, err := parseXML(x)
				if err != nil {
					return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
				}
				host := hostCaps(doc)
				var doms []any
				for _, g := range asList(val(host, "guests")) {
					arch := asMap(val(asMap(g), "arch"))
					for _, typ := range asMap(val(arch, "domains")).Keys() {
						dx, err := conn.DomainCapabilities(optText(val(arch, "emulator")), optText(val(arch, "name")), "", typ)
						if err != nil {
							return nil, err
						}
						dd, err := parseXML(dx)
						if err != nil {
							return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
						}
						doms = append(doms, domainCaps(dd))
					}
				}
				if doms == nil {
					doms = []any{}
				}
				return payload.NewMap("host", host, "domains", doms), nil
			})},
	}
}

// optText is a string argument, "" (libvirt's NULL) for None.
func optText(v any) string {
	if v == nil {
		return ""
	}
	return payload.Text(v)
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// hostCaps is _capabilities: {host, guests}.
func hostCaps(doc *node) *payload.Map {
	guests := []any{}
	for _, g := range doc.findAll("guest") {
		guests = append(guests, capsGuest(g))
	}
	return payload.NewMap("host", capsHost(doc.find("host")), "guests", guests)
}

func capsAddMachine(machines *payload.Map, n *node) {
	maxcpus := n.attr("maxCpus")
	name := n.text()
	alternate := ""
	if canonical := n.attr("canonical"); canonical != "" {
		alternate, name = name, canonical
	}
	machine := asMap(val(machines, name))
	if machine == nil {
		machine = payload.NewMap("alternate_names", []any{})
		if maxcpus != "" {
			machine.Set("maxcpus", atoi(maxcpus))
		}
		machines.Set(name, machine)
	}
	if alternate != "" {
		machine.Set("alternate_names", append(asList(val(machine, "alternate_names")), alternate))
	}
}

func capsGuest(g *node) *payload.Map {
	archNode := g.find("arch")
	arch := payload.NewMap("name", attrOrNil(archNode, "name"), "machines", payload.NewMap(), "domains", payload.NewMap())
	res := payload.NewMap("os_type", strOrNil(g.find("os_type")), "arch", arch)
	hasChild := false
	if archNode != nil {
		for _, ch := range archNode.Children {
			hasChild = true
			switch ch.Tag {
			case "wordsize":
				arch.Set("wordsize", atoi(ch.text()))
			case "emulator":
				arch.Set("emulator", ch.textOrNil())
			case "machine":
				capsAddMachine(asMap(val(arch, "machines")), ch)
			case "domain":
				d := payload.NewMap("emulator", nil, "machines", payload.NewMap())
				if e := ch.find("emulator"); e != nil {
					d.Set("emulator", e.textOrNil())
				}
				for _, mach := range ch.findAll("machine") {
					capsAddMachine(asMap(val(d, "machines")), mach)
				}
				asMap(val(arch, "domains")).Set(ch.attr("type"), d)
			}
		}
	}
	if f := g.find("features"); f != nil && hasChild {
		feats := payload.NewMap()
		for _, ch := range f.Children {
			toggle := ch.attr("toggle")
			def, ok := ch.get("default")
			feats.Set(ch.Tag, payload.NewMap("toggle", toggle == "yes", "default", !ok || def == "on"))
		}
		res.Set("features", feats)
	}
	return res
}

func unitOr(n *node, attr, def string) string {
	if v, ok := n.get(attr); ok {
		return v
	}
	return def
}

func capsCell(cell *node) *payload.Map {
	res := payload.NewMap("id", atoi(cell.attr("id")))
	if mem := cell.find("memory"); mem != nil {
		res.Set("memory", fmt.Sprintf("%s %s", pyStr(mem.textOrNil()), unitOr(mem, "unit", "KiB")))
	}
	var pages []any
	for _, p := range cell.findAll("pages") {
		pages = append(pages, payload.NewMap("size", fmt.Sprintf("%s %s", pyStr(attrOrNil(p, "size")), unitOr(p, "unit", "KiB")), "available", atoi(p.text())))
	}
	if len(pages) > 0 {
		res.Set("pages", pages)
	}
	dist := payload.NewMap()
	for _, s := range cell.findAll("distances/sibling") {
		dist.SetKey(atoi(s.attr("id")), atoi(s.attr("value")))
	}
	if dist.Len() > 0 {
		res.Set("distances", dist)
	}
	var cpus []any
	for _, c := range cell.findAll("cpus/cpu") {
		cpu := payload.NewMap("id", atoi(c.attr("id")))
		if v := c.attr("socket_id"); v != "" {
			cpu.Set("socket_id", atoi(v))
		}
		if v := c.attr("core_id"); v != "" {
			cpu.Set("core_id", atoi(v))
		}
		if v := c.attr("siblings"); v != "" {
			cpu.Set("siblings", v)
		}
		cpus = append(cpus, cpu)
	}
	if len(cpus) > 0 {
		res.Set("cpus", cpus)
	}
	return res
}

func capsBank(b *node) *payload.Map {
	res := payload.NewMap("id", atoi(b.attr("id")), "level", atoi(b.attr("level")), "type", attrOrNil(b, "type"),
		"size", fmt.Sprintf("%s %s", pyStr(attrOrNil(b, "size")), pyStr(attrOrNil(b, "unit"))), "cpus", attrOrNil(b, "cpus"))
	var controls []any
	for _, c := range b.findAll("control") {
		unit := pyStr(attrOrNil(c, "unit"))
		rc := payload.NewMap("granularity", fmt.Sprintf("%s %s", pyStr(attrOrNil(c, "granularity")), unit), "type", attrOrNil(c, "type"),
			"maxAllocs", atoi(c.attr("maxAllocs")))
		if v := c.attr("min"); v != "" {
			rc.Set("min", fmt.Sprintf("%s %s", v, unit))
		}
		controls = append(controls, rc)
	}
	if len(controls) > 0 {
		res.Set("controls", controls)
	}
	return res
}

func capsHost(host *node) *payload.Map {
	res := payload.NewMap()
	if host == nil {
		return res
	}
	for _, ch := range host.Children {
		switch ch.Tag {
		case "uuid":
			res.Set("uuid", ch.textOrNil())
		case "cpu":
			feats := []any{}
			for _, f := range ch.findAll("feature") {
				feats = append(feats, attrOrNil(f, "name"))
			}
			pages := []any{}
			for _, p := range ch.findAll("pages") {
				pages = append(pages, payload.NewMap("size", fmt.Sprintf("%s %s", pyStr(attrOrNil(p, "size")), unitOr(p, "unit", "KiB"))))
			}
			cpu := payload.NewMap("arch", strOrNil(ch.find("arch")), "model", strOrNil(ch.find("model")), "vendor", strOrNil(ch.find("vendor")),
				"features", feats, "pages", pages)
			if mc := ch.find("microcode"); mc != nil {
				cpu.Set("microcode", attrOrNil(mc, "version"))
			}
			if t := ch.find("topology"); t != nil {
				cpu.Set("sockets", atoi(t.attr("sockets")))
				cpu.Set("cores", atoi(t.attr("cores")))
				cpu.Set("threads", atoi(t.attr("threads")))
			}
			res.Set("cpu", cpu)
		case "power_management":
			pm := []any{}
			for _, c := range ch.Children {
				pm = append(pm, c.Tag)
			}
			res.Set("power_management", pm)
		case "migration_features":
			tr := []any{}
			for _, u := range ch.findAll("uri_transports/uri_transport") {
				tr = append(tr, u.textOrNil())
			}
			res.Set("migration", payload.NewMap("live", ch.find("live") != nil, "transports", tr))
		case "topology":
			cells := []any{}
			for _, c := range ch.findAll("cells/cell") {
				cells = append(cells, capsCell(c))
			}
			res.Set("topology", payload.NewMap("cells", cells))
		case "cache":
			banks := []any{}
			for _, b := range ch.findAll("bank") {
				banks = append(banks, capsBank(b))
			}
			res.Set("cache", payload.NewMap("banks", banks))
		}
	}
	sec := []any{}
	for _, s := range host.findAll("secmodel") {
		labels := []any{}
		for _, l := range s.findAll("baselabel") {
			labels = append(labels, payload.NewMap("type", attrOrNil(l, "type"), "label", l.textOrNil()))
		}
		sec = append(sec, payload.NewMap("model", strOrNil(s.find("model")), "doi", strOrNil(s.find("doi")), "baselabels", labels))
	}
	res.Set("security", sec)
	return res
}

func capsEnum(n *node) (string, []any) {
	vals := []any{}
	for _, v := range n.findAll("value") {
		vals = append(vals, v.textOrNil())
	}
	return n.attr("name"), vals
}

func capsCPU(n *node) *payload.Map {
	res := payload.NewMap()
	for _, mode := range n.findAll("mode") {
		if mode.attr("supported") != "yes" {
			continue
		}
		name := mode.attr("name")
		switch name {
		case "host-passthrough":
			res.Set(name, true)
		case "host-model":
			hm := payload.NewMap()
			if mn := mode.find("model"); mn != nil {
				model := payload.NewMap("name", mn.textOrNil())
				if v := mn.attr("vendor_id"); v != "" {
					model.Set("vendor_id", v)
				}
				if v := mn.attr("fallback"); v != "" {
					model.Set("fallback", v)
				}
				hm.Set("model", model)
			}
			if v := mode.find("vendor"); v != nil && v.text() != "" {
				hm.Set("vendor", v.text())
			}
			feats := payload.NewMap()
			for _, f := range mode.findAll("feature") {
				feats.Set(f.attr("name"), attrOrNil(f, "policy"))
			}
			if feats.Len() > 0 {
				hm.Set("features", feats)
			}
			res.Set(name, hm)
		case "custom":
			cm := payload.NewMap()
			models := payload.NewMap()
			for _, md := range mode.findAll("model") {
				models.Set(md.text(), attrOrNil(md, "usable"))
			}
			if models.Len() > 0 {
				cm.Set("models", models)
			}
			res.Set(name, cm)
		}
	}
	return res
}

func capsDevicesFeatures(n *node) *payload.Map {
	res := payload.NewMap()
	for _, ch := range n.Children {
		if ch.attr("supported") != "yes" {
			continue
		}
		enums := payload.NewMap()
		for _, e := range ch.findAll("enum") {
			if name, vals := capsEnum(e); name != "" {
				enums.Set(name, vals)
			}
		}
		res.Set(ch.Tag, enums)
	}
	return res
}

// domainCaps is _parse_domain_caps.
func domainCaps(doc *node) *payload.Map {
	res := payload.NewMap("emulator", strOrNil(doc.find("path")), "domain", strOrNil(doc.find("domain")),
		"machine", strOrNil(doc.find("machine")), "arch", strOrNil(doc.find("arch")))
	for _, ch := range doc.Children {
		switch ch.Tag {
		case "vcpu":
			if v := ch.attr("max"); v != "" {
				res.Set("max_vcpus", atoi(v))
			}
		case "iothreads":
			res.Set("iothreads", ch.attr("supported") == "yes")
		case "os":
			osm := payload.NewMap()
			if l := ch.find("loader"); l != nil && l.attr("supported") == "yes" {
				loader := payload.NewMap()
				for _, e := range l.findAll("enum") {
					if name, vals := capsEnum(e); name != "" {
						loader.Set(name, vals)
					}
				}
				var vals []any
				for _, v := range l.findAll("value") {
					vals = append(vals, v.textOrNil())
				}
				if len(vals) > 0 {
					loader.Set("values", vals)
				}
				osm.Set("loader", loader)
			}
			res.Set("os", osm)
		case "cpu":
			if cpu := capsCPU(ch); cpu.Len() > 0 {
				res.Set("cpu", cpu)
			}
		case "devices":
			if d := capsDevicesFeatures(ch); d.Len() > 0 {
				res.Set("devices", d)
			}
		case "features":
			if d := capsDevicesFeatures(ch); d.Len() > 0 {
				res.Set("features", d)
			}
		}
	}
	return res
}

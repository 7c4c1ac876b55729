package virt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// domainFunctions are the domain query and life-cycle functions.
func (m *Module) domainFunctions() []modules.Function {
	list := func(o domainsOpts) modules.Func {
		return m.withConn(func(ctx context.Context, c *modules.Call, conn Conn) (any, error) {
			names, err := domainNames(conn, o)
			if err != nil {
				return nil, err
			}
			out := make([]any, len(names))
			for i, n := range names {
				out[i] = n
			}
			return out, nil
		})
	}
	perVM := func(o domainsOpts, info func(ctx context.Context, conn Conn, d Domain) (any, error)) modules.Func {
		return m.withConn(func(ctx context.Context, c *modules.Call, conn Conn) (any, error) {
			out := payload.NewMap()
			if vm := c.Args.Get("vm_"); payload.Truthy(vm) {
				name := payload.Text(vm)
				d, err := getDomain(conn, name)
				if err != nil {
					return nil, err
				}
				v, err := info(ctx, conn, d)
				if err != nil {
					return nil, err
				}
				out.Set(name, v)
				return out, nil
			}
			ds, err := getDomains(conn, o)
			if err != nil {
				return nil, err
			}
			for _, d := range ds {
				n, err := d.Name()
				if err != nil {
					return nil, err
				}
				v, err := info(ctx, conn, d)
				if err != nil {
					return nil, err
				}
				out.Set(n, v)
			}
			return out, nil
		})
	}
	oneVM := func(arg string, fn func(ctx context.Context, c *modules.Call, conn Conn, d Domain) (any, error)) modules.Func {
		return m.withConn(func(ctx context.Context, c *modules.Call, conn Conn) (any, error) {
			d, err := getDomain(conn, c.Args.Str(arg))
			if err != nil {
				return nil, err
			}
			return fn(ctx, c, conn, d)
		})
	}
	action := func(arg string, act func(d Domain) error) modules.Func {
		return oneVM(arg, func(_ context.Context, _ *modules.Call, _ Conn, d Domain) (any, error) {
			if err := act(d); err != nil {
				return nil, err
			}
			return true, nil
		})
	}
	vmSpec := kwSpec(opt("vm_", nil))
	return []modules.Function{
		{Name: "virt.list_domains", Doc: "Return a list of available domains.\n\nCLI Example:\n\n    salt '*' virt.list_domains", Spec: kwSpec(), Fn: list(allDomains)},
		{Name: "virt.list_active_vms", Doc: "Return a list of names for active virtual machine on the minion\n\nCLI Example:\n\n    salt '*' virt.list_active_vms", Spec: kwSpec(), Fn: list(domainsOpts{active: true})},
		{Name: "virt.list_inactive_vms", Doc: "Return a list of names for inactive virtual machine on the minion\n\nCLI Example:\n\n    salt '*' virt.list_inactive_vms", Spec: kwSpec(), Fn: list(domainsOpts{inactive: true})},
		{Name: "virt.vm_info", Doc: "Return detailed information about the vms on this hyper.\n\nCLI Example:\n\n    salt '*' virt.vm_info", Spec: vmSpec, Fn: perVM(allDomains, m.vmInfo)},
		{Name: "virt.vm_state", Doc: "Return list of all the vms and their state.\n\nCLI Example:\n\n    salt '*' virt.vm_state <domain>", Spec: vmSpec,
			Fn: perVM(allDomains, func(_ context.Context, _ Conn, d Domain) (any, error) {
				i, err := d.Info()
				if err != nil {
					return nil, err
				}
				return stateName(i.State), nil
			})},
		{Name: "virt.vm_cputime", Doc: "Return cputime used by the vms on this hyper.\n\nCLI Example:\n\n    salt '*' virt.vm_cputime", Spec: vmSpec,
			Fn: perVM(allDomains, func(_ context.Context, conn Conn, d Domain) (any, error) {
				ni, err := conn.NodeInfo()
				if err != nil {
					return nil, err
				}
				i, err := d.Info()
				if err != nil {
					return nil, err
				}
				pct := 0.0
				if i.CPUTime != 0 {
					pct = (1.0e-7 * float64(i.CPUTime) / float64(ni.CPUs)) / float64(i.NrVirtCPU)
				}
				return payload.NewMap("cputime", int64(i.CPUTime), "cputime_percent", int64(math.RoundToEven(pct))), nil
			})},
		{Name: "virt.vm_netstats", Doc: "Return combined network counters used by the vms on this hyper.\n\nCLI Example:\n\n    salt '*' virt.vm_netstats", Spec: vmSpec,
			Fn: perVM(allDomains, func(_ context.Context, _ Conn, d Domain) (any, error) { return netStats(d) })},
		{Name: "virt.vm_diskstats", Doc: "Return disk usage counters used by the vms on this hyper.\n\nCLI Example:\n\n    salt '*' virt.vm_diskstats", Spec: vmSpec,
			Fn: perVM(domainsOpts{active: true}, func(_ context.Context, _ Conn, d Domain) (any, error) { return diskStats(d) })},
		{Name: "virt.get_nics", Doc: "Return info about the network interfaces of a named vm\n\nCLI Example:\n\n    salt '*' virt.get_nics <domain>", Spec: kwSpec(req("vm_")),
			Fn: oneVM("vm_", func(_ context.Context, _ *modules.Call, _ Conn, d Domain) (any, error) { return getNics(d) })},
		{Name: "virt.get_macs", Doc: "Return a list off MAC addresses from the named vm\n\nCLI Example:\n\n    salt '*' virt.get_macs <domain>", Spec: kwSpec(req("vm_")),
			Fn: oneVM("vm_", func(_ context.Context, _ *modules.Call, _ Conn, d Domain) (any, error) {
				doc, err := domXML(d, false)
				if err != nil {
					return nil, err
				}
				out := []any{}
				for _, n := range doc.findAll("devices/interface/mac") {
					if v, ok := n.get("address"); ok {
						out = append(out, v)
					} else {
						out = append(out, nil)
					}
				}
				return out, nil
			})},
		{Name: "virt.get_graphics", Doc: "Returns the information on vnc for a given vm\n\nCLI Example:\n\n    salt '*' virt.get_graphics <domain>", Spec: kwSpec(req("vm_")),
			Fn: oneVM("vm_", func(_ context.Context, _ *modules.Call, _ Conn, d Domain) (any, error) { return getGraphics(d) })},
		{Name: "virt.get_loader", Doc: "Returns the information on the loader for a given vm\n\nCLI Example:\n\n    salt '*' virt.get_loader <domain>", Spec: kwSpec(req("vm_")),
			Fn: oneVM("vm_", func(_ context.Context, _ *modules.Call, _ Conn, d Domain) (any, error) { return getLoader(d) })},
		{Name: "virt.get_disks", Doc: "Return the disks of a named vm\n\nCLI Example:\n\n    salt '*' virt.get_disks <domain>", Spec: kwSpec(req("vm_")),
			Fn: oneVM("vm_", func(ctx context.Context, _ *modules.Call, conn Conn, d Domain) (any, error) {
				return m.getDisks(ctx, conn, d)
			})},
		{Name: "virt.get_xml", Doc: "Returns the XML for a given vm\n\nCLI Example:\n\n    salt '*' virt.get_xml <domain>", Spec: kwSpec(req("vm_")),
			Fn: oneVM("vm_", func(_ context.Context, _ *modules.Call, _ Conn, d Domain) (any, error) { return d.XML(false) })},
		{Name: "virt.shutdown", Doc: "Send a soft shutdown signal to the named vm\n\nCLI Example:\n\n    salt '*' virt.shutdown <domain>", Spec: kwSpec(req("vm_")), Fn: action("vm_", Domain.Shutdown)},
		{Name: "virt.pause", Doc: "Pause the named vm\n\nCLI Example:\n\n    salt '*' virt.pause <domain>", Spec: kwSpec(req("vm_")), Fn: action("vm_", Domain.Suspend)},
		{Name: "virt.resume", Doc: "Resume the named vm\n\nCLI Example:\n\n    salt '*' virt.resume <domain>", Spec: kwSpec(req("vm_")), Fn: action("vm_", Domain.Resume)},
		{Name: "virt.start", Doc: "Start a defined domain\n\nCLI Example:\n\n    salt '*' virt.start <domain>", Spec: kwSpec(req("name")), Fn: action("name", Domain.Create)},
		{Name: "virt.stop", Doc: "Hard power down the virtual machine, this is equivalent to pulling the power.\n\nCLI Example:\n\n    salt '*' virt.stop <domain>", Spec: kwSpec(req("name")), Fn: action("name", Domain.Destroy)},
		{Name: "virt.reboot", Doc: "Reboot a domain via ACPI request\n\nCLI Example:\n\n    salt '*' virt.reboot <domain>", Spec: kwSpec(req("name")), Fn: action("name", Domain.Reboot)},
		{Name: "virt.reset", Doc: "Reset a VM by emulating the reset button on a physical machine\n\nCLI Example:\n\n    salt '*' virt.reset <domain>", Spec: kwSpec(req("vm_")), Fn: action("vm_", Domain.Reset)},
		{Name: "virt.undefine", Doc: "Remove a defined vm, this does not purge the virtual machine image, and\nthis only works if the vm is powered down\n\nCLI Example:\n\n    salt '*' virt.undefine <domain>", Spec: kwSpec(req("vm_")), Fn: action("vm_", func(d Domain) error { return d.Undefine(true) })},
		{Name: "virt.set_autostart", Doc: "Set the autostart flag on a VM so that the VM will start with the host\nsystem on reboot.\n\nCLI Example:\n\n    salt \"*\" virt.set_autostart <domain> <on | off>", Spec: kwSpec(req("vm_"), opt("state", "on")),
			Fn: oneVM("vm_", func(_ context.Context, c *modules.Call, _ Conn, d Domain) (any, error) {
				switch c.Args.Get("state") {
				case "on":
					return d.SetAutostart(true) == nil, nil
				case "off":
					return d.SetAutostart(false) == nil, nil
				}
				return false, nil
			})},
		{Name: "virt.setmem", Doc: "Changes the amount of memory allocated to VM. The VM must be shutdown\nfor this to work.\n\nCLI Example:\n\n    salt '*' virt.setmem <domain> <size>", Spec: kwSpec(req("vm_"), req("memory"), opt("config", false)),
			Fn: oneVM("vm_", func(_ context.Context, c *modules.Call, _ Conn, d Domain) (any, error) {
				mem, err := c.Args.Int("memory")
				if err != nil {
					return nil, err
				}
				return setLimit(d, c.Args.Bool("config"), func(flags uint32) error { return d.SetMemory(uint64(mem)*1024, flags) }, memMaximum)
			})},
		{Name: "virt.setvcpus", Doc: "Changes the amount of vcpus allocated to VM. The VM must be shutdown\nfor this to work.\n\nCLI Example:\n\n    salt '*' virt.setvcpus <domain> <amount>", Spec: kwSpec(req("vm_"), req("vcpus"), opt("config", false)),
			Fn: oneVM("vm_", func(_ context.Context, c *modules.Call, _ Conn, d Domain) (any, error) {
				n, err := c.Args.Int("vcpus")
				if err != nil {
					return nil, err
				}
				return setLimit(d, c.Args.Bool("config"), func(flags uint32) error { return d.SetVcpus(uint(n), flags) }, vcpuMaximum)
			})},
		{Name: "virt.purge", Doc: "Recursively destroy and delete a persistent virtual machine, pass True for\ndir's to also delete the directories containing the virtual machine disk\nimages - USE WITH EXTREME CAUTION!\n\nCLI Example:\n\n    salt '*' virt.purge <domain>", Spec: kwSpec(req("vm_"), opt("dirs", false), opt("removables", false)),
			Fn: oneVM("vm_", m.purge)},
		{Name: "virt.define_xml_str", Doc: "Define a persistent domain based on the XML passed to the function\n\nCLI Example:\n\n    salt '*' virt.define_xml_str <XML in string format>", Spec: kwSpec(req("xml")),
			Fn: m.withConn(func(_ context.Context, c *modules.Call, conn Conn) (any, error) {
				_, err := conn.DefineDomain(c.Args.Str("xml"))
				return err == nil, err
			})},
		{Name: "virt.create_xml_str", Doc: "Start a transient domain based on the XML passed to the function\n\nCLI Example:\n\n    salt '*' virt.create_xml_str <XML in string format>", Spec: kwSpec(req("xml")),
			Fn: m.withConn(func(_ context.Context, c *modules.Call, conn Conn) (any, error) {
				_, err := conn.CreateDomain(c.Args.Str("xml"))
				return err == nil, err
			})},
		{Name: "virt.define_xml_path", Doc: "Define a persistent domain based on the XML-file path passed to the function\n\nCLI Example:\n\n    salt '*' virt.define_xml_path <path to XML file on the node>", Spec: kwSpec(req("path")),
			Fn: m.xmlPath(Conn.DefineDomain)},
		{Name: "virt.create_xml_path", Doc: "Start a transient domain based on the XML-file path passed to the function\n\nCLI Example:\n\n    salt '*' virt.create_xml_path <path to XML file on the node>", Spec: kwSpec(req("path")),
			Fn: m.xmlPath(Conn.CreateDomain)},
		{Name: "virt.migrate", Doc: "Shared storage migration\n\nCLI Example:\n\n    salt src virt.migrate guest qemu+ssh://dst/system", Spec: kwSpec(req("vm_"), req("target")),
			Fn: m.migrate},
		{Name: "virt.list_snapshots", Doc: "List available snapshots for certain vm or for all.\n\nCLI Example:\n\n    salt '*' virt.list_snapshots", Spec: kwSpec(opt("domain", nil)),
			Fn: m.withConn(func(_ context.Context, c *modules.Call, conn Conn) (any, error) {
				var names []string
				if v := c.Args.Get("domain"); payload.Truthy(v) {
					names = []string{payload.Text(v)}
				}
				ds, err := getDomains(conn, allDomains, names...)
				if err != nil {
					return nil, err
				}
				out := payload.NewMap()
				for _, d := range ds {
					n, _ := d.Name()
					snaps, err := describeSnapshots(d)
					if err != nil {
						return nil, err
					}
					if len(snaps) == 0 {
						out.Set(n, "N/A")
					} else {
						out.Set(n, snaps)
					}
				}
				return out, nil
			})},
		{Name: "virt.snapshot", Doc: "Create a snapshot of a VM.\n\nCLI Example:\n\n    salt '*' virt.snapshot <domain>", Spec: kwSpec(req("domain"), opt("name", nil), opt("suffix", nil)),
			Fn: m.snapshot},
		{Name: "virt.delete_snapshots", Doc: "Delete one or more snapshots of the given VM.\n\nCLI Example:\n\n    salt '*' virt.delete_snapshots <domain> all=True", Spec: modules.Spec{Params: []modules.Param{req("name")}, Varargs: true, Kwargs: true},
			Fn: m.deleteSnapshots},
		{Name: "virt.revert_snapshot", Doc: "Revert snapshot to the previous from current (if available) or to the specific.\n\nCLI Example:\n\n    salt '*' virt.revert_snapshot <domain>", Spec: kwSpec(req("name"), opt("vm_snapshot", nil), opt("cleanup", false)),
			Fn: m.revertSnapshot},
	}
}

// libvirt flag values used by setmem/setvcpus.
const (
	affectCurrent = 0
	affectConfig  = 2
	memMaximum    = 4
	vcpuMaximum   = 4
)

// setLimit is setmem/setvcpus: only for a shut-down VM, the maximum then
// the current value.
func setLimit(d Domain, config bool, set func(flags uint32) error, maxFlag uint32) (any, error) {
	i, err := d.Info()
	if err != nil {
		return nil, err
	}
	if stateName(i.State) != "shutdown" {
		return false, nil
	}
	flags := maxFlag
	if config {
		flags |= affectConfig
	}
	if err := set(flags); err != nil {
		return nil, err
	}
	if err := set(affectCurrent); err != nil {
		return nil, err
	}
	return true, nil
}

func (m *Module) xmlPath(def func(Conn, string) (Domain, error)) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		data, err := os.ReadFile(c.Args.Str("path"))
		if err != nil {
			return false, nil
		}
		conn, err := m.conn(ctx, c)
		if err != nil {
			return nil, err
		}
		defer func() { _ = conn.Close() }()
		if _, err := def(conn, string(data)); err != nil {
			return nil, libvirtErr(err)
		}
		return true, nil
	}
}

func domXML(d Domain, inactive bool) (*node, error) {
	s, err := d.XML(inactive)
	if err != nil {
		return nil, err
	}
	return parseXML(s)
}

// vmInfo is vm_info's _info.
func (m *Module) vmInfo(ctx context.Context, conn Conn, d Domain) (any, error) {
	i, err := d.Info()
	if err != nil {
		return nil, err
	}
	disks, err := m.getDisks(ctx, conn, d)
	if err != nil {
		return nil, err
	}
	gfx, err := getGraphics(d)
	if err != nil {
		return nil, err
	}
	nics, err := getNics(d)
	if err != nil {
		return nil, err
	}
	doc, err := domXML(d, false)
	if err != nil {
		return nil, err
	}
	loader, err := getLoader(d)
	if err != nil {
		return nil, err
	}
	return payload.NewMap(
		"cpu", int64(i.NrVirtCPU),
		"cputime", int64(i.CPUTime),
		"disks", disks,
		"graphics", gfx,
		"nics", nics,
		"uuid", doc.find("uuid").text(),
		"loader", loader,
		"on_crash", doc.find("on_crash").text(),
		"on_reboot", doc.find("on_reboot").text(),
		"on_poweroff", doc.find("on_poweroff").text(),
		"maxMem", int64(i.MaxMem),
		"mem", int64(i.Memory),
		"state", stateName(i.State),
	), nil
}

var nicDictTag = regexp.MustCompile(`^(driver|source|address)`)

// getNics is _get_nics: the inactive definition's interfaces by MAC.
func getNics(d Domain) (*payload.Map, error) {
	doc, err := domXML(d, true)
	if err != nil {
		return nil, err
	}
	nics := payload.NewMap()
	for _, iface := range doc.findAll("devices/interface") {
		nic := payload.NewMap()
		if v, ok := iface.get("type"); ok {
			nic.Set("type", v)
		} else {
			nic.Set("type", nil)
		}
		for _, v := range iface.Children {
			switch v.Tag {
			case "mac":
				nic.Set("mac", optAttr(v, "address"))
			case "model":
				nic.Set("model", optAttr(v, "type"))
			case "target":
				nic.Set("target", optAttr(v, "dev"))
			}
			if nicDictTag.MatchString(v.Tag) {
				nic.Set(v.Tag, v.attrMap())
			}
			if v.Tag == "virtualport" {
				vp := payload.NewMap("type", optAttr(v, "type"))
				for _, a := range v.Attrs {
					vp.Set(a.Name.Local, a.Value)
				}
				nic.Set("virtualport", vp)
			}
		}
		mac, ok := nic.Get("mac")
		if !ok {
			continue
		}
		nics.SetKey(mac, nic)
	}
	return nics, nil
}

// optAttr is node.get(name): the value or None.
func optAttr(n *node, name string) any {
	if v, ok := n.get(name); ok {
		return v
	}
	return nil
}

func getGraphics(d Domain) (*payload.Map, error) {
	doc, err := domXML(d, false)
	if err != nil {
		return nil, err
	}
	out := payload.NewMap("autoport", "None", "keymap", "None", "listen", "None", "port", "None", "type", "None")
	for _, g := range doc.findAll("devices/graphics") {
		for _, a := range g.Attrs {
			out.Set(a.Name.Local, a.Value)
		}
	}
	return out, nil
}

func getLoader(d Domain) (*payload.Map, error) {
	doc, err := domXML(d, false)
	if err != nil {
		return nil, err
	}
	out := payload.NewMap("path", "None")
	for _, g := range doc.findAll("os/loader") {
		out.Set("path", g.Text)
		for _, a := range g.Attrs {
			out.Set(a.Name.Local, a.Value)
		}
	}
	return out, nil
}

// volumeRef is one entry of _get_all_volumes_paths.
type volumeRef struct {
	pool, name    string
	backingStores []string
}

// allVolumePaths maps the path of every volume of the running pools.
func allVolumePaths(conn Conn) (map[string]volumeRef, error) {
	pools, err := conn.Pools()
	if err != nil {
		return nil, err
	}
	out := map[string]volumeRef{}
	for _, p := range pools {
		i, err := p.Info()
		if err != nil {
			return nil, err
		}
		if i.State != poolRunning {
			continue
		}
		pname, err := p.Name()
		if err != nil {
			return nil, err
		}
		vols, err := p.Volumes()
		if err != nil {
			return nil, err
		}
		for _, v := range vols {
			if _, err := v.Info(); err != nil {
				continue
			}
			path, err := v.Path()
			if err != nil {
				return nil, err
			}
			name, _ := v.Name()
			ref := volumeRef{pool: pname, name: name}
			if x, err := v.XML(); err == nil {
				if doc, err := parseXML(x); err == nil {
					for _, bs := range doc.descendants("backingStore") {
						for _, pn := range bs.findAll("path") {
							ref.backingStores = append(ref.backingStores, pn.Text)
						}
					}
				}
			}
			out[path] = ref
		}
	}
	return out, nil
}

const poolRunning = 2

// getDisks is _get_disks.
func (m *Module) getDisks(ctx context.Context, conn Conn, d Domain) (*payload.Map, error) {
	doc, err := domXML(d, false)
	if err != nil {
		return nil, err
	}
	all, err := allVolumePaths(conn)
	if err != nil {
		return nil, err
	}
	disks := payload.NewMap()
	for _, elem := range doc.findAll("devices/disk") {
		source := elem.find("source")
		if source == nil {
			continue
		}
		target := elem.find("target")
		driver := elem.find("driver")
		if target == nil {
			continue
		}
		dev, ok := target.get("dev")
		if !ok {
			continue
		}
		var qemuTarget string
		var extra *payload.Map
		diskType := elem.attr("type")
		device := elem.attr("device")
		if device == "" {
			device = "disk"
		}
		switch diskType {
		case "file":
			qemuTarget = source.attr("file")
			if strings.HasPrefix(qemuTarget, "/dev/zvol/") {
				disks.Set(dev, payload.NewMap("file", qemuTarget, "zfs", true))
				continue
			}
			if ref, ok := all[qemuTarget]; ok {
				qemuTarget, extra = volumeData(conn, elem, ref.pool, ref.name)
			} else if device != "cdrom" {
				extra = m.qemuImgInfo(ctx, qemuTarget)
			}
		case "block":
			qemuTarget = source.attr("dev")
			if ref, ok := all[qemuTarget]; ok {
				qemuTarget, extra = volumeData(conn, elem, ref.pool, ref.name)
			}
		case "network":
			qemuTarget = source.attr("protocol")
			if n := source.attr("name"); n != "" {
				qemuTarget += ":" + n
			}
		case "volume":
			qemuTarget, extra = volumeData(conn, elem, source.attr("pool"), source.attr("volume"))
		}
		if qemuTarget == "" {
			continue
		}
		disk := payload.NewMap("file", qemuTarget, "type", optAttr(elem, "device"))
		if driver != nil {
			if t, ok := driver.get("type"); ok {
				disk.Set("file format", t)
			}
		}
		if extra != nil {
			for _, it := range extra.Items() {
				disk.SetKey(it.Key, it.Value)
			}
		}
		disks.Set(dev, disk)
	}
	return disks, nil
}

// volumeData is _get_disk_volume_data.
func volumeData(conn Conn, elem *node, poolName, volName string) (string, *payload.Map) {
	target := poolName + "/" + volName
	extra := payload.NewMap()
	p, err := conn.PoolByName(poolName)
	if err != nil {
		return target, extra
	}
	v, err := p.VolumeByName(volName)
	if err != nil {
		return target, extra
	}
	vi, err := v.Info()
	if err != nil {
		return target, extra
	}
	extra.Set("virtual size", int64(vi.Capacity))
	extra.Set("disk size", int64(vi.Allocation))
	var chain []*payload.Map
	for _, bs := range elem.descendants("backingStore") {
		src := bs.find("source")
		if src == nil {
			continue
		}
		chain = append(chain, payload.NewMap("file", optAttr(src, "file"), "file format", optAttr(bs.find("format"), "type")))
	}
	if len(chain) > 0 {
		extra.Set("backing file", chain[0])
		parent := chain[0]
		for _, sub := range chain[1:] {
			parent.Set("backing file", sub)
			parent = sub
		}
		return target, extra
	}
	if x, err := v.XML(); err == nil {
		if doc, err := parseXML(x); err == nil {
			if bp := doc.find("backingStore/path"); bp != nil {
				bf := payload.NewMap("file", bp.Text)
				if bfmt := doc.find("backingStore/format"); bfmt != nil {
					bf.Set("file format", optAttr(bfmt, "type"))
				}
				extra.Set("backing file", bf)
			}
		}
	}
	return target, extra
}

// qemuImgInfo runs qemu-img info on a disk file like _get_disks does.
func (m *Module) qemuImgInfo(ctx context.Context, path string) *payload.Map {
	cmd := exec.CommandContext(ctx, m.qemuImg(), "info", "-U", "--output", "json", "--backing-chain", path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return payload.NewMap("error", "qemu-img not found")
	}
	if err != nil {
		return payload.NewMap("error", []byte(stderr.String()))
	}
	return parseQemuImgInfo(out)
}

// parseQemuImgInfo is _parse_qemu_img_info.
func parseQemuImgInfo(data []byte) *payload.Map {
	var raw []map[string]any
	if err := json.Unmarshal(data, &raw); err != nil || len(raw) == 0 {
		return payload.NewMap("error", "cannot parse qemu-img output")
	}
	num := func(v any) any {
		if f, ok := v.(float64); ok {
			return int64(f)
		}
		return v
	}
	disks := make([]*payload.Map, len(raw))
	for i, d := range raw {
		m := payload.NewMap("file", d["filename"], "file format", d["format"], "disk size", num(d["actual-size"]), "virtual size", num(d["virtual-size"]))
		if cs, ok := d["cluster-size"]; ok {
			m.Set("cluster size", num(cs))
		} else {
			m.Set("cluster size", nil)
		}
		if bf, ok := d["full-backing-filename"]; ok {
			m.Set("backing file", fmt.Sprint(bf))
		}
		if snaps, ok := d["snapshots"].([]any); ok {
			var list []any
			for _, s := range snaps {
				sm, _ := s.(map[string]any)
				list = append(list, payload.NewMap("id", sm["id"], "tag", sm["name"], "vmsize", num(sm["vm-state-size"]),
					"date", pyTimestamp(sm["date-sec"], sm["date-nsec"], time.Local),
					"vmclock", pyClock(sm["vm-clock-sec"], sm["vm-clock-nsec"])))
			}
			m.Set("snapshots", list)
		}
		disks[i] = m
	}
	for _, d := range disks {
		bf, ok := d.Get("backing file")
		if !ok {
			continue
		}
		for _, cand := range disks {
			if f, _ := cand.Get("file"); f == bf {
				d.Set("backing file", cand)
				break
			}
		}
	}
	return disks[0]
}

// pyTimestamp is datetime.fromtimestamp(float("sec.nsec")).isoformat().
func pyTimestamp(sec, nsec any, loc *time.Location) string {
	f, _ := strconv.ParseFloat(fmt.Sprintf("%v.%v", sec, nsec), 64)
	t := time.Unix(0, int64(f*1e9)).In(loc)
	return pyISO(t, "T")
}

func pyClock(sec, nsec any) string {
	f, _ := strconv.ParseFloat(fmt.Sprintf("%v.%v", sec, nsec), 64)
	t := time.Unix(0, int64(f*1e9)).UTC()
	s := t.Format("15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

func pyISO(t time.Time, sep string) string {
	s := t.Format("2006-01-02") + sep + t.Format("15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

func netStats(d Domain) (any, error) {
	nics, err := getNics(d)
	if err != nil {
		return nil, err
	}
	var t InterfaceStats
	for _, it := range nics.Items() {
		nic, _ := it.Value.(*payload.Map)
		dev, ok := nic.Get("target")
		if !ok {
			continue
		}
		s, err := d.InterfaceStats(payload.Text(dev))
		if err != nil {
			return nil, err
		}
		t.RxBytes += s.RxBytes
		t.RxPackets += s.RxPackets
		t.RxErrs += s.RxErrs
		t.RxDrop += s.RxDrop
		t.TxBytes += s.TxBytes
		t.TxPackets += s.TxPackets
		t.TxErrs += s.TxErrs
		t.TxDrop += s.TxDrop
	}
	return payload.NewMap("rx_bytes", t.RxBytes, "rx_packets", t.RxPackets, "rx_errs", t.RxErrs, "rx_drop", t.RxDrop,
		"tx_bytes", t.TxBytes, "tx_packets", t.TxPackets, "tx_errs", t.TxErrs, "tx_drop", t.TxDrop), nil
}

func diskStats(d Domain) (any, error) {
	doc, err := domXML(d, false)
	if err != nil {
		return nil, err
	}
	var t BlockStats
	for _, tg := range doc.findAll("devices/disk/target") {
		s, err := d.BlockStats(tg.attr("dev"))
		if err != nil {
			return nil, err
		}
		t.RdReq += s.RdReq
		t.RdBytes += s.RdBytes
		t.WrReq += s.WrReq
		t.WrBytes += s.WrBytes
		t.Errs += s.Errs
	}
	return payload.NewMap("rd_req", t.RdReq, "rd_bytes", t.RdBytes, "wr_req", t.WrReq, "wr_bytes", t.WrBytes, "errs", t.Errs), nil
}

var poolVolume = regexp.MustCompile(`^([^/]+)/(.*)$`)

// purge is virt.purge: stop, delete the disks, undefine.
func (m *Module) purge(ctx context.Context, c *modules.Call, conn Conn, d Domain) (any, error) {
	disks, err := m.getDisks(ctx, conn, d)
	if err != nil {
		return nil, err
	}
	i, err := d.Info()
	if err != nil {
		return nil, err
	}
	if stateName(i.State) != "shutdown" {
		if err := d.Destroy(); err != nil {
			return false, nil
		}
	}
	removables := c.Args.Bool("removables")
	dirs := map[string]bool{}
	for _, it := range disks.Items() {
		disk, _ := it.Value.(*payload.Map)
		typ := disk.Str("type")
		if !removables && (typ == "cdrom" || typ == "floppy") {
			continue
		}
		file := disk.Str("file")
		if _, err := os.Stat(file); err == nil {
			if err := os.Remove(file); err != nil {
				return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
			}
			dirs[filepath.Dir(file)] = true
			continue
		}
		if mm := poolVolume.FindStringSubmatch(file); mm != nil {
			if p, err := conn.PoolByName(mm[1]); err == nil {
				if v, err := p.VolumeByName(mm[2]); err == nil {
					if err := v.Delete(); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if c.Args.Bool("dirs") {
		for _, dir := range slices.Sorted(mapKeys(dirs)) {
			if err := os.RemoveAll(dir); err != nil {
				return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
			}
		}
	}
	if err := d.Undefine(true); err != nil {
		if err := d.Undefine(false); err != nil {
			return nil, err
		}
	}
	return true, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// migrate is virt.migrate: migrate3 to a connection on the target, with
// the flags Salt's _migrate sets. With virt:tunnel (peer-to-peer), gsalt
// uses migrateToURI3, as libvirt requires (Salt calls migrate3, which
// libvirt refuses for peer-to-peer).
func (m *Module) migrate(ctx context.Context, c *modules.Call) (any, error) {
	target := c.Args.Str("target")
	// Salt opens the source connection without the caller's arguments.
	src := &modules.Call{Fun: c.Fun, Env: c.Env, Args: modules.NewArgs(kwSpec(), nil), Pub: c.Pub}
	conn, err := m.conn(ctx, src)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	d, err := getDomain(conn, c.Args.Str("vm_"))
	if err != nil {
		return nil, err
	}
	dstURI := target
	if !strings.Contains(target, "://") {
		dstURI = "qemu://" + target + "/system"
	}
	flags, migrated, err := migrateFlags(ctx, c)
	if err != nil {
		return nil, err
	}
	dst, err := m.dialer().Open(dstURI, &Auth{Username: c.Args.Str("username"), Password: c.Args.Str("password")})
	if err != nil {
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, err.Error())
	}
	defer func() { _ = dst.Close() }()
	nd, err := d.Migrate(dst, dstURI, flags)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, err.Error())
	}
	state, reason, err := nd.State()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, err.Error())
	}
	return state == migrated || reason == migrated, nil
}

// libvirt migration flags (virDomainMigrateFlags).
const (
	migrateLive          = 1
	migratePeer2Peer     = 2
	migrateTunnelled     = 4
	migratePersistDest   = 8
	migrateUndefineSrc   = 16
	migrateNonSharedDisk = 64
	migrateNonSharedInc  = 128
	migrateOffline       = 1024
	migrateCompressed    = 2048
	migratePostcopy      = 32768

	runningMigrated = 2 // VIR_DOMAIN_RUNNING_MIGRATED
	runningUnpaused = 3 // VIR_DOMAIN_RUNNING_UNPAUSED
)

// migrateFlags mirrors _migrate's flag choice; it also returns the state
// the migrated domain must show.
func migrateFlags(ctx context.Context, c *modules.Call) (uint32, int, error) {
	var flags uint32
	migrated := runningMigrated
	def := func(name string) bool {
		if c.Args.Given(name) {
			return payload.Truthy(c.Args.Get(name))
		}
		return true
	}
	isTrue := func(name string) bool { b, ok := c.Args.Get(name).(bool); return ok && b }
	if def("live") {
		flags |= migrateLive
	}
	if def("persistent") {
		flags |= migratePersistDest
	}
	if def("undefinesource") {
		flags |= migrateUndefineSrc
	}
	if isTrue("offline") {
		flags |= migrateOffline
		migrated = runningUnpaused
	}
	if isTrue("compressed") {
		flags |= migrateCompressed
	}
	if payload.Truthy(configGet(ctx, c, "virt:tunnel", nil)) {
		flags |= migratePeer2Peer | migrateTunnelled
	}
	if isTrue("postcopy") {
		flags |= migratePostcopy
	}
	if cs := c.Args.Get("copy_storage"); payload.Truthy(cs) {
		switch payload.Text(cs) {
		case "all":
			flags |= migrateNonSharedDisk
		case "inc", "incremental":
			flags |= migrateNonSharedInc
		default:
			return 0, 0, fmt.Errorf("%w: invalid copy_storage value", modules.ErrInvocation)
		}
	}
	return flags, migrated, nil
}

// seedNonSharedMigrate is virt.seed_non_shared_migrate: empty disk files on
// the migration target with the format and size of the source's disks.
func (m *Module) seedNonSharedMigrate(ctx context.Context, c *modules.Call) (any, error) {
	disks := asMap(c.Args.Get("disks"))
	force := c.Args.Bool("force")
	if disks == nil {
		return true, nil
	}
	for _, it := range disks.Items() {
		d := asMap(it.Value)
		fn := d.Str("file")
		form := d.Str("file format")
		size := payload.Text(val(d, "virtual size"))
		if fn == "" || form == "" || size == "" {
			continue
		}
		if _, err := os.Stat(fn); err == nil && !force {
			if f := m.imageFormat(ctx, fn); f != form {
				return false, nil
			}
		}
		if err := os.MkdirAll(filepath.Dir(fn), 0o755); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		_ = os.Remove(fn)
		if err := m.qemuImg1(ctx, "create", "-q", "-f", form, fn, size); err != nil {
			return nil, fmt.Errorf("%w: %v", modules.ErrExecution, err)
		}
	}
	return true, nil
}

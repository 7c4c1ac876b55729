package virt

import (
	"context"
	"slices"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

func (m *Module) poolFunctions() []modules.Function {
	byName := func(fn func(p Pool, c *modules.Call) (any, error)) modules.Func {
		return m.withConn(func(_ context.Context, c *modules.Call, conn Conn) (any, error) {
			p, err := conn.PoolByName(c.Args.Str("name"))
			if err != nil {
				return nil, err
			}
			return fn(p, c)
		})
	}
	act := func(f func(Pool) error) modules.Func {
		return byName(func(p Pool, _ *modules.Call) (any, error) {
			if err := f(p); err != nil {
				return nil, err
			}
			return true, nil
		})
	}
	name := kwSpec(req("name"))
	return []modules.Function{
		{Name: "virt.list_pools", Doc: "List all storage pools.\n\nCLI Example:\n\n    salt '*' virt.list_pools", Spec: kwSpec(),
			Fn: m.withConn(func(_ context.Context, _ *modules.Call, conn Conn) (any, error) {
				ps, err := conn.Pools()
				if err != nil {
					return nil, err
				}
				out := []any{}
				for _, p := range ps {
					s, err := p.Name()
					if err != nil {
						return nil, err
					}
					out = append(out, s)
				}
				return out, nil
			})},
		{Name: "virt.pool_info", Doc: "Return information on a storage pool provided its name.\n\nCLI Example:\n\n    salt '*' virt.pool_info default", Spec: kwSpec(opt("name", nil)),
			Fn: m.withConn(func(_ context.Context, c *modules.Call, conn Conn) (any, error) {
				res, err := poolInfo(conn, c.Args.Get("name"))
				if err != nil {
					c.Log().Debug("Silenced libvirt error", "err", err)
					return payload.NewMap(), nil
				}
				return res, nil
			})},
		{Name: "virt.pool_get_xml", Doc: "Return the XML definition of a virtual storage pool\n\nCLI Example:\n\n    salt '*' virt.pool_get_xml default", Spec: name,
			Fn: byName(func(p Pool, _ *modules.Call) (any, error) { return p.XML() })},
		{Name: "virt.pool_start", Doc: "Start a defined libvirt storage pool.\n\nCLI Example:\n\n    salt '*' virt.pool_start default", Spec: name, Fn: act(Pool.Create)},
		{Name: "virt.pool_build", Doc: "Build a defined libvirt storage pool.\n\nCLI Example:\n\n    salt '*' virt.pool_build default", Spec: name, Fn: act(Pool.Build)},
		{Name: "virt.pool_stop", Doc: "Stop a defined libvirt storage pool.\n\nCLI Example:\n\n    salt '*' virt.pool_stop default", Spec: name, Fn: act(Pool.Destroy)},
		{Name: "virt.pool_undefine", Doc: "Remove a defined libvirt storage pool. The pool needs to be stopped before calling.\n\nCLI Example:\n\n    salt '*' virt.undefine default", Spec: name,
			Fn: m.withConn(func(_ context.Context, c *modules.Call, conn Conn) (any, error) {
				p, err := conn.PoolByName(c.Args.Str("name"))
				if err != nil {
					return nil, err
				}
				if err := undefinePoolSecret(conn, p, c.Args.Str("name")); err != nil {
					return nil, err
				}
				if err := p.Undefine(); err != nil {
					return nil, err
				}
				return true, nil
			})},
		{Name: "virt.pool_delete", Doc: "Delete the resources of a defined libvirt storage pool.\n\nCLI Example:\n\n    salt '*' virt.pool_delete default", Spec: name, Fn: act(Pool.Delete)},
		{Name: "virt.pool_refresh", Doc: "Refresh a defined libvirt storage pool.\n\nCLI Example:\n\n    salt '*' virt.pool_refresh default", Spec: name, Fn: act(Pool.Refresh)},
		{Name: "virt.pool_set_autostart", Doc: "Set the autostart flag on a libvirt storage pool so that the storage pool\nwill start with the host system on reboot.\n\nCLI Example:\n\n    salt \"*\" virt.pool_set_autostart <pool> <on | off>", Spec: kwSpec(req("name"), opt("state", "on")),
			Fn: byName(func(p Pool, c *modules.Call) (any, error) {
				if err := p.SetAutostart(c.Args.Get("state") == "on"); err != nil {
					return nil, err
				}
				return true, nil
			})},
		{Name: "virt.pool_list_volumes", Doc: "List the volumes contained in a defined libvirt storage pool.\n\nCLI Example:\n\n    salt \"*\" virt.pool_list_volumes <pool>", Spec: name,
			Fn: byName(func(p Pool, _ *modules.Call) (any, error) {
				vs, err := p.Volumes()
				if err != nil {
					return nil, err
				}
				out := []any{}
				for _, v := range vs {
					n, err := v.Name()
					if err != nil {
						return nil, err
					}
					out = append(out, n)
				}
				return out, nil
			})},
		{Name: "virt.volume_infos", Doc: "Provide details on a storage volume.\n\nCLI Example:\n\n    salt \"*\" virt.volume_infos <pool> <volume>", Spec: kwSpec(opt("pool", nil), opt("volume", nil)),
			Fn: m.withConn(func(_ context.Context, c *modules.Call, conn Conn) (any, error) {
				res, err := volumeInfos(conn, c.Args.Get("pool"), c.Args.Get("volume"))
				if err != nil {
					c.Log().Debug("Silenced libvirt error", "err", err)
					return payload.NewMap(), nil
				}
				return res, nil
			})},
		{Name: "virt.volume_delete", Doc: "Delete a libvirt managed volume.\n\nCLI Example:\n\n    salt \"*\" virt.volume_delete <pool> <volume>", Spec: kwSpec(req("pool"), req("volume")),
			Fn: m.withConn(func(_ context.Context, c *modules.Call, conn Conn) (any, error) {
				p, err := conn.PoolByName(c.Args.Str("pool"))
				if err != nil {
					return nil, err
				}
				v, err := p.VolumeByName(c.Args.Str("volume"))
				if err != nil {
					return nil, err
				}
				if err := v.Delete(); err != nil {
					return nil, err
				}
				return true, nil
			})},
	}
}

// poolEntry is a storage pool with its name and virStoragePoolInfo.
type poolEntry struct {
	pool Pool
	name string
	info PoolInfo
}

// namedPools lists the pools called name (every pool when name is nil),
// each with its name and info, in libvirt's order; pool_info and
// volume_infos walk the pools this way.
func namedPools(conn Conn, name any) ([]poolEntry, error) {
	ps, err := conn.Pools()
	if err != nil {
		return nil, err
	}
	var out []poolEntry
	for _, p := range ps {
		pn, err := p.Name()
		if err != nil {
			return nil, err
		}
		if name != nil && pn != payload.Text(name) {
			continue
		}
		i, err := p.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, poolEntry{pool: p, name: pn, info: i})
	}
	return out, nil
}

var poolStates = []string{"inactive", "building", "running", "degraded", "inaccessible"}

func poolInfo(conn Conn, name any) (*payload.Map, error) {
	ps, err := namedPools(conn, name)
	if err != nil {
		return nil, err
	}
	out := payload.NewMap()
	for _, e := range ps {
		p, pn, i := e.pool, e.name, e.info
		state := "unknown"
		if i.State >= 0 && i.State < len(poolStates) {
			state = poolStates[i.State]
		}
		x, err := p.XML()
		if err != nil {
			return nil, err
		}
		doc, err := parseXML(x)
		if err != nil {
			return nil, err
		}
		uuid, err := p.UUID()
		if err != nil {
			return nil, err
		}
		auto, err := p.Autostart()
		if err != nil {
			return nil, err
		}
		pers, err := p.Persistent()
		if err != nil {
			return nil, err
		}
		var path any
		if pn := doc.find("target/path"); pn != nil {
			path = pn.Text
		}
		out.Set(pn, payload.NewMap("uuid", uuid, "state", state, "capacity", int64(i.Capacity), "allocation", int64(i.Allocation),
			"free", int64(i.Available), "autostart", b2i(auto), "persistent", b2i(pers), "target_path", path, "type", optAttr(doc, "type")))
	}
	return out, nil
}

var volTypes = []string{"file", "block", "dir", "network", "netdir", "ploop"}

func volumeInfos(conn Conn, pool, volume any) (*payload.Map, error) {
	backing, err := allVolumePaths(conn)
	if err != nil {
		return nil, err
	}
	// Disk files of every domain (none is not an error here).
	disks := map[string][]string{}
	var vmNames []string
	if ds, err := getDomains(conn, allDomains); err == nil {
		for _, d := range ds {
			n, _ := d.Name()
			vmNames = append(vmNames, n)
			doc, err := domXML(d, false)
			if err != nil {
				return nil, err
			}
			for _, dk := range doc.descendants("disk") {
				for _, src := range dk.findAll("source") {
					if f, ok := src.get("file"); ok {
						disks[n] = append(disks[n], f)
					}
				}
			}
		}
	}
	ps, err := namedPools(conn, pool)
	if err != nil {
		return nil, err
	}
	out := payload.NewMap()
	for _, e := range ps {
		p, pn := e.pool, e.name
		if e.info.State != poolRunning {
			continue
		}
		vs, err := p.Volumes()
		if err != nil {
			return nil, err
		}
		vols := payload.NewMap()
		for _, v := range vs {
			vn, err := v.Name()
			if err != nil {
				return nil, err
			}
			if volume != nil && vn != payload.Text(volume) {
				continue
			}
			vi, err := v.Info()
			if err != nil {
				continue
			}
			x, err := v.XML()
			if err != nil {
				return nil, err
			}
			doc, err := parseXML(x)
			if err != nil {
				return nil, err
			}
			var bs any
			if bp := doc.find("backingStore/path"); bp != nil {
				var f any
				if bf := doc.find("backingStore/format"); bf != nil {
					f = optAttr(bf, "type")
				}
				bs = payload.NewMap("path", bp.Text, "format", f)
			}
			path, _ := v.Path()
			key, _ := v.Key()
			usedBy := []any{}
			if path != "" {
				var asBacking []string
				for bpath, ref := range backing {
					if slices.Contains(ref.backingStores, path) {
						asBacking = append(asBacking, bpath)
					}
				}
				for _, vm := range vmNames {
					files := disks[vm]
					hit := slices.Contains(files, path)
					for _, b := range asBacking {
						if slices.Contains(files, b) {
							hit = true
						}
					}
					if hit {
						usedBy = append(usedBy, vm)
					}
				}
			}
			typ := "unknown"
			if vi.Type >= 0 && vi.Type < len(volTypes) {
				typ = volTypes[vi.Type]
			}
			var format any
			if fn := doc.find("target/format"); fn != nil {
				format = optAttr(fn, "type")
			}
			vols.Set(vn, payload.NewMap("type", typ, "key", key, "path", path, "capacity", int64(vi.Capacity),
				"allocation", int64(vi.Allocation), "used_by", usedBy, "backing_store", bs, "format", format))
		}
		if vols.Len() > 0 {
			out.Set(pn, vols)
		}
	}
	return out, nil
}

package output

import (
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// VirtQuery is Salt's virt_query outputter (salt/output/virt_query.py),
// which the virt.query runner asks for. It reads data["data"][hyper]
// ["vm_info"] for the guests but data[hyper]["vm_info"][guest] for their
// details, as Salt 3006 does; a runner return lacks "data", so Salt's
// outputter raises KeyError and Salt prints it with nested. ErrFallback
// stands for that KeyError here, so the result is the same.
func VirtQuery(data any) (string, error) {
	top, ok := data.(*payload.Map)
	if !ok {
		return "", ErrFallback
	}
	hypers := mapAt(top, "data")
	if hypers == nil {
		return "", ErrFallback
	}
	var b strings.Builder
	for _, h := range hypers.Items() {
		id := PyStr(h.Key)
		b.WriteString(id + "\n")
		hm, _ := h.Value.(*payload.Map)
		guests := mapAt(hm, "vm_info")
		if guests == nil {
			return "", ErrFallback
		}
		details := mapAt(mapAt(top, id), "vm_info")
		for _, g := range guests.Items() {
			name := PyStr(g.Key)
			b.WriteString("  " + name + "\n")
			vm := mapAt(details, name)
			if vm == nil {
				return "", ErrFallback
			}
			for _, f := range []struct{ key, label string }{{"cpu", "CPU"}, {"mem", "Memory"}, {"state", "State"}} {
				if v, ok := vm.Get(f.key); ok {
					b.WriteString("    " + f.label + ": " + PyStr(v) + "\n")
				}
			}
			if gr := mapAt(vm, "graphics"); gr != nil {
				if t, _ := gr.Get("type"); t == "vnc" {
					port, ok := gr.Get("port")
					if !ok {
						return "", ErrFallback
					}
					b.WriteString("    Graphics: vnc - " + id + ":" + PyStr(port) + "\n")
				}
			}
			if disks := mapAt(vm, "disks"); disks != nil {
				for _, d := range disks.Items() {
					dm, _ := d.Value.(*payload.Map)
					if dm == nil {
						return "", ErrFallback
					}
					b.WriteString("    Disk - " + PyStr(d.Key) + ":\n")
					for _, f := range []struct{ key, label string }{{"disk size", "Size"}, {"file", "File"}, {"file format", "File Format"}} {
						v, ok := dm.Get(f.key)
						if !ok {
							return "", ErrFallback
						}
						b.WriteString("      " + f.label + ": " + PyStr(v) + "\n")
					}
				}
			}
			if nics := mapAt(vm, "nics"); nics != nil {
				for _, n := range nics.Items() {
					nm, _ := n.Value.(*payload.Map)
					if nm == nil {
						return "", ErrFallback
					}
					src := mapAt(nm, "source")
					typ, ok := nm.Get("type")
					if src == nil || src.Len() == 0 || !ok {
						return "", ErrFallback
					}
					b.WriteString("    Nic - " + PyStr(n.Key) + ":\n")
					b.WriteString("      Source: " + PyStr(src.Items()[0].Value) + "\n")
					b.WriteString("      Type: " + PyStr(typ) + "\n")
				}
			}
		}
	}
	return b.String(), nil
}

// mapAt is m[key] as a map, nil when m is nil, the key is missing or the
// value is not a map.
func mapAt(m *payload.Map, key string) *payload.Map {
	if m == nil {
		return nil
	}
	v, _ := m.Get(key)
	sub, _ := v.(*payload.Map)
	return sub
}

package devsim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// vlanView is one VLAN as show templates see it: VLAN 1 ("default") and
// every configured "vlan N" block, its name ("name X", else VLAN0N) and the
// switched ports in it ("switchport access vlan N", else VLAN 1), long and
// short names.
type vlanView struct {
	ID          int
	Name        string
	Ports       []string
	ShortPorts  []string
	PortsJoined string // the long names joined by ","
}

// VLANs lists the VLANs by number.
func (v *showView) VLANs() []vlanView {
	s := v.s
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	running := s.dev.state().running
	byID := map[int]*vlanView{1: {ID: 1, Name: "default"}}
	for _, st := range running.items {
		rest, ok := strings.CutPrefix(st.line, "vlan ")
		if !ok {
			continue
		}
		id, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil || id < 1 || id > 4094 {
			continue
		}
		vl := &vlanView{ID: id, Name: fmt.Sprintf("VLAN%04d", id)}
		if id == 1 {
			vl.Name = "default"
		}
		for _, ch := range st.children {
			if name, ok := strings.CutPrefix(ch.line, "name "); ok {
				vl.Name = strings.TrimSpace(name)
			}
		}
		byID[id] = vl
	}
	access := map[string]int{}
	for _, st := range running.items {
		name, ok := strings.CutPrefix(st.line, "interface ")
		if !ok {
			continue
		}
		for _, ch := range st.children {
			if n, ok := strings.CutPrefix(ch.line, "switchport access vlan "); ok {
				if id, err := strconv.Atoi(strings.TrimSpace(n)); err == nil {
					access[name] = id
				}
			}
		}
	}
	for _, in := range s.p.d.interfaces(running) {
		if !in.switchport {
			continue
		}
		id := 1
		if a, ok := access[in.name]; ok {
			id = a
		}
		if vl, ok := byID[id]; ok {
			vl.Ports = append(vl.Ports, in.name)
			vl.ShortPorts = append(vl.ShortPorts, s.p.d.shortIf(in.name))
		}
	}
	ids := make([]int, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]vlanView, 0, len(ids))
	for _, id := range ids {
		vl := byID[id]
		vl.PortsJoined = strings.Join(vl.Ports, ",")
		out = append(out, *vl)
	}
	return out
}

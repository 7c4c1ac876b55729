package virt

import (
	"slices"
	"sort"
)

// guestCaps is one <guest> of the host capabilities.
type guestCaps struct {
	osType, arch string
	domains      []string
}

// parseGuests reads the guests of a capabilities document.
func parseGuests(capsXML string) ([]guestCaps, error) {
	doc, err := parseXML(capsXML)
	if err != nil {
		return nil, err
	}
	var out []guestCaps
	for _, g := range doc.findAll("guest") {
		gc := guestCaps{osType: g.find("os_type").text()}
		if a := g.find("arch"); a != nil {
			gc.arch = a.attr("name")
			for _, d := range a.findAll("domain") {
				gc.domains = append(gc.domains, d.attr("type"))
			}
		}
		out = append(out, gc)
	}
	return out, nil
}

// hostDefaults are init's choices from the capabilities: hypervisor (kvm
// when offered, else the first in sort order), os_type (hvm first) and arch
// (x86_64 first).
func hostDefaults(guests []guestCaps) (hypervisors, osTypes, arches []string) {
	set := func(add func(guestCaps) []string) []string {
		m := map[string]bool{}
		for _, g := range guests {
			for _, v := range add(g) {
				m[v] = true
			}
		}
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	hypervisors = set(func(g guestCaps) []string { return g.domains })
	osTypes = set(func(g guestCaps) []string { return []string{g.osType} })
	arches = set(func(g guestCaps) []string { return []string{g.arch} })
	return
}

func preferred(list []string, want string) string {
	if slices.Contains(list, want) {
		return want
	}
	if len(list) == 0 {
		return ""
	}
	return list[0]
}

package devsim

import (
	"strings"
)

// ifType is one interface type of a platform.
type ifType struct {
	long, short string
	creatable   bool // can be created in configuration mode (loopbacks, VLAN interfaces, ...)
	mac         bool // has a hardware address
}

// negLine is a line whose "no" form is itself shown in the running configuration.
type negLine struct {
	text          string
	positiveShown bool // the positive form is shown too (e.g. EOS "ip routing")
}

// dialect is the configuration grammar of a platform. It is built once per fleet and never
// modified afterwards, so devices and sessions share it.
type dialect struct {
	indent      string
	topWords    []string // global configuration keywords
	topOnly     []string // global keywords that end a generic block mode
	ifWords     []string // interface mode keywords
	ifIPWords   []string // "ip ..." keywords in interface mode
	ifIPv6Words []string // "ipv6 ..." keywords in interface mode
	lineWords   []string // line mode keywords
	shared      map[string][]string
	singles     map[string][][]string
	negLines    map[string][]negLine
	ifTypes     []ifType
	loopbackMTU int
	switchports bool // physical ports are switchports by default
	// opener returns the kind of block body opens in mode kind, or "".
	opener func(kind string, body []string) string
	// ifNumber, when set, also accepts interface numbers validIfNumber refuses (IOS-XR's
	// "0/RP0/CPU0/0").
	ifNumber func(num string) bool
}

// splitIf splits "GigabitEthernet1/0/1" into its alphabetic type and its number.
func splitIf(s string) (string, string) {
	i := 0
	for i < len(s) && (s[i] == '-' || (s[i]|0x20 >= 'a' && s[i]|0x20 <= 'z')) {
		i++
	}
	return s[:i], s[i:]
}

func validIfNumber(n string) bool {
	if n == "" || n[0] < '0' || n[0] > '9' {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if (c < '0' || c > '9') && c != '/' && c != '.' && c != ':' {
			return false
		}
	}
	return len(n) <= 20
}

// ifTypeOf returns the interface type whose long name starts with the alphabetic part of s.
func (d *dialect) ifTypeOf(s string) (ifType, string, bool) {
	alpha, num := splitIf(s)
	if alpha == "" || !(validIfNumber(num) || (d.ifNumber != nil && d.ifNumber(num))) {
		return ifType{}, "", false
	}
	la := strings.ToLower(alpha)
	for _, t := range d.ifTypes {
		if strings.HasPrefix(strings.ToLower(t.long), la) || strings.EqualFold(t.short, alpha) {
			return t, num, true
		}
	}
	return ifType{}, "", false
}

// canonIf expands an interface name ("gi2", "Et1", "lo0") to its canonical long form.
func (d *dialect) canonIf(s string) (string, bool) {
	t, num, ok := d.ifTypeOf(s)
	if !ok {
		return "", false
	}
	return t.long + num, true
}

// shortIf abbreviates a canonical interface name ("GigabitEthernet2" -> "Gi2").
func (d *dialect) shortIf(name string) string {
	t, num, ok := d.ifTypeOf(name)
	if !ok {
		return name
	}
	return t.short + num
}

// creatableIf reports whether the interface can be created and removed by configuration.
func (d *dialect) creatableIf(name string) bool {
	t, num, ok := d.ifTypeOf(name)
	return ok && (t.creatable || strings.Contains(num, "."))
}

// hasMAC reports whether the interface has a hardware address.
func (d *dialect) hasMAC(name string) bool {
	t, _, ok := d.ifTypeOf(name)
	return ok && t.mac
}

// defaultSwitchport reports whether the interface is a layer-2 switchport by default.
func (d *dialect) defaultSwitchport(name string) bool {
	return d.switchports && strings.HasPrefix(name, "Ethernet") && !strings.Contains(name, ".")
}

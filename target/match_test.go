package target

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gsalt/gsalt/internal/pyfmt"
)

var testGrains = map[string]any{
	"os":      "Debian",
	"roles":   []any{"web", "db"},
	"ipv4":    []any{"10.1.2.3", "127.0.0.1"},
	"ipv6":    []any{"::1", "fe80::1"},
	"kernel":  "Linux",
	"nested":  map[string]any{"a": map[string]any{"b": "c:d"}},
	"virtual": true,
}

var testPillar = map[string]any{"role": "web", "env": "Prod", "ports": []any{int64(80)}}

var testGroups = map[string]any{
	"webs":  "web* or G@roles:db",
	"dbs":   []any{"db1", "db2"},
	"both":  "N@webs and not N@dbs",
	"loop1": "N@loop2",
	"loop2": "N@loop1",
	"bad":   int64(5),
}

func testMinion(id string) Minion {
	return Minion{ID: id, Grains: testGrains, Pillar: testPillar, Nodegroups: testGroups}
}

func TestMatchTypes(t *testing.T) {
	tests := []struct {
		typ, delim string
		tgt        any
		id         string
		want       bool
		err        error
	}{
		{"", "", "web*", "web01", true, nil}, // no tgt_type: glob
		{"glob", "", "web*", "web01", true, nil},
		{"glob", "", "web*", "db01", false, nil},
		{"glob", "", "*", "a/b", true, nil},
		{"glob", "", []any{"web01"}, "web01", false, ErrInvalidTarget},
		{"pcre", "", "web", "web01", true, nil},
		{"pcre", "", "01", "web01", false, nil},
		{"pcre", "", "web0[12]$", "web01", true, nil},
		{"pcre", "", "(?=w)web", "web01", false, ErrUnsupportedRegex},
		{"pcre", "", "(web", "web01", false, ErrInvalidRegex},
		{"list", "", "a,web01,b", "web01", true, nil},
		{"list", "", "web01", "web01", true, nil},
		{"list", "", "web01,x", "web01", true, nil},
		{"list", "", "x,web01", "web01", true, nil},
		{"list", "", "web0", "web01", false, nil},
		{"list", "", "xweb01,y", "web01", false, nil},
		{"list", "", "web01 ,x", "web01", false, nil},
		{"list", "", []string{"a", "web01"}, "web01", true, nil},
		{"list", "", []any{"a", int64(1)}, "web01", false, nil},
		{"list", "", map[string]any{"web01": 1}, "web01", true, nil},
		{"list", "", int64(3), "web01", false, nil},
		{"grain", "", "os:Debian", "m", true, nil},
		{"grain", "", "os:debian", "m", true, nil},
		{"grain", "", "os:Red*", "m", false, nil},
		{"grain", "", "roles:db", "m", true, nil},
		{"grain", "", "virtual:True", "m", true, nil},
		{"grain", "", "os", "m", false, ErrInvalidTarget},
		{"grain", "|", "nested|a|b|c:d", "m", true, nil},
		{"grain", "|", "os:Debian", "m", false, ErrInvalidTarget},
		{"grain_pcre", "", "os:deb", "m", true, nil},
		{"grain_pcre", "", "os:ian", "m", false, nil},
		{"pillar", "", "role:w*", "m", true, nil},
		{"pillar", "", "ports:80", "m", true, nil},
		{"pillar_pcre", "", "env:pro", "m", true, nil},
		{"pillar_pcre", "|", "env|pro", "m", false, ErrInvalidTarget}, // always ":"
		{"pillar_exact", "", "env:prod", "m", true, nil},
		{"pillar_exact", "", "env:pro*", "m", false, nil},
		{"ipcidr", "", "10.1.2.3", "m", true, nil},
		{"ipcidr", "", "10.1.2.4", "m", false, nil},
		{"ipcidr", "", "10.0.0.0/8", "m", true, nil},
		{"ipcidr", "", "10.1.2.0/24", "m", true, nil},
		{"ipcidr", "", "10.1.2.3/8", "m", false, ErrInvalidTarget}, // host bits set
		{"ipcidr", "", "10.0.0.0/255.0.0.0", "m", true, nil},
		{"ipcidr", "", "10.0.0.0/0.255.255.255", "m", true, nil},
		{"ipcidr", "", "10.0.0.0/08", "m", true, nil},
		{"ipcidr", "", "192.168.0.0/16", "m", false, nil},
		{"ipcidr", "", "::1", "m", true, nil},
		{"ipcidr", "", "0:0::1", "m", true, nil}, // compared as str(ip_address)
		{"ipcidr", "", "fe80::/10", "m", true, nil},
		{"ipcidr", "", "2001:db8::/32", "m", false, nil},
		{"ipcidr", "", "010.1.2.3", "m", false, ErrInvalidTarget},
		{"ipcidr", "", "bogus", "m", false, ErrInvalidTarget},
		{"nodegroup", "", "webs", "web1", true, nil},
		{"nodegroup", "", "webs", "x", true, nil}, // G@roles:db
		{"nodegroup", "", "dbs", "db2", true, nil},
		{"nodegroup", "", "dbs", "db3", false, nil},
		{"nodegroup", "", "nope", "db3", false, ErrUnknownNodegroup},
		{"compound", "", "web* and G@os:Debian", "web1", true, nil},
		{"compound_pillar_exact", "", "I@role:w*", "web1", false, nil},
		{"compound_pillar_exact", "", "I@role:web", "web1", true, nil},
		{"range", "", "%cluster", "web1", false, ErrUnsupportedTargetType},
		{"data", "", "k:v", "web1", false, ErrUnsupportedTargetType},
		{"bogus", "", "*", "web1", false, ErrUnknownTargetType},
	}
	m := New(Options{})
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%v/%s", tc.typ, tc.tgt, tc.id), func(t *testing.T) {
			got, err := m.Match(tc.tgt, tc.typ, tc.delim, testMinion(tc.id))
			if got != tc.want {
				t.Errorf("Match = %v, want %v (err %v)", got, tc.want, err)
			}
			if tc.err == nil && err != nil {
				t.Errorf("unexpected error %v", err)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("err = %v, want %v", err, tc.err)
			}
		})
	}
}

func TestMatchWithMapperGrains(t *testing.T) {
	grains := om("os", "Debian", "ipv4", []any{"10.0.0.5"}, "roles", []any{"web"})
	mn := Minion{ID: "web1", Grains: grains, Pillar: om("role", "web")}
	m := New(Options{})
	for _, c := range []struct{ tgt, typ string }{
		{"os:Debian", "grain"}, {"10.0.0.0/24", "ipcidr"}, {"role:web", "pillar"},
		{"G@roles:web and I@role:web and S@10.0.0.5", "compound"},
	} {
		if ok, err := m.Match(c.tgt, c.typ, "", mn); !ok || err != nil {
			t.Errorf("Match(%q, %s) = %v, %v", c.tgt, c.typ, ok, err)
		}
	}
}

func TestMatchNodegroupWithoutGroups(t *testing.T) {
	m := New(Options{})
	// what a real minion sees: _target_load passes no nodegroups
	ok, err := m.Match("webs", "nodegroup", "", Minion{ID: "web1"})
	if ok || !errors.Is(err, ErrUnknownNodegroup) {
		t.Errorf("nodegroup without groups = %v, %v", ok, err)
	}
}

func TestIPv6Rendering(t *testing.T) {
	tests := map[string]string{
		"::":                    "::",
		"::1":                   "::1",
		"1:0:0:2:0:0:0:3":       "1:0:0:2::3",
		"1:0:2:3:4:5:6:7":       "1:0:2:3:4:5:6:7",
		"2001:DB8::":            "2001:db8::",
		"::ffff:1.2.3.4":        "::ffff:102:304",
		"fe80::1%eth0":          "fe80::1%eth0",
		"1:0:0:0:2:0:0:0":       "1::2:0:0:0",
		"0:0:1:0:0:0:0:1":       "0:0:1::1",
		"0001:0002:0:0:0:0:0:0": "1:2::",
	}
	for in, want := range tests {
		tgt, ok := parseIPTarget(in)
		if !ok {
			t.Errorf("parse %q failed", in)
			continue
		}
		if got := pyAddrString(tgt.addr); got != want {
			t.Errorf("str(ip_address(%q)) = %q, want %q", in, got, want)
		}
	}
}

func TestIPCIDRGrainShapes(t *testing.T) {
	m := New(Options{})
	tests := []struct {
		grains any
		tgt    string
		want   bool
		err    error
	}{
		{map[string]any{"ipv4": "10.0.0.1"}, "10.0.0.1", true, nil},   // str: substring test
		{map[string]any{"ipv4": "110.0.0.12"}, "10.0.0.1", true, nil}, // ... really a substring
		{map[string]any{"ipv4": "10.0.0.1"}, "10.0.0.0/24", true, nil},
		{map[string]any{"ipv4": []any{int64(167772161)}}, "10.0.0.0/24", true, nil}, // ints are addresses
		{map[string]any{"ipv4": []any{"nope", "10.0.0.1"}}, "10.0.0.0/24", false, ErrInvalidAddress},
		{map[string]any{"ipv4": []any{"10.0.0.1", "nope"}}, "10.0.0.0/24", true, nil}, // any() stops early
		{map[string]any{"ipv4": nil}, "10.0.0.0/24", false, nil},
		{map[string]any{"ipv6": []any{"fe80::1%eth0"}}, "fe80::/64", true, nil},
		{map[string]any{"ipv6": []any{"10.0.0.1"}}, "10.0.0.0/8", false, nil},
		{nil, "10.0.0.0/8", false, nil},
	}
	for _, tc := range tests {
		got, err := m.Match(tc.tgt, "ipcidr", "", Minion{ID: "m", Grains: tc.grains})
		if got != tc.want || (tc.err == nil && err != nil) || (tc.err != nil && !errors.Is(err, tc.err)) {
			t.Errorf("ipcidr %q on %s = %v, %v; want %v, %v", tc.tgt, pyfmt.Repr(tc.grains), got, err, tc.want, tc.err)
		}
	}
}

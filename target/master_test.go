package target

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

var masterAccepted = []string{"web1", "Web2", "db1", "db2", "nocache", ".hidden", "other"}

var masterCache = map[string][2]any{
	"web1":  {map[string]any{"os": "Debian", "roles": []any{"web"}, "ipv4": []any{"10.0.0.1"}}, map[string]any{"role": "web"}},
	"Web2":  {map[string]any{"os": "RedHat", "roles": []any{"web"}, "ipv4": []any{"192.168.0.2"}}, map[string]any{"role": "web", "env": "dev"}},
	"db1":   {map[string]any{"os": "Debian", "roles": []any{"db"}, "ipv4": []any{"10.0.0.9"}}, map[string]any{"role": "db"}},
	"db2":   {map[string]any{"os": "Ubuntu"}, nil},
	"other": {nil, map[string]any{"role": "x"}},
}

func masterCacheFn(id string) (any, any, bool) {
	e, ok := masterCache[id]
	return e[0], e[1], ok
}

func TestCheckMinions(t *testing.T) {
	tests := []struct {
		typ     string
		tgt     any
		delim   string
		greedy  bool
		noCache bool
		minions []string
		missing []string
		err     error
	}{
		{typ: "glob", tgt: "*", minions: []string{"db1", "db2", "nocache", "other", "web1", "Web2"}},
		{typ: "", tgt: "w*", minions: []string{"web1"}},
		{typ: "glob", tgt: "[Ww]eb*", minions: []string{"web1", "Web2"}},
		{typ: "glob", tgt: nil, minions: []string{}},
		{typ: "pcre", tgt: "(?i)web", minions: []string{"web1", "Web2"}},
		{typ: "pcre", tgt: "eb", minions: []string{}},
		{typ: "pcre", tgt: "(web", minions: []string{}, err: ErrInvalidRegex},
		{typ: "list", tgt: "web1,ghost,db1,,web1", minions: []string{"web1", "db1", "web1"}, missing: []string{"ghost"}},
		{typ: "list", tgt: []any{"db2", "ghost", ".hidden"}, minions: []string{"db2"}, missing: []string{"ghost", ".hidden"}},
		{typ: "grain", tgt: "os:Debian", greedy: true, minions: []string{"db1", "nocache", "web1"}},
		{typ: "grain", tgt: "os:Debian", greedy: false, minions: []string{"db1", "web1"}},
		{typ: "grain", tgt: "os:Debian", greedy: true, noCache: true, minions: []string{"db1", "db2", "nocache", "other", "web1", "Web2"}},
		{typ: "grain", tgt: "os:Debian", greedy: false, noCache: true, minions: []string{}},
		{typ: "grain", tgt: "os|Debian", delim: "|", minions: []string{"db1", "web1"}},
		{typ: "grain_pcre", tgt: "os:(red|ubu)", minions: []string{"db2", "Web2"}},
		{typ: "pillar", tgt: "role:w*", minions: []string{"web1", "Web2"}},
		{typ: "pillar_pcre", tgt: "role:d", minions: []string{"db1"}},
		{typ: "pillar_exact", tgt: "role:w*", minions: []string{}},
		{typ: "pillar_exact", tgt: "role:web", greedy: true, minions: []string{"nocache", "web1", "Web2"}},
		{typ: "ipcidr", tgt: "10.0.0.0/24", minions: []string{"db1", "web1"}},
		{typ: "ipcidr", tgt: "10.0.0.0/24", greedy: true, minions: []string{"db1", "nocache", "web1"}},
		{typ: "ipcidr", tgt: "192.168.0.2", minions: []string{"Web2"}},
		{typ: "ipcidr", tgt: "10.0.0.1/24", minions: []string{}, err: ErrInvalidTarget},
		{typ: "compound", tgt: "web* and G@os:Debian", minions: []string{"web1"}},
		{typ: "compound", tgt: "G@roles:web and not G@os:Debian", minions: []string{"Web2"}},
		{typ: "compound", tgt: "not G@os:Debian", greedy: true, minions: []string{"db2", "other", "Web2"}},
		{typ: "compound", tgt: "L@web1,ghost or db1", minions: []string{"db1", "web1"}, missing: []string{"ghost"}},
		{typ: "compound", tgt: "db* and not L@db2,ghost", minions: []string{"db1"}}, // no missing under "not"
		{typ: "compound", tgt: "( web1 or db1", minions: []string{"db1", "web1"}},   // Salt closes open groups
		{typ: "compound", tgt: "not not web1", minions: []string{}, err: ErrInvalidCompound},
		{typ: "compound", tgt: "and web1", minions: []string{}, err: ErrInvalidCompound},
		{typ: "compound", tgt: "web1 )", minions: []string{}, err: ErrInvalidCompound},
		{typ: "compound", tgt: "( )", minions: []string{}},
		{typ: "compound", tgt: "web1 or S@bad", minions: []string{"web1"}},
		{typ: "compound", tgt: "R@%x or web1", minions: []string{}, err: ErrUnsupportedTargetType},
		{typ: "compound", tgt: "E@(x or web1", minions: []string{}, err: ErrInvalidRegex},
		{typ: "compound", tgt: "I@role:web", greedy: true, minions: []string{"nocache", "web1", "Web2"}},
		{typ: "compound", tgt: "web1", noCache: true, minions: []string{"db1", "db2", "nocache", "other", "web1", "Web2"}},
		{typ: "compound", tgt: []any{"web1", "or", "db1"}, minions: []string{"db1", "web1"}},
		{typ: "compound", tgt: int64(3), minions: []string{}, err: ErrInvalidTarget},
		{typ: "compound", tgt: "N@webs", minions: []string{"web1", "Web2"}},
		{typ: "compound", tgt: "N@loop1 or web1", minions: []string{}, err: ErrNodegroupRecursion},
		{typ: "compound_pillar_exact", tgt: "I@role:w*", minions: []string{}},
		{typ: "compound_pillar_exact", tgt: "I@role:web", minions: []string{"web1", "Web2"}},
		{typ: "nodegroup", tgt: "webs", minions: []string{"web1", "Web2"}},
		{typ: "nodegroup", tgt: "dbs", minions: []string{"db1"}, missing: []string{"db3"}},
		{typ: "nodegroup", tgt: "nope", minions: []string{}, err: ErrUnknownNodegroup},
		{typ: "nodegroup", tgt: "nope", noCache: true, minions: []string{"db1", "db2", "nocache", "other", "web1", "Web2"}},
		{typ: "range", tgt: "%x", minions: []string{}, err: ErrUnsupportedTargetType},
		{typ: "bogus", tgt: "*", minions: []string{}, err: ErrUnknownTargetType},
	}
	groups := map[string]any{
		"webs":  "G@roles:web",
		"dbs":   []any{"db1", "db3"},
		"loop1": "N@loop2",
		"loop2": "N@loop1",
	}
	m := New(Options{})
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%v/greedy=%v/nocache=%v", tc.typ, tc.tgt, tc.greedy, tc.noCache), func(t *testing.T) {
			var cf CacheFunc = masterCacheFn
			if tc.noCache {
				cf = nil
			}
			mins, miss, err := m.CheckMinions(tc.tgt, tc.typ, tc.delim, masterAccepted, cf, groups, tc.greedy)
			want := tc.missing
			if want == nil {
				want = []string{}
			}
			if !reflect.DeepEqual(mins, tc.minions) || !reflect.DeepEqual(miss, want) {
				t.Errorf("CheckMinions = %q missing %q (err %v); want %q missing %q", mins, miss, err, tc.minions, want)
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

func TestCheckMinionsInvalidGrainAddress(t *testing.T) {
	cache := func(id string) (any, any, bool) {
		return map[string]any{"ipv4": []any{"garbage"}}, nil, true
	}
	m := New(Options{})
	mins, _, err := m.CheckMinions("10.0.0.0/8", "ipcidr", "", []string{"a", "b"}, cache, nil, true)
	if len(mins) != 0 || !errors.Is(err, ErrInvalidAddress) {
		t.Errorf("got %v, %v; want nothing and ErrInvalidAddress (Salt's check_minions fails)", mins, err)
	}
}

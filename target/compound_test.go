package target

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		word string
		want TargetInfo
	}{
		{"G@a:b", TargetInfo{"G", "", "a:b"}},
		{"P@a:b", TargetInfo{"P", "", "a:b"}},
		{"J@a:b", TargetInfo{"J", "", "a:b"}},
		{"L@a:b", TargetInfo{"L", "", "a:b"}},
		{"N@a:b", TargetInfo{"N", "", "a:b"}},
		{"S@a:b", TargetInfo{"S", "", "a:b"}},
		{"E@a:b", TargetInfo{"E", "", "a:b"}},
		{"R@a:b", TargetInfo{"R", "", "a:b"}},
		{"G@a:b c", TargetInfo{"G", "", "a:b c"}}, // multi-word pattern (list targets)
		{"G;@a;b", TargetInfo{"G", ";", "a;b"}},
		{"I|@a|b", TargetInfo{"I", "|", "a|b"}},
		{"G@@x", TargetInfo{"G", "@", "x"}},
		{"Gé@a", TargetInfo{"G", "é", "a"}},
		{"L;@x", TargetInfo{"", "", "L;@x"}}, // delimiter only after G/P/I/J
		{"G@", TargetInfo{"", "", "G@"}},
		{"X@y", TargetInfo{"", "", "X@y"}},
		{"web*", TargetInfo{"", "", "web*"}},
		{"G@a\n", TargetInfo{"G", "", "a"}},
		{"G@a\nb", TargetInfo{"", "", "G@a\nb"}},
		{"g@a", TargetInfo{"", "", "g@a"}},
	}
	for _, tc := range tests {
		if got := ParseTarget(tc.word); got != tc.want {
			t.Errorf("ParseTarget(%q) = %+v, want %+v", tc.word, got, tc.want)
		}
	}
}

func TestNodegroupCompSalt(t *testing.T) {
	groups := map[string]any{
		"group1": "L@host1,host2,host3",
		"group2": []any{"G@foo:bar", "or", "web1*"},
		"group3": []any{"N@group1", "or", "N@group2"},
		"group4": []any{"host4", "host5", "host6"},
		"group5": "N@group4",
		"group6": "N@group3",
		"group7": []any{"host1"},
	}
	expected := map[string][]string{
		"group1": {"L@host1,host2,host3"},
		"group2": {"G@foo:bar", "or", "web1*"},
		"group3": {"(", "(", "L@host1,host2,host3", ")", "or", "(", "G@foo:bar", "or", "web1*", ")", ")"},
		"group4": {"L@host4,host5,host6"},
		"group5": {"(", "L@host4,host5,host6", ")"},
		"group6": {"(", "(", "(", "L@host1,host2,host3", ")", "or", "(", "G@foo:bar", "or", "web1*", ")", ")", ")"},
		"group7": {"L@host1"},
	}
	for name, want := range expected {
		got, err := NodegroupComp(name, groups)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("NodegroupComp(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}

func TestNodegroupCompCases(t *testing.T) {
	tests := []struct {
		name   string
		groups map[string]any
		want   []string
		err    error
	}{
		{"group1", map[string]any{"group1": "L@foo.domain.com,bar.domain.com,baz.domain.com or bl*.domain.com"},
			[]string{"L@foo.domain.com,bar.domain.com,baz.domain.com", "or", "bl*.domain.com"}, nil},
		{"group1", map[string]any{"group1": "[foo,bar,baz].domain.com"}, []string{"E@[foo,bar,baz].domain.com"}, nil},
		{"group2", map[string]any{
			"group1": "L@foo.domain.com,bar.domain.com,baz.domain.com or bl*.domain.com",
			"group2": "G@os:Debian and N@group1",
		}, []string{"(", "G@os:Debian", "and", "(", "L@foo.domain.com,bar.domain.com,baz.domain.com", "or", "bl*.domain.com", ")", ")"}, nil},
		{"group1", map[string]any{"group1": "N@group2", "group2": "N@group1"}, nil, ErrNodegroupRecursion},
		{"self", map[string]any{"self": "a or N@self"}, []string{"(", "a", "or", ")"}, ErrNodegroupRecursion},
		{"missing", map[string]any{}, nil, ErrUnknownNodegroup},
		{"inner", map[string]any{"inner": "N@nope or x*"}, []string{"(", "or", "x*", ")"}, ErrUnknownNodegroup},
		{"bad", map[string]any{"bad": int64(5)}, nil, ErrInvalidNodegroup},
		{"plain", map[string]any{"plain": "web1 web2"}, []string{"L@web1,web2"}, nil},
		{"nums", map[string]any{"nums": []any{int64(1), "b"}}, []string{"L@1,b"}, nil},
		{"empty", map[string]any{"empty": ""}, []string{"L@"}, nil},
		{"star", map[string]any{"star": "web*"}, []string{"web*"}, nil},
	}
	for _, tc := range tests {
		got, err := NodegroupComp(tc.name, tc.groups)
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
			t.Errorf("NodegroupComp(%q, %v) = %q, want %q", tc.name, tc.groups, got, tc.want)
		}
		if (tc.err == nil) != (err == nil) || (tc.err != nil && !errors.Is(err, tc.err)) {
			t.Errorf("NodegroupComp(%q) err = %v, want %v", tc.name, err, tc.err)
		}
	}
}

func TestNodegroupCompExponentialIsBounded(t *testing.T) {
	groups := map[string]any{}
	for i := 0; i < 40; i++ {
		groups[fmt.Sprintf("g%d", i)] = fmt.Sprintf("N@g%d or N@g%d", i+1, i+1)
	}
	groups["g40"] = "leaf*"
	_, err := NodegroupComp("g0", groups)
	if !errors.Is(err, ErrTooComplex) {
		t.Fatalf("err = %v, want ErrTooComplex", err)
	}
	m := New(Options{})
	ok, err := m.Match("N@g0", "compound", "", Minion{ID: "leaf1", Nodegroups: groups})
	if ok || err == nil {
		t.Errorf("exponential nodegroup: %v, %v", ok, err)
	}
}

func TestResolvePublishTarget(t *testing.T) {
	groups := map[string]any{"webs": "web* or G@os:Debian", "dbs": []any{"db1", "db2"}}
	tests := []struct {
		tgt      any
		typ      string
		wantTgt  any
		wantType string
		err      error
	}{
		{"webs", "nodegroup", "web* or G@os:Debian", "compound", nil},
		{"dbs", "nodegroup", "L@db1,db2", "compound", nil},
		{"nope", "nodegroup", nil, "", ErrUnknownNodegroup},
		{"N@dbs and not N@webs", "compound", "L@db1,db2 and not web* or G@os:Debian", "compound", nil},
		{"N@nope or x", "compound", nil, "", ErrUnknownNodegroup},
		{"web*", "glob", "web*", "glob", nil},
	}
	for _, tc := range tests {
		tgt, typ, err := ResolvePublishTarget(tc.tgt, tc.typ, groups)
		if !reflect.DeepEqual(tgt, tc.wantTgt) || typ != tc.wantType || (tc.err != nil && !errors.Is(err, tc.err)) || (tc.err == nil && err != nil) {
			t.Errorf("ResolvePublishTarget(%v, %s) = %v, %s, %v; want %v, %s, %v", tc.tgt, tc.typ, tgt, typ, err, tc.wantTgt, tc.wantType, tc.err)
		}
	}
}

func TestCompoundMatch(t *testing.T) {
	tests := []struct {
		tgt  any
		id   string
		want bool
		err  error
	}{
		{"web*", "web1", true, nil},
		{"web* and G@os:Debian", "web1", true, nil},
		{"web* and G@os:RedHat", "web1", false, nil},
		{"web* or G@os:RedHat", "web1", true, nil},
		{"db* or G@os:Debian", "web1", true, nil},
		{"web* and not G@os:Debian", "web1", false, nil},
		{"web* not G@os:RedHat", "web1", true, nil}, // implicit "and" before "not"
		{"not web*", "db1", true, nil},
		{"not not web1", "web1", false, ErrInvalidCompound}, // becomes "not and not True"
		{"( web* or db* ) and G@roles:web", "db1", true, nil},
		{"( web* or db* ) and not ( G@roles:web )", "db1", false, nil},
		{"L@db1,web1 and E@web\\d", "web1", true, nil},
		{"I@role:web and J@env:pro", "x", true, nil},
		{"P@os:deb.*", "x", true, nil},
		{"G;@nested;a;b;c:d", "x", true, nil},
		{"S@10.0.0.0/8 and S@::1", "x", true, nil},
		{"S@bad or web*", "web1", true, nil}, // invalid ipcidr is just false
		{"not S@bad", "web1", true, nil},
		{"X@foo", "X@foo", true, nil}, // unknown prefixes are globs
		{"N@webs", "web9", true, nil},
		{"N@both", "web9", true, nil},
		{"N@both", "db1", false, nil},
		// webs expands unparenthesised at top level: (T and not F) or T
		{"N@dbs and not N@webs", "db1", true, nil},
		{"N@nope or web*", "web1", false, ErrInvalidCompound}, // "or True" does not parse
		{"web* or N@nope", "web1", false, ErrUnknownNodegroup},
		{"N@loop1 or web*", "web1", false, ErrNodegroupRecursion},
		{"( )", "web1", false, nil},
		{"not ( )", "web1", true, nil}, // not () is True in Python
		{"( ( web1 ) )", "web1", true, nil},
		{"web1 or web1 ( db1 )", "web1", true, nil},                // "True or True(False)": the call is never made
		{"db1 or web1 ( db1 )", "web1", false, ErrInvalidCompound}, // ... here it is: bool is not callable
		{"db1 and web1 ( )", "web1", false, nil},
		{"((web1))", "web1", false, nil}, // one glob word
		{[]any{"web*", "and", "G@os:Debian"}, "web1", true, nil},
		{[]string{"G@os:Debian Linux"}, "web1", false, nil},
		{"", "web1", false, ErrInvalidCompound},
		{"and web*", "web1", false, ErrInvalidCompound},
		{"or web*", "web1", false, ErrInvalidCompound},
		{") web*", "web1", false, ErrInvalidCompound},
		{"( and web* )", "web1", false, ErrInvalidCompound},
		{"web* db*", "web1", false, ErrInvalidCompound},
		{"web* and", "web1", false, ErrInvalidCompound},
		{"( web*", "web1", false, ErrInvalidCompound},
		{"web* )", "web1", false, ErrInvalidCompound},
		{"not", "web1", false, ErrInvalidCompound},
		{"R@%cluster or web*", "web1", false, ErrUnknownEngine},
		{"E@(?=w)web or web*", "web1", false, ErrUnsupportedRegex},
		{"E@(web or web*", "web1", false, ErrInvalidRegex},
		{[]any{"web*", int64(1)}, "web1", false, ErrInvalidTarget},
		{int64(5), "web1", false, ErrInvalidTarget},
		{strings.Repeat("( ", 200) + "web1" + strings.Repeat(" )", 200), "web1", true, nil},
		{strings.Repeat("( ", 201) + "web1" + strings.Repeat(" )", 201), "web1", false, ErrInvalidCompound},
		{strings.Repeat("not ", 3) + "web1", "web1", false, ErrInvalidCompound},
		{strings.Repeat("web1 or ", maxCompoundWords) + "web1", "web1", false, ErrTooComplex},
	}
	m := New(Options{})
	for _, tc := range tests {
		name := fmt.Sprint(tc.tgt)
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			got, err := m.Match(tc.tgt, "compound", "", testMinion(tc.id))
			if got != tc.want {
				t.Errorf("Match(%v) on %s = %v, want %v (err %v)", tc.tgt, tc.id, got, tc.want, err)
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

func TestCompoundRecursionErrorNamesBoth(t *testing.T) {
	m := New(Options{})
	_, err := m.Match("N@loop1 or web*", "compound", "", testMinion("web1"))
	if !errors.Is(err, ErrInvalidCompound) || !errors.Is(err, ErrNodegroupRecursion) {
		t.Errorf("err = %v, want both ErrInvalidCompound and ErrNodegroupRecursion", err)
	}
}

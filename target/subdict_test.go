package target

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/pyfmt"
)

func TestSubdictMatchSaltCases(t *testing.T) {
	twoLevel := map[string]any{"foo": map[string]any{"bar": "baz"}}
	twoLevelComb := map[string]any{"foo": map[string]any{"bar": "baz:woz"}}
	dictAndList := map[string]any{
		"abc": []any{"def", "ghi", map[string]any{"lorem": map[string]any{"ipsum": []any{map[string]any{"dolor": "sit"}}}}},
	}
	threeLevel := map[string]any{"a": map[string]any{"b": map[string]any{"c": "v"}}}
	wild := map[string]any{"a": map[string]any{"b": map[string]any{
		"ç": "d", "é": []any{"eff", "gee", "8ch"}, "ĩ": map[string]any{"j": "k"},
	}}}
	tests := []struct {
		name string
		data any
		expr string
		want bool
	}{
		{"two level", twoLevel, "foo:bar:baz", true},
		{"value has delimiter, partial", twoLevelComb, "foo:bar:baz", false},
		{"value has delimiter", twoLevelComb, "foo:bar:baz:woz", true},
		{"value has delimiter, too long", twoLevelComb, "foo:bar:baz:woz:wiz", false},
		{"list member", dictAndList, "abc:ghi", true},
		{"dict in list in dict in list", dictAndList, "abc:lorem:ipsum:dolor:sit", true},
		{"four levels", threeLevel, "a:b:c:v", true},
		{"no skipping levels (2015.8 regression)", threeLevel, "a:c:v", false},
		{"wildcard level", threeLevel, "a:*:c:v", true},
		{"w1", wild, "*:*:*:*", true},
		{"w2", wild, "a:*:*:*", true},
		{"w3", wild, "a:b:*:*", true},
		{"w4", wild, "a:b:ç:*", true},
		{"w5", wild, "a:b:*:d", true},
		{"w6", wild, "a:*:ç:d", true},
		{"w7", wild, "*:b:ç:d", true},
		{"w8", wild, "*:*:ç:d", true},
		{"w9", wild, "*:*:*:d", true},
		{"w10", wild, "a:*:*:d", true},
		{"w11", wild, "a:b:*:ef*", true},
		{"w12", wild, "a:b:*:g*", true},
		{"w13", wild, "a:b:*:j:*", true},
		{"w14", wild, "a:b:*:j:k", true},
		{"w15", wild, "a:b:*:*:k", true},
		{"w16", wild, "a:b:*:*:*", true},
	}
	m := New(Options{})
	for _, tc := range tests {
		got, err := m.SubdictMatch(tc.data, tc.expr, ":", ModeGlob)
		if err != nil || got != tc.want {
			t.Errorf("%s: SubdictMatch(%q) = %v, %v; want %v", tc.name, tc.expr, got, err, tc.want)
		}
	}
}

func TestSubdictMatchSemantics(t *testing.T) {
	grains := map[string]any{
		"os":       "Debian",
		"virtual":  true,
		"gpus":     nil,
		"num_cpus": int64(4),
		"version":  1.0,
		"big":      1e16,
		"roles":    []any{"web", "DB"},
		"empty":    map[string]any{},
		"ports":    om(int64(80), "http", true, "yes-key"),
		"raw":      []byte("by"),
		"nested":   map[string]any{"k": map[string]any{"x": "y"}, "l": []any{"a:b"}},
		"dictlist": []any{map[string]any{"name": "eth0", "up": true}, "plain"},
		"colon":    "a:b:c",
		"pipe":     map[string]any{"a|b": "v", "a": map[string]any{"b": "w"}},
	}
	tests := []struct {
		expr  string
		delim string
		mode  MatchMode
		want  bool
	}{
		{"os:Debian", ":", ModeGlob, true},
		{"os:debian", ":", ModeGlob, true},  // case-insensitive
		{"OS:Debian", ":", ModeGlob, false}, // but keys are not
		{"os:Deb*", ":", ModeGlob, true},
		{"os", ":", ModeGlob, false},
		{"virtual:True", ":", ModeGlob, true},
		{"virtual:true", ":", ModeGlob, true},
		{"virtual:1", ":", ModeGlob, false},
		{"gpus:None", ":", ModeGlob, true},
		{"num_cpus:4", ":", ModeGlob, true},
		{"version:1.0", ":", ModeGlob, true},
		{"version:1", ":", ModeGlob, false},
		{"big:1e+16", ":", ModeGlob, true},
		{"roles:web", ":", ModeGlob, true},
		{"roles:db", ":", ModeGlob, true},
		{"roles:0", ":", ModeGlob, false},
		{"roles:0:web", ":", ModeGlob, true}, // list index
		{"roles:-1:db", ":", ModeGlob, true}, // negative index
		{"roles:5:web", ":", ModeGlob, false},
		{"empty:*", ":", ModeGlob, false},  // an empty dict counts as not found
		{"ports:80", ":", ModeGlob, false}, // "80" is not the int key 80 here (no traversal)
		{"ports:80:http", ":", ModeGlob, true},
		{"ports:yes:yes-key", ":", ModeGlob, true}, // "yes" loads as True
		{"ports:1:yes-key", ":", ModeGlob, true},   // 1 == True as a dict key
		{"ports:*", ":", ModeGlob, true},
		{"raw:b'by'", ":", ModeGlob, true},
		{"raw:by", ":", ModeGlob, false},
		{"nested:k:x:y", ":", ModeGlob, true},
		{"nested:k:x", ":", ModeGlob, true}, // pattern is a key of the dict
		{"nested:k:*:y", ":", ModeGlob, true},
		{"nested:*:x:y", ":", ModeGlob, true},
		{"nested:l:a:b", ":", ModeGlob, true},
		{"*:Debian", ":", ModeGlob, true}, // "*" searches every value
		{"*:eth0", ":", ModeGlob, false},  // ... but not dicts inside lists
		{"dictlist:name:eth0", ":", ModeGlob, true},
		{"dictlist:up:true", ":", ModeGlob, true},
		{"dictlist:plain", ":", ModeGlob, true},
		{"dictlist:*eth0*", ":", ModeGlob, true}, // str() of the dict member
		{"colon:a:b:c", ":", ModeGlob, true},
		{"colon:a:b", ":", ModeGlob, false},
		{"pipe|a|b|w", "|", ModeGlob, true},
		{"pipe|a|b:w", "|", ModeGlob, true}, // inner _dict_match recurses with ":"
		{"pipe|a|b", "|", ModeGlob, true},
		{"os:deb", ":", ModeRegex, true}, // re.match: start-anchored
		{"os:bian", ":", ModeRegex, false},
		{"os:.*ian$", ":", ModeRegex, true},
		{"os:(x", ":", ModeRegex, false}, // invalid regex: no match, no error
		{"os:DEBIAN", ":", ModeRegex, true},
		{"os:Debian", ":", ModeExact, true},
		{"os:debian", ":", ModeExact, true}, // exact still lowercases both sides
		{"os:Deb*", ":", ModeExact, false},
		{"roles:web", ":", ModeExact, true},
	}
	m := New(Options{})
	for _, tc := range tests {
		got, err := m.SubdictMatch(grains, tc.expr, tc.delim, tc.mode)
		if err != nil || got != tc.want {
			t.Errorf("SubdictMatch(%q, %q, mode %d) = %v, %v; want %v", tc.expr, tc.delim, tc.mode, got, err, tc.want)
		}
	}
}

func TestSubdictMatchUnsupportedRegex(t *testing.T) {
	m := New(Options{})
	_, err := m.SubdictMatch(map[string]any{"os": "Debian"}, "os:(?=d)deb", ":", ModeRegex)
	if !errors.Is(err, ErrUnsupportedRegex) {
		t.Errorf("err = %v, want ErrUnsupportedRegex", err)
	}
}

func TestSubdictMatchIsBounded(t *testing.T) {
	m := New(Options{})
	cyc := map[string]any{}
	cyc["self"] = cyc
	if got, err := m.SubdictMatch(cyc, "*:nothing", ":", ModeGlob); got || err != nil {
		t.Errorf("cyclic data: %v, %v", got, err)
	}
	// a wide tree and a long "*:" chain: exponential work, cut off
	wide := map[string]any{}
	for i := 0; i < 30; i++ {
		wide[fmt.Sprint(i)] = wide
	}
	pat := strings.Repeat("*:", 12) + "nothing"
	got, err := m.SubdictMatch(wide, pat, ":", ModeGlob)
	if got || !errors.Is(err, ErrTooComplex) {
		t.Errorf("exponential pattern: %v, %v; want ErrTooComplex", got, err)
	}
	// str() of a self-referencing list terminates
	l := []any{"x", nil}
	l[1] = l
	if s := pyfmt.Str([]any{l, l, l}); len(s) > 2*maxReprLen {
		t.Errorf("PyStr of a cyclic list is %d bytes", len(s))
	}
	// NaN keys do not break iteration
	if s := pyfmt.Str(map[float64]any{math.NaN(): 1}); s != "{nan: 1}" {
		t.Errorf("pyfmt.Str(NaN-keyed map) = %q", s)
	}
}

func TestTraverse(t *testing.T) {
	twoLevel := map[string]any{"foo": map[string]any{"bar": "baz"}}
	dictAndList := map[string]any{"foo": []any{"bar", "baz", map[string]any{"lorem": map[string]any{"ipsum": []any{map[string]any{"dolor": "sit"}}}}}}
	tests := []struct {
		data any
		key  string
		want any
		ok   bool
	}{
		{twoLevel, "foo:bar:baz", nil, false}, // too far
		{twoLevel, "foo:bar", "baz", true},
		{dictAndList, "foo:bar", nil, false},
		{dictAndList, "foo:1", "baz", true},
		{dictAndList, "foo:lorem:ipsum:dolor", "sit", true},
		{map[string]any{"foo": om(int64(1234), "it worked")}, "foo:1234", "it worked", true},
		{map[string]any{"foo": map[string]any{"baz": "x"}}, "foo:bar", nil, false},
		{map[string]any{"foo": map[any]any{int64(7): "seven"}}, "foo:7", "seven", true},
		{map[string]any{"l": []any{om(int64(0), "dict-zero"), "first"}}, "l:0", "dict-zero", true}, // dicts in the list first
		{map[string]any{"s": "string"}, "s:0", nil, false},
		{map[string]any{"n": nil}, "n:x", nil, false},
		{map[string]any{"k": map[string]any{"x": "trimmed"}}, "k: x", "trimmed", true}, // YAML strips spaces
		{[]any{"a", "b"}, "1", "b", true},
		{(*orderedMap)(nil), "a", nil, false},
	}
	for _, tc := range tests {
		got, ok := Traverse(tc.data, tc.key, ":")
		if ok != tc.ok || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("Traverse(%s, %q) = %v, %v; want %v, %v", pyfmt.Repr(tc.data), tc.key, got, ok, tc.want, tc.ok)
		}
	}
}

// A struct-typed map and a typed slice go through the reflection fallback.
func TestSubdictMatchReflectTypes(t *testing.T) {
	type labels map[string]string
	data := map[string]any{"labels": labels{"tier": "Front"}, "ids": []int{3, 4}}
	m := New(Options{})
	for expr, want := range map[string]bool{
		"labels:tier:front": true,
		"labels:tier:back":  false,
		"ids:4":             true,
		"ids:1:4":           true,
	} {
		if got, err := m.SubdictMatch(data, expr, ":", ModeGlob); err != nil || got != want {
			t.Errorf("SubdictMatch(%q) = %v, %v; want %v", expr, got, err, want)
		}
	}
}

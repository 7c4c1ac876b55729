package pep440

import (
	"slices"
	"testing"
)

// TestOrder checks the ordering of PEP 440's own example sequence.
func TestOrder(t *testing.T) {
	want := []string{"1.0.dev456", "1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12", "1.0b1.dev456", "1.0b2", "1.0b2.post345.dev456",
		"1.0b2.post345", "1.0rc1.dev456", "1.0rc1", "1.0", "1.0+abc.5", "1.0.post456.dev34", "1.0.post456", "1.1.dev1", "2!0.1"}
	got := slices.Clone(want)
	slices.Reverse(got)
	Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if Compare("1.0", "1.0.0") != 0 || Compare("1.10", "1.9") <= 0 || Compare("junk", "0.1") >= 0 {
		t.Fatal("basic comparisons")
	}
}

// TestSatisfies checks specifier operators.
func TestSatisfies(t *testing.T) {
	cases := []struct {
		v, op, spec string
		want        bool
	}{
		{"1.0", "==", "1.0", true}, {"1.0", "==", "1", true}, {"1.1", "==", "1.*", true}, {"2.0", "==", "1.*", false},
		{"1.1", "!=", "1.*", false}, {"1.4.5", "~=", "1.4.2", true}, {"1.5", "~=", "1.4.2", false}, {"1.9", "~=", "1.4", true},
		{"2.0", "~=", "1.4", false}, {"1.0", ">=", "1.0", true}, {"1.0", ">", "1.0", false}, {"0.9", "<", "1.0", true},
		{"1.0", "<=", "0.9", false}, {"1.0", "===", "1.0", true}, {"1.0", "===", "1.0.0", false},
	}
	for _, c := range cases {
		if got := Satisfies(c.v, c.op, c.spec); got != c.want {
			t.Errorf("%s %s %s = %v", c.v, c.op, c.spec, got)
		}
	}
}

package virt

import (
	"reflect"
	"testing"
)

func TestFullDictLikeElementTree(t *testing.T) {
	cases := []struct {
		xml  string
		want any
	}{
		{`<a/>`, nil},
		{`<a></a>`, nil},
		{`<a>x</a>`, "x"},
		{`<a k='v'/>`, map[string]any{"k": "v"}},
		{`<a k='v'>t</a>`, map[string]any{"k": "v", "a": "t"}},
		{`<a><b/><b>2</b><c x='1'/></a>`, map[string]any{"b": []any{nil, "2"}, "c": map[string]any{"x": "1"}}},
	}
	for _, tc := range cases {
		n, err := parseXML(tc.xml)
		if err != nil {
			t.Fatal(err)
		}
		if got := n.fullDict(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.xml, got, tc.want)
		}
	}
}

func TestRemoveEmptySkipsLikeSalt(t *testing.T) {
	// Salt's _remove_empty_xml_node removes from the list it iterates:
	// the element after a removed one is not looked into.
	n, err := parseXML("<r>\n <e/>\n <k><e/></k>\n <m><e/></m>\n</r>")
	if err != nil {
		t.Fatal(err)
	}
	n.stripSpaces().removeEmpty()
	want := map[string]any{"k": map[string]any{"e": nil}, "m": nil}
	if got := n.fullDict(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func TestExpandCPUSet(t *testing.T) {
	cases := map[any]string{"0-3,^2,8": "0,1,3,8", int64(4): "4", "3,1,2": "1,2,3", "1-2,2-3": "1,2,3"}
	for in, want := range cases {
		got, err := expandCPUSet(in)
		if err != nil || got != want {
			t.Errorf("%v: got %q %v, want %q", in, got, err, want)
		}
	}
	if _, err := expandCPUSet("0-999999999"); err == nil {
		t.Error("a huge range must be refused")
	}
	if _, err := expandCPUSet("a,b"); err == nil {
		t.Error("garbage must be refused")
	}
}

func TestMaskBits(t *testing.T) {
	for mask, want := range map[string]int{"255.255.255.0": 24, "255.255.0.0": 16, "255.255.255.252": 30, "0.0.0.0": 0, "bogus": 0} {
		if got := maskBits(mask); got != want {
			t.Errorf("%s: %d, want %d", mask, got, want)
		}
	}
}

package virt

import (
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestChangeXMLLikeSalt checks the change_xml engine on the cases Salt's
// xmlutil documents: placeholders over dictionaries and lists, [@attr]
// and [N] filters, removal with None and the cleanup of emptied elements.
func TestChangeXMLLikeSalt(t *testing.T) {
	mapping := []xmapEntry{
		attrEntry("cpu:features:{id}", "cpu/feature[@name='$id']", "policy", "name"),
		attrEntry("boot_dev:{dev}", "os/boot[$dev]", "dev"),
		attrEntry("cpu:topology:sockets", "cpu/topology", "sockets"),
		{path: "cpu:model:name", xpath: "cpu/model"},
		memEntry("mem:hugepages:{id}:size", "memoryBacking/hugepages/page[$id]", "size", "unit", "nodeset"),
	}
	cases := []struct {
		name, doc string
		data      *payload.Map
		want      string
		changed   bool
	}{
		{"dict placeholder creates filtered elements", "<domain><cpu/></domain>",
			payload.NewMap("cpu", payload.NewMap("features", payload.NewMap("lahf_lm", "require", "svm", "disable"))),
			"<domain><cpu><feature name='lahf_lm' policy='require'/><feature name='svm' policy='disable'/></cpu></domain>", true},
		{"elements no value names go", "<domain><cpu><feature name='a' policy='require'/><feature name='b' policy='require'/></cpu></domain>",
			payload.NewMap("cpu", payload.NewMap("features", payload.NewMap("b", "require"))),
			"<domain><cpu><feature name='b' policy='require'/></cpu></domain>", true},
		{"same values change nothing", "<domain><cpu><feature name='b' policy='require'/></cpu></domain>",
			payload.NewMap("cpu", payload.NewMap("features", payload.NewMap("b", "require"))),
			"<domain><cpu><feature name='b' policy='require'/></cpu></domain>", false},
		{"list placeholder indexes from 1", "<domain><os><boot dev='hd'/></os></domain>",
			payload.NewMap("boot_dev", []any{"network", "hd"}),
			"<domain><os><boot dev='network'/><boot dev='hd'/></os></domain>", true},
		{"none removes the attribute and the emptied element", "<domain><cpu><topology sockets='1'/><model>qemu64</model></cpu></domain>",
			payload.NewMap("cpu", payload.NewMap("topology", nil, "model", nil)),
			"<domain><cpu/></domain>", true},
		{"memory sizes in bytes, almost equal is equal", "<domain><memoryBacking><hugepages><page size='2048' unit='KiB'/></hugepages></memoryBacking></domain>",
			payload.NewMap("mem", payload.NewMap("hugepages", []any{payload.NewMap("size", "2m"), payload.NewMap("size", "1g")})),
			"<domain><memoryBacking><hugepages><page size='2048' unit='KiB'/><page size='1073741824' unit='bytes'/></hugepages></memoryBacking></domain>", true},
		{"missing paths leave the document alone", "<domain><cpu><model>qemu64</model></cpu></domain>",
			payload.NewMap("mem", int64(512)),
			"<domain><cpu><model>qemu64</model></cpu></domain>", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parseXML(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			want, err := parseXML(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			changed, err := changeXML(doc, tc.data, mapping)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if !sameDoc(doc, want) {
				t.Errorf("got %s, want %s", doc.String(), want.String())
			}
		})
	}
}

//go:build libvirt_dlopen

package virt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/payload"
)

const (
	updateStepsFile  = "testdata/update_steps.json"
	updateGoldenFile = "testdata/update_golden.json"
)

// canonXML rewrites an XML document with sorted attributes and without
// the whitespace between elements, so that two serializations of the same
// elements (ElementTree's and gsalt's) compare equal.
func canonXML(s string) string {
	d := xml.NewDecoder(strings.NewReader(s))
	var b strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return b.String()
		}
		if err != nil {
			return s
		}
		switch t := tok.(type) {
		case xml.StartElement:
			attrs := append([]xml.Attr(nil), t.Attr...)
			sort.Slice(attrs, func(i, j int) bool { return attrs[i].Name.Local < attrs[j].Name.Local })
			b.WriteString("<" + t.Name.Local)
			for _, a := range attrs {
				b.WriteString(" " + a.Name.Local + "=" + `"` + a.Value + `"`)
			}
			b.WriteString(">")
		case xml.EndElement:
			b.WriteString("</" + t.Name.Local + ">")
		case xml.CharData:
			b.WriteString(strings.TrimSpace(string(t)))
		}
	}
}

// canonAll applies canonXML to every string that holds an XML element.
func canonAll(v any) any {
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(strings.TrimSpace(x), "<") {
			return canonXML(x)
		}
	case []any:
		for i, e := range x {
			x[i] = canonAll(e)
		}
	case *payload.Map:
		for _, it := range x.Items() {
			x.SetKey(it.Key, canonAll(it.Value))
		}
	}
	return v
}

// TestUpdateGolden runs virt.update (definition and live changes, test=True,
// bad input; cpu model/topology/numa/tuning, memory backing, numatune,
// clock timers, host_devices; an interface attached to and detached from
// the running TCG guest) and the info calls (node_info, full_info,
// vm_info, get_*, list_*, network_info, pool_info) on a private
// libvirtd's QEMU driver through gsalt, and compares each return and the
// domain XML after it with Salt 3006's for the same steps
// (testdata/update_golden.py).
func TestUpdateGolden(t *testing.T) {
	t.Parallel() // its own private libvirtd, folders and ports
	f := newInitFixture(t)
	if testutil.Update() {
		out := runGoldenScript(t, 5*time.Minute, "update_golden.py", updateStepsFile, f.d.URI, f.images, f.roots, f.cache)
		norm := f.normalize(string(out), fixedMACs)
		if err := os.WriteFile(updateGoldenFile, []byte(norm), 0o644); err != nil {
			t.Fatal(err)
		}
		f.d.DestroyAll()
	}
	steps := readStepsFile[step](t, updateStepsFile)
	raw, err := os.ReadFile(updateGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	hostFile := filepath.Join(t.TempDir(), "update_golden.json")
	if err := os.WriteFile(hostFile, f.hostGolden(t, raw), 0o644); err != nil {
		t.Fatal(err)
	}
	golden, ok := loadJSON(t, hostFile).([]any)
	if !ok || len(golden) != len(steps) {
		t.Fatalf("%s holds %d results for %d steps: regenerate with -update", updateGoldenFile, len(golden), len(steps))
	}
	env := f.env(t)
	ctx := context.Background()
	for i, st := range steps {
		res := call(ctx, env, st)
		gotv := asGolden(t, res, func(s string) string { return f.normalize(s, fixedMACs) })
		got := maskHostLoad(canonAll(normalize(gotv)))
		want := maskHostLoad(canonAll(normalize(golden[i])))
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if !bytes.Equal(gj, wj) && !cleanErrorForCrash(t, i, got, want) && !f.sameAsKept(t, i, st, got, want) {
			t.Errorf("step %d %s %v %v:\n%s", i, st.Fun, st.Args, st.Kwargs, firstDiff(string(gj), string(wj)))
		}
	}
	if left, _ := os.ReadDir(f.images); len(left) > 0 {
		t.Errorf("files left after the purge: %v", left)
	}
}

// sameAsKept handles a virt.get_xml step whose XML differs from the
// golden file's: that file was written on another host, and libvirt fills
// some defaults from the host it runs on. Salt's XML from the golden file
// is defined (under another name) on this test's libvirtd and read back;
// the step passes when gsalt's XML equals what libvirt here keeps of
// Salt's, and the difference between the golden file and this host's
// libvirt is logged.
func (f *initFixture) sameAsKept(t *testing.T, i int, st step, got, want any) bool {
	t.Helper()
	g, _ := got.(*payload.Map)
	w, _ := want.(*payload.Map)
	if st.Fun != "virt.get_xml" || g == nil || w == nil || len(st.Args) == 0 {
		return false
	}
	name, _ := st.Args[0].(string)
	gx, wx := g.Str("ret"), w.Str("ret")
	if name == "" || !strings.HasPrefix(wx, "<domain") || !strings.HasPrefix(gx, "<domain") {
		return false
	}
	alias := name + "-golden"
	def := strings.ReplaceAll(wx, "<name>"+name+"</name>", "<name>"+alias+"</name>")
	def = strings.ReplaceAll(def, "<uuid></uuid>", "")
	def = strings.ReplaceAll(def, `<mac address="GENERATED"></mac>`, "")
	def = strings.ReplaceAll(def, "IMAGES", f.images)
	def = strings.ReplaceAll(def, "CACHE", f.cache)
	file := filepath.Join(t.TempDir(), alias+".xml")
	if err := os.WriteFile(file, []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := f.d.Virsh("define", file); err != nil {
		t.Logf("step %d: libvirt here refuses the golden XML: %v %s", i, err, out)
		return false
	}
	defer func() { _, _ = f.d.Virsh("undefine", "--nvram", alias) }()
	kept, err := f.d.Virsh("dumpxml", "--inactive", alias)
	if err != nil {
		t.Logf("step %d: dumpxml %s: %v %s", i, alias, err, kept)
		return false
	}
	kept = strings.ReplaceAll(f.normalize(kept, fixedMACs), "<name>"+alias+"</name>", "<name>"+name+"</name>")
	kept = canonXML(kept)
	if kept != gx {
		return false
	}
	t.Logf("step %d %s: equal to Salt's XML as this host's libvirt keeps it; the golden file (another host) differs:\n%s", i, st.Fun, firstDiff(kept, wx))
	return true
}

// firstDiff shows where two texts part: the common prefix's length and up
// to 300 bytes of each from a little before that point.
func firstDiff(got, want string) string {
	n := 0
	for n < len(got) && n < len(want) && got[n] == want[n] {
		n++
	}
	from := max(0, n-120)
	cut := func(s string) string { return s[min(from, len(s)):min(len(s), n+180)] }
	return fmt.Sprintf(" got  (%d bytes) ...%s...\n want (%d bytes) ...%s... (first difference at byte %d)", len(got), cut(got), len(want), cut(want), n)
}

// maskHostLoad hides what depends on the host and its load on a real
// hypervisor (its memory, free memory, CPU clock and counts): the golden
// file was recorded on one machine and the values are checked exactly on
// libvirt's test:///default driver (golden_test.go).
func maskHostLoad(v any) any {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			x[i] = maskHostLoad(e)
		}
	case *payload.Map:
		for _, it := range x.Items() {
			switch payload.KeyString(it.Key) {
			case "freemem", "freecpu", "cpumhz", "phymemory", "cpus", "cpucores", "cputhreads", "sockets", "numanodes":
				x.SetKey(it.Key, "<varies>")
			default:
				x.SetKey(it.Key, maskHostLoad(it.Value))
			}
		}
	}
	return v
}

package builtin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// iostatOld is sysstat's output in the older format Salt 3006's parser
// was written for ("Device:" with the colon), two reports: averages
// with ties at the second decimal (0.125 → 0.12, 0.135 → 0.14), a disk
// missing from one report and a "%util" column.
const iostatOld = `Linux 4.19.0 (host) 	01/02/24 	_x86_64_	(2 CPU)

avg-cpu:  %user   %nice %system %iowait  %steal   %idle
           1.25    0.00    0.50    0.13    0.00   98.12

Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util
sda               0.10     1.00    0.25    2.00     4.00    30.00    30.50     0.01    2.25    1.00    2.40   0.50   0.11
sdb               0.00     0.00    0.00    0.00     0.00     0.00     0.00     0.00    0.00    0.00    0.00   0.00   0.00

avg-cpu:  %user   %nice %system %iowait  %steal   %idle
           1.00    0.00    0.52    0.14    0.00   98.34

Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util
sda               0.15     2.00    0.00    1.00     0.00    12.00    24.00     0.00    1.00    0.00    1.00   0.25   0.16
`

// TestDiskIostatGolden compares disk.iostat with Salt 3006
// (testdata/golden/disk_iostat.json) over a stand-in iostat on PATH that
// prints iostatOld and its command line, so the command Salt builds
// (iostat -x / -xd with disks as a string or list) and the averaging are
// checked exactly.
func TestDiskIostatGolden(t *testing.T) {
	bin := t.TempDir()
	// The last report's device block ends with a row named after the
	// arguments, so the command line shows in the return.
	script := "#!/bin/sh\ncat <<'EOF'\n" + iostatOld + "EOF\necho \"x$(echo \"$*\" | tr ' ' '_') 1 2 3 4 5 6 7 8 9 10 11 12 13\"\n"
	if err := os.WriteFile(filepath.Join(bin, "iostat"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	calls := []salttest.Call{
		{Name: "all", Fun: "disk.iostat"},
		{Name: "interval count", Fun: "disk.iostat", Args: []any{int64(2), int64(3)}},
		{Name: "disk string", Fun: "disk.iostat", Kwargs: []any{"disks", "sda"}},
		{Name: "disk list", Fun: "disk.iostat", Kwargs: []any{"disks", []any{"sda", "sdb"}}},
	}
	runSuite(t, salttest.Suite{Name: "disk_iostat", Calls: calls, Grains: linuxGrains(), Normalize: iostatFloats})
}

// iostatFloats turns whole numbers into floats: the golden file's JSON
// writes Salt's 0.0 as 0.
func iostatFloats(_ string, v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case *payload.Map:
		out := &payload.Map{}
		for _, it := range x.Items() {
			out.SetKey(it.Key, iostatFloats("", it.Value))
		}
		return out
	}
	return v
}

// TestDiskIostatLive compares disk.iostat with Salt 3006 on this
// machine's real sysstat (gated on GSALT_SALT_SRC and iostat); the
// numbers move, so only the keys are compared.
func TestDiskIostatLive(t *testing.T) {
	if _, err := exec.LookPath("iostat"); err != nil {
		t.Skip("needs sysstat's iostat")
	}
	shape := func(_ string, v any) any {
		m, ok := v.(*payload.Map)
		if !ok {
			return v
		}
		out := &payload.Map{}
		for _, it := range m.Items() {
			e, ok := it.Value.(*payload.Map)
			if !ok {
				out.SetKey(it.Key, it.Value)
				continue
			}
			keys := &payload.Map{}
			for _, k := range e.Items() {
				keys.SetKey(k.Key, 0.0)
			}
			out.SetKey(it.Key, keys)
		}
		return out
	}
	calls := []salttest.Call{
		{Name: "iostat", Fun: "disk.iostat", Args: []any{int64(1), int64(2)}},
	}
	runSuite(t, salttest.Suite{Name: "disk_iostat_live", Live: true, Calls: calls, Normalize: shape, Grains: linuxGrains()})
}

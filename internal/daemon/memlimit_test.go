package daemon

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestParseCgroupLimit(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"max\n", 0, false},
		{"", 0, false},
		{"9223372036854771712\n", 0, false},
		{"536870912\n", 536870912, true},
		{"garbage", 0, false},
		{"-1", 0, false},
	}
	for _, tc := range tests {
		got, ok := parseCgroupLimit(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseCgroupLimit(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestMemLimitFromCgroup(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	dir := t.TempDir()
	limited := filepath.Join(dir, "memory.max")
	if err := os.WriteFile(limited, []byte("1000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unlimited := filepath.Join(dir, "unlimited")
	if err := os.WriteFile(unlimited, []byte("max\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := memLimitFromCgroup([]string{filepath.Join(dir, "missing"), unlimited}); got != 0 {
		t.Errorf("unlimited cgroup: limit %d, want 0", got)
	}
	if got := memLimitFromCgroup([]string{limited}); got != 900000000 {
		t.Errorf("limited cgroup: limit %d, want 900000000", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 900000000 {
		t.Errorf("runtime memory limit %d, want 900000000", got)
	}
}

func TestApplyMemLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	dir := t.TempDir()
	cg := filepath.Join(dir, "memory.max")
	if err := os.WriteFile(cg, []byte("1000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		opt      any
		files    []string
		want     int64
		from     string
		wantsErr bool
	}{
		{"120MiB", []string{cg}, 120 << 20, "gomemlimit", false},
		{int64(5000000), nil, 5000000, "gomemlimit", false},
		{"2GiB", nil, 2 << 30, "gomemlimit", false},
		{"1000B", nil, 1000, "gomemlimit", false},
		{"4096", nil, 4096, "gomemlimit", false},
		{nil, []string{cg}, 900000000, "cgroup", false},
		{"off", []string{cg}, 900000000, "cgroup", false},
		{nil, nil, 0, "", false},
		{"12 MB", nil, 0, "", true},
		{"-5MiB", nil, 0, "", true},
		{int64(-1), nil, 0, "", true},
		{true, nil, 0, "", true},
		{"99999999999TiB", nil, 0, "", true},
	}
	for _, tc := range cases {
		debug.SetMemoryLimit(math.MaxInt64)
		lim, from, err := applyMemLimit(tc.opt, tc.files)
		if (err != nil) != tc.wantsErr || lim != tc.want || from != tc.from {
			t.Errorf("applyMemLimit(%v) = %d, %q, %v; want %d, %q, error %v", tc.opt, lim, from, err, tc.want, tc.from, tc.wantsErr)
			continue
		}
		if tc.want > 0 {
			if got := debug.SetMemoryLimit(-1); got != tc.want {
				t.Errorf("applyMemLimit(%v): runtime limit %d", tc.opt, got)
			}
		}
	}
	// GOMEMLIMIT in the environment wins over the option.
	t.Setenv("GOMEMLIMIT", "1GiB")
	if lim, _, _ := applyMemLimit("120MiB", nil); lim != 0 {
		t.Errorf("GOMEMLIMIT set: option applied anyway (%d)", lim)
	}
}

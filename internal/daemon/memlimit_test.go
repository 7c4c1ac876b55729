package daemon

import (
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

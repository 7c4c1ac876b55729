package rlimit

import (
	"errors"
	"syscall"
	"testing"
)

func TestRaiseNoFile(t *testing.T) {
	var orig syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &orig); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig) })
	for _, tc := range []struct {
		name string
		want uint64
	}{
		{"below the current limit", orig.Cur / 2},
		{"the current limit", orig.Cur},
		{"above the hard limit", orig.Max + 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RaiseNoFile(tc.want)
			var now syscall.Rlimit
			if gerr := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now); gerr != nil {
				t.Fatal(gerr)
			}
			if got != now.Cur {
				t.Errorf("RaiseNoFile returned %d, the soft limit is %d", got, now.Cur)
			}
			switch {
			case err == nil && got < tc.want:
				t.Errorf("no error, but the limit %d is below %d", got, tc.want)
			case err != nil && !errors.Is(err, ErrTooLow):
				t.Errorf("error %v is not ErrTooLow", err)
			case err != nil && got >= tc.want:
				t.Errorf("error %v, but the limit %d reaches %d", err, got, tc.want)
			}
		})
	}
}

package driver

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestOpenWithin(t *testing.T) {
	errOpen := errors.New("refused")
	t.Run("returns", func(t *testing.T) {
		for _, want := range []error{nil, errOpen} {
			closed := false
			abandoned, err := openWithin(context.Background(), time.Minute, func() error { return want }, func() { closed = true })
			if abandoned || !errors.Is(err, want) || err != want || closed {
				t.Fatalf("open returning %v: abandoned=%v err=%v closed=%v", want, abandoned, err, closed)
			}
		}
	})
	cases := []struct {
		name    string
		rem     time.Duration
		cancel  bool
		lateErr error
		want    error
		closes  bool
	}{
		{"timer, late success is closed", time.Millisecond, false, nil, context.DeadlineExceeded, true},
		{"timer, late failure is not closed", time.Millisecond, false, errOpen, context.DeadlineExceeded, false},
		{"cancelled, late success is closed", time.Minute, true, nil, context.Canceled, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				cancel()
			}
			release := make(chan struct{})
			closed := make(chan struct{})
			abandoned, err := openWithin(ctx, c.rem, func() error { <-release; return c.lateErr }, func() { close(closed) })
			if !abandoned || !errors.Is(err, c.want) {
				t.Fatalf("abandoned=%v err=%v, want abandoned with %v", abandoned, err, c.want)
			}
			close(release)
			wait := 10 * time.Second // generous: the machine may be loaded
			if !c.closes {
				wait = 200 * time.Millisecond // a negative check: time for a wrong close
			}
			select {
			case <-closed:
				if !c.closes {
					t.Fatal("a failed late open was closed")
				}
			case <-time.After(wait):
				if c.closes {
					t.Fatal("the late open was never closed")
				}
			}
		})
	}
}

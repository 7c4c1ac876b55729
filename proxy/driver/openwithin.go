package driver

import (
	"context"
	"time"
)

// openWithin runs open aside and waits for it at most rem (and no longer
// than ctx): crypto/ssh bounds the TCP connect but not the SSH handshake,
// and scrapligo's Open offers no context. When the time is up first, the
// open is abandoned: openWithin returns at once with abandoned true and
// the context's error, and closeLate runs (aside) if the abandoned open
// later succeeds, so the connection it made is not leaked.
func openWithin(ctx context.Context, rem time.Duration, open func() error, closeLate func()) (abandoned bool, err error) {
	done := make(chan error, 1)
	go func() { done <- open() }()
	timer := time.NewTimer(rem)
	defer timer.Stop()
	select {
	case err = <-done:
		return false, err
	case <-timer.C:
		err = context.DeadlineExceeded
	case <-ctx.Done():
		err = ctx.Err()
	}
	go func() {
		if e := <-done; e == nil && closeLate != nil {
			closeLate()
		}
	}()
	return true, err
}

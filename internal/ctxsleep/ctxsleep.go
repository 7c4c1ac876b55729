// Package ctxsleep waits for a duration or for a context to end.
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits d or until ctx ends; then it returns ctx.Err(). A d of zero
// or less returns ctx.Err() at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

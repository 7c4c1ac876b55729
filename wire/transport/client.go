package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"
)

// Defaults for ReqClient (Salt's AsyncReqChannel.send defaults).
const (
	// DefaultTries is the default number of attempts of ReqClient.Send.
	DefaultTries = 3
	// DefaultRequestTimeout is the default time limit of one attempt.
	DefaultRequestTimeout = 60 * time.Second
)

// Request sends one request body to the ROUTER (or REP) at addr over a new REQ
// connection, waits for the one-frame reply and closes the connection, as
// Salt's minion does for every request. While the server refuses connections
// it keeps dialing (like libzmq's background reconnect) until the timeout.
// timeout bounds the whole exchange; if it is zero or negative only ctx does.
// A request that runs out of time fails with an error matching ErrTimeout.
func Request(ctx context.Context, addr string, req []byte, timeout time.Duration) ([]byte, error) {
	return request(ctx, addr, req, timeout, DefaultLimits())
}

// ReqClient sends requests with retries, like Salt's
// AsyncReqChannel.send(tries, timeout): every try uses a fresh connection and
// any error is retried. A retried request may be processed twice by the
// server, so requests must be idempotent or carry their own nonce.
type ReqClient struct {
	// Addr is the server address, "host:port" or "tcp://host:port".
	Addr string
	// Tries is the number of attempts; default DefaultTries.
	Tries int
	// Timeout bounds each attempt; default DefaultRequestTimeout.
	Timeout time.Duration
	// Limits bounds replies; zero fields take DefaultLimits values.
	Limits Limits
	// Logger receives retry logs; nil means slog.Default().
	Logger *slog.Logger
}

// Send performs the request, retrying up to Tries times. It returns the last
// error when every try failed, or ctx.Err() (wrapped) when ctx is done.
func (c *ReqClient) Send(ctx context.Context, req []byte) ([]byte, error) {
	tries, timeout := c.Tries, c.Timeout
	if tries <= 0 {
		tries = DefaultTries
	}
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	lim := c.Limits.withDefaults()
	var err error
	for i := 1; i <= tries; i++ {
		var reply []byte
		reply, err = request(ctx, c.Addr, req, timeout, lim)
		if err == nil {
			return reply, nil
		}
		if ctx.Err() != nil || errors.Is(err, ErrInvalid) {
			return nil, err
		}
		log.Debug("transport: request failed", "addr", c.Addr, "try", i, "of", tries, "err", err)
	}
	return nil, err
}

func request(ctx context.Context, addr string, req []byte, timeout time.Duration, lim Limits) ([]byte, error) {
	a, err := normalizeAddr(addr)
	if err != nil {
		return nil, err
	}
	lim = lim.withDefaults()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	raw, err := dialRetry(ctx, a)
	if err != nil {
		return nil, ctxErr(ctx, a, err)
	}
	c, err := openZMTP(ctx, raw, roleReq, nil, lim, nil)
	if err != nil {
		return nil, ctxErr(ctx, a, err)
	}
	defer c.close()
	stop := context.AfterFunc(ctx, c.close)
	defer stop()
	if err := c.send([][]byte{{}, req}); err != nil {
		return nil, ctxErr(ctx, a, err)
	}
	frames, err := c.recv()
	if err != nil {
		return nil, ctxErr(ctx, a, err)
	}
	if len(frames) != 2 || len(frames[0]) != 0 {
		return nil, fmt.Errorf("%w: reply from %s has %d frames, want [\"\", body]", ErrProtocol, a, len(frames))
	}
	return frames[1], nil
}

// dialRetry dials addr, retrying refused connections with backoff while ctx
// has a deadline that has not passed.
func dialRetry(ctx context.Context, addr string) (net.Conn, error) {
	backoff := 50 * time.Millisecond
	for {
		var d net.Dialer
		raw, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return raw, nil
		}
		dl, ok := ctx.Deadline()
		if !ok || ctx.Err() != nil {
			return nil, err
		}
		wait := min(backoff, time.Until(dl))
		if wait <= 0 {
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, err
		}
		backoff = min(2*backoff, time.Second)
	}
}

// ctxErr explains a failure caused by ctx running out as ErrTimeout (or the
// cancellation), keeping the underlying error.
func ctxErr(ctx context.Context, addr string, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: request to %s: %w", ErrTimeout, addr, err)
	case ctx.Err() != nil:
		return fmt.Errorf("transport: request to %s: %w (%w)", addr, ctx.Err(), err)
	default:
		return fmt.Errorf("transport: request to %s: %w", addr, mapNetErr(err))
	}
}

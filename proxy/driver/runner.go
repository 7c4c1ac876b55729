package driver

import (
	"context"
	"fmt"
)

// runner is what a getter needs from the device: send one command and get
// its text. The live implementation is *op (one scrapligo operation on the
// SSH session); tests plug in canned outputs (NAPALM's fixture files) so the
// same getter code parses them without SSH.
type runner interface {
	// send runs one command and returns its output and whether the device
	// reported a failure.
	send(cmd string) (string, bool, error)
	// show runs a command that must succeed (a failure is ErrCommand).
	show(cmd string) (string, error)
	// rejected reports a command the device refused, quoting its message.
	rejected(cmd, out string) error
	// errf builds an error wrapping sentinel about the command what.
	errf(sentinel error, what string, cause error) error
}

// errf implements runner.
func (o *op) errf(sentinel error, what string, cause error) error {
	return o.s.errf(sentinel, what, cause)
}

// query runs a getter: through the session's canned runner when one is set
// (tests), else as one operation on the live connection.
func (s *session) query(ctx context.Context, fn func(o runner) error) error {
	if s.canned != nil {
		if err := ctx.Err(); err != nil {
			return s.ctxErr("operation", err)
		}
		return fn(s.canned)
	}
	return s.run(ctx, func(o *op) error { return fn(o) })
}

// cannedRunner answers commands from a function (tests: NAPALM's fixture
// files); a command it has no answer for fails like a rejected command.
type cannedRunner struct {
	name   string
	answer func(cmd string) (string, bool)
}

func (c *cannedRunner) send(cmd string) (string, bool, error) {
	out, ok := c.answer(cmd)
	if !ok {
		return "% Invalid input detected (no canned output for " + cmd + ")", true, nil
	}
	return out, false, nil
}

func (c *cannedRunner) show(cmd string) (string, error) {
	out, failed, err := c.send(cmd)
	if err != nil {
		return "", err
	}
	if failed {
		return out, c.rejected(cmd, out)
	}
	return out, nil
}

func (c *cannedRunner) rejected(cmd, out string) error {
	return c.errf(ErrCommand, cmd, fmt.Errorf("%s", deviceMessage(out)))
}

func (c *cannedRunner) errf(sentinel error, what string, cause error) error {
	if cause == nil {
		return fmt.Errorf("%w: %s canned: %s", sentinel, c.name, what)
	}
	return fmt.Errorf("%w: %s canned: %s: %w", sentinel, c.name, what, cause)
}

// sessionOf returns the session of a driver built by this package (nil for
// others).
func sessionOf(d Driver) *session {
	switch v := d.(type) {
	case *iosDriver:
		return v.s
	case *eosDriver:
		return v.s
	case *nxosDriver:
		return v.s
	case *iosxrDriver:
		return v.s
	}
	return nil
}

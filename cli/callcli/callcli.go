// Package callcli is gsalt-call's command line behaviour, Salt's
// salt.cli.call with salt.cli.caller's printing: it runs one function
// through minion.Call and prints {"local": return} with the outputters,
// Salt's messages for a pending or rejected key and for function errors,
// and picks the exit code.
package callcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/gsalt/gsalt/minion"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/output"
	"github.com/gsalt/gsalt/wire/payload"
)

// Options configures Run.
type Options struct {
	minion.CallOptions
	// Out names the outputter (--out); "" uses the function's outputter,
	// else nested.
	Out string
	// OutFile, when set, receives the output instead of Stdout
	// (--out-file, appended like Salt's display_output does).
	OutFile string
	// RetcodePassthrough exits with the function's retcode instead of 1.
	RetcodePassthrough bool
	// Color colours the nested outputter.
	Color bool
	// Stdout and Stderr default to os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
}

// Run is salt-call: it returns the process exit code, 0 on success, 1
// when the retcode is not 0 (the retcode itself with RetcodePassthrough),
// minion.ExitPending, ExitRejected or ExitMasterFinger for those key
// states, 2 for another authentication failure, 255 for a missing
// function.
func Run(ctx context.Context, o Options) int {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	res, err := minion.Call(ctx, o.CallOptions)
	if res != nil {
		for _, w := range res.Warnings {
			fmt.Fprintln(o.Stderr, w)
		}
	}
	var authErr *minion.AuthError
	var fnErr *minion.FunctionError
	switch {
	case errors.Is(err, minion.ErrPending):
		fmt.Fprintln(o.Stdout, "Minion failed to authenticate with the master, has the minion key been accepted?")
		return minion.ExitPending
	case errors.Is(err, minion.ErrRejected):
		fmt.Fprintln(o.Stderr, "The Salt Master has rejected this minion's public key.")
		return minion.ExitRejected
	case errors.Is(err, minion.ErrMasterFinger):
		fmt.Fprintf(o.Stderr, "Error: %v\n", err)
		return minion.ExitMasterFinger
	case errors.As(err, &authErr):
		fmt.Fprintf(o.Stderr, "Error: %v\n", err)
		return 2
	case errors.As(err, &fnErr):
		return callError(o.Stderr, fnErr.Fn, fnErr.Err, fnErr.Raised)
	case err != nil:
		fmt.Fprintf(o.Stderr, "Error: %v\n", err)
		return 1
	}
	if res.Missing {
		if res.Return != nil {
			_ = display(o, res, payload.NewMap("local", res.Return), "nested", 0)
			return 1
		}
		if res.MissingNote != "" {
			fmt.Fprintln(o.Stderr, res.MissingNote)
		} else {
			fmt.Fprintln(o.Stderr, "'"+o.Fun+"' is not available.")
		}
		return 255
	}
	out := o.Out
	if out == "" {
		out = res.Outputter
	}
	if out == "" {
		out = "nested"
	}
	if err := display(o, res, payload.NewMap("local", res.Return), out, res.Retcode); err != nil {
		fmt.Fprintf(o.Stderr, "Error: %v\n", err)
		return 1
	}
	switch {
	case o.RetcodePassthrough:
		return res.Retcode
	case res.Retcode != 0:
		return 1
	}
	return 0
}

// callError prints a function error the way salt-call reports the matching
// Python exception and returns the exit code. raised tells an error of the
// function's body from one binding its arguments: a SaltInvocationError
// (a TypeError subclass) raised by the body meets salt-call's TypeError
// clause, one from the binding only its SystemExit.
func callError(w io.Writer, fn *modules.Function, err error, raised bool) int {
	msg := err.Error()
	strip := func(sentinel error) string {
		return strings.TrimPrefix(msg, sentinel.Error()+": ")
	}
	switch {
	case errors.Is(err, modules.ErrArguments):
		fmt.Fprintf(w, "\nPassed invalid arguments: %s.\n\nUsage:\n%s\n", strip(modules.ErrArguments), fn.Doc)
	case raised && errors.Is(err, modules.ErrInvocation):
		fmt.Fprintf(w, "\nPassed invalid arguments: %s.\n\nUsage:\n%s\n", strip(modules.ErrInvocation), fn.Doc)
	case errors.Is(err, modules.ErrExecution):
		fmt.Fprintf(w, "Error running '%s': %s\n", fn.Name, strip(modules.ErrExecution))
	case errors.Is(err, modules.ErrCommandNotFound):
		fmt.Fprintf(w, "Command required for '%s' not found: %s\n", fn.Name, strip(modules.ErrCommandNotFound))
	case errors.Is(err, modules.ErrInvocation):
		fmt.Fprintln(w, strip(modules.ErrInvocation))
	default:
		fmt.Fprintf(w, "The minion function caused an exception: %s\n", msg)
	}
	return modules.ExitGeneric
}

// display writes data to Stdout or the out file with Salt's outputters.
func display(o Options, res *minion.CallResult, data any, out string, retcode int) error {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	opts := output.Options{Color: o.Color && o.OutFile == "", Retcode: retcode, Logger: log}
	if res.Opts != nil {
		hs := output.HighstateOptionsFrom(res.Opts.Get)
		opts.Highstate = &hs
	}
	return output.Display(o.Stdout, o.OutFile, output.Resolve(out, opts), data, opts)
}

package minion

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	saltjid "github.com/gsalt/gsalt/internal/jid"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/output"
	"github.com/gsalt/gsalt/wire/payload"
)

// CallOptions configures Call, the behaviour of gsalt-call.
type CallOptions struct {
	// ConfigDir holds the minion configuration ("" means /etc/salt).
	ConfigDir string
	// Local runs without a master (salt-call --local: file_client local).
	Local bool
	// ID overrides the minion id (salt-call --id).
	ID string
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
	// Fun and Args are the function and its command-line arguments.
	Fun  string
	Args []string
	// Stdout and Stderr default to os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
	// Logger receives logs; nil means slog.Default().
	Logger *slog.Logger
}

// Call runs one execution function the way salt-call does and returns the
// process exit code: without Local it authenticates with the master (a
// pending key prints Salt's message and gives 2), fetches the pillar, runs
// the function and sends its return to the master as jid "req"; then it
// prints {"local": return} with the outputter and exits with 0, or 1 when
// the retcode is not 0 (the retcode itself with RetcodePassthrough).
func Call(ctx context.Context, o CallOptions) int {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	cfg, err := config.LoadMinion(o.ConfigDir)
	if err != nil {
		fmt.Fprintf(o.Stderr, "Error: %v\n", err)
		return 1
	}
	cfg.Opts.Set("__cli", "salt-call")
	if o.Local {
		cfg.Opts.Set("local", true)
		cfg.Opts.Set("file_client", "local")
		cfg.FileClient = "local"
	}
	m, err := New(Options{Config: cfg, ID: o.ID, Caller: true, Logger: log, RejectedDelay: time.Millisecond})
	if err != nil {
		fmt.Fprintf(o.Stderr, "Error: %v\n", err)
		return 1
	}
	local := o.Local || cfg.FileClient == "local" || cfg.MasterType == "disable"
	delete(m.services, "jobs")
	if local {
		delete(m.services, "master")
		delete(m.services, "pillar")
	} else {
		m.authMu.Lock()
		_, err := m.authenticate(ctx)
		m.authMu.Unlock()
		switch {
		case errors.Is(err, ErrPending):
			fmt.Fprintln(o.Stdout, "Minion failed to authenticate with the master, has the minion key been accepted?")
			return ExitPending
		case errors.Is(err, ErrRejected):
			fmt.Fprintln(o.Stderr, "The Salt Master has rejected this minion's public key.")
			return ExitRejected
		case errors.Is(err, ErrMasterFinger):
			fmt.Fprintf(o.Stderr, "Error: %v\n", err)
			return ExitMasterFinger
		case err != nil:
			fmt.Fprintf(o.Stderr, "Error: %v\n", err)
			return 2
		}
		if err := m.refreshPillar(ctx); err != nil {
			log.Warn("could not fetch the pillar", "err", err)
		}
	}
	return m.call(ctx, o, local)
}

func (m *Minion) call(ctx context.Context, o CallOptions, local bool) int {
	fun := o.Fun
	ret := payload.NewMap("jid", saltjid.New())
	fn, ok := m.reg.Lookup(fun)
	if !ok {
		missing := "'" + fun + "' is not available."
		if res, _ := m.execute(ctx, fun, nil, nil); res.Return != nil {
			if dm, isMap := res.Return.(*payload.Map); isMap {
				m.print(o, payload.NewMap("local", dm), "nested", 0)
				return 1
			}
		}
		fmt.Fprintln(o.Stderr, missing)
		return 255
	}
	jid := ret.Str("jid")
	sdata := payload.NewMap("fun", fun, "pid", int64(os.Getpid()), "jid", jid, "tgt", "salt-call")
	procPath := filepath.Join(m.cacheDir, "proc", jid)
	if b, err := payload.Marshal(sdata); err == nil {
		if err := os.WriteFile(procPath, b, 0o600); err != nil {
			fmt.Fprintf(o.Stderr, "Cannot write to process directory. Do you have permissions to write to %s ?\n", procPath)
		}
	}
	defer os.Remove(procPath)
	args := ParseInput(o.Args)
	env := m.env()
	bound, err := m.binder.Bind(fn, args, sdata)
	var value any
	retcode := 0
	if err == nil {
		call := &modules.Call{Fun: fun, Env: env, Args: bound, Pub: sdata}
		value, err = runGuarded(ctx, fn, call)
		retcode = call.Retcode
	}
	if err != nil {
		return callError(o.Stderr, fn, err)
	}
	if retcode == 0 {
		if vm, isMap := value.(*payload.Map); isMap {
			for _, k := range []string{"result", "success"} {
				if v, has := vm.Get(k); has && !payload.Truthy(v) {
					retcode = modules.ExitGeneric
				}
			}
		}
	}
	ret.Set("return", value).Set("retcode", int64(retcode))
	if fn.Outputter != "" {
		ret.Set("out", fn.Outputter)
	}
	if !local {
		funArgs := make([]any, len(o.Args))
		for i, a := range o.Args {
			funArgs[i] = a
		}
		load := payload.NewMap("cmd", "_return", "id", m.id)
		for _, it := range ret.Items() {
			load.SetKey(it.Key, it.Value)
		}
		load.Set("jid", "req").Set("fun", fun).Set("fun_args", funArgs)
		if _, err := m.request(ctx, load, defaultRequestTries, defaultRequestTimeout); err != nil {
			m.log.Warn("could not send the return to the master", "err", err)
		}
	}
	out := o.Out
	if out == "" {
		out = ret.Str("out")
	}
	if out == "" {
		out = "nested"
	}
	if err := m.print(o, payload.NewMap("local", value), out, retcode); err != nil {
		fmt.Fprintf(o.Stderr, "Error: %v\n", err)
		return 1
	}
	switch {
	case o.RetcodePassthrough:
		return retcode
	case retcode != 0:
		return 1
	}
	return 0
}

// runGuarded calls fn, turning a panic into an error.
func runGuarded(ctx context.Context, fn *modules.Function, call *modules.Call) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	return fn.Fn(ctx, call)
}

// callError prints a function error the way salt-call reports the matching
// Python exception and returns the exit code.
func callError(w io.Writer, fn *modules.Function, err error) int {
	msg := err.Error()
	strip := func(sentinel error) string {
		return strings.TrimPrefix(msg, sentinel.Error()+": ")
	}
	switch {
	case errors.Is(err, modules.ErrArguments):
		fmt.Fprintf(w, "\nPassed invalid arguments: %s.\n\nUsage:\n%s\n", strip(modules.ErrArguments), fn.Doc)
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

// print writes the formatted output to Stdout or the out file with
// Salt's outputters (output).
func (m *Minion) print(o CallOptions, data any, out string, retcode int) error {
	opts := output.Options{Color: o.Color && o.OutFile == "", Retcode: retcode, Log: m.log}
	if m.cfg.Opts != nil {
		hs := output.HighstateOptionsFrom(m.cfg.Opts.Get)
		opts.Highstate = &hs
	}
	return output.Display(o.Stdout, o.OutFile, output.Resolve(out, opts), data, opts)
}

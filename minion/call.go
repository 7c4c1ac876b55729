package minion

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	saltjid "github.com/gsalt/gsalt/internal/jid"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// CallOptions configures Call, the minion side of salt-call (gsalt-call's
// printing and exit codes are in cli/callcli).
type CallOptions struct {
	// ConfigDir holds the minion configuration ("" means /etc/salt).
	ConfigDir string
	// Local runs without a master (salt-call --local: file_client local).
	Local bool
	// ID overrides the minion id (salt-call --id).
	ID string
	// Cachedir overrides the configured cachedir (salt-call --cachedir).
	// Like Salt's CLI merge it applies after the configuration is
	// derived: extension_modules and the other paths computed from
	// cachedir keep the values the configuration gave them.
	Cachedir string
	// Fun and Args are the function and its command-line arguments.
	Fun  string
	Args []string
	// Logger receives logs; nil means slog.Default().
	Logger *slog.Logger
	// Registry holds the execution functions; nil builds NewRegistry().
	Registry *modules.Registry
}

// CallResult is what one salt-call run produced.
type CallResult struct {
	// Return is the function's return value.
	Return any
	// Retcode is the function's retcode (ExitGeneric when its dict return
	// has a false "result" or "success").
	Retcode int
	// Outputter is the function's own outputter ("" when it has none).
	Outputter string
	// Missing is set when no such function is loaded: Return then holds
	// the loader's dict answer, or nil (salt-call prints "'fun' is not
	// available.").
	Missing bool
	// MissingNote, when set with Missing, replaces "'fun' is not
	// available." (a Python extension module gsalt cannot load).
	MissingNote string
	// Warnings are the lines salt-call prints on stderr before the output.
	Warnings []string
	// Opts are the minion's options (for the outputters' settings).
	Opts *config.Opts
}

// AuthError is an authentication failure of Call: it wraps ErrPending,
// ErrRejected, ErrMasterFinger or the transport's error.
type AuthError struct{ Err error }

func (e *AuthError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *AuthError) Unwrap() error { return e.Err }

// FunctionError is the error the called function returned (or its panic).
type FunctionError struct {
	Fn  *modules.Function
	Err error
	// Raised is set when the function's body returned Err (not the
	// binding of its arguments): salt-call reports a SaltInvocationError
	// differently in the two cases.
	Raised bool
}

func (e *FunctionError) Error() string { return e.Err.Error() }

// Unwrap returns the function's error.
func (e *FunctionError) Unwrap() error { return e.Err }

// Call runs one execution function the way salt-call does: without Local
// it authenticates with the master (failures are *AuthError), fetches the
// pillar, runs the function and sends its return to the master as jid
// "req". A function failing returns *FunctionError; other errors are
// configuration or start-up failures.
func Call(ctx context.Context, o CallOptions) (*CallResult, error) {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	cfg, err := config.LoadMinion(o.ConfigDir)
	if err != nil {
		return nil, err
	}
	cfg.Opts.LogSources(log)
	cfg.Opts.Set("__cli", "salt-call")
	if o.Cachedir != "" {
		cfg.Opts.Set("cachedir", o.Cachedir)
		cfg.CacheDir = o.Cachedir
	}
	if o.Local {
		cfg.Opts.Set("local", true)
		cfg.Opts.Set("file_client", "local")
		cfg.FileClient = "local"
	}
	m, err := New(Options{Config: cfg, ID: o.ID, Caller: true, Registry: o.Registry, Logger: log, RejectedDelay: time.Millisecond})
	if err != nil {
		return nil, err
	}
	local := o.Local || cfg.FileClient == "local" || cfg.MasterType == "disable"
	delete(m.services, "jobs")
	if local {
		delete(m.services, "master")
		if m.localPillar == nil {
			delete(m.services, "pillar")
		} else if err := m.refreshLocalPillar(ctx); err != nil {
			// salt-call --local logs a pillar that fails to compile and
			// carries on; the _errors key reaches state runs.
			log.Error("could not compile the pillar", "err", err)
		}
	} else {
		_, err := m.authenticateAny(ctx)
		if err != nil {
			return nil, &AuthError{Err: err}
		}
		if err := m.refreshPillar(ctx); err != nil {
			log.Warn("could not fetch the pillar", "err", err)
		}
	}
	res, err := m.call(ctx, o, local)
	if res != nil {
		res.Opts = cfg.Opts
	}
	return res, err
}

func (m *Minion) call(ctx context.Context, o CallOptions, local bool) (*CallResult, error) {
	fun := o.Fun
	ret := payload.NewMap("jid", saltjid.New())
	res := &CallResult{}
	fn, ok := m.reg.Lookup(fun)
	if !ok {
		res.Missing = true
		res.MissingNote = m.pythonModuleNote(fun)
		if r, _ := m.execute(ctx, fun, nil, nil); r.Return != nil {
			if dm, isMap := r.Return.(*payload.Map); isMap {
				res.Return = dm
			}
		}
		return res, nil
	}
	jid := ret.Str("jid")
	sdata := payload.NewMap("fun", fun, "pid", int64(os.Getpid()), "jid", jid, "tgt", "salt-call")
	procPath := filepath.Join(m.cacheDir, "proc", jid)
	if b, err := payload.Marshal(sdata); err == nil {
		if err := os.WriteFile(procPath, b, 0o600); err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("Cannot write to process directory. Do you have permissions to write to %s ?", procPath))
		}
	}
	defer os.Remove(procPath)
	args := ParseInput(o.Args)
	env := m.env()
	bound, err := m.binder.Bind(fn, args, sdata)
	var value any
	retcode := 0
	raised := false
	if err == nil {
		call := &modules.Call{Fun: fun, Env: env, Args: bound, Pub: sdata}
		value, err = runGuarded(ctx, fn, call)
		retcode = call.Retcode
		raised = true
	}
	if err != nil {
		return res, &FunctionError{Fn: fn, Err: err, Raised: raised}
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
	res.Return, res.Retcode, res.Outputter = value, retcode, fn.Outputter
	return res, nil
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

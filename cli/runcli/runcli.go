// Package runcli is the behaviour of gsalt-run, Salt's `salt-run` command:
// a runner is started on the master with the clear "runner" command
// (authenticated with the root key) and its progress and return events are
// read from the master event bus and printed with Salt's outputters.
// state.event runs in the client: it streams the master event bus like
// `salt-run state.event`. cmd/gsalt-run only maps flags onto Options.
package runcli

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

	"github.com/gsalt/gsalt/internal/stringutils"

	"github.com/gsalt/gsalt/cli/saltcli"
	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/output"
	"github.com/gsalt/gsalt/wire/payload"
)

// Options is one gsalt-run invocation.
type Options struct {
	ConfigDir string
	// Words are RUNNER.FUN [ARG ...].
	Words []string
	// Async starts the runner and returns without waiting.
	Async bool
	// Timeout bounds the wait for the runner's return (0: the master's
	// rest_timeout, 300 s).
	Timeout time.Duration
	// Quiet suppresses the printing of the return.
	Quiet bool

	Out           string
	OutFile       string
	OutFileAppend bool
	OutIndent     *int
	// StateOpts are highstate outputter options from the command line
	// (state_output, state_verbose); they win over the config file.
	StateOpts  map[string]any
	NoColor    bool
	ForceColor bool
	IsTerminal bool
	NoParse    []string
	// Eauth are -a/-T/--username/--password.
	Eauth saltcli.EauthOptions

	Stdout io.Writer
	Stderr io.Writer
	Logger *slog.Logger
}

type runner struct {
	o     Options
	cfg   *config.Master
	out   output.Options
	outFn string
}

// Run executes one gsalt-run command and returns the exit code.
func Run(ctx context.Context, o Options) int {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	cfg, err := config.LoadClient(o.ConfigDir)
	if err != nil {
		fmt.Fprintln(o.Stderr, "ERROR:", err)
		return 1
	}
	cfg.Opts.LogSources(o.Logger)
	r := &runner{o: o, cfg: cfg}
	r.setupOutput()
	if o.OutFile != "" && !o.OutFileAppend {
		if fi, err := os.Stat(o.OutFile); err == nil && fi.Mode().IsRegular() {
			_ = os.Truncate(o.OutFile, 0)
		}
	}
	fun := ""
	if len(o.Words) > 0 {
		fun = o.Words[0]
	}
	var args []string
	if len(o.Words) > 1 {
		args = o.Words[1:]
	}
	if fun == "" {
		r.display("Must specify a function to run!\nex: manage.up", "nested")
		return 1
	}
	if fun == "state.event" {
		return r.stateEvent(ctx, args)
	}
	return r.remote(ctx, fun, args)
}

func (r *runner) setupOutput() {
	o := r.o
	r.out = output.FromConfig(output.Flags{IsTerminal: o.IsTerminal, ForceColor: o.ForceColor, NoColor: o.NoColor,
		OutIndent: o.OutIndent, StateOpts: o.StateOpts, Logger: o.Logger}, r.cfg)
	r.outFn = o.Out
	if r.outFn == "" {
		r.outFn = r.cfg.Str("output")
	}
}

func (r *runner) display(data any, out string) {
	if r.outFn != "" && r.outFn != "highstate" {
		out = r.outFn
	}
	if err := output.Display(r.o.Stdout, r.o.OutFile, out, data, r.out); err != nil {
		r.o.Logger.Debug("printing failed", "error", err)
	}
}

// RunnerLoad builds the clear "runner" load the way RunnerClient's
// master_call does for key authentication: {fun, kwarg: {kwarg, arg},
// user, key, cmd}.
func RunnerLoad(fun string, args []any, kwargs *payload.Map, user, key string) *payload.Map {
	if args == nil {
		args = []any{}
	}
	if kwargs == nil {
		kwargs = payload.NewMap()
	}
	return payload.NewMap(
		"fun", fun,
		"kwarg", payload.NewMap("kwarg", kwargs, "arg", args),
		"user", user,
		"key", key,
		"cmd", "runner",
	)
}

// splitArgs parses the command-line words like parse_input and splits
// off the trailing __kwarg__ map.
func splitArgs(words, noParse []string) ([]any, *payload.Map) {
	all := saltcli.ParseInput(words, noParse)
	kwargs := payload.NewMap()
	if n := len(all); n > 0 {
		if m, ok := all[n-1].(*payload.Map); ok && m.Bool("__kwarg__") {
			for _, it := range m.Items() {
				if it.Key != "__kwarg__" {
					kwargs.SetKey(it.Key, it.Value)
				}
			}
			all = all[:n-1]
		}
	}
	return all, kwargs
}

func (r *runner) remote(ctx context.Context, fun string, words []string) int {
	c := saltcli.NewClient(r.cfg, r.o.Logger)
	args, kwargs := splitArgs(words, r.o.NoParse)
	var ev *saltcli.Events
	if !r.o.Async {
		var err error
		ev, err = c.Subscribe(ctx, func(tag string) bool { return strings.HasPrefix(tag, "salt/run/") }, 0)
		if err != nil {
			return r.fail(err)
		}
		// await may replace ev (re-subscribing after a master restart).
		defer func() {
			if ev != nil {
				ev.Close()
			}
		}()
	}
	load := RunnerLoad(fun, args, kwargs, c.User, c.Key)
	ekw, err := c.EauthKwargs(ctx, r.o.Eauth, r.o.Stderr)
	if err != nil {
		return r.fail(err)
	}
	if ekw != nil {
		// Token or eauth credentials replace the key, at the top of the
		// load as RunnerClient.master_call sends them.
		load.Delete("key")
		for _, it := range ekw.Items() {
			load.SetKey(it.Key, it.Value)
		}
	}
	reply, err := c.Request(ctx, load, 60*time.Second)
	if err != nil {
		return r.fail(err)
	}
	m, ok := reply.(*payload.Map)
	if !ok {
		return r.fail(fmt.Errorf("%w: %s", saltcli.ErrBadReply, output.PyRepr(reply)))
	}
	if e, has := m.Get("error"); has {
		if em, isMap := e.(*payload.Map); isMap {
			return r.fail(&saltcli.SaltError{Kind: saltcli.ErrAuthentication, Text: em.Str("message")})
		}
		return r.fail(&saltcli.SaltError{Kind: saltcli.ErrPublish, Text: output.PyStr(e)})
	}
	jid, tag := m.Str("jid"), m.Str("tag")
	if tag == "" && jid != "" {
		tag = "salt/run/" + jid
	}
	if tag == "" {
		return r.fail(fmt.Errorf("%w: %s", saltcli.ErrBadReply, output.PyRepr(reply)))
	}
	if r.o.Async {
		fmt.Fprintf(r.o.Stderr, "[WARNING ] Running in asynchronous mode. Results of this execution may be collected by attaching to the master event bus or by examining the master job cache, if configured. This execution is running under tag %s\n", tag)
		return 0
	}
	return r.await(ctx, c, &ev, tag, jid)
}

// Fallback timing: when the runner's return event has not arrived after
// fallbackAfter (then every fallbackEvery), or the event connection ends
// (a master restart), the return is looked up in the job cache.
var (
	fallbackAfter = 10 * time.Second
	fallbackEvery = 10 * time.Second
)

// await prints the runner's events (print_async_event) until its return.
// A missed return event (the bus dropped it for a slow reader, the master
// restarted) is found in the job cache with jobs.lookup_jid.
func (r *runner) await(ctx context.Context, c *saltcli.Client, evp **saltcli.Events, tag, jid string) int {
	timeout := r.o.Timeout
	if timeout <= 0 {
		timeout = 300 * time.Second
		if n, err := r.cfg.Int("rest_timeout"); err == nil && n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	lookupTick := time.NewTimer(fallbackAfter)
	defer lookupTick.Stop()
	prefix := tag + "/"
	lookups := map[string]bool{} // tags of our jobs.lookup_jid runs
	for {
		ev := *evp
		var evC <-chan event.Event
		if ev != nil {
			evC = ev.C()
		}
		select {
		case e, ok := <-evC:
			if !ok {
				// The master went away: subscribe again, then look the
				// return up in case it was fired in between.
				ev.Close()
				*evp = nil
				r.o.Logger.Debug("event bus connection ended; re-subscribing", "jid", jid)
				lookupTick.Reset(0)
				continue
			}
			if ltag, isLookup := lookupTag(lookups, e.Tag); isLookup {
				if strings.HasSuffix(e.Tag, "/ret") {
					delete(lookups, ltag)
					if data := fromLookup(e.Data, jid); data != nil {
						r.o.Logger.Debug("runner return found in the job cache", "jid", jid)
						return r.finish(data)
					}
				}
				continue
			}
			suffix, isOurs := strings.CutPrefix(e.Tag, prefix)
			if !isOurs || e.Data == nil {
				continue
			}
			data := e.Data.Clone()
			data.Delete(event.StampKey)
			// "args" events belong to the steps of an orchestration
			// (salt.runner/salt.wheel fire them under the runner's jid);
			// salt-run does not print them.
			if suffix == "new" || suffix == "args" {
				continue
			}
			if suffix != "ret" {
				if !r.o.Quiet {
					r.display(payload.NewMap("suffix", suffix, "event", data), eventOutputter(data))
				}
				continue
			}
			return r.finish(data)
		case <-lookupTick.C:
			lookupTick.Reset(fallbackEvery)
			if *evp == nil {
				ne, err := c.Subscribe(ctx, func(tag string) bool { return strings.HasPrefix(tag, "salt/run/") }, 0)
				if err != nil {
					r.o.Logger.Debug("cannot re-subscribe to the event bus yet", "err", err)
					continue
				}
				*evp = ne
			}
			reply, err := c.Request(ctx, RunnerLoad("jobs.lookup_jid", []any{jid}, payload.NewMap(), c.User, c.Key), 30*time.Second)
			if err != nil {
				r.o.Logger.Debug("job cache lookup failed", "jid", jid, "err", err)
				continue
			}
			if m, ok := reply.(*payload.Map); ok && m.Str("tag") != "" {
				lookups[m.Str("tag")] = true
			}
		case <-deadline.C:
			r.display(fmt.Sprintf("RunnerClient job '%s' timed out", jid), "nested")
			return 1
		case <-ctx.Done():
			return 1
		}
	}
}

// lookupTag reports whether an event tag belongs to one of our lookups.
func lookupTag(lookups map[string]bool, tag string) (string, bool) {
	for t := range lookups {
		if strings.HasPrefix(tag, t+"/") {
			return t, true
		}
	}
	return "", false
}

// fromLookup extracts the runner's ret data (as fired on salt/run/<jid>/ret
// and stored in the job cache under the master's id) from the ret event
// of jobs.lookup_jid, or nil when the job has not returned yet.
func fromLookup(ev *payload.Map, jid string) *payload.Map {
	if ev == nil {
		return nil
	}
	ret, _ := ev.Get("return")
	m, ok := ret.(*payload.Map)
	if !ok {
		return nil
	}
	if d := m.Map("data"); d != nil && m.Has("outputter") {
		m = d
	}
	for _, it := range m.Items() {
		rec, ok := it.Value.(*payload.Map)
		if ok && rec.Str("jid") == jid && strings.HasPrefix(rec.Str("fun"), "runner.") && rec.Has("return") {
			return rec
		}
	}
	return nil
}

// finish prints a runner's ret data and returns the exit status.
func (r *runner) finish(data *payload.Map) int {
	ret, _ := data.Get("return")
	out := eventOutputter(data)
	if rm, isMap := ret.(*payload.Map); isMap && rm.Len() == 2 && rm.Has("data") && rm.Has("outputter") {
		out = rm.Str("outputter")
		ret, _ = rm.Get("data")
	}
	if !r.o.Quiet {
		r.display(ret, out)
	}
	return exitCode(ret)
}

// eventOutputter is the outputter print_async_event picks from an event.
func eventOutputter(data *payload.Map) string {
	if s := data.Str("outputter"); s != "" {
		return s
	}
	if rm := data.Map("return"); rm != nil {
		return rm.Str("outputter")
	}
	return ""
}

// exitCode is SaltRun's exit status: the return's retcode, or its
// data.retcode.
func exitCode(ret any) int {
	m, ok := ret.(*payload.Map)
	if !ok {
		return 0
	}
	if v, ok := m.Get("retcode"); ok {
		n, _ := payload.AsInt(v)
		return int(n)
	}
	if d := m.Map("data"); d != nil {
		if v, ok := d.Get("retcode"); ok {
			n, _ := payload.AsInt(v)
			return int(n)
		}
	}
	return 0
}

func (r *runner) fail(err error) int {
	var se *saltcli.SaltError
	text := err.Error()
	if errors.As(err, &se) {
		text = se.Text
	}
	r.display(text, "nested")
	return 1
}

// eventArgs are state.event's parameters (salt/runners/state.py event).
type eventArgs struct {
	tagmatch string
	count    int64
	quiet    bool
	sockDir  string
	pretty   bool
	node     string
}

func parseEventArgs(words, noParse []string) (eventArgs, error) {
	a := eventArgs{tagmatch: "*", count: -1, node: "master"}
	args, kwargs := splitArgs(words, noParse)
	names := []string{"tagmatch", "count", "quiet", "sock_dir", "pretty", "node"}
	vals := map[string]any{}
	if len(args) > len(names) {
		return a, fmt.Errorf("event() takes from 0 to 6 positional arguments but %d were given", len(args))
	}
	for i, v := range args {
		vals[names[i]] = v
	}
	for _, it := range kwargs.Items() {
		k := payload.KeyString(it.Key)
		if strings.HasPrefix(k, "__") {
			continue
		}
		if !contains(names, k) {
			return a, fmt.Errorf("event() got an unexpected keyword argument '%s'", k)
		}
		vals[k] = it.Value
	}
	if v, ok := vals["tagmatch"]; ok {
		a.tagmatch = payload.Text(v)
	}
	if v, ok := vals["count"]; ok {
		n, isInt := payload.AsInt(v)
		if !isInt {
			return a, fmt.Errorf("count must be an integer, not %s", output.PyRepr(v))
		}
		a.count = n
	}
	if v, ok := vals["quiet"]; ok {
		a.quiet = payload.Truthy(v)
	}
	if v, ok := vals["sock_dir"]; ok && v != nil {
		a.sockDir = payload.Text(v)
	}
	if v, ok := vals["pretty"]; ok {
		a.pretty = payload.Truthy(v)
	}
	if v, ok := vals["node"]; ok {
		a.node = payload.Text(v)
	}
	return a, nil
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// FormatEvent renders one event as state.event prints it: the tag, a tab
// and the data as JSON (sorted and indented by 4 with pretty).
func FormatEvent(ev event.Event, pretty bool) string {
	jo := output.JSONOptions{ReprDefault: true, SortKeys: pretty}
	if pretty {
		four := 4
		jo.Indent = &four
	}
	var data any = ev.Data
	if ev.Data == nil {
		data = payload.NewMap()
	}
	s, err := output.PyJSON(data, jo)
	if err != nil && pretty {
		jo.SortKeys = false
		s, err = output.PyJSON(data, jo)
	}
	if err != nil {
		s = "{}"
	}
	return ev.Tag + "\t" + s
}

// stateEvent streams the master event bus like `salt-run state.event`.
func (r *runner) stateEvent(ctx context.Context, words []string) int {
	a, err := parseEventArgs(words, r.o.NoParse)
	if err != nil {
		r.display("Passed invalid arguments: "+err.Error(), "nested")
		return 1
	}
	if a.node != "master" {
		r.display("state.event in gsalt-run only watches the master event bus (node=master)", "nested")
		return 1
	}
	sock := r.cfg.SockDir
	if a.sockDir != "" {
		sock = a.sockDir
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	rd, err := event.DialPub(dctx, filepath.Join(sock, event.MasterPubSocket))
	cancel()
	if err != nil {
		return r.fail(&saltcli.SaltError{Kind: saltcli.ErrNoMaster, Text: saltcli.TextNoMaster})
	}
	defer rd.Close()
	count := a.count
	bad := 0
	for count != 0 {
		ev, err := rd.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return 1
			}
			if errors.Is(err, event.ErrBadFrame) && bad < 16 {
				bad++
				continue
			}
			return r.fail(&saltcli.SaltError{Kind: saltcli.ErrNoMaster, Text: saltcli.TextNoMaster})
		}
		bad = 0
		if !stringutils.ExprMatch(ev.Tag, a.tagmatch) {
			r.o.Logger.Debug("Skipping event tag: " + ev.Tag)
			continue
		}
		if !a.quiet {
			fmt.Fprintln(r.o.Stdout, FormatEvent(ev, a.pretty))
		}
		if count > 0 {
			count--
		}
	}
	// The runner returns None, which salt-run then prints.
	if !r.o.Quiet {
		r.display(nil, "")
	}
	return 0
}

// Package saltcli is the behaviour of gsalt, Salt's `salt` command
// (salt/cli/salt.py with LocalClient): it parses the command line words like
// SaltCMDOptionParser, publishes the job on the master's request port with
// the root key, gathers the returns from the master event bus (find_job
// after the timeout, "Minion did not return") and prints each with Salt's
// outputters. cmd/gsalt only maps flags onto Options.
package saltcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/output"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// Exit codes of the salt CLI.
const (
	ExitOK      = 0
	ExitGeneric = 1
	ExitNoRet   = 2
	ExitUsage   = 42
)

// Options is one gsalt invocation.
type Options struct {
	ConfigDir string
	// Words are the positional arguments: TARGET FUN [ARG ...].
	Words []string
	// TargetType is the selected target option's tgt_type ("" = glob):
	// pcre, list, grain, grain_pcre, pillar, pillar_pcre, ipcidr,
	// compound, nodegroup, range.
	TargetType string
	// Timeout is -t; 0 or less means the master's timeout option.
	Timeout int
	Static  bool
	Async   bool
	Verbose bool
	ShowJID bool
	// HideTimeout is --hide-timeout (show_timeout False).
	HideTimeout bool
	Summary     bool
	// RetcodePassthrough exits with the highest minion retcode instead of 1.
	RetcodePassthrough bool

	// Batch is -b/--batch/--batch-size: "N" minions or "N%" of the
	// responding ones at a time ("" runs the job on all at once).
	Batch string
	// BatchWait is --batch-wait: seconds a finished minion's slot stays
	// taken before the next minion starts.
	BatchWait float64
	// BatchSafeLimit is --batch-safe-limit: a job targeting at least this
	// many minions runs as a batch of BatchSafeSize (0 or 1: off).
	BatchSafeLimit int
	// BatchSafeSize is --batch-safe-size (Salt's default 8).
	BatchSafeSize string
	// Failhard is --failhard: a batch stops at the first minion that fails
	// or returns a non-zero retcode.
	Failhard bool

	Out           string
	OutFile       string
	OutFileAppend bool
	// OutIndent is --out-indent when given.
	OutIndent *int
	// StateOpts are highstate outputter options from the command line
	// (state_output, state_verbose); they win over the config file.
	StateOpts  map[string]any
	NoColor    bool
	ForceColor bool
	// IsTerminal says whether stdout is a terminal (colour by default).
	IsTerminal bool

	Delimiter       string
	Return          string
	ReturnConfig    string
	ReturnKwargs    string
	Metadata        string
	ModuleExecutors string
	ExecutorOpts    string
	ArgsSeparator   string
	NoParse         []string

	// Eauth are -a/-T/--username/--password.
	Eauth EauthOptions

	Stdout io.Writer
	Stderr io.Writer
	Logger *slog.Logger
}

// runner holds the state of one invocation.
type runner struct {
	o      Options
	cfg    *config.Master
	client *Client
	out    output.Options
	outFn  string // --out (or the config's output)
	// eauthKw are the token or eauth credentials sent with every publish.
	eauthKw *payload.Map
}

// Run executes one gsalt command and returns the process exit code.
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
	if o.Delimiter == "" {
		o.Delimiter = ":"
	}
	cmd, err := ParseCommand(o.Words, o.TargetType == "list", o.ArgsSeparator, o.NoParse)
	if err != nil {
		fmt.Fprintf(o.Stderr, "\n%s.\n\n", salty(err))
		return ExitUsage
	}
	cfg, err := config.LoadClient(o.ConfigDir)
	if err != nil {
		fmt.Fprintln(o.Stderr, "ERROR:", err)
		return ExitGeneric
	}
	cfg.Opts.LogSources(o.Logger)
	r := &runner{o: o, cfg: cfg, client: NewClient(cfg, o.Logger)}
	if r.eauthKw, err = r.client.EauthKwargs(ctx, o.Eauth, o.Stderr); err != nil {
		fmt.Fprintln(o.Stderr, err)
		return 2 // salt.cli.salt's sys.exit(2) on a failed authentication
	}
	r.setupOutput()
	if o.OutFile != "" && !o.OutFileAppend {
		if fi, err := os.Stat(o.OutFile); err == nil && fi.Mode().IsRegular() {
			if err := os.Truncate(o.OutFile, 0); err != nil {
				fmt.Fprintf(o.Stderr, "%s: Access denied: %v\n", o.OutFile, err)
				return ExitUsage
			}
		}
	}
	return r.run(ctx, cmd)
}

// salty turns a command-line error into Salt's message.
func salty(err error) string {
	switch {
	case errors.Is(err, ErrNoTarget):
		return "Cannot execute command without defining a target"
	case errors.Is(err, ErrTooFewArgGroups):
		return "Cannot execute compound command without defining all arguments"
	case errors.Is(err, ErrTooManyArgGroups):
		return "Cannot execute compound command with more arguments than commands"
	}
	return "Incomplete options passed"
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

// display prints data with the outputter Salt would pick: --out (or the
// config's output, unless it is highstate) over the return's own.
func (r *runner) display(data any, out string, retcode int) {
	if r.outFn != "" && r.outFn != "highstate" {
		out = r.outFn
	}
	if out == "" && r.o.Static && r.outFn == "" && strings.HasPrefix(r.funName(), "state.") {
		out = "highstate"
	}
	o := r.out
	o.Retcode = retcode
	if err := output.Display(r.o.Stdout, r.o.OutFile, out, data, o); err != nil {
		r.o.Logger.Debug("printing failed", "error", err)
	}
}

func (r *runner) funName() string {
	if len(r.o.Words) > 1 {
		return r.o.Words[1]
	}
	return ""
}

func (r *runner) timeout() int {
	if r.o.Timeout > 0 {
		return r.o.Timeout
	}
	if r.cfg.Timeout > 0 {
		return r.cfg.Timeout
	}
	return 5
}

func (r *runner) gatherJobTimeout() int {
	if r.cfg.GatherJobTimeout > 0 {
		return r.cfg.GatherJobTimeout
	}
	return 10
}

// clientKwargs are the kwargs salt.py hands to cmd_cli beyond the named
// parameters, in its order: they travel in the publish load's "kwargs".
func (r *runner) clientKwargs() *payload.Map {
	o := r.o
	kw := payload.NewMap("show_timeout", !o.HideTimeout, "show_jid", o.ShowJID, "delimiter", o.Delimiter)
	if o.ReturnConfig != "" {
		kw.Set("ret_config", o.ReturnConfig)
	}
	if o.ReturnKwargs != "" {
		kw.Set("ret_kwargs", wireValue(YamlifyArg(o.ReturnKwargs)))
	}
	if o.ModuleExecutors != "" {
		kw.Set("module_executors", wireValue(YamlifyArg(o.ModuleExecutors)))
	}
	if o.ExecutorOpts != "" {
		kw.Set("executor_opts", wireValue(YamlifyArg(o.ExecutorOpts)))
	}
	if o.Metadata != "" {
		kw.Set("metadata", wireValue(YamlifyArg(o.Metadata)))
	}
	if r.eauthKw != nil {
		for _, it := range r.eauthKw.Items() {
			kw.SetKey(it.Key, it.Value)
		}
	}
	return kw
}

// resolveTarget expands nodegroups as LocalClient._prep_pub does.
func (r *runner) resolveTarget(tgt any, tgtType string) (any, string, error) {
	nt, ntt, err := target.ResolvePublishTarget(tgt, tgtType, r.cfg.Nodegroups)
	if err == nil {
		return nt, ntt, nil
	}
	if errors.Is(err, target.ErrUnknownNodegroup) {
		name := missingNodegroup(tgt, tgtType, r.cfg.Nodegroups)
		return nil, "", &SaltError{Kind: err, Text: fmt.Sprintf("Node group %s unavailable in %s", name, r.cfg.ConfFile)}
	}
	return nil, "", &SaltError{Kind: err, Text: err.Error()}
}

func missingNodegroup(tgt any, tgtType string, groups map[string]any) string {
	if s, ok := tgt.(string); ok && tgtType == "nodegroup" {
		return s
	}
	var words []string
	switch x := tgt.(type) {
	case string:
		words = strings.Fields(x)
	case []any:
		words = stringList(x)
	}
	for _, w := range words {
		if strings.HasPrefix(w, "N@") && len(w) > 2 {
			if _, ok := groups[w[2:]]; !ok {
				return w[2:]
			}
		}
	}
	return ""
}

func (r *runner) run(ctx context.Context, cmd *Command) int {
	tgtType := r.o.TargetType
	if tgtType == "" {
		tgtType = "glob"
	}
	tgt, tgtType, err := r.resolveTarget(cmd.Tgt, tgtType)
	if err != nil {
		return r.fail(err)
	}
	if r.o.Batch != "" && r.o.Async {
		// salt.py's _run_batch_async: the master runs the batch
		// (BatchAsync) and answers with the batch jid at once.
		kw := payload.NewMap("show_timeout", !r.o.HideTimeout, "show_jid", r.o.ShowJID, "batch", r.o.Batch)
		pd, err := r.client.Publish(ctx, PubArgs{Tgt: tgt, Fun: cmd.Fun, Arg: cmd.Arg, TgtType: tgtType, Ret: r.o.Return, Timeout: r.timeout(), Kwargs: kw}, r.o.Stdout)
		if err != nil {
			fmt.Fprintf(r.o.Stderr, "ERROR: %s\n", err)
			return ExitNoRet
		}
		if pd == nil {
			r.display(payload.NewMap(), "", 0)
			return ExitGeneric
		}
		fmt.Fprintf(r.o.Stdout, "Executed command with job ID: %s\n", pd.JID)
		return ExitOK
	}
	if r.o.Batch != "" {
		return r.runBatch(ctx, cmd, tgt, tgtType, r.o.Batch, r.o.Static)
	}
	if r.o.BatchSafeLimit > 1 && !r.o.Async {
		// Salt previews the target with the master's CheckMinions; gsalt
		// asks the master with the batch's presence ping, whose publish
		// reply lists the targeted minions.
		b, stop, err := r.newBatch(ctx, cmd, r.batchSafeSize(), r.o.Static)
		if err != nil {
			return r.fail(err)
		}
		up, down, expected, err := b.gatherMinions(ctx, tgt, tgtType)
		if err != nil {
			stop()
			return r.fail(err)
		}
		if len(expected) >= r.o.BatchSafeLimit {
			defer stop()
			fmt.Fprintln(r.o.Stdout, "\nNOTICE: Too many minions targeted, switching to batch execution.")
			return b.run(ctx, up, down)
		}
		stop()
	}
	if r.o.Static {
		return r.runStatic(ctx, cmd, tgt, tgtType)
	}
	pub := PubArgs{Tgt: tgt, Fun: cmd.Fun, Arg: cmd.Arg, TgtType: tgtType, Ret: r.o.Return, Timeout: r.timeout(), Kwargs: r.clientKwargs()}
	if r.o.Async {
		pd, err := r.client.Publish(ctx, pub, r.o.Stdout)
		if err != nil {
			fmt.Fprintf(r.o.Stderr, "ERROR: %s\n", err)
			return ExitGeneric
		}
		jid := "0"
		if pd != nil {
			jid = pd.JID
		}
		fmt.Fprintf(r.o.Stdout, "Executed command with job ID: %s\n", jid)
		return ExitOK
	}
	ev, err := r.client.Subscribe(ctx, func(tag string) bool { return strings.HasPrefix(tag, "salt/job/") }, 0)
	if err != nil {
		return r.fail(err)
	}
	defer ev.Close()
	pd, err := r.client.Publish(ctx, pub, r.o.Stdout)
	if err != nil {
		return r.fail(err)
	}
	if pd == nil {
		r.display(payload.NewMap(), "", 0)
		fmt.Fprintln(r.o.Stderr, "ERROR: No return received")
		return ExitNoRet
	}
	if r.o.Verbose {
		msg := "Executing job with jid " + pd.JID
		fmt.Fprintf(r.o.Stdout, "%s\n%s\n\n", msg, strings.Repeat("-", len(msg)))
	} else if r.o.ShowJID {
		fmt.Fprintf(r.o.Stdout, "jid: %s\n", pd.JID)
	}
	var retcodes []int
	full := payload.NewMap()
	wo := WatchOptions{
		Timeout:          time.Duration(r.timeout()) * time.Second,
		GatherJobTimeout: time.Duration(r.gatherJobTimeout()) * time.Second,
		ExpectMinions:    r.o.Verbose || !r.o.HideTimeout,
		FindJobKwargs:    r.findJobKwargs(),
		Notice:           r.o.Stdout,
	}
	err = r.client.Watch(ctx, ev, pd, wo, func(mr MinionReturn) error {
		data := mr.Data
		if mr.Failed {
			data = NoReturnData(pd.JID)
		}
		ret, _ := data.Get("ret")
		out := data.Str("out")
		rc := RetcodeOf(data)
		retcodes = append(retcodes, rc)
		r.display(payload.NewMap().SetKey(mr.ID, ret), out, rc)
		full.Set(mr.ID, data)
		return nil
	})
	if err != nil {
		return r.fail(err)
	}
	if r.o.Summary && r.o.Out == "" {
		r.printSummary(full)
	}
	maxRC := 0
	bad := false
	for _, rc := range retcodes {
		if rc != 0 {
			bad = true
		}
		if rc > maxRC {
			maxRC = rc
		}
	}
	if bad {
		fmt.Fprintln(r.o.Stderr, "ERROR: Minions returned with non-zero exit code")
		if r.o.RetcodePassthrough && maxRC > 0 {
			return maxRC
		}
		return ExitGeneric
	}
	return ExitOK
}

// batchSafeSize is --batch-safe-size, 8 when not given.
func (r *runner) batchSafeSize() string {
	if r.o.BatchSafeSize == "" {
		return "8"
	}
	return r.o.BatchSafeSize
}

// findJobKwargs are the kwargs get_iter_returns passes on to find_job:
// cmd_cli's kwargs without those get_cli_event_returns names itself.
func (r *runner) findJobKwargs() *payload.Map {
	kw := r.clientKwargs()
	kw.Delete("show_timeout")
	kw.Delete("show_jid")
	return kw
}

// fail prints a client error the way salt.py prints the exceptions it
// catches (through the nested outputter) and returns 1. Salt itself exits
// 0 here; gsalt reports the failure in its status.
func (r *runner) fail(err error) int {
	var se *SaltError
	text := err.Error()
	if errors.As(err, &se) {
		text = se.Text
	}
	r.display(text, "", 1)
	return ExitGeneric
}

// NoReturnData is what get_cli_event_returns reports for a minion that did
// not answer.
func NoReturnData(jid string) *payload.Map {
	return payload.NewMap(
		"out", "no_return",
		"ret", "Minion did not return. [No response]\nThe minions may not have all finished running and any remaining minions will return upon completion. To look up the return data for this job later, run the following command:\n\ngsalt-run jobs.lookup_jid "+jid,
		"retcode", int64(ExitGeneric),
	)
}

// RetcodeOf is salt.py's _get_retcode for one return: its retcode (the
// highest one for a multi-function map), 1 for a bare False, else 0.
func RetcodeOf(ret any) int {
	switch x := ret.(type) {
	case *payload.Map:
		v, ok := x.Get("retcode")
		if !ok {
			return 0
		}
		switch rc := v.(type) {
		case *payload.Map:
			best, first := 0, true
			for _, it := range rc.Items() {
				n, _ := payload.AsInt(it.Value)
				if first || int(n) > best {
					best, first = int(n), false
				}
			}
			return best
		default:
			n, ok := payload.AsInt(rc)
			if !ok {
				if payload.Truthy(rc) {
					return 1
				}
				return 0
			}
			return int(n)
		}
	case bool:
		if !x {
			return 1
		}
	}
	return 0
}

// printSummary is salt.py's _print_returns_summary (--summary).
func (r *runner) printSummary(full *payload.Map) {
	w := r.o.Stdout
	var returned, notReturned int
	var notResp, notConn, failed []string
	for _, it := range full.Items() {
		id := payload.KeyString(it.Key)
		data, _ := it.Value.(*payload.Map)
		var ret any = data
		if data != nil && data.Has("ret") {
			ret, _ = data.Get("ret")
		}
		if s, ok := ret.(string); ok && strings.HasPrefix(s, "Minion did not return") {
			if strings.Contains(s, "Not connected") {
				notConn = append(notConn, id)
			} else if strings.Contains(s, "No response") {
				notResp = append(notResp, id)
			}
			notReturned++
			continue
		}
		returned++
		if RetcodeOf(data) != 0 {
			failed = append(failed, id)
		}
	}
	line := strings.Repeat("-", 43)
	fmt.Fprintf(w, "\n\n%s\nSummary\n%s\n", line, line)
	fmt.Fprintf(w, "# of minions targeted: %d\n", returned+notReturned)
	fmt.Fprintf(w, "# of minions returned: %d\n", returned)
	fmt.Fprintf(w, "# of minions that did not return: %d\n", notReturned)
	fmt.Fprintf(w, "# of minions with errors: %d\n", len(failed))
	if r.o.Verbose {
		if len(notConn) > 0 {
			fmt.Fprintf(w, "Minions not connected: %s\n", strings.Join(notConn, " "))
		}
		if len(notResp) > 0 {
			fmt.Fprintf(w, "Minions not responding: %s\n", strings.Join(notResp, " "))
		}
		if len(failed) > 0 {
			fmt.Fprintf(w, "Minions with failures: %s\n", strings.Join(failed, " "))
		}
	}
	fmt.Fprintln(w, line)
}

// runStatic is salt.py's --static path, which Salt runs as a 100% batch:
// a test.ping finds the responding minions, the job runs on them as a list
// target, and everything is printed at once.
func (r *runner) runStatic(ctx context.Context, cmd *Command, tgt any, tgtType string) int {
	ev, err := r.client.Subscribe(ctx, func(tag string) bool { return strings.HasPrefix(tag, "salt/job/") }, 0)
	if err != nil {
		return r.fail(err)
	}
	defer ev.Close()
	gjt := r.gatherJobTimeout()
	pingKw := payload.NewMap("gather_job_timeout", int64(gjt), "yield_pub_data", true)
	ret := payload.NewMap()
	wo := WatchOptions{
		Timeout:          time.Duration(r.timeout()) * time.Second,
		GatherJobTimeout: time.Duration(gjt) * time.Second,
		FindJobKwargs:    pingKw,
		Notice:           r.o.Stdout,
	}
	pd, err := r.client.Publish(ctx, PubArgs{Tgt: tgt, Fun: "test.ping", Arg: []any{}, TgtType: tgtType, Timeout: r.timeout(), Kwargs: pingKw}, r.o.Stdout)
	if err != nil {
		return r.fail(err)
	}
	var up []string
	if pd != nil {
		err = r.client.Watch(ctx, ev, pd, wo, func(mr MinionReturn) error {
			if !mr.Failed {
				up = append(up, mr.ID)
			}
			return nil
		})
		if err != nil {
			return r.fail(err)
		}
	}
	if len(up) > 0 {
		// Batch pops the minions off the end of its list.
		tl := make([]any, len(up))
		for i, id := range up {
			tl[len(up)-1-i] = id
		}
		runKw := payload.NewMap("raw", false, "gather_job_timeout", int64(gjt))
		wo.FindJobKwargs = runKw
		pd, err = r.client.Publish(ctx, PubArgs{Tgt: tl, Fun: cmd.Fun, Arg: cmd.Arg, TgtType: "list", Ret: r.o.Return, Timeout: r.timeout(), Kwargs: runKw}, r.o.Stdout)
		if err != nil {
			return r.fail(err)
		}
		if pd != nil {
			err = r.client.Watch(ctx, ev, pd, wo, func(mr MinionReturn) error {
				if mr.Failed {
					return nil
				}
				v, _ := mr.Data.Get("ret")
				ret.Set(mr.ID, v)
				return nil
			})
			if err != nil {
				return r.fail(err)
			}
			for _, id := range pd.Minions {
				if !ret.Has(id) {
					ret.Set(id, payload.NewMap())
				}
			}
		}
	}
	r.display(ret, "", 0)
	if ret.Len() == 0 {
		fmt.Fprintln(r.o.Stderr, "ERROR: No return received")
		return ExitNoRet
	}
	return ExitOK
}

package saltcli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/batch"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// batchResult is one minion's outcome inside a batch run.
type batchResult struct {
	id      string
	data    *payload.Map // {"ret", ["out"], ["retcode"], ["jid"]}
	failed  bool
	sub     int  // which sub-job it belongs to
	subDone bool // the sub-job's watch ended (id empty)
	err     error
}

// batchRun is salt.cli.batch.Batch for one command.
type batchRun struct {
	r       *runner
	cmd     *Command
	size    string
	quiet   bool
	results chan batchResult
	// mux shares the run's one event subscription between its jobs.
	mux *jobMux
	// collected is the static output (quiet mode).
	collected *payload.Map
}

// gatherMinions is Batch.gather_minions: a test.ping on the target finds
// the minions that answer; the others matched by the master are down.
// expected is the master's list of targeted minions.
func (b *batchRun) gatherMinions(ctx context.Context, tgt any, tgtType string) (up, down, expected []string, err error) {
	r := b.r
	gjt := r.gatherJobTimeout()
	pingKw := payload.NewMap("gather_job_timeout", int64(gjt), "yield_pub_data", true)
	pd, err := r.client.Publish(ctx, PubArgs{Tgt: tgt, Fun: "test.ping", Arg: []any{}, TgtType: tgtType, Timeout: r.timeout(), Kwargs: pingKw}, r.o.Stdout)
	if err != nil || pd == nil {
		return nil, nil, nil, err
	}
	rt := b.mux.route()
	defer b.mux.unfollow(rt)
	b.mux.follow(rt, pd.JID)
	wo := WatchOptions{
		Timeout:          time.Duration(r.timeout()) * time.Second,
		GatherJobTimeout: time.Duration(gjt) * time.Second,
		FindJobKwargs:    pingKw,
		Notice:           r.o.Stdout,
		Follow:           func(jid string) { b.mux.follow(rt, jid) },
	}
	seen := map[string]bool{}
	// Every minion the ping iterator yields counts, as in Salt: besides the
	// answers that includes the "missing" minions of a list target (yielded
	// as failed), whose batch then finds no minion and prints an empty
	// return for them.
	err = r.client.WatchEvents(ctx, rt.ch, pd, wo, func(mr MinionReturn) error {
		if !seen[mr.ID] {
			seen[mr.ID] = true
			up = append(up, mr.ID)
		}
		return nil
	})
	for _, id := range pd.Minions {
		if !seen[id] {
			down = append(down, id)
		}
	}
	return up, down, pd.Minions, err
}

// runBatch runs the command on the responding minions size at a time
// (-b N / -b N%): a new sub-job starts as soon as a slot is free (after
// --batch-wait seconds), each return is printed as it arrives (Salt's
// batch output: the return data with the minion id, jid and retcode
// keys), --failhard stops at the first failure, and the exit code is the
// highest retcode. With quiet (--static) nothing is printed on the way and
// the returns are shown together at the end.
func (r *runner) runBatch(ctx context.Context, cmd *Command, tgt any, tgtType, size string, quiet bool) int {
	b, stop, err := r.newBatch(ctx, cmd, size, quiet)
	if err != nil {
		return r.fail(err)
	}
	defer stop()
	up, down, _, err := b.gatherMinions(ctx, tgt, tgtType)
	if err != nil {
		return r.fail(err)
	}
	return b.run(ctx, up, down)
}

// newBatch prepares a batch run with its one event subscription, shared
// by the presence ping and every sub-job and made before the first
// publish so no return is missed; stop ends it.
func (r *runner) newBatch(ctx context.Context, cmd *Command, size string, quiet bool) (b *batchRun, stop func(), err error) {
	ev, err := r.client.Subscribe(ctx, func(tag string) bool { return strings.HasPrefix(tag, "salt/job/") }, 0)
	if err != nil {
		return nil, nil, err
	}
	mctx, stopMux := context.WithCancel(ctx)
	b = &batchRun{r: r, cmd: cmd, size: size, quiet: quiet, collected: payload.NewMap(), mux: newJobMux(mctx, ev)}
	return b, func() { stopMux(); _ = ev.Close() }, nil
}

func (b *batchRun) run(ctx context.Context, up, down []string) int {
	r := b.r
	bnum, err := batch.Size(b.size, len(up))
	if err != nil {
		if !b.quiet {
			fmt.Fprintf(r.o.Stdout, "Invalid batch data sent: %s\nData must be in the form of %%10, 10%% or 3\n", b.size)
		}
		return ExitUsage
	}
	if len(up) == 0 {
		if b.quiet {
			return b.finishQuiet()
		}
		return ExitOK
	}
	if bnum < 1 {
		bnum = 1
	}
	if !b.quiet {
		for _, id := range down {
			fmt.Fprintf(r.o.Stdout, "Minion %s did not respond. No job will be sent.\n", id)
		}
	}
	// to_run is popped from the end: keep it sorted descending so the
	// minions run in id order.
	toRun := append([]string(nil), up...)
	sort.Sort(sort.Reverse(sort.StringSlice(toRun)))
	total := len(toRun)
	active := map[string]bool{}
	var wait []time.Time
	bwait := time.Duration(r.o.BatchWait * float64(time.Second))
	b.results = make(chan batchResult, total+16)
	subCtx, cancelSubs := context.WithCancel(ctx)
	defer cancelSubs()
	pending := map[int]map[string]bool{} // sub-job -> minions without a result
	running := 0
	var ready []batchResult // results of sub-jobs that ended without a watch
	done := map[string]bool{}
	maxRC := 0
	subN := 0
	for len(done) < total {
		if err := ctx.Err(); err != nil {
			return r.fail(err)
		}
		now := time.Now()
		for len(wait) > 0 && !wait[0].After(now) {
			wait = wait[1:]
		}
		var next []string
		if len(toRun) <= bnum-len(wait) && len(active) == 0 {
			for len(toRun) > 0 {
				next = append(next, toRun[len(toRun)-1])
				toRun = toRun[:len(toRun)-1]
			}
		} else {
			for i := 0; i < bnum-len(active)-len(wait) && len(toRun) > 0; i++ {
				next = append(next, toRun[len(toRun)-1])
				toRun = toRun[:len(toRun)-1]
			}
		}
		if len(next) > 0 {
			for _, id := range next {
				active[id] = true
			}
			subN++
			set := map[string]bool{}
			for _, id := range next {
				set[id] = true
			}
			pending[subN] = set
			running++
			if !b.quiet {
				sorted := append([]string(nil), next...)
				sort.Strings(sorted)
				l := make([]any, len(sorted))
				for i, s := range sorted {
					l[i] = s
				}
				fmt.Fprintf(r.o.Stdout, "\nExecuting run on %s\n\n", pyfmt.Repr(l))
			}
			if ok, err := b.startSub(subCtx, subN, next); !ok {
				// Nothing to watch: the sub-job ends now (a failed
				// publish is reported; Salt's batch would stop with a
				// traceback).
				ready = append(ready, batchResult{sub: subN, subDone: true, err: err})
			}
		}
		// Wait for a result, or for a batch_wait slot to free up; then
		// take every result that is already waiting too, so the freed
		// slots are refilled by one sub-job rather than one per return
		// (each sub-job is a publish every minion receives and decrypts).
		var timer <-chan time.Time
		if len(wait) > 0 && len(toRun) > 0 {
			timer = time.After(time.Until(wait[0]))
		}
		batchRes := ready
		ready = nil
		if len(batchRes) == 0 {
			select {
			case res := <-b.results:
				batchRes = append(batchRes, res)
			case <-timer:
				continue
			case <-ctx.Done():
				return r.fail(ctx.Err())
			}
		}
	drain:
		for {
			select {
			case res := <-b.results:
				batchRes = append(batchRes, res)
			default:
				break drain
			}
		}
		for _, res := range batchRes {
			if res.err != nil {
				fmt.Fprintf(r.o.Stderr, "ERROR: %s\n", res.err)
			}
			var items []batchResult
			switch {
			case res.subDone:
				running--
				// Minions of a finished sub-job that never returned count as
				// an empty return, as Salt's minion tracker does.
				for id := range pending[res.sub] {
					items = append(items, batchResult{id: id, data: payload.NewMap("ret", payload.NewMap()), sub: res.sub})
				}
				sort.Slice(items, func(i, j int) bool { return items[i].id < items[j].id })
				delete(pending, res.sub)
			case res.id != "":
				if set := pending[res.sub]; set != nil {
					delete(set, res.id)
				}
				items = []batchResult{res}
			}
			for _, it := range items {
				if done[it.id] {
					continue
				}
				done[it.id] = true
				if active[it.id] {
					delete(active, it.id)
					if bwait > 0 {
						wait = append(wait, time.Now().Add(bwait))
					}
				}
				stop, rc := b.report(it)
				if rc > maxRC {
					maxRC = rc
				}
				if stop {
					r.o.Logger.Error(fmt.Sprintf("Minion %s returned with non-zero exit code. Batch run stopped due to failhard", it.id))
					if b.quiet {
						return b.finishQuiet()
					}
					return maxRC
				}
			}
		}
	}
	if b.quiet {
		return b.finishQuiet()
	}
	return maxRC
}

// startSub publishes the command to ids (a list target) and, once the
// master accepted it, watches the sub-job in a goroutine that feeds the
// returns to b.results, then a subDone marker. The publish itself is
// synchronous, as in Salt's batch loop: while the master handles it the
// returns that free further slots queue up, and the next sub-job takes
// all of them instead of one publish per return. ok is false when no
// watch was started (the caller ends the sub-job itself).
func (b *batchRun) startSub(ctx context.Context, sub int, ids []string) (ok bool, err error) {
	r := b.r
	gjt := r.gatherJobTimeout()
	kw := payload.NewMap("raw", false, "gather_job_timeout", int64(gjt))
	tl := make([]any, len(ids))
	for i, id := range ids {
		tl[i] = id
	}
	pd, err := r.client.Publish(ctx, PubArgs{Tgt: tl, Fun: b.cmd.Fun, Arg: b.cmd.Arg, TgtType: "list", Ret: r.o.Return, Timeout: r.timeout(), Kwargs: kw}, r.o.Stdout)
	if err != nil || pd == nil {
		return false, err
	}
	rt := b.mux.route()
	b.mux.follow(rt, pd.JID)
	if r.o.Verbose && !b.quiet {
		msg := "Executing job with jid " + pd.JID
		fmt.Fprintf(r.o.Stdout, "%s\n%s\n\n", msg, strings.Repeat("-", len(msg)))
	} else if r.o.ShowJID && !b.quiet {
		fmt.Fprintf(r.o.Stdout, "jid: %s\n", pd.JID)
	}
	wo := WatchOptions{
		Timeout:          time.Duration(r.timeout()) * time.Second,
		GatherJobTimeout: time.Duration(gjt) * time.Second,
		FindJobKwargs:    kw,
		Notice:           r.o.Stdout,
		Follow:           func(jid string) { b.mux.follow(rt, jid) },
	}
	send := func(res batchResult) {
		select {
		case b.results <- res:
		case <-ctx.Done():
		}
	}
	go func() {
		defer send(batchResult{sub: sub, subDone: true})
		defer b.mux.unfollow(rt)
		_ = r.client.WatchEvents(ctx, rt.ch, pd, wo, func(mr MinionReturn) error {
			send(batchResult{id: mr.ID, data: mr.Data, failed: mr.Failed, sub: sub})
			return nil
		})
	}()
	return true, nil
}

// report prints (or collects) one minion's result and says whether
// --failhard stops the run, with the return's retcode.
func (b *batchRun) report(it batchResult) (stop bool, rc int) {
	r := b.r
	if it.failed || it.data == nil {
		if !b.quiet {
			fmt.Fprintf(r.o.Stdout, "Minion '%s' failed to respond to job sent\n", it.id)
		}
		return r.o.Failhard, 0
	}
	data := it.data.Clone()
	if v, ok := data.Get("retcode"); ok {
		if m, isMap := v.(*payload.Map); isMap {
			best := 0
			for i, x := range m.Items() {
				n, _ := payload.AsInt(x.Value)
				if i == 0 || int(n) > best {
					best = int(n)
				}
			}
			data.Set("retcode", int64(best))
		}
		rv, _ := data.Get("retcode")
		n, _ := payload.AsInt(rv)
		rc = int(n)
		if r.o.Failhard && rc > 0 {
			stop = true
		}
	}
	ret, _ := data.Get("ret")
	if b.quiet {
		b.collected.Set(it.id, ret)
		return stop, rc
	}
	data.Delete("ret")
	out := data.Str("out")
	data.Delete("out")
	data.Set(it.id, ret)
	r.display(data, out, rc)
	return stop, rc
}

// finishQuiet prints the collected returns of a --static batch.
func (b *batchRun) finishQuiet() int {
	b.r.display(b.collected, "", 0)
	if b.collected.Len() == 0 {
		fmt.Fprintln(b.r.o.Stderr, "ERROR: No return received")
		return ExitNoRet
	}
	return ExitOK
}

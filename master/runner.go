package master

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/wire/payload"
)

// runJobQueue is the event queue of RunJob: room for the returns of many
// minions arriving at once.
const runJobQueue = 1 << 14

// maxRunners bounds runners running or waiting at once; further runner
// requests are refused.
const maxRunners = 256

var _ runners.Env = (*runnerEnv)(nil)

// clearRunner answers the clear runner command: it authenticates the
// client key, starts the runner in the background and replies
// {"tag": "salt/run/<jid>", "jid": jid}. The runner fires
// salt/run/<jid>/new and salt/run/<jid>/ret and its return is stored in the
// job cache under the master's id.
func (m *Master) clearRunner(load *payload.Map) any {
	var user string
	if load.Has("token") || load.Has("eauth") {
		refusal, u := m.specAuth(load, "runner")
		if refusal != nil {
			return refusal
		}
		user = u
	} else {
		keyV, _ := load.Delete("key")
		if _, _, ok := m.userACL(keyV); !ok {
			m.log.Warn("clear runner refused: authentication error", "user", load.Str("user"))
			return payload.NewMap("error", payload.NewMap("name", "UserAuthenticationError",
				"message", "Authentication failure of type \"user\" occurred"))
		}
		user = load.Str("user")
		if user == "" || strings.HasPrefix(user, "sudo_") {
			user = m.cfg.User
		}
	}
	fun, ok := payloadString(load, "fun")
	if !ok || fun == "" {
		return payload.NewMap("error", payload.NewMap("name", "SaltInvocationError", "message", "No runner function given"))
	}
	var args []any
	var kwargs *payload.Map
	low := load.Map("kwarg")
	if low == nil {
		low = payload.NewMap()
	}
	if low.Has("arg") && low.Has("kwarg") {
		args = low.List("arg")
		kwargs = low.Map("kwarg")
	} else {
		kwargs = payload.NewMap()
		for _, it := range low.Items() {
			k := payload.KeyString(it.Key)
			if k == "arg" {
				args, _ = it.Value.([]any)
				continue
			}
			kwargs.Set(k, it.Value)
		}
	}
	if m.runCount.Load() >= maxRunners {
		return payload.NewMap("error", payload.NewMap("name", "SaltMasterError", "message", "Too many runners are running"))
	}
	jid := m.jobs.NewJID()
	tag := event.Tagify(jid, "run")
	m.runCount.Add(1)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer m.runCount.Add(-1)
		m.RunRunner(m.ctx, jid, fun, args, kwargs, user)
	}()
	return payload.NewMap("tag", tag, "jid", jid)
}

// RunRunner runs a runner synchronously the way Salt's RunnerClient.low
// does: it fires salt/run/<jid>/new, runs the function, stores the return
// in the job cache under the master's id and fires salt/run/<jid>/ret with
// {fun: "runner.<fun>", jid, user, fun_args, return, success}. It returns
// that ret data.
func (m *Master) RunRunner(ctx context.Context, jid, fun string, args []any, kwargs *payload.Map, user string) *payload.Map {
	if jid == "" {
		jid = m.jobs.NewJID()
	}
	tag := event.Tagify(jid, "run")
	funArgs := append([]any{}, args...)
	if kwargs != nil && kwargs.Len() > 0 {
		funArgs = append(funArgs, kwargs)
	}
	m.fire(tag+"/new", payload.NewMap("fun", "runner."+fun, "jid", jid, "user", user, "fun_args", funArgs))
	call := &runners.Call{
		Env:  &runnerEnv{m: m},
		JID:  jid,
		User: user,
		Log:  m.log.With("runner", fun, "jid", jid),
		Progress: func(d *payload.Map) {
			m.fire(tag+"/progress", d)
		},
	}
	res := m.runReg.Run(ctx, fun, args, kwargs, call)
	data := payload.NewMap("fun", "runner."+fun, "jid", jid, "user", user, "fun_args", funArgs,
		"return", res.Return, "success", res.Success)
	if m.cfg.JobCache {
		if err := m.jobs.SaveReturn(jid, m.cfg.ID, payload.NewMap("return", data)); err != nil {
			m.log.Error("cannot store a runner return", "jid", jid, "err", err)
		}
	}
	m.fire(tag+"/ret", data)
	m.log.Info("runner completed", "fun", fun, "jid", jid, "success", res.Success)
	return data
}

// runnerEnv is the master as runners see it.
type runnerEnv struct{ m *Master }

func (e *runnerEnv) Accepted() ([]string, error) {
	ids, err := e.m.keys.ListState(keys.StateAccepted)
	if err != nil {
		return nil, err
	}
	sort.Strings(ids)
	return ids, nil
}

func (e *runnerEnv) Connected() (map[string]string, error) { return e.m.ConnectedIDs() }

func (e *runnerEnv) Jobs() runners.JobCache {
	if e.m.ext != nil {
		return &jobcache.View{Local: e.m.jobs, Ext: e.m.ext, Log: e.m.log}
	}
	return e.m.jobs
}

func (e *runnerEnv) DeleteKey(id string) error {
	_, err := e.m.keys.Delete(id)
	return err
}

func (e *runnerEnv) Opt(key string) (any, bool) { return e.m.cfg.Opts.Get(key) }

func (e *runnerEnv) RunJob(ctx context.Context, job runners.Job) (*runners.JobResult, error) {
	res, err := e.m.RunJob(ctx, PublishRequest{Tgt: job.Tgt, TgtType: job.TgtType, Fun: job.Fun, Arg: job.Arg},
		job.Timeout, job.GatherJobTimeout)
	if errors.Is(err, ErrNoMinions) {
		return nil, runners.ErrNoMinions
	}
	if err != nil {
		return nil, err
	}
	return &runners.JobResult{JID: res.JID, Minions: res.Minions, Missing: res.Missing, Returns: res.Returns}, nil
}

// JobResult is what RunJob collected.
type JobResult struct {
	JID string
	// Minions are the expected minions, Missing the listed minions without
	// an accepted key.
	Minions, Missing []string
	// Returns maps each minion that returned to its return event data.
	Returns map[string]*payload.Map
}

// RunJob publishes req and collects the returns from the event bus like
// LocalClient.get_cli_event_returns: it waits until every expected minion
// returned or timeout passed, then asks the outstanding minions with
// saltutil.find_job whether they still run the job, waits gatherTimeout
// for their answers and keeps waiting for the minions that do. Zero
// timeouts take the master's timeout and gather_job_timeout options.
func (m *Master) RunJob(ctx context.Context, req PublishRequest, timeout, gatherTimeout time.Duration) (*JobResult, error) {
	if timeout <= 0 {
		timeout = time.Duration(max(m.cfg.Timeout, 1)) * time.Second
	}
	if gatherTimeout <= 0 {
		gatherTimeout = time.Duration(max(m.cfg.GatherJobTimeout, 1)) * time.Second
	}
	if req.JID == "" {
		req.JID = m.jobs.NewJID()
	}
	if req.Timeout == 0 {
		req.Timeout = int(timeout / time.Second)
	}
	sub := m.bus.Subscribe(event.Prefix("salt/job/"+req.JID+"/ret/"), runJobQueue)
	defer sub.Close()
	jid, minions, missing, err := m.Publish(ctx, req)
	if err != nil {
		return nil, err
	}
	res := &JobResult{JID: jid, Minions: minions, Missing: missing, Returns: map[string]*payload.Map{}}
	expected := map[string]bool{}
	for _, id := range minions {
		expected[id] = true
	}
	outstanding := func() []string {
		var out []string
		for id := range expected {
			if _, ok := res.Returns[id]; !ok {
				out = append(out, id)
			}
		}
		sort.Strings(out)
		return out
	}
	deadline := time.Now().Add(timeout)
	for {
		if len(outstanding()) == 0 {
			return res, nil
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			running, err := m.findJob(ctx, sub, res, jid, outstanding(), gatherTimeout)
			if err != nil {
				return res, err
			}
			if len(running) == 0 {
				return res, nil
			}
			deadline = time.Now().Add(timeout)
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return res, ctx.Err()
		case ev, ok := <-sub.C():
			t.Stop()
			if !ok {
				return res, ErrClosed
			}
			collect(res, ev)
		case <-t.C:
		}
	}
}

// collect records one return event.
func collect(res *JobResult, ev event.Event) {
	if ev.Data == nil || !ev.Data.Has("return") {
		return
	}
	id := ev.Data.Str("id")
	if id == "" {
		id = ev.Tag[strings.LastIndex(ev.Tag, "/")+1:]
	}
	if _, dup := res.Returns[id]; !dup {
		res.Returns[id] = ev.Data
	}
}

// findJob publishes saltutil.find_job for jid to the outstanding minions
// and returns those still running it, collecting returns of the main job
// that arrive meanwhile.
func (m *Master) findJob(ctx context.Context, sub *event.Subscription, res *JobResult, jid string, ids []string, gather time.Duration) ([]string, error) {
	fjid := m.jobs.NewJID()
	fsub := m.bus.Subscribe(event.Prefix("salt/job/"+fjid+"/ret/"), runJobQueue)
	defer fsub.Close()
	_, _, _, err := m.Publish(ctx, PublishRequest{Tgt: strAny(ids), TgtType: "list", Fun: "saltutil.find_job",
		Arg: []any{jid}, JID: fjid, Timeout: int(gather / time.Second),
		Kwargs: payload.NewMap("gather_job_timeout", int(gather/time.Second))})
	if errors.Is(err, ErrNoMinions) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("master: find_job: %w", err)
	}
	running := map[string]bool{}
	answered := map[string]bool{}
	t := time.NewTimer(gather)
	defer t.Stop()
	for len(answered) < len(ids) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok := <-sub.C():
			if !ok {
				return nil, ErrClosed
			}
			collect(res, ev)
		case ev, ok := <-fsub.C():
			if !ok {
				return nil, ErrClosed
			}
			if ev.Data == nil {
				continue
			}
			id := ev.Data.Str("id")
			answered[id] = true
			if r, _ := ev.Data.Get("return"); payload.Truthy(r) {
				running[id] = true
			}
		case <-t.C:
			goto done
		}
	}
done:
	var out []string
	for id := range running {
		if _, ok := res.Returns[id]; !ok {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out, nil
}

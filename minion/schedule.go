package minion

import (
	"context"
	"fmt"
	"os"

	saltjid "github.com/gsalt/gsalt/internal/jid"

	"github.com/gsalt/gsalt/returners"
	"github.com/gsalt/gsalt/schedule"
	"github.com/gsalt/gsalt/wire/payload"
)

// newSchedule builds the minion's scheduler (the "schedule" service): jobs
// from the minion config, its pillar and _schedule.conf, run through the
// minion's registry and returned to the master like Salt's scheduled jobs.
func (m *Minion) newSchedule() *schedule.Manager {
	return schedule.New(schedule.Options{
		Opts:    m.cfg.Opts,
		Pillar:  m.Pillar,
		Grains:  m.Grains,
		Run:     m.startScheduled,
		Running: m.jobs.countSchedule,
		Logger:  m.log,
	})
}

// startSchedule runs the scheduler until ctx ends (no goroutine while
// nothing is scheduled).
func (m *Minion) startSchedule(ctx context.Context) {
	if m.schedule != nil {
		m.schedule.Start(ctx)
	}
}

// startScheduled runs one due scheduled job in its own goroutine, the way
// Salt's Schedule.handle_func does: the job is listed by saltutil.running
// with its schedule name (maxrunning counts it), the function gets the
// job's args and kwargs (and __pub_* data when it takes **kwargs), and the
// return goes to the master as jid "req" (the master picks the jid),
// "nocache" for return_job: nocache, or not at all for return_job: False.
func (m *Minion) startScheduled(ctx context.Context, j schedule.Job) {
	jid := saltjid.New()
	args := append([]any{}, j.Args...)
	funArgs := append([]any{}, j.Args...)
	if j.Kwargs != nil && j.Kwargs.Len() > 0 {
		kw := j.Kwargs.Clone()
		funArgs = append(funArgs, kw.Clone())
		kw.Set("__kwarg__", true)
		args = append(args, kw)
	}
	pub := payload.NewMap("id", m.id, "fun", j.Fun, "fun_args", funArgs, "schedule", j.Name, "jid", jid)
	proc := payload.NewMap("pid", int64(os.Getpid()))
	for _, it := range pub.Items() {
		proc.SetKey(it.Key, it.Value)
	}
	jctx, cancel := context.WithCancel(ctx)
	sj := &job{jid: jid, proc: proc, cancel: cancel}
	sj.isolateMutableArgs("fun_args", funArgs)
	m.jobs.add(sj)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer cancel()
		defer m.jobs.remove(jid)
		res, _ := m.execute(jctx, j.Fun, args, pub)
		if ctx.Err() != nil {
			return
		}
		ret := payload.NewMap("id", m.id, "fun", j.Fun, "fun_args", funArgs, "schedule", j.Name, "jid", jid,
			"pid", int64(os.Getpid()), "return", res.Return, "retcode", int64(res.Retcode), "success", res.Success)
		if md := j.Data.Map("metadata"); md != nil {
			ret.Set("metadata", md)
		}
		m.scheduleReturners(j, ret)
		how := j.ReturnJob()
		if how == "no" {
			return
		}
		ret = ret.Clone()
		ret.Set("jid", "req")
		if how == "nocache" {
			ret.Set("jid", "nocache")
		}
		if m.current() == nil {
			m.log.Info("scheduled job done; not connected, the return is dropped", "job", j.Name)
			return
		}
		m.returnJob(ctx, ret)
	}()
}

// scheduleReturners hands a scheduled job's return (with its own jid) to
// the job's "returner" and the minion's schedule_returner, with
// return_config/return_kwargs as ret_config/ret_kwargs, as Salt's
// Schedule.handle_func does; an unknown name is logged and skipped.
func (m *Minion) scheduleReturners(j schedule.Job, ret *payload.Map) {
	rv, _ := j.Data.Get("returner")
	m.mu.RLock()
	sv, _ := m.opts.Get("schedule_returner")
	m.mu.RUnlock()
	names := mergeNames(returners.Names(rv), returners.Names(sv))
	if len(names) == 0 {
		return
	}
	pub := payload.NewMap()
	if v, ok := j.Data.Get("return_config"); ok {
		pub.Set("ret_config", v)
	}
	if v, ok := j.Data.Get("return_kwargs"); ok {
		pub.Set("ret_kwargs", v)
	}
	var known []string
	for _, n := range names {
		if m.rets.reg.Has(n) {
			known = append(known, n)
		} else {
			m.log.Info(fmt.Sprintf("Job %s using invalid returner: %s. Ignoring.", j.Fun, n))
		}
	}
	m.callReturners(known, ret, pub)
}

// countSchedule counts the running jobs started for a schedule entry.
func (t *jobTable) countSchedule(name string) int {
	n := 0
	for _, p := range t.Running() {
		if p.Str("schedule") == name {
			n++
		}
	}
	return n
}

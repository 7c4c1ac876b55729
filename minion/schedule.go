package minion

import (
	"context"
	"os"

	saltjid "github.com/gsalt/gsalt/internal/jid"

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
	procBytes, err := payload.Marshal(proc)
	if err != nil {
		m.log.Error("cannot encode the scheduled job's proc data", "job", j.Name, "err", err)
		return
	}
	jctx, cancel := context.WithCancel(ctx)
	m.jobs.add(&job{jid: jid, proc: procBytes, cancel: cancel})
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer cancel()
		defer m.jobs.remove(jid)
		res, _ := m.execute(jctx, j.Fun, args, pub)
		if ctx.Err() != nil {
			return
		}
		how := j.ReturnJob()
		if how == "no" {
			return
		}
		retJID := "req"
		if how == "nocache" {
			retJID = "nocache"
		}
		ret := payload.NewMap("id", m.id, "fun", j.Fun, "fun_args", funArgs, "schedule", j.Name, "jid", retJID,
			"pid", int64(os.Getpid()), "return", res.Return, "retcode", int64(res.Retcode), "success", res.Success)
		if md := j.Data.Map("metadata"); md != nil {
			ret.Set("metadata", md)
		}
		if m.current() == nil {
			m.log.Info("scheduled job done; not connected, the return is dropped", "job", j.Name)
			return
		}
		m.returnJob(ctx, ret)
	}()
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

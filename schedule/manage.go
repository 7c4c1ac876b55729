package schedule

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/internal/pytime"
	"github.com/gsalt/gsalt/wire/payload"
)

// ManageSchedule carries out one request with the data Salt's schedule
// execution module fires as the manage_schedule event: {"func", "name",
// "schedule", "where", "persist", "fire_event", "time", "new_time",
// "time_fmt"}. It returns the data of the completion event Salt's minion
// answers with: {"complete": true, "schedule": {...}} for most requests,
// {"complete": true, "next_fire_time": ...} for get_next_fire_time,
// {"complete": true, "data": {...}} for job_status, {"complete": true}
// for save_schedule, run_job and reload. A request Salt's minion would
// not answer is an error wrapping ErrBadRequest.
//
// This is the "schedule" service of the execution module
// (modules/builtin.ScheduleManager).
func (m *Manager) ManageSchedule(ctx context.Context, req *payload.Map) (*payload.Map, error) {
	if req == nil {
		req = &payload.Map{}
	}
	fn := req.Str("func")
	name := req.Str("name")
	persist := true
	if v, ok := req.Get("persist"); ok && v != nil {
		persist = payload.Truthy(v)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	defer m.poke()
	var err error
	switch fn {
	case "list":
		where := req.Str("where")
		s, err := m.schedule(where != "pillar", where != "opts")
		if err != nil {
			return nil, err
		}
		return payload.NewMap("complete", true, "schedule", s), nil
	case "add":
		data, ok := req.Get("schedule")
		jobs, isMap := data.(*payload.Map)
		if !ok || !isMap {
			return nil, fmt.Errorf("%w: Scheduled jobs have to be of type dict.", ErrBadRequest)
		}
		if jobs.Len() != 1 {
			return nil, fmt.Errorf("%w: You can only schedule one new job at a time.", ErrBadRequest)
		}
		it := jobs.Items()[0]
		job, ok := normalize(it.Value).(*payload.Map)
		if !ok {
			return nil, fmt.Errorf("%w: Scheduled jobs have to be of type dict.", ErrBadRequest)
		}
		if !job.Has("enabled") {
			job.Set("enabled", true)
		}
		if m.inPillar(payload.KeyString(it.Key)) {
			m.log.Warn("Cannot update job, it's in the pillar!", "job", it.Key)
		} else {
			m.opts.SetKey(it.Key, job)
		}
	case "delete":
		if m.opts.Has(name) {
			m.opts.Delete(name)
		} else if m.inPillar(name) {
			m.log.Warn("Cannot delete job, it's in the pillar!", "job", name)
		}
		delete(m.state, name)
	case "modify":
		job, ok := normalize(get(req, "schedule")).(*payload.Map)
		if !ok {
			return nil, fmt.Errorf("%w: Scheduled jobs have to be of type dict.", ErrBadRequest)
		}
		if !m.opts.Has(name) && m.inPillar(name) {
			m.log.Warn("Cannot modify job, it's in the pillar!", "job", name)
			break
		}
		m.opts.Delete(name)
		delete(m.state, name)
		m.opts.Set(name, job)
	case "enable_job", "disable_job":
		if job, ok := m.opts.Get(name); ok {
			if jm, ok := job.(*payload.Map); ok {
				jm.Set("enabled", fn == "enable_job")
			}
		} else if m.inPillar(name) {
			m.log.Warn("Cannot modify job, it's in the pillar!", "job", name)
		}
	case "enable", "disable":
		m.opts.Set("enabled", fn == "enable")
	case "run_job":
		m.runNow(ctx, name)
		return payload.NewMap("complete", true), nil
	case "postpone_job", "skip_job":
		if job, ok := m.opts.Get(name); ok {
			jm, _ := job.(*payload.Map)
			if jm != nil {
				format := timeFmt
				if f := req.Str("time_fmt"); f != "" {
					format = f
				}
				add := func(key, at string) {
					l, _ := get(jm, key).([]any)
					jm.Set(key, append(l, payload.NewMap("time", at, "time_fmt", format)))
				}
				add("skip_explicit", req.Str("time"))
				if fn == "postpone_job" {
					add("run_explicit", req.Str("new_time"))
				}
			}
		} else if m.inPillar(name) {
			m.log.Warn("Cannot modify job, it's in the pillar!", "job", name)
		}
		persist = false
	case "reload":
		s, _ := req.Get("schedule")
		sm, _ := normalize(s).(*payload.Map)
		if sm != nil {
			if inner := sm.Map("schedule"); inner != nil {
				sm = inner
			}
			for _, it := range sm.Items() {
				m.opts.SetKey(it.Key, it.Value)
			}
		}
		m.state = map[string]*jobState{}
		return payload.NewMap("complete", true), nil
	case "save_schedule":
		if err := m.persist(); err != nil {
			m.log.Error("Failed to persist the updated schedule", "err", err)
		}
		return payload.NewMap("complete", true), nil
	case "get_next_fire_time":
		var next any
		if st := m.state[name]; st != nil && !st.next.IsZero() {
			next = pytime.Strftime(st.next, timeFmt)
		}
		return payload.NewMap("complete", true, "next_fire_time", next), nil
	case "job_status":
		return payload.NewMap("complete", true, "data", m.jobStatus(name)), nil
	default:
		return nil, fmt.Errorf("%w: Function %q is unavailable in the scheduler", ErrBadRequest, fn)
	}
	if persist {
		if err = m.persist(); err != nil {
			m.log.Error("Failed to persist the updated schedule", "err", err)
		}
	}
	s, err := m.schedule(true, true)
	if err != nil {
		return nil, err
	}
	return payload.NewMap("complete", true, "schedule", s), nil
}

// inPillar reports whether the pillar schedules a job of that name.
func (m *Manager) inPillar(name string) bool {
	p, err := m.pillarSchedule()
	return err == nil && p.Has(name)
}

// jobStatus is a job's options with the scheduler's "_" state, times as
// "%Y-%m-%dT%H:%M:%S" strings. m.mu is held.
func (m *Manager) jobStatus(name string) *payload.Map {
	s, err := m.schedule(true, true)
	if err != nil {
		return &payload.Map{}
	}
	job := s.Map(name)
	if job == nil {
		return &payload.Map{}
	}
	if !job.Has("name") {
		job.Set("name", name)
	}
	st := m.state[name]
	if st == nil {
		return job
	}
	ts := func(k string, t interface{ IsZero() bool }, s string) {
		if !t.IsZero() {
			job.Set(k, s)
		}
	}
	ts("_next_fire_time", st.next, pytime.Strftime(st.next, timeFmt))
	ts("_next_scheduled_fire_time", st.nextScheduled, pytime.Strftime(st.nextScheduled, timeFmt))
	ts("_last_run", st.lastRun, pytime.Strftime(st.lastRun, timeFmt))
	ts("_splay", st.splay, pytime.Strftime(st.splay, timeFmt))
	if st.seconds >= 0 && isInterval(job) {
		job.Set("_seconds", st.seconds)
	}
	if st.skipped {
		job.Set("_skipped", true).Set("_skip_reason", st.skipReason).Set("_skipped_time", pytime.Strftime(st.skippedTime, timeFmt))
	}
	if st.err != "" {
		job.Set("_error", st.err)
	}
	return job
}

// runNow is Salt's Schedule.run_job: run the job now, whatever its
// schedule says (maxrunning still applies). m.mu is held.
func (m *Manager) runNow(ctx context.Context, name string) {
	s, err := m.schedule(true, true)
	if err != nil {
		m.log.Error(err.Error())
		return
	}
	data := s.Map(name)
	if data == nil {
		data = &payload.Map{}
	}
	e := &eval{m: m, now: m.now(), loop: m.loopInterval, name: name, data: data, st: &jobState{seconds: -1}}
	if n := data.Str("name"); n != "" {
		e.name = n
	}
	e.fun = jobFunction(data)
	if e.fun == "" {
		m.log.Info("Invalid function in scheduled job", "job", name)
	}
	if payload.Truthy(orDefault(data, "jid_include", true)) && m.running != nil {
		max := int64(1)
		if v, ok := data.Get("maxrunning"); ok {
			if f, ok := number(v); ok {
				max = int64(f)
			}
		}
		if int64(m.running(e.name)) >= max {
			m.log.Info("scheduled job not started: already running", "job", e.name)
			return
		}
	}
	m.log.Info("Running Job", "job", name)
	if m.run != nil && !payload.Truthy(orDefault(data, "dry_run", false)) {
		m.run(ctx, e.job())
	}
}

// Jobs returns the names of the scheduled jobs (opts and pillar), sorted
// as they are stored.
func (m *Manager) Jobs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.schedule(true, true)
	if err != nil {
		return nil
	}
	var out []string
	for _, it := range s.Items() {
		if _, isJob := it.Value.(*payload.Map); isJob && !hidden[payload.KeyString(it.Key)] {
			out = append(out, payload.KeyString(it.Key))
		}
	}
	return out
}

package schedule

import (
	"context"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/pytime"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/robfig/cron/v3"
)

// timeFmt is Salt's default once_fmt and time_fmt.
const timeFmt = "%Y-%m-%dT%H:%M:%S"

// jobState is what Salt keeps in a job's "_" keys between evaluations.
type jobState struct {
	sig           string    // the job's options when the state was made
	next          time.Time // _next_fire_time
	nextScheduled time.Time // _next_scheduled_fire_time
	lastRun       time.Time // _last_run
	splay         time.Time // _splay
	seconds       int64     // _seconds; -1 before the first evaluation
	whenRun       *bool     // _run (when jobs)
	runOnStart    *bool     // _run_on_start
	skipped       bool
	skipReason    string
	skippedTime   time.Time
	err           string
	// lastEval is when the job was last evaluated (zero before its first
	// evaluation): the next evaluation's window reaches back to it.
	lastEval time.Time
}

// eval is one evaluation of one job.
type eval struct {
	m     *Manager
	now   time.Time
	loop  time.Duration
	name  string
	data  *payload.Map
	st    *jobState
	run   bool
	cont  bool
	fun   string
	fatal bool // an _error: skip the job
}

func (e *eval) fail(msg string) {
	e.st.err = strings.ReplaceAll(msg, "%NAME%", e.name)
	e.fatal = true
	e.m.log.Error(e.st.err)
}

func (e *eval) skip(reason string) {
	e.st.skipReason, e.st.skippedTime, e.st.skipped, e.run = reason, e.now, true, false
}

// Eval evaluates the schedule at now and starts every due job through
// Options.Run. It returns the names of the jobs started.
func (m *Manager) Eval(ctx context.Context, now time.Time) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.evalLocked(ctx, now)
}

func (m *Manager) evalLocked(ctx context.Context, now time.Time) []string {
	sched, err := m.schedule(true, true)
	if err != nil {
		m.log.Error(err.Error())
		return nil
	}
	enabled := true
	if v, ok := sched.Get("enabled"); ok {
		enabled = payload.Truthy(v)
	}
	globalSplay, _ := sched.Get("splay")
	globalSkipRange, _ := sched.Get("skip_during_range")
	skipFunction := ""
	if v, ok := sched.Get("skip_function"); ok && v != nil {
		skipFunction = payload.Text(v)
	}
	var started []string
	seen := map[string]bool{}
	for _, it := range sched.Items() {
		key := payload.KeyString(it.Key)
		if hidden[key] {
			continue
		}
		data, ok := it.Value.(*payload.Map)
		if !ok {
			m.log.Error("Scheduled job should have a dict value", "job", key, "type", payload.TypeName(it.Value))
			continue
		}
		seen[key] = true
		st := m.stateFor(key, data)
		for _, k := range []string{"_continue", "_error", "_enabled", "_skipped", "_skip_reason", "_skipped_time"} {
			data.Delete(k)
		}
		st.err, st.skipped, st.skipReason, st.skippedTime = "", false, "", time.Time{}
		e := &eval{m: m, now: now, loop: m.window(st, now), name: key, data: data, st: st}
		st.lastEval = now
		if n := data.Str("name"); n != "" {
			e.name = n
		}
		e.fun = jobFunction(data)
		if st.runOnStart == nil && payload.Truthy(get(data, "run_on_start")) {
			t := true
			st.runOnStart = &t
		}
		if !e.validCombination() {
			continue
		}
		if data.Has("run_explicit") {
			e.runExplicit()
			if e.fatal {
				continue
			}
		}
		switch {
		case data.Has("seconds") || data.Has("minutes") || data.Has("hours") || data.Has("days"):
			e.interval()
		case data.Has("once"):
			e.once()
		case data.Has("when"):
			e.when()
		case data.Has("cron"):
			e.cron()
		default:
			continue
		}
		if e.cont || e.fatal {
			continue
		}
		seconds := int64(chop(st.next).Sub(chop(now)) / time.Second)
		splay, hasSplay := data.Get("splay")
		if !hasSplay {
			splay = globalSplay
		}
		if splay != nil && splay != false {
			if st.splay.IsZero() {
				s, ok := e.splaySeconds(splay)
				if ok && now.Before(st.next.Add(time.Duration(s)*time.Second)) {
					st.splay = st.next.Add(time.Duration(s) * time.Second)
					if data.Has("when") {
						t := true
						st.whenRun = &t
					}
				} else if ok {
					e.run = true
				}
			}
			if !st.splay.IsZero() {
				seconds = int64(st.splay.Sub(now) / time.Second)
				if data.Has("when") {
					st.next = st.splay
				}
			}
		}
		switch {
		case st.seconds >= 0 && isInterval(data):
			if seconds <= 0 {
				e.run = true
			}
		case data.Has("when") && st.whenRun != nil && *st.whenRun:
			if !now.Before(st.next) && !now.After(st.next.Add(e.loop)) {
				f := false
				st.whenRun = &f
				e.run = !st.lastRun.Equal(st.next) || e.run
			}
		case data.Has("cron"):
			if seconds <= 0 {
				st.next = time.Time{}
				e.run = true
			}
		case data.Has("once"):
			if !now.Before(st.next) && !now.After(st.next.Add(e.loop)) && st.lastRun.Before(st.next) {
				e.run = true
			}
		case seconds == 0:
			e.run = true
		}
		if st.runOnStart != nil && *st.runOnStart {
			e.run = true
			f := false
			st.runOnStart = &f
		} else if e.run {
			if data.Has("range") {
				e.inRange()
			}
			sdr, has := data.Get("skip_during_range")
			if !has {
				sdr = globalSkipRange
			}
			if !e.fatal && sdr != nil && sdr != false {
				e.skipDuringRange(sdr, skipFunction)
			}
			if !e.fatal && data.Has("skip_explicit") {
				e.skipExplicit(skipFunction)
			}
			if !e.fatal && data.Has("until") {
				e.until()
			}
			if !e.fatal && data.Has("after") {
				e.after()
			}
			if e.fatal {
				continue
			}
		}
		if !enabled || !payload.Truthy(orDefault(data, "enabled", true)) {
			e.skip("disabled")
		}
		if e.run {
			jidInclude := payload.Truthy(orDefault(data, "jid_include", true))
			if jidInclude {
				max := int64(1)
				if v, ok := data.Get("maxrunning"); ok {
					if f, ok := number(v); ok {
						max = int64(f)
					}
				}
				if m.running != nil && int64(m.running(e.name)) >= max {
					m.log.Debug("scheduled job not started: already running", "job", e.name, "maxrunning", max)
					e.skip("maxrunning")
				}
			}
		}
		if e.run {
			if seconds < 0 {
				m.log.Info("Running scheduled job", "job", e.name, "missed_by_s", -seconds)
			} else {
				m.log.Info("Running scheduled job", "job", e.name)
			}
			if m.run != nil && !payload.Truthy(orDefault(data, "dry_run", false)) {
				m.run(ctx, e.job())
			}
			started = append(started, e.name)
			st.lastRun = now
			if data.Has("once") || data.Has("when") {
				st.lastRun = st.next
			}
			st.splay = time.Time{}
		}
		if isInterval(data) && st.seconds >= 0 {
			if st.skipped && !st.next.After(now) {
				st.next = now.Add(time.Duration(st.seconds) * time.Second)
			} else if e.run {
				st.next = now.Add(time.Duration(st.seconds) * time.Second)
			}
		}
	}
	for k := range m.state {
		if !seen[k] {
			delete(m.state, k)
		}
	}
	return started
}

// window is how far back an evaluation at now looks for the fire times of
// once, when, run_explicit and skip_explicit jobs: Salt's loop_interval,
// or the time since the job's previous evaluation when that is longer. On
// a loaded machine, or in a process that was stopped, an evaluation can
// come later than loop_interval after the previous one; a fire time that
// fell between them is then still seen (once: Salt skips such a time, and
// a scheduled napalm revert was lost). A job's first evaluation looks back
// loop_interval only, as Salt: a once time already past when the job was
// added is not run.
func (m *Manager) window(st *jobState, now time.Time) time.Duration {
	w := m.loopInterval
	if !st.lastEval.IsZero() {
		w = max(w, now.Sub(st.lastEval))
	}
	return w
}

// stateFor returns the job's state, a fresh one when its options changed.
func (m *Manager) stateFor(key string, data *payload.Map) *jobState {
	b, _ := payload.Marshal(data)
	sig := string(b)
	st := m.state[key]
	if st == nil || st.sig != sig {
		old := st
		st = &jobState{sig: sig, seconds: -1}
		if old != nil {
			// enable_job/disable_job and postpone keep the run history.
			st.lastRun, st.runOnStart = old.lastRun, old.runOnStart
		}
		m.state[key] = st
	}
	return st
}

// job builds the Job handed to Options.Run.
func (e *eval) job() Job {
	j := Job{Name: e.name, Fun: e.fun, Data: normalize(e.data).(*payload.Map)}
	if a, ok := e.data.Get("args"); ok {
		if l, ok := a.([]any); ok {
			j.Args = normalize(l).([]any)
		} else if a != nil {
			j.Args = []any{normalize(a)}
		}
	}
	if kw := e.data.Map("kwargs"); kw != nil {
		j.Kwargs = normalize(kw).(*payload.Map)
	}
	return j
}

// validCombination refuses once/when/cron together or with intervals.
func (e *eval) validCombination() bool {
	sched := 0
	for _, k := range []string{"when", "cron", "once"} {
		if e.data.Has(k) {
			sched++
		}
	}
	if sched > 1 {
		e.m.log.Error(`Unable to use "when", "cron", "once" options together. Ignoring.`, "job", e.name)
		return false
	}
	if sched == 1 && isInterval(e.data) {
		// Salt's check of this combination never matches: the interval
		// wins. gsalt does the same, but says so.
		e.m.log.Warn(`"seconds", "minutes", "hours", "days" used with "when", "cron" or "once": the interval is used`, "job", e.name)
	}
	return true
}

func isInterval(d *payload.Map) bool {
	return d.Has("seconds") || d.Has("minutes") || d.Has("hours") || d.Has("days")
}

func (e *eval) interval() {
	if e.st.seconds >= 0 {
		return
	}
	var total int64
	for _, u := range []struct {
		k string
		n int64
	}{{"seconds", 1}, {"minutes", 60}, {"hours", 3600}, {"days", 86400}} {
		v, ok := e.data.Get(u.k)
		if !ok {
			continue
		}
		n, ok := intValue(v)
		if !ok {
			e.fail("Invalid " + u.k + " value for job %NAME%. Ignoring it.")
			return
		}
		total += n * u.n
	}
	e.st.seconds = total
	if e.st.next.IsZero() {
		e.st.next = e.now.Add(time.Duration(total) * time.Second)
	}
	e.st.nextScheduled = e.now.Add(time.Duration(total) * time.Second)
}

func (e *eval) once() {
	st := e.st
	if !st.next.IsZero() {
		if st.next.Before(e.now.Add(-e.loop)) || (st.next.After(e.now) && st.splay.IsZero()) {
			e.cont = true
		}
		return
	}
	if !st.splay.IsZero() {
		return
	}
	format := timeFmt
	if f, ok := e.data.Get("once_fmt"); ok && f != nil {
		format = payload.Text(f)
	}
	t, err := pytime.Strptime(payload.Text(get(e.data, "once")), format, e.now.Location())
	if err != nil {
		e.fail("Date string could not be parsed: " + payload.Text(get(e.data, "once")) + ", " + format + ". Ignoring job %NAME%.")
		return
	}
	st.next, st.nextScheduled = t, t
	if t.Before(e.now.Add(-e.loop)) {
		// Salt says nothing; the job stays on the schedule and never runs.
		e.m.log.Warn("the once time had passed when the job was first evaluated; it will not run", "job", e.name, "once", payload.Text(get(e.data, "once")))
		e.cont = true
	}
}

// whens resolves a "when" entry through the pillar's or grains' "whens".
func (e *eval) resolveWhen(s string) (string, bool) {
	for _, src := range []func() *payload.Map{e.m.pillar, e.m.grains} {
		if src == nil {
			continue
		}
		d := src()
		if d == nil {
			continue
		}
		w, ok := d.Get("whens")
		if !ok {
			continue
		}
		wm, ok := w.(*payload.Map)
		if !ok {
			e.fail(`"whens" must be a dict. Ignoring job %NAME%.`)
			return "", false
		}
		if v, ok := wm.Get(s); ok {
			return payload.Text(v), true
		}
	}
	return s, true
}

func (e *eval) when() {
	st := e.st
	raw, _ := e.data.Get("when")
	list, ok := raw.([]any)
	if !ok {
		list = []any{raw}
	}
	var whens []time.Time
	for _, w := range list {
		s, ok := e.resolveWhen(payload.Text(w))
		if !ok {
			return
		}
		t, err := pytime.Parse(s, e.now)
		if err != nil {
			e.fail("Invalid date string " + payload.Text(w) + ". Ignoring job %NAME%.")
			return
		}
		whens = append(whens, t)
	}
	if !st.splay.IsZero() {
		whens = append(whens, st.splay)
	}
	sort.Slice(whens, func(i, j int) bool { return whens[i].Before(whens[j]) })
	// Drop the missed times but the latest one, to tell whether it ran.
	for len(whens) > 1 && whens[0].Before(e.now.Add(-e.loop)) {
		whens = whens[1:]
	}
	if len(whens) == 0 {
		if st.whenRun == nil || !*st.whenRun {
			st.next, e.cont = time.Time{}, true
		}
		return
	}
	w := whens[0]
	if w.Before(e.now.Add(-e.loop)) && (st.whenRun == nil || !*st.whenRun) && !e.run && st.splay.IsZero() {
		st.next, e.cont = time.Time{}, true
		return
	}
	if st.whenRun == nil {
		r := !w.Before(e.now.Add(-e.loop))
		st.whenRun = &r
	}
	if st.next.IsZero() {
		st.next = w
	}
	st.nextScheduled = w
	if st.next.Before(w) && !e.run && !*st.whenRun {
		st.next = w
		t := true
		st.whenRun = &t
	}
}

// cronParser reads croniter's five-field lines and the @ descriptors.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

func (e *eval) cron() {
	if !e.st.next.IsZero() {
		return
	}
	sched, err := cronParser.Parse(payload.Text(get(e.data, "cron")))
	if err != nil {
		e.fail("Invalid cron string. Ignoring job %NAME%.")
		return
	}
	e.st.next = sched.Next(e.now)
	e.st.nextScheduled = e.st.next
}

// explicitTimes reads a run_explicit/skip_explicit list.
func (e *eval) explicitTimes(key string) ([]time.Time, bool) {
	raw, _ := e.data.Get(key)
	list, _ := raw.([]any)
	var out []time.Time
	for _, it := range list {
		var t time.Time
		var err error
		switch x := it.(type) {
		case *payload.Map:
			format := timeFmt
			if f, ok := x.Get("time_fmt"); ok && f != nil {
				format = payload.Text(f)
			}
			t, err = pytime.Strptime(x.Str("time"), format, e.now.Location())
		default:
			t, err = pytime.Strptime(payload.Text(it), timeFmt, e.now.Location())
		}
		if err != nil {
			e.fail("Invalid " + key + " time for job %NAME%: " + err.Error())
			return nil, false
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out, true
}

func (e *eval) runExplicit() {
	times, ok := e.explicitTimes("run_explicit")
	if !ok {
		return
	}
	e.run = false
	for len(times) > 1 && times[0].Before(e.now.Add(-e.loop)) {
		times = times[1:]
	}
	if len(times) > 0 && !e.now.Before(times[0]) && e.now.Before(times[0].Add(e.loop)) {
		e.run = true
		e.st.next = times[0]
	}
}

func (e *eval) skipExplicit(skipFunction string) {
	times, ok := e.explicitTimes("skip_explicit")
	if !ok {
		return
	}
	e.run = false
	for len(times) > 0 && times[0].Before(e.now.Add(-e.loop)) {
		times = times[1:]
	}
	if len(times) == 0 {
		e.run = true
		return
	}
	if !e.now.Before(times[0]) && !e.now.After(times[0].Add(e.loop)) {
		if skipFunction != "" {
			e.run, e.fun = true, skipFunction
		} else {
			e.skip("skip_explicit")
		}
	} else {
		e.run = true
	}
}

// bounds reads a {start, end} range.
func (e *eval) bounds(v any, what string) (start, end time.Time, ok bool) {
	r, isMap := v.(*payload.Map)
	if !isMap {
		e.fail("schedule.handle_func: Invalid, range must be specified as a dictionary. Ignoring job %NAME%.")
		return
	}
	var err error
	if start, err = pytime.Parse(payload.Text(get(r, "start")), e.now); err != nil {
		e.fail("Invalid date string for start" + what + ". Ignoring job %NAME%.")
		return
	}
	if end, err = pytime.Parse(payload.Text(get(r, "end")), e.now); err != nil {
		e.fail("Invalid date string for end" + what + ". Ignoring job %NAME%.")
		return
	}
	if !end.After(start) {
		e.fail("schedule.handle_func: Invalid range, end must be larger than start. Ignoring job %NAME%.")
		return
	}
	return start, end, true
}

func (e *eval) inRange() {
	v, _ := e.data.Get("range")
	start, end, ok := e.bounds(v, "")
	if !ok {
		return
	}
	inside := !e.now.Before(start) && !e.now.After(end)
	if payload.Truthy(get(v.(*payload.Map), "invert")) {
		inside = !e.now.After(start) || !e.now.Before(end)
	}
	if inside {
		e.run = true
	} else {
		e.st.skipReason, e.run = "in_skip_range", false
	}
}

func (e *eval) skipDuringRange(v any, skipFunction string) {
	start, end, ok := e.bounds(v, " in skip_during_range")
	if !ok {
		return
	}
	if payload.Truthy(get(e.data, "run_after_skip_range")) {
		at := pytime.Strftime(end.Add(e.m.loopInterval), timeFmt)
		list, _ := get(e.data, "run_explicit").([]any)
		found := false
		for _, x := range list {
			if xm, ok := x.(*payload.Map); ok && xm.Str("time") == at {
				found = true
			}
		}
		if !found {
			list = append(list, payload.NewMap("time", at, "time_fmt", timeFmt))
			e.m.setJobKey(e.name, "run_explicit", list)
		}
	}
	if !e.now.Before(start) && !e.now.After(end) {
		if skipFunction != "" {
			e.run, e.fun = true, skipFunction
		} else {
			e.skip("in_skip_range")
		}
	} else {
		e.run = true
	}
}

func (e *eval) until() {
	t, err := pytime.Parse(payload.Text(get(e.data, "until")), e.now)
	if err != nil {
		e.fail("Invalid date string for until. Ignoring job %NAME%.")
		return
	}
	if !t.After(e.now) {
		e.skip("until_passed")
	} else {
		e.run = true
	}
}

func (e *eval) after() {
	t, err := pytime.Parse(payload.Text(get(e.data, "after")), e.now)
	if err != nil {
		e.fail("Invalid date string for after. Ignoring job %NAME%.")
		return
	}
	if !t.Before(e.now) {
		e.skip("after_not_passed")
	} else {
		e.run = true
	}
}

// splaySeconds draws a splay: 1..N, or start..end for a {start, end} dict.
func (e *eval) splaySeconds(v any) (int64, bool) {
	if r, ok := v.(*payload.Map); ok {
		s, ok1 := intValue(get(r, "start"))
		en, ok2 := intValue(get(r, "end"))
		if !ok1 || !ok2 || en < s {
			e.m.log.Error("schedule.handle_func: Invalid Splay, end must be larger than start. Ignoring splay.", "job", e.name)
			return 0, false
		}
		return s + rand.Int64N(en-s+1), true
	}
	n, ok := intValue(v)
	if !ok || n < 1 {
		return 0, false
	}
	return 1 + rand.Int64N(n), true
}

// setJobKey changes one option of a job of the minion's own schedule.
func (m *Manager) setJobKey(name, key string, v any) {
	if job, ok := m.opts.Get(name); ok {
		if jm, ok := job.(*payload.Map); ok {
			jm.Set(key, v)
			if st := m.state[name]; st != nil {
				b, _ := payload.Marshal(jm)
				st.sig = string(b)
			}
		}
	}
}

func jobFunction(d *payload.Map) string {
	for _, k := range []string{"function", "func", "fun"} {
		if v, ok := d.Get(k); ok {
			return payload.Text(v)
		}
	}
	return ""
}

func get(m *payload.Map, k string) any {
	v, _ := m.Get(k)
	return v
}

func orDefault(m *payload.Map, k string, def any) any {
	if v, ok := m.Get(k); ok {
		return v
	}
	return def
}

// intValue reads an integer option: a number, or digits as text (Salt
// calls int() on these).
func intValue(v any) (int64, bool) {
	if f, ok := v.(float64); ok {
		return int64(f), true
	}
	if s, ok := v.(string); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		return n, err == nil
	}
	return payload.AsInt(v)
}

// chop drops the sub-second part, as Salt's _chop_ms.
func chop(t time.Time) time.Time { return t.Truncate(time.Second) }

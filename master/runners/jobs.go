package runners

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	saltjid "github.com/gsalt/gsalt/internal/jid"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/wire/payload"
)

func jobsRunners() []Runner {
	return []Runner{
		{Name: "jobs.list_jobs", Fn: jobsListJobs, Params: []Param{
			{Name: "ext_source"}, {Name: "outputter"}, {Name: "search_metadata"}, {Name: "search_function"},
			{Name: "search_target"}, {Name: "start_time"}, {Name: "end_time"}, {Name: "display_progress", Default: false},
		}, Doc: "List all detectable jobs and associated functions.\n\n    salt-run jobs.list_jobs\n    salt-run jobs.list_jobs search_function='test.*' search_target='localhost' search_metadata='{\"bar\": \"foo\"}'"},
		{Name: "jobs.list_job", Fn: jobsListJob, Params: []Param{
			{Name: "jid", Required: true}, {Name: "ext_source"}, {Name: "display_progress", Default: false},
		}, Doc: "List a specific job given by its jid.\n\n    salt-run jobs.list_job 20130916125524463507"},
		{Name: "jobs.lookup_jid", Fn: jobsLookupJID, Params: []Param{
			{Name: "jid", Required: true}, {Name: "ext_source"}, {Name: "returned", Default: true},
			{Name: "missing", Default: false}, {Name: "display_progress", Default: false},
		}, Doc: "Return the printout from a previously executed job.\n\n    salt-run jobs.lookup_jid 20130916125524463507"},
		{Name: "jobs.print_job", Fn: jobsPrintJob, Params: []Param{
			{Name: "jid", Required: true}, {Name: "ext_source"},
		}, Doc: "Print a specific job's detail given by its jid, including the return data.\n\n    salt-run jobs.print_job 20130916125524463507"},
		{Name: "jobs.active", Fn: jobsActive, Params: []Param{
			{Name: "display_progress", Default: false},
		}, Doc: "Return a report on all actively running jobs from a job id centric perspective.\n\n    salt-run jobs.active"},
		{Name: "jobs.exit_success", Fn: jobsExitSuccess, Params: []Param{
			{Name: "jid", Required: true}, {Name: "ext_source"},
		}, Doc: "Check if a job has been executed and exit successfully.\n\n    salt-run jobs.exit_success 20160520145827701627"},
	}
}

// JIDToTime renders a jid like salt.utils.jid.jid_to_time (jid.ToTime),
// "" when it is not one.
func JIDToTime(jid string) string {
	t, _ := saltjid.ToTime(jid)
	return t
}

// jobReturner is the returner the jobs runners read (Salt's
// _get_returner over ext_job_cache, ext_source, master_job_cache).
func jobReturner(c *Call) string {
	opt := func(k string) string {
		if v, ok := c.Env.Opt(k); ok && v != nil {
			return payload.Text(v)
		}
		return ""
	}
	for _, r := range []string{opt("ext_job_cache"), c.Str("ext_source"), opt("master_job_cache")} {
		if r != "" {
			return r
		}
	}
	return "local_cache"
}

// getLoad is local_cache.get_load: the saved load plus "Minions".
func getLoad(job *jobcache.Job) *payload.Map {
	if job == nil || job.Load == nil {
		return nil
	}
	l := job.Load.Clone()
	if len(job.Minions) > 0 {
		ms := append([]string(nil), job.Minions...)
		sort.Strings(ms)
		l.Set("Minions", strAny(ms))
	}
	return l
}

// formatJobInstance is salt.runners.jobs._format_job_instance.
func formatJobInstance(job *payload.Map) *payload.Map {
	if job == nil || job.Len() == 0 {
		return payload.NewMap("Error", "Cannot contact returner or no job with this jid")
	}
	get := func(k string, def any) any {
		if v, ok := job.Get(k); ok {
			return v
		}
		return def
	}
	args, _ := get("arg", []any{}).([]any)
	if args == nil {
		args = []any{}
	}
	ret := payload.NewMap(
		"Function", get("fun", "unknown-function"),
		"Arguments", args,
		"Target", get("tgt", "unknown-target"),
		"Target-type", get("tgt_type", "list"),
		"User", get("user", "root"))
	if md, ok := job.Get("metadata"); ok {
		ret.Set("Metadata", md)
	} else if kw := job.Map("kwargs"); kw != nil {
		if md, ok := kw.Get("metadata"); ok {
			ret.Set("Metadata", md)
		}
	}
	if ms, ok := job.Get("Minions"); ok {
		ret.Set("Minions", ms)
	}
	return ret
}

func formatJIDInstance(jid string, job *payload.Map) *payload.Map {
	ret := formatJobInstance(job)
	ret.Set("StartTime", JIDToTime(jid))
	return ret
}

// getJID is local_cache.get_jid: minion -> {return, retcode, success[, out]}.
func getJID(job *jobcache.Job) *payload.Map {
	out := payload.NewMap()
	if job == nil {
		return out
	}
	ids := make([]string, 0, len(job.Returns))
	for id := range job.Returns {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := job.Returns[id]
		rec := payload.NewMap()
		for _, k := range []string{"return", "retcode", "success", "out"} {
			if v, ok := r.Get(k); ok {
				rec.Set(k, v)
			}
		}
		if !rec.Has("return") {
			rec.Set("return", nil)
		}
		out.Set(id, rec)
	}
	return out
}

func lookup(c *Call, jid string) (*jobcache.Job, error) {
	job, err := c.Env.Jobs().Get(jid)
	if errors.Is(err, jobcache.ErrNoJob) || errors.Is(err, jobcache.ErrDamaged) {
		if l, ok := lostJob(c, jid); ok {
			return nil, fmt.Errorf("job %s was lost: %s", jid, l.Reason)
		}
	}
	if errors.Is(err, jobcache.ErrNoJob) {
		return nil, nil
	}
	return job, err
}

// lostJob finds jid among the jobs lost to a damaged cache file.
func lostJob(c *Call, jid string) (jobcache.LostJob, bool) {
	lost, _ := c.Env.Jobs().Lost()
	for _, l := range lost {
		if l.JID == jid {
			return l, true
		}
	}
	return jobcache.LostJob{}, false
}

// reportLost tells the caller (a progress event, shown by gsalt-run, and
// the log) which jobs the job cache lost to damage.
func reportLost(c *Call) {
	lost, err := c.Env.Jobs().Lost()
	if err != nil || len(lost) == 0 {
		return
	}
	var jids []string
	var other []string
	for _, l := range lost {
		if l.JID != "" {
			jids = append(jids, l.JID)
		} else {
			other = append(other, l.Reason)
		}
	}
	msg := fmt.Sprintf("The job cache lost %d job(s) to a damaged file", len(lost))
	if len(jids) > 0 {
		msg += ": " + strings.Join(jids, ", ")
	}
	if len(other) > 0 {
		msg += "; " + strings.Join(other, "; ")
	}
	if len(jids) > 0 {
		msg += "; " + lost[0].Reason
	}
	if c.Log != nil {
		c.Log.Warn(msg)
	}
	c.progress(msg)
}

func jobsListJobs(_ context.Context, c *Call) (any, error) {
	if c.Bool("display_progress") {
		c.progress("Querying returner " + jobReturner(c) + " for jobs.")
	}
	jobs, err := c.Env.Jobs().List()
	if err != nil && !errors.Is(err, jobcache.ErrDamaged) {
		return nil, err
	}
	reportLost(c)
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].JID < jobs[j].JID })
	out := payload.NewMap()
	for _, j := range jobs {
		load := getLoad(j)
		if load == nil {
			continue // runner returns and other jobs without a saved load
		}
		f := formatJIDInstance(j.JID, load)
		f.Delete("Minions")
		if !matchJob(c, f) {
			continue
		}
		ok, err := matchJobTime(c, f)
		if err != nil {
			return nil, err
		}
		if ok {
			out.Set(j.JID, f)
		}
	}
	if o := c.Str("outputter"); o != "" {
		return payload.NewMap("outputter", o, "data", out), nil
	}
	return out, nil
}

// matchJob applies list_jobs' search_metadata, search_target and
// search_function filters.
func matchJob(c *Call, f *payload.Map) bool {
	if sm := c.Args["search_metadata"]; sm != nil {
		md := f.Map("Metadata")
		want, ok := sm.(*payload.Map)
		if !ok || md == nil {
			return false
		}
		hit := false
		for _, it := range want.Items() {
			if v, ok := md.GetKey(it.Key); ok && payload.Text(v) == payload.Text(it.Value) {
				hit = true
			}
		}
		if !hit {
			return false
		}
	}
	if st := c.StrList("search_target"); st != nil {
		var targets []string
		switch t := mustGet(f, "Target").(type) {
		case string:
			targets = []string{t}
		case []any:
			for _, e := range t {
				targets = append(targets, payload.Text(e))
			}
		}
		hit := false
		for _, t := range targets {
			for _, pat := range st {
				if py.Fnmatch(t, pat) {
					hit = true
				}
			}
		}
		if !hit {
			return false
		}
	}
	if sf := c.StrList("search_function"); sf != nil {
		fn, ok := mustGet(f, "Function").(string)
		hit := false
		for _, pat := range sf {
			if ok && py.Fnmatch(fn, pat) {
				hit = true
			}
		}
		if !hit {
			return false
		}
	}
	return true
}

func mustGet(m *payload.Map, k string) any { v, _ := m.Get(k); return v }

// listJob is jobs.list_job.
func listJob(c *Call, jid string) (*payload.Map, error) {
	job, err := lookup(c, jid)
	if err != nil {
		return nil, err
	}
	ret := payload.NewMap("jid", jid)
	for _, it := range formatJIDInstance(jid, getLoad(job)).Items() {
		ret.SetKey(it.Key, it.Value)
	}
	ret.Set("Result", getJID(job))
	return ret, nil
}

func jobsListJob(_ context.Context, c *Call) (any, error) {
	if c.Bool("display_progress") {
		c.progress("Querying returner: " + jobReturner(c))
	}
	return listJob(c, c.Str("jid"))
}

func jobsLookupJID(_ context.Context, c *Call) (any, error) {
	jid := c.Str("jid")
	data, err := listJob(c, jid)
	if err != nil {
		return nil, err
	}
	ret := payload.NewMap()
	returns := data.Map("Result")
	returned := c.Bool("returned")
	var outputter string
	for i, it := range returns.Items() {
		id := payload.KeyString(it.Key)
		if c.Bool("display_progress") {
			c.progress(id)
		}
		rec, _ := it.Value.(*payload.Map)
		if i == 0 && rec != nil {
			outputter = rec.Str("out")
		}
		if returned {
			var v any
			if rec != nil {
				v, _ = rec.Get("return")
			}
			ret.Set(id, v)
		}
	}
	if c.Bool("missing") {
		for _, m := range data.List("Minions") {
			id := payload.Text(m)
			if !returns.Has(id) {
				ret.Set(id, "Minion did not return")
			}
		}
	}
	if outputter != "" {
		return payload.NewMap("outputter", outputter, "data", ret), nil
	}
	return ret, nil
}

func jobsPrintJob(_ context.Context, c *Call) (any, error) {
	jid := c.Str("jid")
	job, err := lookup(c, jid)
	if err != nil {
		return nil, err
	}
	inst := formatJIDInstance(jid, getLoad(job))
	inst.Set("Result", getJID(job))
	return payload.NewMap(jid, inst), nil
}

func jobsActive(ctx context.Context, c *Call) (any, error) {
	ret := payload.NewMap()
	res, err := c.Env.RunJob(ctx, Job{Tgt: "*", Fun: "saltutil.running", Arg: []any{}})
	if errors.Is(err, ErrNoMinions) {
		return ret, nil
	}
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(res.Returns))
	for id := range res.Returns {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if c.Bool("display_progress") {
		c.progress(fmt.Sprintf("Attempting to contact minions: [%s]", quoteList(ids)))
	}
	for _, minion := range ids {
		if c.Bool("display_progress") {
			c.progress("Received reply from minion " + minion)
		}
		list, ok := mustGet(res.Returns[minion], "return").([]any)
		if !ok {
			continue
		}
		for _, e := range list {
			job, ok := e.(*payload.Map)
			if !ok {
				continue
			}
			jid := job.Str("jid")
			// The minions list the probe itself among their running jobs:
			// it is not a job the user started.
			if jid == res.JID {
				continue
			}
			pid, _ := job.Get("pid")
			if cur := ret.Map(jid); cur != nil {
				running, _ := cur.Get("Running")
				l, _ := running.([]any)
				cur.Set("Running", append(l, payload.NewMap(minion, pid)))
				continue
			}
			inst := formatJIDInstance(jid, job)
			inst.Set("Running", []any{payload.NewMap(minion, pid)})
			inst.Set("Returned", []any{})
			ret.Set(jid, inst)
		}
	}
	for _, it := range ret.Items() {
		jid := payload.KeyString(it.Key)
		inst := it.Value.(*payload.Map)
		job, err := lookup(c, jid)
		if err != nil || job == nil {
			continue
		}
		ids := make([]string, 0, len(job.Returns))
		for id := range job.Returns {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		inst.Set("Returned", strAny(ids))
	}
	return ret, nil
}

func quoteList(ids []string) string {
	q := make([]string, len(ids))
	for i, s := range ids {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, ", ")
}

// matchJobTime applies list_jobs' start_time and end_time filters the way
// Salt does with python-dateutil installed (as in Salt's packages): both
// the bound and the job's StartTime are parsed with dateutil's rules and
// compared; the bounds are inclusive.
func matchJobTime(c *Call, f *payload.Map) (bool, error) {
	for _, b := range []struct {
		arg   string
		after bool
	}{{"start_time", true}, {"end_time", false}} {
		if !payload.Truthy(c.Args[b.arg]) {
			continue
		}
		bound, err := parseDateutil(payload.Text(c.Args[b.arg]), time.Now())
		if err != nil {
			return false, err
		}
		st, err := parseDateutil(f.Str("StartTime"), time.Now())
		if err != nil {
			return false, err
		}
		if bound.Aware != st.Aware {
			return false, fmt.Errorf("%w: can't compare offset-naive and offset-aware datetimes", ErrDate)
		}
		cmp := st.Time.Compare(bound.Time)
		if (b.after && cmp < 0) || (!b.after && cmp > 0) {
			return false, nil
		}
	}
	return true, nil
}

// jobsExitSuccess is jobs.exit_success: for each minion the job was sent
// to (and each that returned), whether its return is truthy.
func jobsExitSuccess(_ context.Context, c *Call) (any, error) {
	data, err := listJob(c, c.Str("jid"))
	if err != nil {
		return nil, err
	}
	result := data.Map("Result")
	if result == nil {
		result = payload.NewMap()
	}
	ret := payload.NewMap()
	returned := func(id string) (bool, bool) {
		rec := result.Map(id)
		if rec == nil {
			return false, false
		}
		v, ok := rec.Get("return")
		return payload.Truthy(v), ok
	}
	for _, m := range data.List("Minions") {
		id := payload.Text(m)
		ok, _ := returned(id)
		ret.Set(id, ok)
	}
	for _, id := range result.Keys() {
		if ok, _ := returned(id); ok {
			ret.Set(id, true)
		}
	}
	return ret, nil
}

package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/atomicfile"
	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/internal/pytime"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/schedule"
	"github.com/gsalt/gsalt/wire/payload"
)

// scheduleServiceName is the Env.Services key of the ScheduleManager.
const scheduleServiceName = "schedule"

// ScheduleManager is the "schedule" service: the minion's scheduler
// (schedule.Manager implements it). ManageSchedule carries out one request
// with the data Salt's schedule module fires as the manage_schedule event
// ({"func", "name", "schedule", "where", "persist", "fire_event", "time",
// "new_time", "time_fmt"}) and returns the data of the completion event
// Salt's minion answers with.
type ScheduleManager interface {
	ManageSchedule(ctx context.Context, req *payload.Map) (*payload.Map, error)
}

// scheduleConf are the job options schedule.list shows (SCHEDULE_CONF).
var scheduleConf = map[string]bool{
	"name": true, "maxrunning": true, "function": true, "splay": true, "range": true, "when": true, "once": true,
	"once_fmt": true, "returner": true, "jid_include": true, "args": true, "kwargs": true, "_seconds": true,
	"seconds": true, "minutes": true, "hours": true, "days": true, "enabled": true, "return_job": true,
	"metadata": true, "cron": true, "until": true, "after": true, "return_config": true, "return_kwargs": true,
	"run_on_start": true, "skip_during_range": true, "run_after_skip_range": true,
}

// scheduleFunctions is Salt's schedule execution module: the minion's
// scheduled jobs listed, added, changed, run and saved through the
// "schedule" service, or in _schedule.conf with offline=True.
func scheduleFunctions() []modules.Function {
	kw := func(ps ...modules.Param) modules.Spec { return modules.Spec{Params: ps, Kwargs: true} }
	ex := func(cmd string) string { return "\n\nCLI Example:\n\n    salt '*' " + cmd }
	return []modules.Function{
		{Name: "schedule.list", Doc: "List the jobs currently scheduled on the minion." + ex("schedule.list show_all=True"),
			Spec: modules.Spec{Params: []modules.Param{opt("show_all", false), opt("show_disabled", true), opt("where", nil),
				opt("return_yaml", true), opt("offline", false)}}, Fn: scheduleList},
		{Name: "schedule.is_enabled", Doc: "List a job only if it is enabled; without a name, whether the scheduler is enabled." + ex("schedule.is_enabled name=job_name"),
			Spec: modules.Spec{Params: []modules.Param{opt("name", nil)}}, Fn: scheduleIsEnabled},
		{Name: "schedule.purge", Doc: "Purge all the jobs currently scheduled on the minion." + ex("schedule.purge"),
			Spec: kw(), Fn: schedulePurge},
		{Name: "schedule.delete", Doc: "Delete a job from the minion's schedule." + ex("schedule.delete job1"),
			Spec: kw(req("name")), Fn: scheduleDelete},
		{Name: "schedule.build_schedule_item", Doc: "Build a schedule job." + ex("schedule.build_schedule_item job1 function='test.ping' seconds=3600"),
			Spec: kw(req("name")), Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return scheduleBuildItem(c.Args.Str("name"), c.Args.CleanKwargs())
			}},
		{Name: "schedule.add", Doc: "Add a job to the schedule." + ex("schedule.add job1 function='test.ping' seconds=3600"),
			Spec: kw(req("name")), Fn: scheduleAdd},
		{Name: "schedule.modify", Doc: "Modify an existing job in the schedule." + ex("schedule.modify job1 function='test.ping' seconds=3600"),
			Spec: kw(req("name")), Fn: scheduleModify},
		{Name: "schedule.run_job", Doc: "Run a scheduled job on the minion immediately (force=True runs a disabled job)." + ex("schedule.run_job job1"),
			Spec: modules.Spec{Params: []modules.Param{req("name"), opt("force", false)}}, Fn: scheduleRunJob},
		{Name: "schedule.enable_job", Doc: "Enable a job in the minion's schedule." + ex("schedule.enable_job job1"),
			Spec: kw(req("name")), Fn: func(ctx context.Context, c *modules.Call) (any, error) { return scheduleSwitchJob(ctx, c, true) }},
		{Name: "schedule.disable_job", Doc: "Disable a job in the minion's schedule." + ex("schedule.disable_job job1"),
			Spec: kw(req("name")), Fn: func(ctx context.Context, c *modules.Call) (any, error) { return scheduleSwitchJob(ctx, c, false) }},
		{Name: "schedule.save", Doc: "Save all scheduled jobs on the minion." + ex("schedule.save"),
			Spec: kw(), Fn: scheduleSave},
		{Name: "schedule.enable", Doc: "Enable all scheduled jobs on the minion." + ex("schedule.enable"),
			Spec: kw(), Fn: func(ctx context.Context, c *modules.Call) (any, error) { return scheduleSwitchAll(ctx, c, true) }},
		{Name: "schedule.disable", Doc: "Disable all scheduled jobs on the minion." + ex("schedule.disable"),
			Spec: kw(), Fn: func(ctx context.Context, c *modules.Call) (any, error) { return scheduleSwitchAll(ctx, c, false) }},
		{Name: "schedule.reload", Doc: "Reload saved scheduled jobs on the minion." + ex("schedule.reload"),
			Spec: modules.Spec{}, Fn: scheduleReload},
		{Name: "schedule.move", Doc: "Move scheduled job to another minion or minions." + ex("schedule.move jobname target"),
			Spec: kw(req("name"), req("target")), Fn: func(ctx context.Context, c *modules.Call) (any, error) { return scheduleCopy(ctx, c, true) }},
		{Name: "schedule.copy", Doc: "Copy scheduled job to another minion or minions." + ex("schedule.copy jobname target"),
			Spec: kw(req("name"), req("target")), Fn: func(ctx context.Context, c *modules.Call) (any, error) { return scheduleCopy(ctx, c, false) }},
		{Name: "schedule.postpone_job", Doc: "Postpone a job in the minion's schedule (times as %Y-%m-%dT%H:%M:%S, or time_fmt)." + ex("schedule.postpone_job job current_time new_time"),
			Spec: kw(req("name"), req("current_time"), req("new_time")), Fn: func(ctx context.Context, c *modules.Call) (any, error) { return scheduleSkip(ctx, c, true) }},
		{Name: "schedule.skip_job", Doc: "Skip a job in the minion's schedule at the given time." + ex("schedule.skip_job job time"),
			Spec: kw(req("name"), req("current_time")), Fn: func(ctx context.Context, c *modules.Call) (any, error) { return scheduleSkip(ctx, c, false) }},
		{Name: "schedule.show_next_fire_time", Doc: "Show the next fire time for scheduled job." + ex("schedule.show_next_fire_time job_name"),
			Spec: kw(req("name")), Fn: scheduleNextFireTime},
		{Name: "schedule.job_status", Doc: "Show the information for a particular job." + ex("schedule.job_status job_name"),
			Spec: modules.Spec{Params: []modules.Param{req("name"), opt("time_fmt", "%Y-%m-%dT%H:%M:%S")}}, Fn: scheduleJobStatus},
	}
}

// scheduleRet is a return dict in Salt's key order.
func scheduleRet(kv ...any) *payload.Map { return payload.NewMap(kv...) }

// scheduleKw is kwargs.get(key).
func scheduleKw(c *modules.Call, key string) any {
	if c.Args.Kwargs == nil {
		return nil
	}
	v, _ := c.Args.Kwargs.Get(key)
	return v
}

// schedulePersist is kwargs.get("persist", True).
func schedulePersist(c *modules.Call) bool {
	if c.Args.Kwargs != nil {
		if v, ok := c.Args.Kwargs.Get("persist"); ok {
			return payload.Truthy(v)
		}
	}
	return true
}

// scheduleOptsTest is __opts__.get("test").
func scheduleOptsTest(c *modules.Call) bool {
	if c.Env == nil || c.Env.Opts == nil {
		return false
	}
	v, _ := c.Env.Opts.Get("test")
	return payload.Truthy(v)
}

// scheduleManage sends one request to the minion's scheduler; ok is false
// when the minion has none (Salt's "Event module not available").
func scheduleManage(ctx context.Context, c *modules.Call, req *payload.Map) (*payload.Map, bool, error) {
	m, ok := modules.Service[ScheduleManager](c.Env, scheduleServiceName)
	if !ok {
		return nil, false, nil
	}
	res, err := m.ManageSchedule(ctx, req)
	if err != nil {
		return nil, true, fmt.Errorf("%w: %v", modules.ErrExecution, err)
	}
	return res, true, nil
}

// scheduleFile is the saved schedule's path.
func scheduleFile(c *modules.Call) string {
	var o modules.Options = payload.NewMap()
	if c.Env != nil && c.Env.Opts != nil {
		o = c.Env.Opts
	}
	return schedule.ConfigFile(o)
}

// scheduleSaved reads the saved schedule ({} when there is none).
func scheduleSaved(c *modules.Call) (*payload.Map, error) {
	b, err := os.ReadFile(scheduleFile(c))
	if err != nil {
		if os.IsNotExist(err) {
			return &payload.Map{}, nil
		}
		return nil, fmt.Errorf("%w: %v", modules.ErrExecution, err)
	}
	v, err := config.DecodeYAMLPayload(b)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read %s: %v", modules.ErrExecution, scheduleFile(c), err)
	}
	doc, _ := v.(*payload.Map)
	if s := doc.Map("schedule"); s != nil {
		return s, nil
	}
	return &payload.Map{}, nil
}

// scheduleWrite writes {"schedule": s} to the saved schedule, the jobs in
// s's order (Salt writes the dicts it read back sorted and a job it has
// just built in its own order: see scheduleAdd).
func scheduleWrite(c *modules.Call, s *payload.Map) {
	text, err := schedule.DumpOrdered(payload.NewMap("schedule", s))
	if err == nil {
		path := scheduleFile(c)
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			err = atomicfile.WriteFile(path, []byte(text), 0o644, false)
		}
	}
	if err != nil {
		c.Log().Error("Failed to persist the updated schedule", "err", err)
	}
}

// scheduleCurrent is list_(show_all=True, return_yaml=False, where, offline).
func scheduleCurrent(ctx context.Context, c *modules.Call, where string, offline bool) (*payload.Map, bool, error) {
	v, ok, err := scheduleListData(ctx, c, true, true, where, offline)
	if err != nil || !ok {
		return nil, ok, err
	}
	return v, true, nil
}

// scheduleListData is list_ with return_yaml=False.
func scheduleListData(ctx context.Context, c *modules.Call, showAll, showDisabled bool, where string, offline bool) (*payload.Map, bool, error) {
	var s *payload.Map
	if offline {
		saved, err := scheduleSaved(c)
		if err != nil {
			return nil, true, err
		}
		s = saved
	} else {
		req := payload.NewMap("func", "list", "where", nil)
		if where != "" {
			req.Set("where", where)
		}
		res, ok, err := scheduleManage(ctx, c, req)
		if err != nil || !ok {
			return nil, ok, err
		}
		s = res.Map("schedule")
		if s == nil {
			s = &payload.Map{}
		}
	}
	out := &payload.Map{}
	for _, it := range s.Items() {
		name := payload.KeyString(it.Key)
		job, isJob := it.Value.(*payload.Map)
		switch {
		case name == "enabled" || name == "skip_function" || name == "skip_during_range":
			out.SetKey(it.Key, it.Value)
			continue
		case strings.HasPrefix(name, "__") && !showAll:
			continue
		case !isJob:
			out.SetKey(it.Key, it.Value)
			continue
		}
		clean := &payload.Map{}
		for _, f := range job.Items() {
			k := payload.KeyString(f.Key)
			if !scheduleConf[k] || f.Value == nil || k == "_seconds" {
				continue
			}
			v := f.Value
			switch v {
			case "true":
				v = true
			case "false":
				v = false
			}
			clean.SetKey(f.Key, v)
		}
		if !clean.Has("enabled") {
			clean.Set("enabled", true)
		}
		if !showDisabled && !payload.Truthy(schedGet(clean, "enabled")) {
			continue
		}
		out.SetKey(it.Key, clean)
	}
	return out, true, nil
}

func schedGet(m *payload.Map, k string) any {
	v, _ := m.Get(k)
	return v
}

// scheduleList is schedule.list.
func scheduleList(ctx context.Context, c *modules.Call) (any, error) {
	offline := c.Args.Bool("offline")
	s, ok, err := scheduleListData(ctx, c, c.Args.Bool("show_all"), c.Args.Bool("show_disabled"), c.Args.Str("where"), offline)
	if err != nil {
		return nil, err
	}
	if !ok {
		return scheduleRet("comment", "Event module not available. Schedule list failed.", "result", true), nil
	}
	if !c.Args.Bool("return_yaml") {
		return s, nil
	}
	saved, err := scheduleSaved(c)
	if err != nil {
		return nil, err
	}
	for _, it := range s.Items() {
		if job, ok := it.Value.(*payload.Map); ok {
			job.Set("saved", saved.Has(payload.KeyString(it.Key)))
		}
	}
	text, err := schedule.DumpBlock(payload.NewMap("schedule", s))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", modules.ErrExecution, err)
	}
	return text, nil
}

// scheduleIsEnabled is schedule.is_enabled.
func scheduleIsEnabled(ctx context.Context, c *modules.Call) (any, error) {
	s, ok, err := scheduleListData(ctx, c, false, true, "", false)
	if err != nil {
		return nil, err
	}
	if !ok {
		return scheduleRet("comment", "Event module not available. Schedule list failed.", "result", true), nil
	}
	name := c.Args.Str("name")
	if name == "" {
		if v, ok := s.Get("enabled"); ok {
			return v, nil
		}
		return true, nil
	}
	if v, ok := s.Get(name); ok {
		return v, nil
	}
	return &payload.Map{}, nil
}

// schedulePurge is schedule.purge.
func schedulePurge(ctx context.Context, c *modules.Call) (any, error) {
	offline := payload.Truthy(scheduleKw(c, "offline"))
	comments := []any{}
	changes := &payload.Map{}
	ret := scheduleRet("comment", comments, "changes", changes, "result", true)
	current, ok, err := scheduleCurrent(ctx, c, "", offline)
	if err != nil {
		return nil, err
	}
	if !ok {
		return scheduleRet("comment", "Event module not available. Schedule add failed.", "result", true), nil
	}
	for _, it := range current.Clone().Items() {
		name := payload.KeyString(it.Key)
		if name == "enabled" || strings.HasPrefix(name, "__") {
			continue
		}
		switch {
		case payload.Truthy(scheduleKw(c, "test")):
			comments = append(comments, fmt.Sprintf("Job: %s would be deleted from schedule.", name))
		case offline:
			current.Delete(name)
			comments = append(comments, fmt.Sprintf("Deleted job: %s from schedule.", name))
			changes.Set(name, "removed")
		default:
			res, _, err := scheduleManage(ctx, c, payload.NewMap("name", name, "func", "delete", "persist", schedulePersist(c)))
			if err != nil {
				return nil, err
			}
			if res.Bool("complete") {
				if !res.Map("schedule").Has(name) {
					changes.Set(name, "removed")
					comments = append(comments, fmt.Sprintf("Deleted job: %s from schedule.", name))
				} else {
					comments = append(comments, fmt.Sprintf("Failed to delete job %s from schedule.", name))
				}
			}
		}
	}
	if offline {
		scheduleWrite(c, schedule.Sorted(current).(*payload.Map))
	}
	ret.Set("comment", comments)
	return ret, nil
}

// scheduleDelete is schedule.delete.
func scheduleDelete(ctx context.Context, c *modules.Call) (any, error) {
	name := c.Args.Str("name")
	ret := scheduleRet("comment", fmt.Sprintf("Failed to delete job %s from schedule.", name), "result", false, "changes", &payload.Map{})
	if name == "" {
		ret.Set("comment", "Job name is required.")
	}
	if payload.Truthy(scheduleKw(c, "test")) {
		return ret.Set("comment", fmt.Sprintf("Job: %s would be deleted from schedule.", name)).Set("result", true), nil
	}
	if payload.Truthy(scheduleKw(c, "offline")) {
		current, _, err := scheduleCurrent(ctx, c, "opts", true)
		if err != nil {
			return nil, err
		}
		if !current.Has(name) {
			return nil, fmt.Errorf("%w: job %s is not in %s", modules.ErrExecution, name, scheduleFile(c))
		}
		current.Delete(name)
		scheduleWrite(c, schedule.Sorted(current).(*payload.Map))
		ret.Set("result", true).Set("comment", fmt.Sprintf("Deleted Job %s from schedule.", name))
		ret.Map("changes").Set(name, "removed")
		return ret, nil
	}
	req, ok, err := scheduleJobRequest(ctx, c, name, "delete", schedulePersist(c))
	if err != nil {
		return nil, err
	}
	if !ok {
		return ret.Set("comment", "Event module not available. Schedule add failed."), nil
	}
	if req == nil {
		return ret.Set("comment", fmt.Sprintf("Job %s does not exist.", name)), nil
	}
	res, _, err := scheduleManage(ctx, c, req)
	if err != nil {
		return nil, err
	}
	if res.Bool("complete") {
		if !res.Map("schedule").Has(name) {
			ret.Set("result", true).Set("comment", fmt.Sprintf("Deleted Job %s from schedule.", name))
			ret.Map("changes").Set(name, "removed")
		} else {
			ret.Set("comment", fmt.Sprintf("Failed to delete job %s from schedule.", name))
		}
	}
	return ret, nil
}

// scheduleJobRequest builds the request for a named job: in the minion's
// own schedule, or in the pillar (where "pillar", never persisted). It is
// nil when the job does not exist; ok is false without a scheduler.
func scheduleJobRequest(ctx context.Context, c *modules.Call, name, fn string, persist bool) (*payload.Map, bool, error) {
	opts, ok, err := scheduleCurrent(ctx, c, "opts", false)
	if err != nil || !ok {
		return nil, ok, err
	}
	if opts.Has(name) {
		return payload.NewMap("name", name, "func", fn, "persist", persist), true, nil
	}
	pillar, _, err := scheduleCurrent(ctx, c, "pillar", false)
	if err != nil {
		return nil, true, err
	}
	if pillar.Has(name) {
		return payload.NewMap("name", name, "where", "pillar", "func", fn, "persist", false), true, nil
	}
	return nil, true, nil
}

// scheduleTimeConflict returns Salt's refusal of time elements with when
// or cron, and of when with cron, or "".
func scheduleTimeConflict(kw *payload.Map, withOrCron string) string {
	for _, item := range []string{"seconds", "minutes", "hours", "days"} {
		if kw.Has(item) && (kw.Has("when") || kw.Has("cron")) {
			return `Error: Unable to use "seconds", "minutes", "hours", or "days" with "when"` + withOrCron
		}
	}
	if kw.Has("when") && kw.Has("cron") {
		return `Unable to use "when" and "cron" options together.  Ignoring.`
	}
	return ""
}

// scheduleBuildItem is build_schedule_item: the job's options in Salt's
// order, or a {"comment", "result": False} dict.
func scheduleBuildItem(name string, kw *payload.Map) (*payload.Map, error) {
	fail := func(msg string) (*payload.Map, error) {
		return scheduleRet("comment", msg, "result", false), nil
	}
	if name == "" {
		return scheduleRet("comment", "Job name is required.", "result", false), nil
	}
	fn, ok := kw.Get("function")
	if !ok {
		return nil, fmt.Errorf("%w: a scheduled job needs function=<module.function>", modules.ErrInvocation)
	}
	job := payload.NewMap("function", fn)
	for _, item := range []string{"seconds", "minutes", "hours", "days"} {
		if kw.Has(item) && (kw.Has("when") || kw.Has("cron")) {
			return fail(`Unable to use "seconds", "minutes", "hours", or "days" with "when" or "cron" options.`)
		}
	}
	if kw.Has("when") && kw.Has("cron") {
		return fail(`Unable to use "when" and "cron" options together.  Ignoring.`)
	}
	for _, item := range []string{"seconds", "minutes", "hours", "days", "return_job", "metadata"} {
		if v, ok := kw.Get(item); ok {
			job.Set(item, v)
		}
	}
	if v, ok := kw.Get("job_args"); ok {
		if _, isList := v.([]any); !isList {
			return fail("job_args is not a list. please correct and try again.")
		}
		job.Set("args", v)
	}
	if v, ok := kw.Get("job_kwargs"); ok {
		if _, isMap := v.(*payload.Map); !isMap {
			return fail("job_kwargs is not a dict. please correct and try again.")
		}
		job.Set("kwargs", v)
	}
	job.Set("maxrunning", orValue(kw, "maxrunning", int64(1)))
	job.Set("name", orValue(kw, "name", name))
	job.Set("enabled", orValue(kw, "enabled", true))
	if v, ok := kw.Get("jid_include"); !ok || payload.Truthy(v) {
		job.Set("jid_include", true)
	}
	if v, ok := kw.Get("splay"); ok {
		if m, isMap := v.(*payload.Map); isMap {
			job.Set("splay", payload.NewMap("start", schedGet(m, "start"), "end", schedGet(m, "end")))
		} else {
			job.Set("splay", v)
		}
	}
	if v, ok := kw.Get("when"); ok {
		list, isList := v.([]any)
		if !isList {
			list = []any{v}
		}
		for _, w := range list {
			if _, err := pytime.Parse(payload.Text(w), time.Now()); err != nil {
				return fail(fmt.Sprintf(`Schedule item %s for "when" in invalid.`, payload.Text(w)))
			}
		}
	}
	for _, item := range []string{"range", "when", "once", "once_fmt", "cron", "returner", "after", "return_config",
		"return_kwargs", "until", "run_on_start", "skip_during_range"} {
		if v, ok := kw.Get(item); ok {
			job.Set(item, v)
		}
	}
	return job, nil
}

// sortTopLevel orders a dict's keys, keeping each value as it is.
func sortTopLevel(m *payload.Map) *payload.Map {
	keys := m.Keys()
	sort.Strings(keys)
	out := &payload.Map{}
	for _, k := range keys {
		v, _ := m.Get(k)
		out.Set(k, v)
	}
	return out
}

// scheduleBuild is build_schedule_item for add and modify: the job, or
// the {"comment", "result": False} dict that refuses it.
func scheduleBuild(name string, kw *payload.Map) (job, failed *payload.Map, err error) {
	job, err = scheduleBuildItem(name, kw)
	if err != nil {
		return nil, nil, err
	}
	if v, ok := job.Get("result"); ok && v == false {
		return nil, job, nil
	}
	return job, nil, nil
}

func orValue(m *payload.Map, k string, def any) any {
	if v, ok := m.Get(k); ok {
		return v
	}
	return def
}

// scheduleAdd is schedule.add.
func scheduleAdd(ctx context.Context, c *modules.Call) (any, error) {
	name := c.Args.Str("name")
	kw := c.Args.CleanKwargs()
	offline := payload.Truthy(schedGet(kw, "offline"))
	ret := scheduleRet("comment", fmt.Sprintf("Failed to add job %s to schedule.", name), "result", false, "changes", &payload.Map{})
	current, ok, err := scheduleCurrent(ctx, c, "", offline)
	if err != nil {
		return nil, err
	}
	if !ok {
		return ret.Set("comment", "Event module not available. Schedule add failed."), nil
	}
	if current.Has(name) {
		return ret.Set("comment", fmt.Sprintf("Job %s already exists in schedule.", name)), nil
	}
	if name == "" {
		ret.Set("comment", "Job name is required.")
	}
	if msg := scheduleTimeConflict(kw, ` or "cron" options.`); msg != "" {
		return ret.Set("comment", msg), nil
	}
	job, failed, err := scheduleBuild(name, kw)
	if err != nil || failed != nil {
		return failed, err
	}
	if payload.Truthy(scheduleKw(c, "test")) {
		return ret.Set("comment", fmt.Sprintf("Job: %s would be added to schedule.", name)).Set("result", true), nil
	}
	if offline {
		current = schedule.Sorted(current).(*payload.Map)
		current.Set(name, job)
		current = sortTopLevel(current)
		scheduleWrite(c, current)
		ret.Set("result", true).Set("comment", fmt.Sprintf("Added job: %s to schedule.", name))
		ret.Map("changes").Set(name, "added")
		return ret, nil
	}
	res, _, err := scheduleManage(ctx, c, payload.NewMap("name", name, "schedule", payload.NewMap(name, job), "func", "add", "persist", schedulePersist(c)))
	if err != nil {
		return nil, err
	}
	if res.Bool("complete") && res.Map("schedule").Has(name) {
		ret.Set("result", true).Set("comment", fmt.Sprintf("Added job: %s to schedule.", name))
		ret.Map("changes").Set(name, "added")
	}
	return ret, nil
}

// scheduleModify is schedule.modify.
func scheduleModify(ctx context.Context, c *modules.Call) (any, error) {
	name := c.Args.Str("name")
	kw := c.Args.CleanKwargs()
	offline := payload.Truthy(schedGet(kw, "offline"))
	ret := scheduleRet("comment", "", "changes", &payload.Map{}, "result", true)
	if msg := scheduleTimeConflict(kw, ` option.`); msg != "" {
		return ret.Set("result", false).Set("comment", msg), nil
	}
	current, ok, err := scheduleCurrent(ctx, c, "", offline)
	if err != nil {
		return nil, err
	}
	if !ok {
		return scheduleRet("comment", "Event module not available. Schedule list failed.", "result", true), nil
	}
	cur := current.Map(name)
	if cur == nil {
		return ret.Set("result", false).Set("comment", fmt.Sprintf("Job %s does not exist in schedule.", name)), nil
	}
	if !kw.Has("function") {
		kw.Set("function", schedGet(cur, "function"))
	}
	job, failed, err := scheduleBuild(name, kw)
	if err != nil || failed != nil {
		return failed, err
	}
	if py.Equal(job, cur) {
		return ret.Set("comment", fmt.Sprintf("Job %s in correct state", name)), nil
	}
	ret.Map("changes").Set(name, payload.NewMap("old", cur.Clone(), "new", job))
	if payload.Truthy(scheduleKw(c, "test")) {
		return ret.Set("comment", fmt.Sprintf("Job: %s would be modified in schedule.", name)), nil
	}
	if offline {
		for _, it := range job.Items() {
			cur.SetKey(it.Key, it.Value)
		}
		scheduleWrite(c, schedule.Sorted(current).(*payload.Map))
		return ret.Set("comment", fmt.Sprintf("Modified job: %s in schedule.", name)), nil
	}
	req, _, err := scheduleJobRequest(ctx, c, name, "modify", schedulePersist(c))
	if err != nil {
		return nil, err
	}
	if req == nil {
		return ret.Set("result", false).Set("comment", fmt.Sprintf("Failed to modify job %s in schedule.", name)), nil
	}
	req.Set("schedule", job)
	if _, _, err := scheduleManage(ctx, c, req); err != nil {
		return nil, err
	}
	return ret.Set("comment", fmt.Sprintf("Modified job: %s in schedule.", name)), nil
}

// scheduleRunJob is schedule.run_job.
func scheduleRunJob(ctx context.Context, c *modules.Call) (any, error) {
	name := c.Args.Str("name")
	ret := scheduleRet("comment", []any{}, "result", true)
	if name == "" {
		ret.Set("comment", "Job name is required.").Set("result", false)
	}
	s, ok, err := scheduleCurrent(ctx, c, "", false)
	if err != nil {
		return nil, err
	}
	if !ok {
		return scheduleRet("comment", "Event module not available. Schedule list failed.", "result", true), nil
	}
	job := s.Map(name)
	switch {
	case job == nil:
		ret.Set("comment", fmt.Sprintf("Job %s does not exist.", name)).Set("result", false)
	case job.Has("enabled") && !payload.Truthy(schedGet(job, "enabled")) && !c.Args.Bool("force"):
		ret.Set("comment", fmt.Sprintf("Job %s is disabled.", name))
	default:
		if _, _, err := scheduleManage(ctx, c, payload.NewMap("name", name, "func", "run_job")); err != nil {
			return nil, err
		}
		ret.Set("comment", fmt.Sprintf("Scheduling Job %s on minion.", name))
	}
	return ret, nil
}

// scheduleSwitchJob is schedule.enable_job and schedule.disable_job.
func scheduleSwitchJob(ctx context.Context, c *modules.Call, enable bool) (any, error) {
	name := c.Args.Str("name")
	verb, fn, failVerb := "Disabled", "disable_job", "disable"
	test := payload.Truthy(scheduleKw(c, "test"))
	if enable {
		verb, fn, failVerb = "Enabled", "enable_job", "enable"
		test = scheduleOptsTest(c)
	}
	ret := scheduleRet("comment", []any{}, "result", true, "changes", &payload.Map{})
	if name == "" {
		ret.Set("comment", "Job name is required.").Set("result", false)
	}
	if test {
		return ret.Set("comment", fmt.Sprintf("Job: %s would be %sd in schedule.", name, failVerb)), nil
	}
	req, ok, err := scheduleJobRequest(ctx, c, name, fn, schedulePersist(c))
	if err != nil {
		return nil, err
	}
	if !ok {
		return ret.Set("comment", "Event module not available. Schedule enable job failed."), nil
	}
	if req == nil {
		return ret.Set("comment", fmt.Sprintf("Job %s does not exist.", name)).Set("result", false), nil
	}
	res, _, err := scheduleManage(ctx, c, req)
	if err != nil {
		return nil, err
	}
	if res.Bool("complete") {
		job := res.Map("schedule").Map(name)
		if job != nil && payload.Truthy(schedGet(job, "enabled")) == enable {
			ret.Set("result", true).Set("comment", fmt.Sprintf("%s Job %s in schedule.", verb, name))
			ret.Map("changes").Set(name, strings.ToLower(verb))
		} else {
			ret.Set("result", false).Set("comment", fmt.Sprintf("Failed to %s job %s in schedule.", failVerb, name))
		}
	}
	return ret, nil
}

// scheduleSave is schedule.save.
func scheduleSave(ctx context.Context, c *modules.Call) (any, error) {
	ret := scheduleRet("comment", []any{}, "result", true)
	if payload.Truthy(scheduleKw(c, "test")) {
		return ret.Set("comment", "Schedule would be saved."), nil
	}
	res, ok, err := scheduleManage(ctx, c, payload.NewMap("func", "save_schedule"))
	if err != nil {
		return nil, err
	}
	switch {
	case !ok:
		ret.Set("comment", "Event module not available. Schedule save failed.")
	case res.Bool("complete"):
		ret.Set("result", true).Set("comment", "Schedule (non-pillar items) saved.")
	default:
		ret.Set("result", false).Set("comment", "Failed to save schedule.")
	}
	return ret, nil
}

// scheduleSwitchAll is schedule.enable and schedule.disable.
func scheduleSwitchAll(ctx context.Context, c *modules.Call, enable bool) (any, error) {
	verb, word := "Disabled", "disable"
	if enable {
		verb, word = "Enabled", "enable"
	}
	ret := scheduleRet("comment", []any{}, "changes", &payload.Map{}, "result", true)
	if payload.Truthy(scheduleKw(c, "test")) {
		return ret.Set("comment", fmt.Sprintf("Schedule would be %sd.", word)), nil
	}
	res, ok, err := scheduleManage(ctx, c, payload.NewMap("func", word, "persist", schedulePersist(c)))
	if err != nil {
		return nil, err
	}
	if !ok {
		return ret.Set("comment", fmt.Sprintf("Event module not available. Schedule %s job failed.", word)), nil
	}
	if res.Bool("complete") {
		v, has := res.Map("schedule").Get("enabled")
		if has && payload.Truthy(v) == enable {
			ret.Set("result", true).Set("comment", fmt.Sprintf("%s schedule on minion.", verb))
			ret.Map("changes").Set("schedule", strings.ToLower(verb))
		} else {
			ret.Set("result", false).Set("comment", fmt.Sprintf("Failed to %s schedule on minion.", word))
		}
	}
	return ret, nil
}

// scheduleReload is schedule.reload: a pillar refresh when the pillar has
// a schedule, and the saved schedule (_schedule.conf; Salt 3006 looks for
// a schedule.conf it never writes) loaded into the scheduler.
func scheduleReload(ctx context.Context, c *modules.Call) (any, error) {
	comments := []any{}
	result := true
	if c.Env != nil && c.Env.Pillar.Has("schedule") {
		bus, ok := modules.Service[EventBus](c.Env, eventsServiceName)
		if ok && bus.Fire(ctx, "pillar_refresh", &payload.Map{}) {
			comments = append(comments, "Reloaded schedule from pillar on minion.")
		} else {
			comments = append(comments, "Failed to reload schedule from pillar on minion.")
			result = false
		}
	}
	if _, err := os.Stat(scheduleFile(c)); err == nil {
		saved, err := scheduleSaved(c)
		switch {
		case err != nil:
			comments = append(comments, fmt.Sprintf("Unable to read existing schedule file: %v", err))
			result = false
		case saved.Len() == 0:
			comments = append(comments, "Failed to reload schedule on minion.  Saved file is empty or invalid.")
			result = false
		default:
			_, ok, err := scheduleManage(ctx, c, payload.NewMap("func", "reload", "schedule", payload.NewMap("schedule", saved)))
			if err != nil {
				return nil, err
			}
			if ok {
				comments = append(comments, "Reloaded schedule on minion from schedule.conf.")
			} else {
				comments = append(comments, "Failed to reload schedule on minion from schedule.conf.")
				result = false
			}
		}
	}
	return scheduleRet("comment", comments, "result", result), nil
}

// scheduleCopy is schedule.copy and schedule.move: the job is published
// to the target with publish.publish, which needs the master's peer
// publishing; without the publish module the job stays where it is.
func scheduleCopy(ctx context.Context, c *modules.Call, move bool) (any, error) {
	name := c.Args.Str("name")
	ret := scheduleRet("comment", []any{}, "result", true)
	verb := "copied"
	if move {
		verb = "moved"
	}
	if payload.Truthy(scheduleKw(c, "test")) {
		return ret.Set("comment", fmt.Sprintf("Job: %s would be %s from schedule.", name, verb)), nil
	}
	opts, ok, err := scheduleCurrent(ctx, c, "opts", false)
	if err != nil {
		return nil, err
	}
	if !ok {
		return scheduleRet("comment", "Event module not available. Schedule list failed.", "result", true), nil
	}
	pillar, _, err := scheduleCurrent(ctx, c, "pillar", false)
	if err != nil {
		return nil, err
	}
	job, where := opts.Map(name), ""
	if job == nil {
		job, where = pillar.Map(name), "pillar"
	}
	if job == nil {
		return ret.Set("comment", fmt.Sprintf("Job %s does not exist.", name)).Set("result", false), nil
	}
	_ = where
	if c.Env == nil || c.Env.Registry == nil {
		return ret.Set("comment", "'publish.publish' is not available.").Set("result", false), nil
	}
	if _, ok := c.Env.Registry.Lookup("publish.publish"); !ok {
		return ret.Set("comment", "'publish.publish' is not available.").Set("result", false), nil
	}
	args := []any{}
	for _, it := range job.Items() {
		args = append(args, payload.KeyString(it.Key)+"="+pyfmt.Str(it.Value))
	}
	res := c.Env.Registry.Execute(ctx, modules.Binder{}, c.Env, "publish.publish", []any{c.Args.Get("target"), "schedule.add", args}, nil)
	resp, _ := res.Return.(*payload.Map)
	var minions, errs []any
	for _, it := range resp.Items() {
		minions = append(minions, it.Key)
		if !payload.Truthy(it.Value) {
			errs = append(errs, it.Key)
		}
	}
	switch {
	case resp.Len() == 0:
		return ret.Set("comment", "no servers answered the published schedule.add command"), nil
	case len(errs) > 0:
		return ret.Set("comment", "the following minions return False").Set("minions", errs), nil
	}
	if move {
		if req, _, err := scheduleJobRequest(ctx, c, name, "delete", true); err == nil && req != nil {
			if _, _, err := scheduleManage(ctx, c, req); err != nil {
				return nil, err
			}
		}
		return ret.Set("comment", fmt.Sprintf("Moved Job %s from schedule.", name)).Set("minions", minions), nil
	}
	return ret.Set("comment", fmt.Sprintf("Copied Job %s from schedule to minion(s).", name)).Set("minions", minions), nil
}

// scheduleSkip is schedule.postpone_job and schedule.skip_job.
func scheduleSkip(ctx context.Context, c *modules.Call, postpone bool) (any, error) {
	name := c.Args.Str("name")
	cur := c.Args.Str("current_time")
	format := payload.Text(scheduleKw(c, "time_fmt"))
	if format == "" {
		format = "%Y-%m-%dT%H:%M:%S"
	}
	ret := scheduleRet("comment", []any{}, "result", true)
	fn, verb, done := "skip_job", "skipped", "Added Skip Job %s in schedule."
	if postpone {
		fn, verb, done = "postpone_job", "postponed", "Postponed Job %s in schedule."
	}
	if name == "" {
		return ret.Set("comment", "Job name is required.").Set("result", false), nil
	}
	badDate := func() (any, error) {
		return ret.Set("comment", "Date string could not be parsed.").Set("result", false), nil
	}
	if _, err := pytime.Strptime(cur, format, nil); err != nil {
		return badDate()
	}
	newTime := ""
	if postpone {
		newTime = c.Args.Str("new_time")
		if _, err := pytime.Strptime(newTime, format, nil); err != nil {
			return badDate()
		}
	}
	if scheduleOptsTest(c) {
		return ret.Set("comment", fmt.Sprintf("Job: %s would be %s in schedule.", name, verb)), nil
	}
	req, ok, err := scheduleJobRequest(ctx, c, name, fn, false)
	if err != nil {
		return nil, err
	}
	if !ok {
		return ret.Set("comment", fmt.Sprintf("Event module not available. Schedule %s job failed.", strings.TrimSuffix(fn, "_job"))), nil
	}
	if req == nil {
		return ret.Set("comment", fmt.Sprintf("Job %s does not exist.", name)).Set("result", false), nil
	}
	req.Delete("persist")
	req.Set("time", cur).Set("time_fmt", format)
	if postpone {
		req.Set("new_time", newTime)
	}
	res, _, err := scheduleManage(ctx, c, req)
	if err != nil {
		return nil, err
	}
	if res.Bool("complete") {
		if job := res.Map("schedule").Map(name); job != nil && payload.Truthy(orValue(job, "enabled", false)) {
			ret.Set("result", true).Set("comment", fmt.Sprintf(done, name))
		} else {
			ret.Set("result", false).Set("comment", fmt.Sprintf("Failed to %s job %s in schedule.", strings.TrimSuffix(fn, "_job"), name))
		}
	}
	return ret, nil
}

// scheduleNextFireTime is schedule.show_next_fire_time.
func scheduleNextFireTime(ctx context.Context, c *modules.Call) (any, error) {
	ret := scheduleRet("result", true)
	name := c.Args.Str("name")
	if name == "" {
		ret.Set("comment", "Job name is required.").Set("result", false)
	}
	res, ok, err := scheduleManage(ctx, c, payload.NewMap("name", name, "func", "get_next_fire_time"))
	if err != nil {
		return nil, err
	}
	if !ok {
		return scheduleRet("comment", "Event module not available. Schedule show next fire time failed.", "result", true), nil
	}
	if v, has := res.Get("next_fire_time"); has {
		ret.Set("next_fire_time", v)
	} else {
		ret.Set("comment", "next fire time not available.")
	}
	return ret, nil
}

// scheduleJobStatus is schedule.job_status: the job's options and the
// scheduler's state, times in time_fmt.
func scheduleJobStatus(ctx context.Context, c *modules.Call) (any, error) {
	res, ok, err := scheduleManage(ctx, c, payload.NewMap("func", "job_status", "name", c.Args.Str("name"), "fire_event", true))
	if err != nil {
		return nil, err
	}
	if !ok {
		return scheduleRet("comment", "Event module not available. Schedule list failed.", "result", true), nil
	}
	data := res.Map("data")
	if data == nil {
		return &payload.Map{}, nil
	}
	format := c.Args.Str("time_fmt")
	for _, it := range data.Items() {
		k := payload.KeyString(it.Key)
		if !strings.HasPrefix(k, "_") || !strings.HasSuffix(k, "time") && k != "_last_run" && k != "_splay" {
			continue
		}
		if s, isStr := it.Value.(string); isStr {
			if t, err := pytime.Strptime(s, "%Y-%m-%dT%H:%M:%S", nil); err == nil {
				data.SetKey(it.Key, pytime.Strftime(t, format))
			}
		}
	}
	return data, nil
}

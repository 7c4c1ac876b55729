// Package schedule is the minion scheduler, Salt's salt.utils.schedule:
// jobs from the minion's "schedule" option and its pillar's "schedule" key
// that run an execution function every N seconds/minutes/hours/days, once
// at a time, at "when" times, or on a cron line, with splay, range,
// skip_during_range, skip_explicit/run_explicit, until/after, maxrunning
// and enabled, changed at run time through ManageSchedule (the
// manage_schedule requests of Salt's schedule execution module) and saved
// to <conf_dir>/<dirname(default_include)>/_schedule.conf.
//
// The package knows nothing of jobs on the wire: due runs are handed to
// Options.Run.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsalt/gsalt/internal/atomicfile"
	"github.com/gsalt/gsalt/internal/pyyaml"
	"github.com/gsalt/gsalt/wire/payload"
)

// ErrBadRequest is returned by ManageSchedule for a request Salt's minion
// would not answer (unknown func, a job that is not a dict, ...).
var ErrBadRequest = errors.New("schedule: bad request")

// Getter reads configuration options (config.Opts and *payload.Map both
// satisfy it).
type Getter interface {
	Get(key string) (any, bool)
}

// Job is one due run of a scheduled job.
type Job struct {
	// Name is the job's name (its "name" option, else its key).
	Name string
	// Fun is the execution function ("function", "func" or "fun").
	Fun string
	// Args are the job's "args"; Kwargs its "kwargs" (nil when absent).
	Args   []any
	Kwargs *payload.Map
	// Data is a copy of the job's options.
	Data *payload.Map
}

// ReturnJob tells how the job's return reaches the master: "" (Salt's
// default: sent as jid "req" so the master caches it), "nocache" (sent as
// jid "nocache"), or "no" (return_job False: not sent).
func (j Job) ReturnJob() string {
	v, ok := j.Data.Get("return_job")
	switch {
	case !ok:
		return ""
	case v == "nocache":
		return "nocache"
	case !payload.Truthy(v):
		return "no"
	}
	return ""
}

// Options configure a Manager.
type Options struct {
	// Opts are the minion's options: "schedule" (copied at New),
	// "loop_interval" (seconds, default 1), "conf_file", "conf_dir" and
	// "default_include" (where _schedule.conf is saved).
	Opts Getter
	// Pillar returns the minion's current pillar (its "schedule" and
	// "whens" keys are read); nil means no pillar.
	Pillar func() *payload.Map
	// Grains returns the minion's grains ("whens"); may be nil.
	Grains func() *payload.Map
	// Run starts one due job. It must not block for long: the minion
	// starts the job in its own goroutine.
	Run func(ctx context.Context, j Job)
	// Running counts the running jobs started for the schedule entry
	// name, for maxrunning (nil: none).
	Running func(name string) int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger is the logger (default slog.Default()).
	Logger *slog.Logger
}

// Manager holds a minion's schedule. It is safe for concurrent use.
type Manager struct {
	pillar       func() *payload.Map
	grains       func() *payload.Map
	run          func(ctx context.Context, j Job)
	running      func(name string) int
	now          func() time.Time
	log          *slog.Logger
	loopInterval time.Duration
	file         string

	mu    sync.Mutex
	opts  *payload.Map // the minion's own schedule, Salt's opts["schedule"]
	state map[string]*jobState

	wake    chan struct{}
	ctx     atomic.Pointer[context.Context] // set by Start
	looping atomic.Bool
}

// New returns a Manager for the options.
func New(o Options) *Manager {
	m := &Manager{
		pillar:       o.Pillar,
		grains:       o.Grains,
		run:          o.Run,
		running:      o.Running,
		now:          o.Now,
		log:          o.Logger,
		loopInterval: time.Second,
		opts:         &payload.Map{},
		state:        map[string]*jobState{},
		wake:         make(chan struct{}, 1),
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	m.log = m.log.With("component", "schedule")
	if o.Opts != nil {
		if v, ok := o.Opts.Get("loop_interval"); ok {
			if f, ok := number(v); ok && f > 0 {
				m.loopInterval = time.Duration(f * float64(time.Second))
			}
		}
		if v, ok := o.Opts.Get("schedule"); ok && v != nil {
			if s, ok := normalize(v).(*payload.Map); ok {
				m.opts = s
			} else {
				m.log.Error("Schedule must be of type dict.", "type", payload.TypeName(v))
			}
		}
		m.file = ConfigFile(o.Opts)
	}
	return m
}

// ConfigFile is the path of the saved schedule, _schedule.conf in
// conf_dir (else the directory of conf_file) joined with the directory
// of default_include ("minion.d", or "proxy.d/<id>" for a proxy).
func ConfigFile(opts Getter) string {
	dir := ""
	if v, ok := opts.Get("conf_dir"); ok && payload.Text(v) != "" && v != nil {
		dir = payload.Text(v)
	} else if v, ok := opts.Get("conf_file"); ok && v != nil {
		dir = filepath.Dir(payload.Text(v))
	}
	if dir == "" {
		dir = "/etc/salt"
	}
	inc := "minion.d/*.conf"
	if v, ok := opts.Get("default_include"); ok && v != nil && payload.Text(v) != "" {
		inc = payload.Text(v)
	}
	return filepath.Join(dir, filepath.Dir(inc), "_schedule.conf")
}

// File is the path the schedule is saved to.
func (m *Manager) File() string { return m.file }

// LoopInterval is how often Run evaluates the schedule.
func (m *Manager) LoopInterval() time.Duration { return m.loopInterval }

// hidden are the schedule's global settings, not jobs.
var hidden = map[string]bool{"enabled": true, "skip_function": true, "skip_during_range": true, "splay": true}

// pillarSchedule returns the pillar's schedule (nil when none), or an error
// when it is not a dict.
func (m *Manager) pillarSchedule() (*payload.Map, error) {
	if m.pillar == nil {
		return nil, nil
	}
	p := m.pillar()
	if p == nil {
		return nil, nil
	}
	v, ok := p.Get("schedule")
	if !ok || v == nil {
		return nil, nil
	}
	s, ok := v.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("%w: Schedule must be of type dict.", ErrBadRequest)
	}
	return s, nil
}

// schedule is Salt's _get_schedule: the pillar's schedule updated with the
// minion's own (a deep copy). m.mu is held.
func (m *Manager) schedule(includeOpts, includePillar bool) (*payload.Map, error) {
	out := &payload.Map{}
	if includePillar {
		p, err := m.pillarSchedule()
		if err != nil {
			return nil, err
		}
		for _, it := range p.Items() {
			out.SetKey(it.Key, normalize(it.Value))
		}
	}
	if includeOpts {
		for _, it := range m.opts.Items() {
			out.SetKey(it.Key, normalize(it.Value))
		}
	}
	return out, nil
}

// persist writes the minion's own schedule, without "_" keys, to the
// config file as {"schedule": ...}. m.mu is held.
func (m *Manager) persist() error {
	if m.file == "" {
		return nil
	}
	s := &payload.Map{}
	for _, it := range m.opts.Items() {
		job, ok := it.Value.(*payload.Map)
		if !ok {
			s.SetKey(it.Key, normalize(it.Value))
			continue
		}
		clean := &payload.Map{}
		for _, f := range job.Items() {
			if k, ok := f.Key.(string); ok && len(k) > 0 && k[0] == '_' {
				continue
			}
			clean.SetKey(f.Key, normalize(f.Value))
		}
		s.SetKey(it.Key, clean)
	}
	text, err := Dump(payload.NewMap("schedule", s))
	if err != nil {
		return fmt.Errorf("schedule: cannot write the schedule: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(m.file), 0o755); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	if err := atomicfile.WriteFile(m.file, []byte(text), 0o644, false); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	return nil
}

// Dump renders v as salt.utils.yaml.safe_dump does for plain dicts: keys
// sorted, default_flow_style=None (collections of plain scalars in flow
// style), as the scheduler saves _schedule.conf.
func Dump(v any) (string, error) {
	return pyyaml.Dump(v, pyyaml.Options{FlowLeaves: true, AllowUnicode: true, SortKeys: sortStringKeys, Normalize: normalize})
}

// DumpBlock is safe_dump(v, default_flow_style=False): keys sorted, block
// style, as schedule.list prints the schedule.
func DumpBlock(v any) (string, error) {
	return pyyaml.Dump(v, pyyaml.Options{AllowUnicode: true, SortKeys: sortStringKeys, Normalize: normalize})
}

// DumpOrdered is Dump for OrderedDicts: every mapping keeps its order
// (sort the plain dicts first with Sorted).
func DumpOrdered(v any) (string, error) {
	return pyyaml.Dump(v, pyyaml.Options{FlowLeaves: true, AllowUnicode: true, Normalize: normalize})
}

// Sorted returns a deep copy of v with every mapping's keys sorted.
func Sorted(v any) any {
	switch x := v.(type) {
	case *payload.Map:
		items, _ := sortStringKeys(x)
		out := &payload.Map{}
		for _, it := range items {
			out.SetKey(it.Key, Sorted(it.Value))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = Sorted(x[i])
		}
		return out
	}
	return v
}

// sortStringKeys orders a mapping's items by their keys' text.
func sortStringKeys(m *payload.Map) ([]payload.Item, error) {
	items := append([]payload.Item(nil), m.Items()...)
	sort.SliceStable(items, func(i, j int) bool {
		return payload.KeyString(items[i].Key) < payload.KeyString(items[j].Key)
	})
	return items, nil
}

// normalize deep-copies a value into the payload data model.
func normalize(v any) any {
	switch x := v.(type) {
	case *payload.Map:
		out := &payload.Map{}
		for _, it := range x.Items() {
			out.SetKey(it.Key, normalize(it.Value))
		}
		return out
	case map[string]any:
		return normalize(payload.FromGo(x))
	case map[any]any:
		conv := make(map[string]any, len(x))
		for k, val := range x {
			conv[payload.KeyString(k)] = val
		}
		return normalize(conv)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = normalize(x[i])
		}
		return out
	case int:
		return int64(x)
	}
	return v
}

// number reads an int or float option value.
func number(v any) (float64, bool) {
	if f, ok := v.(float64); ok {
		return f, true
	}
	n, ok := payload.AsInt(v)
	return float64(n), ok
}

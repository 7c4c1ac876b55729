package pillar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// Sentinel errors callers branch on. A Compile error means Salt's pillar
// compiler would have raised (the master then answers with no pillar);
// everything Salt reports inside the pillar goes to its "_errors" list.
var (
	// ErrMatcher: a top file names a matcher Salt does not have.
	ErrMatcher = errors.New("pillar: unknown top file matcher")
	// ErrTop: a top file does not render to a dictionary.
	ErrTop = errors.New("pillar: top file is not a dictionary")
	// ErrInclude: an include declaration entry is neither a name nor a
	// {name: {key, defaults}} mapping.
	ErrInclude = errors.New("pillar: malformed include entry")
	// ErrMerge: pillar data that is not a dictionary was merged.
	ErrMerge = errors.New("pillar: cannot merge non-dictionary data")
	// ErrTooLarge: a pillar file exceeds the size limit.
	ErrTooLarge = errors.New("pillar: file too large")
	// ErrRequest: the request lacks a minion id.
	ErrRequest = errors.New("pillar: bad request")
)

// maxIncludeDepth bounds nested includes (Salt recurses until Python's
// recursion limit).
const maxIncludeDepth = 200

// Options tune a Compiler beyond the configuration.
type Options struct {
	// Renderers renders pillar and top files; nil means render.Default().
	Renderers *render.Registry
	// Matcher evaluates top targets; nil means a new target.Matcher.
	Matcher *target.Matcher
	// Caller, when set, gives templates salt['mod.fun'](...) for a minion
	// (Salt runs execution modules on the master with the minion's id and
	// grains); nil makes such calls template errors.
	Caller func(id string, grains *payload.Map) render.Caller
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock of the pillar cache; nil means time.Now.
	Now func() time.Time
	// Ext holds the ext_pillar modules; nil means DefaultExt().
	Ext *ExtRegistry
}

// Compiler compiles pillars from pillar_roots. It is safe for concurrent
// use; each Compile reads the files afresh (or the pillar cache).
type Compiler struct {
	cfg     Config
	rend    *render.Registry
	matcher *target.Matcher
	caller  func(string, *payload.Map) render.Caller
	log     *slog.Logger
	now     func() time.Time
	cache   *pillarCache
	ext     *ExtRegistry
}

// New returns a Compiler for cfg.
func New(cfg Config, opts Options) *Compiler {
	c := &Compiler{cfg: cfg, rend: opts.Renderers, matcher: opts.Matcher, caller: opts.Caller, log: opts.Logger, now: opts.Now, ext: opts.Ext}
	if c.ext == nil {
		c.ext = DefaultExt()
	}
	if c.rend == nil {
		c.rend = render.Default()
	}
	if c.matcher == nil {
		c.matcher = target.New(target.Options{})
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.cfg.MergeStrategy == "" {
		c.cfg.MergeStrategy = StrategySmart
	}
	if c.cfg.Renderer == "" {
		c.cfg.Renderer = render.DefaultPipeline
	}
	if c.cfg.DecryptDelimiter == "" {
		c.cfg.DecryptDelimiter = ":"
	}
	if cfg.Cache {
		c.cache = newPillarCache(cfg, c.log, c.now)
	}
	return c
}

// Config returns the compiler's configuration.
func (c *Compiler) Config() Config { return c.cfg }

// Request is one pillar compilation, Salt's Pillar(opts, grains,
// minion_id, saltenv, pillar_override=..., pillarenv=...).
type Request struct {
	// ID is the minion id.
	ID string
	// Grains are the minion's grains (nil for none).
	Grains *payload.Map
	// Saltenv and Pillarenv are the requested environments, "" for
	// None (then the master's options apply).
	Saltenv, Pillarenv string
	// Override is pillar_override, merged first and last.
	Override *payload.Map
	// CleanCache clears the minion's pillar cache before compiling (the
	// clean_cache of saltutil.refresh_pillar); without pillar_cache it
	// does nothing.
	CleanCache bool
	// NoCache compiles without the pillar cache (Salt's runners use the
	// Pillar class directly).
	NoCache bool
	// Ext is the on-demand ext_pillar of pillar.ext (Salt's Pillar ext
	// argument, e.g. {"libvirt": "_"}): appended to ext_pillar when every
	// module it names is in on_demand_ext_pillar, ignored (logged)
	// otherwise. Nil for none.
	Ext any
	// Initial is opts["pillar"] of the compiling process: a masterless
	// minion's current pillar. With ssh_merge_pillar (Salt's default) the
	// compiled pillar is merged over it, so its keys stay (in their order)
	// under the fresh values, as in Salt's compile_pillar. Nil on a
	// master.
	Initial *payload.Map
}

// run is the state of one compilation (Salt's Pillar instance).
type run struct {
	c          *Compiler
	log        *slog.Logger
	id         string
	grains     *payload.Map
	saltenvArg string // the saltenv argument ("" for None)
	saltenv    string // opts["saltenv"]
	pillarenv  string // opts["pillarenv"]
	override   *payload.Map
	initial    *payload.Map
	roots      *roots
	avail      map[string][]string
	ignored    map[string][]string
	opts       *payload.Map
	tplPillar  *payload.Map // what templates see as pillar
	// matchPillar is opts["pillar"] for pillar matchers (nil: empty).
	matchPillar *payload.Map
	caller      render.Caller
	files       fileSource
	onDemand    any
	// marks are the aggregates of the data rendered so far (yamlex).
	marks *render.AggregateMarks
}

func (c *Compiler) newRun(req Request) *run {
	r := &run{c: c, log: c.log, id: req.ID, grains: req.Grains, saltenvArg: req.Saltenv,
		ignored: map[string][]string{}, override: req.Override, initial: req.Initial, onDemand: req.Ext,
		marks: render.NewAggregateMarks()}
	if r.grains == nil {
		r.grains = payload.NewMap()
	}
	if r.override == nil {
		r.override = payload.NewMap()
	}
	r.pillarenv = req.Pillarenv
	if r.pillarenv == "" {
		if c.cfg.PillarenvFromSaltenv {
			r.pillarenv = req.Saltenv
		} else {
			r.pillarenv = c.cfg.Pillarenv
		}
	}
	r.saltenv = req.Saltenv
	if r.saltenv == "" {
		r.saltenv = c.cfg.Saltenv
	}
	env := r.pillarenv
	if env == "" {
		env = r.saltenv
	}
	if env == "" {
		env = "base"
	}
	r.roots = newRoots(&c.cfg, env)
	r.files = fileSource{r.roots}
	r.avail = map[string][]string{}
	for _, e := range r.roots.order {
		r.avail[e] = r.roots.listStates(e)
	}
	r.opts = c.templateOpts(r)
	if c.caller != nil {
		r.caller = c.caller(req.ID, r.grains)
	}
	return r
}

// templateOpts is __gen_opts' view of the options: the master's, with the
// minion's id, grains and the environments.
func (c *Compiler) templateOpts(r *run) *payload.Map {
	o := payload.NewMap()
	if c.cfg.Opts != nil {
		o = c.cfg.Opts.Clone()
	}
	o.Set("file_client", "local")
	o.Set("grains", r.grains)
	o.Set("saltenv", noneIfEmpty(r.saltenv))
	o.Set("pillarenv", noneIfEmpty(r.pillarenv))
	o.Set("id", r.id)
	o.Set("minion_id", r.id)
	pr := payload.NewMap()
	for _, e := range r.roots.order {
		dirs := make([]any, 0, len(r.roots.dirs[e]))
		for _, d := range r.roots.dirs[e] {
			dirs = append(dirs, d)
		}
		pr.Set(e, dirs)
	}
	o.Set("pillar_roots", pr)
	return o
}

func noneIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Compile compiles the pillar of req.ID: Salt's compile_pillar, through
// the pillar cache when pillar_cache is on. The result is a fresh map the
// caller may keep.
func (c *Compiler) Compile(ctx context.Context, req Request) (*payload.Map, error) {
	if req.ID == "" {
		return nil, fmt.Errorf("%w: no minion id", ErrRequest)
	}
	if c.cache != nil && !req.NoCache && req.Ext == nil {
		return c.cache.compile(ctx, req, c.compile)
	}
	return c.compile(ctx, req)
}

func (c *Compiler) compile(ctx context.Context, req Request) (*payload.Map, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := c.newRun(req)
	top, topErrs, err := r.getTop(ctx)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // renders failed because of it; the result is not Salt's
	}
	var pillar *payload.Map
	var errs []string
	if c.cfg.ExtPillarFirst {
		base, eerrs, err := r.extPillar(ctx, r.override.Clone())
		if err != nil {
			return nil, err
		}
		r.tplPillar, r.matchPillar = base, base
		matches, err := r.topMatches(top)
		if err != nil {
			return nil, err
		}
		rendered, rerrs, err := r.renderPillar(ctx, matches, eerrs)
		if err != nil {
			return nil, err
		}
		if pillar, err = r.merge(base, rendered); err != nil {
			return nil, err
		}
		errs = rerrs
	} else {
		matches, err := r.topMatches(top)
		if err != nil {
			return nil, err
		}
		if pillar, errs, err = r.renderPillar(ctx, matches, nil); err != nil {
			return nil, err
		}
		if pillar, errs, err = r.extPillarWith(ctx, pillar, errs); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	errs = append(errs, topErrs...)
	if c.cfg.PillarOpts {
		m := r.opts.Clone()
		m.Delete("grains")
		m.Set("saltversion", saltVersion)
		pillar.Set("master", m)
	}
	if r.initial != nil && c.cfg.SSHMergePillar {
		if pillar, err = r.merge(payload.DeepClone(r.initial).(*payload.Map), pillar); err != nil {
			return nil, err
		}
	}
	if len(errs) > 0 {
		l := make([]any, len(errs))
		for i, e := range errs {
			r.log.Error("Pillar render error: "+e, "id", r.id)
			l[i] = e
		}
		pillar.Set("_errors", l)
	}
	if r.override.Len() > 0 {
		if pillar, err = r.merge(pillar, r.override); err != nil {
			return nil, err
		}
	}
	if derrs := r.decryptPillar(pillar); len(derrs) > 0 {
		cur, _ := pillar.Get("_errors")
		l, _ := cur.([]any)
		for _, e := range derrs {
			l = append(l, e)
		}
		pillar.Set("_errors", l)
	}
	return pillar, nil
}

// saltVersion is reported as saltversion with pillar_opts.
const saltVersion = "3006.0"

// merge is dictupdate.merge with the configured strategy.
func (r *run) merge(a, b *payload.Map) (*payload.Map, error) {
	out, err := mergeAny(a, b, r.c.cfg.MergeStrategy, r.c.cfg.Renderer, r.c.cfg.MergeLists, r.log, r.marks)
	if err != nil {
		return nil, err
	}
	m, ok := out.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("%w: merge gave %s", ErrMerge, payload.TypeName(out))
	}
	return m, nil
}

// Top returns the merged pillar top for req (Salt's Pillar.get_top, as
// the pillar.show_top runner shows it) and the top errors.
func (c *Compiler) Top(ctx context.Context, req Request) (*payload.Map, []string, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	r := c.newRun(req)
	return r.getTop(ctx)
}

// renderFile is compile_template: empty or blank files give {}, the
// pipeline is the shebang's or the configured renderer, minus renderers
// the black/white lists disallow.
func (r *run) renderFile(ctx context.Context, file, source, env, sls string, defaults *payload.Map) (any, error) {
	src, err := readFile(file)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(src)) == 0 {
		return payload.NewMap(), nil
	}
	pipeline := r.c.cfg.Renderer
	if shebang, rest := render.SplitShebang(src); shebang != "" {
		pipeline, src = shebang, rest
	}
	pipeline = r.c.allowedPipeline(pipeline)
	if pipeline == "" {
		return payload.NewMap(), nil
	}
	rc := &render.Context{
		Grains: r.grains, Pillar: r.tplPillar, Opts: r.opts, Saltenv: env, SLS: sls,
		Source: source, Path: file, Vars: defaults, Salt: r.caller, Files: r.files, Log: r.log,
		Aggregates: r.marks,
	}
	if rc.Pillar == nil {
		rc.Pillar = payload.NewMap()
	}
	return r.c.rend.Render(ctx, src, pipeline, rc)
}

// allowedPipeline drops renderers disallowed by renderer_blacklist and
// renderer_whitelist, as Salt's check_render_pipe_str does.
func (c *Compiler) allowedPipeline(p string) string {
	if len(c.cfg.RendererBlacklist) == 0 && len(c.cfg.RendererWhitelist) == 0 {
		return p
	}
	var keep []string
	for _, part := range strings.Split(p, "|") {
		name, _, _ := strings.Cut(strings.TrimSpace(part)+" ", " ")
		if (len(c.cfg.RendererWhitelist) > 0 && !contains(c.cfg.RendererWhitelist, name)) || contains(c.cfg.RendererBlacklist, name) {
			c.log.Warn(fmt.Sprintf("The renderer \"%s\" is disallowed by configuration and will be skipped.", name))
			continue
		}
		keep = append(keep, strings.TrimSpace(part))
	}
	return strings.Join(keep, "|")
}

// errText is the text of a render error as Salt puts it in _errors.
func errText(err error) string {
	return err.Error()
}

// pyStr is Python's str() of a value.
func pyStr(v any) string { return pyfmt.Str(v) }

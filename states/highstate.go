package states

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// FileLister is the optional part of the minion's file client that lists
// a file-server environment and the environments ("_file_list",
// "_file_envs"); modules/builtin.SaltFileClient has it. Without it, SLS
// and top-file globs match nothing and only base and the file_roots
// environments exist.
type FileLister interface {
	FileList(ctx context.Context, saltenv, prefix string) (any, error)
	Envs(ctx context.Context) (any, error)
}

// errTopRender is Salt's SaltRenderError from the top-file merge.
var errTopRender = errors.New("Unable to render top file. No targets found.")

// maxSLSSize bounds a rendered SLS or top file read from the cache.
const maxSLSSize = 64 << 20

// envMatches is the ordered {saltenv: [sls, ...]} of top_matches (or the
// {saltenv: mods} of state.sls).
type envMatches struct {
	envs []string
	sls  map[string][]any
}

func (m *envMatches) has(env string) bool { _, ok := m.sls[env]; return ok }

func (m *envMatches) add(env string, sls ...any) {
	if m.sls == nil {
		m.sls = map[string][]any{}
	}
	if _, ok := m.sls[env]; !ok {
		m.envs = append(m.envs, env)
		m.sls[env] = []any{}
	}
	m.sls[env] = append(m.sls[env], sls...)
}

// payload returns the matches as an ordered dict (state.show_top).
func (m *envMatches) payload() *payload.Map {
	out := &payload.Map{}
	for _, e := range m.envs {
		out.Set(e, append([]any{}, m.sls[e]...))
	}
	return out
}

// highState is Salt's HighState: top files, SLS rendering and includes on
// top of a stateRun.
type highState struct {
	*stateRun
	lister   FileLister
	iorder   int64
	avail    map[string][]string
	envs     []string
	building *payload.Map
	// saltenv is opts["saltenv"] ("" for None).
	saltenv string
	// rendered remembers which SLS files came from an init.sls.
	initSLS map[string]bool
	// localFile is the minion-side file state.template renders in place of
	// a file-server SLS (render_state's local=True).
	localFile string
}

// newHighState wraps a run.
func newHighState(s *stateRun) *highState {
	h := &highState{stateRun: s, iorder: 10000, avail: map[string][]string{}, building: &payload.Map{}, initSLS: map[string]bool{}}
	if l, ok := s.files.(FileLister); ok {
		h.lister = l
	}
	h.saltenv = s.opts.str("saltenv")
	return h
}

// getEnvs is BaseHighState._get_envs.
func (h *highState) getEnvs() []string {
	if h.envs != nil {
		return h.envs
	}
	envs := []string{"base"}
	if fr, ok := asMap(goToPayload(h.optGet("file_roots"))); ok {
		for _, it := range fr.Items() {
			if e := keyText(it.Key); !containsStr(envs, e) {
				envs = append(envs, e)
			}
		}
	}
	var order []string
	for _, e := range listOf(goToPayload(h.optGet("env_order"))) {
		if s := pyStr(e); !containsStr(order, s) {
			order = append(order, s)
		}
	}
	var client []string
	if h.lister != nil {
		if v, err := h.lister.Envs(h.ctx); err == nil {
			for _, e := range listOf(v) {
				client = append(client, pyStr(e))
			}
		} else {
			h.log.Warn("cannot list file server environments", "err", err)
		}
	}
	switch {
	case len(order) > 0 && len(client) > 0:
		var out []string
		for _, e := range order {
			if containsStr(client, e) {
				out = append(out, e)
			}
		}
		h.envs = out
	case len(order) > 0:
		h.envs = order
	default:
		for _, e := range client {
			if !containsStr(envs, e) {
				envs = append(envs, e)
			}
		}
		h.envs = envs
	}
	if h.envs == nil {
		h.envs = []string{}
	}
	return h.envs
}

// inAvail is "saltenv in self.avail".
func (h *highState) inAvail(env string) bool {
	return env == "base" || containsStr(h.getEnvs(), env)
}

// availStates is self.avail[saltenv]: the SLS names of an environment.
func (h *highState) availStates(env string) []string {
	if l, ok := h.avail[env]; ok {
		return l
	}
	set := map[string]bool{}
	if h.lister != nil {
		v, err := h.lister.FileList(h.ctx, env, "")
		if err != nil {
			h.log.Warn("cannot list file server files", "saltenv", env, "err", err)
		}
		for _, p := range listOf(v) {
			path := pyStr(p)
			switch {
			case strings.HasSuffix(path, "/init.sls"):
				set[strings.ReplaceAll(path[:len(path)-len("/init.sls")], "/", ".")] = true
			case strings.HasSuffix(path, ".sls"):
				set[strings.ReplaceAll(path[:len(path)-len(".sls")], "/", ".")] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	h.avail[env] = out
	return out
}

// fnmatchFilter is fnmatch.filter.
func fnmatchFilter(names []string, pat string) []string {
	var out []string
	for _, n := range names {
		if fnmatch(n, pat) {
			out = append(out, n)
		}
	}
	return out
}

// cacheFile fetches a salt:// URL; "" when it does not exist.
func (h *highState) cacheFile(url, saltenv string) string {
	if h.files == nil {
		return ""
	}
	p, err := h.files.CacheFile(h.ctx, url, saltenv)
	if err != nil {
		h.log.Debug("cannot cache file", "url", url, "saltenv", saltenv, "err", err)
		return ""
	}
	return p
}

// getState is Client.get_state: salt://a/b.sls, else salt://a/b/init.sls.
func (h *highState) getState(sls, saltenv string) (source, dest string) {
	if h.localFile != "" && sls == h.localFile {
		return sls, sls
	}
	p := strings.ReplaceAll(sls, ".", "/")
	for _, u := range []string{"salt://" + p + ".sls", "salt://" + p + "/init.sls"} {
		if d := h.cacheFile(u, saltenv); d != "" {
			return u, d
		}
	}
	return "", ""
}

// compileTemplate is salt.template.compile_template for a cached file:
// an empty or blank file is {}.
func (h *highState) compileTemplate(path, saltenv, sls, source string) (any, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return &payload.Map{}, nil
	}
	if fi.Size() > maxSLSSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxSLSSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return &payload.Map{}, nil
	}
	if strings.TrimSpace(string(data)) == "" {
		return &payload.Map{}, nil
	}
	rc := &render.Context{
		Grains: h.env.Grains, Pillar: h.env.Pillar, Opts: h.opts.payloadMap(),
		Saltenv: saltenv, SLS: sls, Source: source, Salt: ExecCaller{Env: h.env}, Files: h.files, Log: h.log,
	}
	rd := h.rd
	if rd == nil {
		rd = render.Default()
	}
	return rd.Render(h.ctx, data, h.opts.strDefault("renderer", render.DefaultPipeline), rc)
}

// RenderErrorText is a render error's text as Salt's SaltRenderError
// prints it: without the render package's sentinel prefixes.
func RenderErrorText(err error) string { return renderErrText(err) }

// renderErrText strips the render package's sentinel prefixes.
func renderErrText(err error) string { return render.ErrorText(err) }

// relInclude matches a relative include ("..x").
var relInclude = regexp.MustCompile(`^(\.+)(.*)$`)

// renderState is BaseHighState.render_state: render one SLS and, through
// its includes, the SLS files it pulls in.
func (h *highState) renderState(sls, saltenv string, mods map[string]bool, matches *envMatches) (any, []string) {
	var errs []string
	source, dest := h.getState(sls, saltenv)
	var state any
	if dest == "" {
		errs = append(errs, fmt.Sprintf("Specified SLS %s in saltenv %s is not available on the salt master or through a configured fileserver", sls, saltenv))
	} else {
		st, err := h.compileTemplate(dest, saltenv, sls, source)
		if err != nil {
			errs = append(errs, fmt.Sprintf("Rendering SLS '%s:%s' failed: %s", saltenv, sls, renderErrText(err)))
		} else {
			state = st
		}
		mods[saltenv+":"+sls] = true
	}
	if !payload.Truthy(state) {
		return &payload.Map{}, errs
	}
	sm, ok := asMap(state)
	if !ok {
		return state, append(errs, fmt.Sprintf("SLS %s does not render to a dictionary", sls))
	}
	var include []any
	if v, ok := sm.Get("include"); ok {
		if l, isList := v.([]any); isList {
			sm.Delete("include")
			include = l
		} else {
			errs = append(errs, fmt.Sprintf("Include Declaration in SLS %s is not formed as a list", sls))
		}
	}
	h.handleExtend(sm, sls, saltenv, &errs)
	h.handleExclude(sm, sls, &errs)
	h.handleStateDecls(sm, sls, saltenv, &errs)
	for _, inc := range include {
		envKey := saltenv
		var incSLS string
		if im, ok := asMap(inc); ok {
			if im.Len() == 0 {
				continue
			}
			last := im.Items()[im.Len()-1]
			envKey, incSLS = keyText(last.Key), pyStr(last.Value)
		} else {
			incSLS = pyStr(inc)
		}
		if !h.inAvail(envKey) && !h.inAvail("__env__") {
			errs = append(errs, fmt.Sprintf("Nonexistent saltenv '%s' found in include of '%s' within SLS '%s:%s'", envKey, incSLS, saltenv, sls))
			continue
		}
		if strings.HasPrefix(incSLS, ".") {
			m := relInclude.FindStringSubmatch(incSLS)
			levels, rest := len(m[1]), m[2]
			comps := strings.Split(sls, ".")
			if strings.HasSuffix(source, "/init.sls") {
				comps = append(comps, "init")
			}
			if levels > len(comps) {
				errs = append(errs, fmt.Sprintf("Attempted relative include of '%s' within SLS '%s:%s' goes beyond top level package ", incSLS, saltenv, sls))
				continue
			}
			incSLS = strings.Join(append(append([]string(nil), comps[:len(comps)-levels]...), rest), ".")
		}
		var resolved []string
		if envKey != "_xenv" {
			if matches.has(envKey) || len(fnmatchFilter(h.availStates(envKey), incSLS)) > 0 {
				resolved = []string{envKey}
			}
		} else {
			for _, e := range matches.envs {
				if len(fnmatchFilter(h.availStates(e), incSLS)) > 0 {
					resolved = append(resolved, e)
				}
			}
		}
		if len(resolved) == 1 || containsStr(resolved, saltenv) {
			targets := fnmatchFilter(h.availStates(saltenv), incSLS)
			if len(targets) == 0 {
				targets = []string{incSLS}
			}
			for _, t := range targets {
				rEnv := saltenv
				if len(resolved) == 1 {
					rEnv = resolved[0]
				}
				if mods[rEnv+":"+t] {
					continue
				}
				nstate, nerrs := h.renderState(t, rEnv, mods, matches)
				if nm, ok := asMap(nstate); ok && nm.Len() > 0 {
					mergeIncludedStates(sm, nm, &errs)
				} else if payload.Truthy(nstate) {
					errs = append(errs, fmt.Sprintf("Error when rendering state with contents: %s", pyRepr(nstate)))
				}
				errs = append(errs, nerrs...)
			}
			continue
		}
		if len(resolved) == 0 {
			where := envKey
			if envKey == "_xenv" {
				where = strings.Join(matches.envs, ", ")
			}
			errs = append(errs, fmt.Sprintf("Unknown include: Specified SLS %s: %s is not available on the salt master in saltenv(s): %s ", envKey, incSLS, where))
		} else {
			errs = append(errs, fmt.Sprintf("Ambiguous include: Specified SLS %s: %s is available on the salt master in multiple available saltenvs: %s", envKey, incSLS, strings.Join(resolved, ", ")))
		}
	}
	h.handleIorder(sm)
	return sm, errs
}

// handleIorder is _handle_iorder: with state_auto_order, every state
// declaration without an order gets the next definition-order number.
func (h *highState) handleIorder(state *payload.Map) {
	if !h.opts.boolDefault("state_auto_order", true) {
		return
	}
	for _, it := range state.Items() {
		body, ok := asMap(it.Value)
		if !ok {
			continue
		}
		for _, sd := range body.Items() {
			sdec, isStr := sd.Key.(string)
			if !isStr || strings.HasPrefix(sdec, "_") {
				continue
			}
			run, ok := sd.Value.([]any)
			if !ok {
				continue
			}
			found := false
			for _, a := range run {
				if am, ok := asMap(a); ok && am.Len() > 0 && firstKey(am) == "order" {
					found = true
				}
			}
			if !found {
				body.Set(sdec, append(run, payload.NewMap("order", h.iorder)))
				h.iorder++
			}
		}
	}
}

// handleStateDecls is _handle_state_decls: expand "id: mod.fun" and
// "mod.fun:" keys, and add __sls__ and __env__.
func (h *highState) handleStateDecls(state *payload.Map, sls, saltenv string, errs *[]string) {
	for _, it := range state.Items() {
		name := it.Key
		body, ok := asMap(it.Value)
		if !ok {
			if name == "__extend__" || name == "__exclude__" {
				continue
			}
			if s, isStr := it.Value.(string); isStr && strings.Contains(s, ".") {
				comps := strings.Split(s, ".")
				state.SetKey(name, payload.NewMap("__sls__", sls, "__env__", saltenv, comps[0], []any{comps[1]}))
				continue
			}
			*errs = append(*errs, fmt.Sprintf("ID %s in SLS %s is not a dictionary", pyStr(name), sls))
			continue
		}
		skeys := map[string]bool{}
		keys := make([]any, 0, body.Len())
		for _, k := range body.Items() {
			keys = append(keys, k.Key)
		}
		for _, k := range keys {
			key := keyText(k)
			if strings.HasPrefix(key, "_") {
				continue
			}
			v, _ := body.GetKey(k)
			if _, isList := v.([]any); !isList {
				continue
			}
			if strings.Contains(key, ".") {
				comps := strings.Split(key, ".")
				if skeys[comps[0]] {
					*errs = append(*errs, fmt.Sprintf("ID '%s' in SLS '%s' contains multiple state declarations of the same type", pyStr(name), sls))
					continue
				}
				body.Delete(key)
				body.Set(comps[0], append(append([]any(nil), v.([]any)...), comps[1]))
				skeys[comps[0]] = true
				continue
			}
			skeys[key] = true
		}
		if !body.Has("__sls__") {
			body.Set("__sls__", sls)
		}
		if !body.Has("__env__") {
			body.Set("__env__", saltenv)
		}
	}
}

// handleExtend is _handle_extend: move "extend" into "__extend__".
func (h *highState) handleExtend(state *payload.Map, sls, saltenv string, errs *[]string) {
	v, ok := state.Delete("extend")
	if !ok {
		return
	}
	ext, isMap := asMap(v)
	if !isMap {
		*errs = append(*errs, fmt.Sprintf("Extension value in SLS '%s' is not a dictionary", sls))
		return
	}
	for _, it := range ext.Items() {
		body, ok := asMap(it.Value)
		if !ok {
			*errs = append(*errs, fmt.Sprintf("Extension name '%s' in SLS '%s' is not a dictionary", pyStr(it.Key), sls))
			continue
		}
		if !body.Has("__sls__") {
			body.Set("__sls__", sls)
		}
		if !body.Has("__env__") {
			body.Set("__env__", saltenv)
		}
		keys := make([]any, 0, body.Len())
		for _, k := range body.Items() {
			keys = append(keys, k.Key)
		}
		for _, k := range keys {
			key := keyText(k)
			if strings.HasPrefix(key, "_") {
				continue
			}
			val, _ := body.GetKey(k)
			l, isList := val.([]any)
			if !isList || !strings.Contains(key, ".") {
				continue
			}
			comps := strings.Split(key, ".")
			body.Delete(key)
			body.Set(comps[0], append(append([]any(nil), l...), comps[1]))
		}
	}
	cur := listOf(mapGetStr(state, "__extend__"))
	state.Set("__extend__", append(cur, ext))
}

// handleExclude is _handle_exclude: move "exclude" into "__exclude__".
func (h *highState) handleExclude(state *payload.Map, sls string, errs *[]string) {
	v, ok := state.Delete("exclude")
	if !ok {
		return
	}
	cur := listOf(mapGetStr(state, "__exclude__"))
	switch x := v.(type) {
	case []any:
		cur = append(cur, x...)
	case string:
		*errs = append(*errs, fmt.Sprintf("Exclude Declaration in SLS %s is not formed as a list", sls))
		for _, r := range x {
			cur = append(cur, string(r))
		}
	case *payload.Map:
		*errs = append(*errs, fmt.Sprintf("Exclude Declaration in SLS %s is not formed as a list", sls))
		for _, it := range x.Items() {
			cur = append(cur, it.Key)
		}
	default:
		*errs = append(*errs, fmt.Sprintf("Exclude Declaration in SLS %s is not formed as a list", sls))
	}
	if cur == nil {
		cur = []any{}
	}
	state.Set("__exclude__", cur)
}

// mergeIncludedStates is merge_included_states: fold state into highstate,
// reporting conflicting IDs.
func mergeIncludedStates(highstate, state *payload.Map, errs *[]string) {
	for _, k := range []string{"__extend__", "__exclude__"} {
		if v, ok := state.Delete(k); ok {
			cur := listOf(mapGetStr(highstate, k))
			highstate.Set(k, append(cur, listOf(v)...))
		}
	}
	for _, it := range state.Items() {
		if old, ok := highstate.GetKey(it.Key); ok && !py.Equal(old, it.Value) {
			om, _ := asMap(old)
			nm, _ := asMap(it.Value)
			*errs = append(*errs, fmt.Sprintf("Detected conflicting IDs, SLS IDs need to be globally unique.\n    The conflicting ID is '%s' and is found in SLS '%s:%s' and SLS '%s:%s'",
				pyStr(it.Key), envSLS(om, "__env__"), envSLS(om, "__sls__"), envSLS(nm, "__env__"), envSLS(nm, "__sls__")))
		}
	}
	for _, it := range state.Items() {
		highstate.SetKey(it.Key, it.Value)
	}
}

func envSLS(m *payload.Map, key string) string {
	if m == nil {
		return "None"
	}
	return getStr(m, key)
}

// renderHighstate is BaseHighState.render_highstate.
func (h *highState) renderHighstate(matches *envMatches) (*payload.Map, []string) {
	high := h.building
	var all []string
	mods := map[string]bool{}
	var statefiles []string
	for _, env := range matches.envs {
		for _, m := range matches.sls[env] {
			match := pyStr(m)
			switch {
			case h.inAvail(env):
				statefiles = fnmatchFilter(h.availStates(env), match)
			case h.inAvail("__env__"):
				statefiles = fnmatchFilter(h.availStates("__env__"), match)
			default:
				all = append(all, fmt.Sprintf("No matching salt environment for environment '%s' found", env))
			}
			if len(statefiles) == 0 {
				statefiles = []string{match}
			}
			for _, sls := range statefiles {
				if mods[env+":"+sls] {
					continue
				}
				state, errs := h.renderState(sls, env, mods, matches)
				if sm, ok := asMap(state); ok && sm.Len() > 0 {
					mergeIncludedStates(high, sm, &errs)
				} else if payload.Truthy(state) {
					errs = append(errs, fmt.Sprintf("Error when rendering state with contents: %s", pyRepr(state)))
				}
				this := fmt.Sprintf("SLS %s in saltenv", match)
				for i, e := range errs {
					if strings.Contains(e, "is not available") && strings.Contains(e, this) {
						errs[i] = fmt.Sprintf("No matching sls found for '%s' in env '%s'", match, env)
					}
				}
				all = append(all, errs...)
			}
		}
	}
	cleanDuplicateExtends(high)
	return high, all
}

// cleanDuplicateExtends is clean_duplicate_extends.
func cleanDuplicateExtends(high *payload.Map) {
	v, ok := high.Get("__extend__")
	if !ok {
		return
	}
	var seen []payload.Item
	for _, e := range listOf(v) {
		em, ok := asMap(e)
		if !ok {
			continue
		}
		for _, it := range em.Items() {
			dup := false
			for _, s := range seen {
				if py.Equal(s.Key, it.Key) && py.Equal(s.Value, it.Value) {
					dup = true
					break
				}
			}
			if !dup {
				seen = append(seen, it)
			}
		}
	}
	out := make([]any, len(seen))
	for i, it := range seen {
		out[i] = (&payload.Map{}).SetKey(it.Key, it.Value)
	}
	high.Set("__extend__", out)
}

// stateTopURL is opts state_top as a salt:// URL.
func (h *highState) stateTopURL() string {
	st := h.opts.strDefault("state_top", "top.sls")
	switch {
	case strings.HasPrefix(st, "salt://"):
		return st
	case strings.HasPrefix(st, "/"):
		return "salt://" + st[1:]
	}
	return "salt://" + st
}

// envTops is get_tops' ordered {saltenv: [top dict, ...]}.
type envTops struct {
	envs []string
	tops map[string][]any
}

func (t *envTops) add(env string, top any) {
	if t.tops == nil {
		t.tops = map[string][]any{}
	}
	if _, ok := t.tops[env]; !ok {
		t.envs = append(t.envs, env)
	}
	t.tops[env] = append(t.tops[env], top)
}

// renderTop renders a top file; errors are Salt's SaltRenderError.
func (h *highState) renderTop(path, env, source string) (any, error) {
	v, err := h.compileTemplate(path, env, "", source)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// getTops is BaseHighState.get_tops.
func (h *highState) getTops() (*envTops, error) {
	tops := &envTops{}
	strategy := h.opts.strDefault("top_file_merging_strategy", "merge")
	if strategy == "same" && h.saltenv == "" && h.opts.strOr("default_top", "base") == "" {
		return nil, errors.New("top_file_merging_strategy set to 'same', but no default_top configuration option was set")
	}
	url := h.stateTopURL()
	if h.saltenv != "" {
		if p := h.cacheFile(url, h.saltenv); p != "" {
			t, err := h.renderTop(p, h.saltenv, url)
			if err != nil {
				return nil, err
			}
			tops.add(h.saltenv, t)
		} else {
			tops.add(h.saltenv, &payload.Map{})
		}
	} else {
		envs := h.getEnvs()
		if sts := h.opts.str("state_top_saltenv"); sts != "" {
			envs = []string{sts}
		}
		for _, env := range envs {
			if p := h.cacheFile(url, env); p != "" {
				t, err := h.renderTop(p, env, url)
				if err != nil {
					return nil, err
				}
				tops.add(env, t)
			} else {
				tops.add(env, &payload.Map{})
			}
		}
	}
	include := &envMatches{}
	for _, env := range tops.envs {
		for _, t := range tops.tops[env] {
			tm, ok := asMap(t)
			if !ok {
				continue
			}
			if inc, ok := tm.Delete("include"); ok {
				include.add(env, listOf(inc)...)
			}
		}
	}
	done := map[string]bool{}
	for _, env := range include.envs {
		for _, m := range include.sls[env] {
			for _, sls := range fnmatchFilter(h.availStates(env), pyStr(m)) {
				if done[env+":"+sls] {
					continue
				}
				src, dest := h.getState(sls, env)
				var t any = &payload.Map{}
				if dest != "" {
					var err error
					if t, err = h.renderTop(dest, env, src); err != nil {
						return nil, err
					}
				}
				tops.add(env, t)
				done[env+":"+sls] = true
			}
		}
	}
	return tops, nil
}

// topMerge is the merged top data: ordered {saltenv: {target: data}}.
type topMerge = payload.Map

// setTarget sets top[env][tgt] = data.
func setTarget(top *payload.Map, env any, tgt, data any) {
	em, ok := asMap(mapGet(top, env))
	if !ok {
		em = &payload.Map{}
		top.SetKey(env, em)
	}
	em.SetKey(tgt, data)
}

// copyTargets copies every target of ctop[env] into top; a non-dict
// section is Salt's "Unable to render top file. No targets found.".
func copyTargets(top *payload.Map, env any, targets any) error {
	if targets == nil {
		return errTopRender
	}
	tm, ok := asMap(targets)
	if !ok {
		if l, isList := targets.([]any); isList && len(l) == 0 {
			return nil
		}
		if s, isStr := targets.(string); isStr && s == "" {
			return nil
		}
		return errTopRender
	}
	for _, it := range tm.Items() {
		setTarget(top, env, it.Key, it.Value)
	}
	return nil
}

// mergeTops is BaseHighState.merge_tops.
func (h *highState) mergeTops(tops *envTops) (*topMerge, error) {
	switch s := h.opts.strDefault("top_file_merging_strategy", "merge"); s {
	case "same":
		return h.mergeTopsSame(tops)
	case "merge_all":
		return h.mergeTopsMergeAll(tops)
	case "merge":
	default:
		h.log.Warn(fmt.Sprintf("Invalid top_file_merging_strategy '%s', falling back to 'merge'", s))
	}
	return h.mergeTopsMerge(tops)
}

func (h *highState) mergeTopsMerge(tops *envTops) (*topMerge, error) {
	top := &payload.Map{}
	for _, ctop := range tops.tops["base"] {
		cm, _ := asMap(ctop)
		for _, it := range cm.Items() {
			if it.Key == "include" {
				continue
			}
			if err := copyTargets(top, it.Key, it.Value); err != nil {
				return nil, err
			}
		}
	}
	for _, cenv := range tops.envs {
		if cenv == "base" {
			continue
		}
		for _, ctop := range tops.tops[cenv] {
			cm, _ := asMap(ctop)
			for _, it := range cm.Items() {
				env := keyText(it.Key)
				if env == "include" || env != cenv || hasKey(top, it.Key) {
					continue
				}
				if err := copyTargets(top, it.Key, it.Value); err != nil {
					return nil, err
				}
			}
		}
	}
	return top, nil
}

func allEmpty(l []any) bool {
	for _, t := range l {
		if m, ok := asMap(t); !ok || m.Len() > 0 {
			return false
		}
	}
	return true
}

func (h *highState) mergeTopsSame(tops *envTops) (*topMerge, error) {
	top := &payload.Map{}
	for _, cenv := range tops.envs {
		ctops := tops.tops[cenv]
		if allEmpty(ctops) {
			def := h.opts.strOr("default_top", "base")
			fallback := tops.tops[def]
			if allEmpty(fallback) {
				h.log.Error(fmt.Sprintf("The '%s' saltenv has no top file, and the fallback saltenv specified by default_top (%s) also has no top file", cenv, def))
				continue
			}
			for _, ctop := range fallback {
				cm, _ := asMap(ctop)
				found := false
				for _, it := range cm.Items() {
					if keyText(it.Key) != cenv {
						continue
					}
					if err := copyTargets(top, it.Key, it.Value); err != nil {
						return nil, err
					}
					found = true
					break
				}
				if !found {
					h.log.Error(fmt.Sprintf("The '%s' saltenv has no top file, and no matches were found in the top file for the default_top saltenv (%s)", cenv, def))
				}
			}
			continue
		}
		for _, ctop := range ctops {
			cm, _ := asMap(ctop)
			for _, it := range cm.Items() {
				env := keyText(it.Key)
				if env == "include" || env != cenv {
					continue
				}
				if err := copyTargets(top, it.Key, it.Value); err != nil {
					return nil, err
				}
			}
		}
	}
	return top, nil
}

func (h *highState) mergeTopsMergeAll(tops *envTops) (*topMerge, error) {
	readTgt := func(v any) (any, []any) {
		var mt any
		var states []any
		for _, item := range listOf(v) {
			if _, ok := asMap(item); ok {
				mt = item
			}
			if _, ok := item.(string); ok {
				states = append(states, item)
			}
		}
		return mt, states
	}
	top := &payload.Map{}
	for _, cenv := range tops.envs {
		for _, ctop := range tops.tops[cenv] {
			cm, _ := asMap(ctop)
			for _, it := range cm.Items() {
				if it.Key == "include" {
					continue
				}
				tm, ok := asMap(it.Value)
				if !ok {
					if err := copyTargets(top, it.Key, it.Value); err != nil {
						return nil, err
					}
					continue
				}
				for _, t := range tm.Items() {
					em, _ := asMap(mapGet(top, it.Key))
					if em == nil || !hasKey(em, t.Key) {
						setTarget(top, it.Key, t.Key, t.Value)
						continue
					}
					m1, s1 := readTgt(mapGet(em, t.Key))
					m2, s2 := readTgt(t.Value)
					var merged []any
					mt := m2
					if mt == nil {
						mt = m1
					}
					if mt != nil {
						merged = append(merged, mt)
					}
					merged = append(merged, s1...)
					for _, x := range s2 {
						if !containsAny(merged, x) {
							merged = append(merged, x)
						}
					}
					em.SetKey(t.Key, merged)
				}
			}
		}
	}
	return top, nil
}

// verifyTops is BaseHighState.verify_tops.
func verifyTops(tops *topMerge) []string {
	var errs []string
	for _, it := range tops.Items() {
		env := it.Key
		if env == "include" {
			continue
		}
		if _, ok := env.(string); !ok {
			errs = append(errs, fmt.Sprintf("Environment %s in top file is not formed as a string", pyStr(env)))
		}
		if env == "" {
			errs = append(errs, "Empty saltenv statement in top file")
		}
		matches, ok := asMap(it.Value)
		if !ok {
			errs = append(errs, fmt.Sprintf("The top file matches for saltenv %s are not formatted as a dict", pyStr(env)))
			continue
		}
		for _, m := range matches.Items() {
			mods, ok := m.Value.([]any)
			if !ok {
				errs = append(errs, "Malformed topfile (state declarations not formed as a list)")
				continue
			}
			for _, mod := range mods {
				switch x := mod.(type) {
				case *payload.Map:
					for _, v := range x.Items() {
						if !payload.Truthy(v.Value) {
							errs = append(errs, fmt.Sprintf("Improperly formatted top file matcher in saltenv %s: %s file", pyStr(x), pyStr(v.Value)))
						}
					}
				case string:
					if x == "" {
						errs = append(errs, fmt.Sprintf("Environment %s contains an empty sls index", pyStr(env)))
					}
				}
			}
		}
	}
	return errs
}

// getTop is BaseHighState.get_top: a render error in get_tops gives an
// empty top; a malformed top section is errTopRender.
func (h *highState) getTop() (*topMerge, error) {
	tops, err := h.getTops()
	if err != nil {
		h.log.Error("Unable to render top file", "err", err)
		return &payload.Map{}, nil
	}
	return h.mergeTops(tops)
}

// matcherTypes maps a top file "match:" value to a target type.
var matcherTypes = map[string]string{
	"glob": target.TypeGlob, "pcre": target.TypePCRE, "list": target.TypeList,
	"grain": target.TypeGrain, "grain_pcre": target.TypeGrainPCRE, "pillar": target.TypePillar,
	"pillar_pcre": "pillar_pcre", "pillar_exact": "pillar_exact", "ipcidr": "ipcidr",
	"compound": target.TypeCompound, "nodegroup": "nodegroup", "data": "data", "range": "range",
}

// confirmTop is matchers.confirm_top: does the top target match this
// minion (compound unless a "match:" item says otherwise)?
func (h *highState) confirmTop(match any, data []any) bool {
	matcher := "compound"
	for _, item := range data {
		if im, ok := asMap(item); ok {
			if v, ok := im.Get("match"); ok {
				matcher = pyStr(v)
			}
		}
	}
	tt, ok := matcherTypes[matcher]
	if !ok {
		h.log.Error("Attempting to match with unknown matcher", "matcher", matcher)
		return false
	}
	ok, err := h.matcher.Match(match, tt, "", h.minion())
	if err != nil {
		h.log.Debug("top file target did not match", "target", pyStr(match), "matcher", matcher, "err", err)
	}
	return ok
}

// topMatches is BaseHighState.top_matches.
func (h *highState) topMatches(top *topMerge) *envMatches {
	matches := &envMatches{}
	for _, it := range top.Items() {
		env := keyText(it.Key)
		if h.saltenv != "" && env != h.saltenv {
			continue
		}
		body, ok := asMap(it.Value)
		if !ok {
			continue
		}
		var filter func(match, data any)
		filter = func(match, data any) {
			if s, ok := data.(string); ok {
				data = []any{s}
			}
			items := listOf(data)
			if !h.confirmTop(match, items) {
				return
			}
			if !matches.has(env) {
				matches.add(env)
			}
			for _, item := range items {
				if im, ok := asMap(item); ok {
					if sub, ok := im.Delete("subfilter"); ok {
						if sm, ok := asMap(sub); ok {
							for _, s := range sm.Items() {
								filter(s.Key, s.Value)
							}
						}
					}
				}
				switch x := item.(type) {
				case string:
					matches.add(env, x)
				case *payload.Map:
					if x.Len() == 0 {
						continue
					}
					last := x.Items()[x.Len()-1]
					x.Delete(keyText(last.Key))
					envKey := keyText(last.Key)
					if !h.inAvail(envKey) {
						continue
					}
					matches.add(envKey, last.Value)
				}
			}
		}
		for _, m := range body.Items() {
			filter(m.Key, m.Value)
		}
	}
	return matches
}

// whitelist is matches_whitelist.
func whitelistMatches(matches *envMatches, wl any) *envMatches {
	if !payload.Truthy(wl) {
		return matches
	}
	var list []any
	if l, ok := wl.([]any); ok {
		list = l
	} else {
		for _, s := range strings.Split(pyStr(wl), ",") {
			list = append(list, s)
		}
	}
	out := &envMatches{}
	for _, env := range matches.envs {
		for _, sls := range matches.sls[env] {
			if containsAny(list, sls) {
				out.add(env, sls)
			}
		}
	}
	return out
}

// noStatesTag is the running-dict key of "No states" returns.
const noStatesTag = "no_|-states_|-states_|-None"

// noStatesRet is call_highstate's placeholder return.
func noStatesRet(comment string) *payload.Map {
	return payload.NewMap(noStatesTag, payload.NewMap(
		"result", false, "comment", comment, "name", "No States", "changes", &payload.Map{}, "__run_num__", int64(0)))
}

// callHighstate is BaseHighState.call_highstate.
func (h *highState) callHighstate(exclude, whitelist any, force bool, orchestrationJID any) (any, error) {
	top, err := h.getTop()
	if err != nil {
		return noStatesRet("Unable to render top file: " + err.Error()), nil
	}
	errs := verifyTops(top)
	matches := h.topMatches(top)
	if len(matches.envs) == 0 {
		return noStatesRet("No Top file or master_tops data matches found. Please see master log for details."), nil
	}
	matches = whitelistMatches(matches, whitelist)
	var high *payload.Map
	if perrs, bad := pillarErrors(h.env, force); bad {
		errs = append(errs, "Pillar failed to render with the following messages:")
		errs = append(errs, perrs...)
	} else {
		var rerrs []string
		high, rerrs = h.renderHighstate(matches)
		addExclude(high, exclude)
		errs = append(errs, rerrs...)
	}
	if len(errs) > 0 {
		return errs, nil
	}
	if high.Len() == 0 {
		return noStatesRet("No states found for this minion"), nil
	}
	return h.callHigh(high, orchestrationJID)
}

// addExclude appends a state.sls/highstate exclude argument to __exclude__.
func addExclude(high *payload.Map, exclude any) {
	if !payload.Truthy(exclude) {
		return
	}
	ex := splitInput(exclude)
	cur := listOf(mapGetStr(high, "__exclude__"))
	high.Set("__exclude__", append(cur, ex...))
}

// compileHighstate is BaseHighState.compile_highstate.
func (h *highState) compileHighstate() (any, error) {
	top, err := h.getTop()
	if err != nil {
		return nil, err
	}
	errs := verifyTops(top)
	high, rerrs := h.renderHighstate(h.topMatches(top))
	errs = append(errs, rerrs...)
	if len(errs) > 0 {
		return errs, nil
	}
	return high, nil
}

// compileLowChunks is BaseHighState.compile_low_chunks.
func (h *highState) compileLowChunks() (any, error) {
	top, err := h.getTop()
	if err != nil {
		return nil, err
	}
	high, errs := h.renderHighstate(h.topMatches(top))
	return h.lowChunks(high, errs), nil
}

// lowChunks runs the compiler passes of compile_low_chunks on rendered
// high data: the chunks, or the errors as []string.
func (h *highState) lowChunks(high *payload.Map, errs []string) any {
	errs = append(errs, reconcileExtend(high, false)...)
	errs = append(errs, verifyHigh(high)...)
	errs = append(errs, requisiteIn(high, h.disabledReqs(), h.log)...)
	applyExclude(high)
	if len(errs) > 0 {
		return errs
	}
	chunks := compileHighData(high, nil)
	out := make([]any, len(chunks))
	for i, c := range chunks {
		out[i] = c
	}
	return out
}

// pillarErrors returns the pillar's _errors and whether the key is
// present ("_errors" in pillar), unless force.
func pillarErrors(env *modules.Env, force bool) ([]string, bool) {
	if force || env == nil || env.Pillar == nil {
		return nil, false
	}
	v, ok := env.Pillar.Get("_errors")
	if !ok {
		return nil, false
	}
	var out []string
	for _, e := range listOf(v) {
		out = append(out, pyStr(e))
	}
	return out, true
}

package states

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// templateFuncs are state.template and state.template_str.
func (x *execModule) templateFuncs() []modules.Function {
	spec := modules.Spec{Params: []modules.Param{{Name: "tem", Required: true}, {Name: "queue", Default: false}}, Kwargs: true}
	return []modules.Function{
		{Name: "state.template", Outputter: "highstate", Spec: spec,
			Doc: "Execute the information stored in a template file on the minion.\n\nThis function does not ask a master for a SLS file to render but\ninstead directly processes the file at the provided path on the minion.\n\nCLI Example:\n\n    salt '*' state.template '<Path to template on the minion>'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.template(ctx, c, kwargsOf(c, "tem", "queue"))
			}},
		{Name: "state.top", Outputter: "highstate",
			Spec: modules.Spec{Params: []modules.Param{{Name: "topfn", Required: true}, {Name: "test"}, {Name: "queue", Default: false}}, Kwargs: true},
			Doc:  "Execute a specific top file instead of the default. This is useful to apply configurations from a different environment (for example, dev or prod), without modifying the default top file.\n\nCLI Example:\n\n    salt '*' state.top reverse_top.sls\n    salt '*' state.top prod_top.sls exclude=sls_to_exclude",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.top(ctx, c, kwargsOf(c, "topfn", "test", "queue"))
			}},
		{Name: "state.template_str", Outputter: "highstate", Spec: spec,
			Doc: "Execute the information stored in a string from an sls template.\n\nCLI Example:\n\n    salt '*' state.template_str '<Template String>'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.templateStr(ctx, c, kwargsOf(c, "tem", "queue"))
			}},
	}
}

// template is state.template: HighState.render_state of a file on the
// minion (local=True: no file server), its __sls__ the path, then
// call_high.
func (x *execModule) template(ctx context.Context, c *modules.Call, kw *payload.Map) (any, error) {
	kw.Delete("env")
	s, conflict, err := x.prepareShow(ctx, c, kw, prepareOpts{test: true, pillar: true})
	if conflict != nil || err != nil {
		return conflict, err
	}
	tem := payload.Text(c.Args.Get("tem"))
	if !strings.HasSuffix(tem, ".sls") {
		tem += ".sls"
	}
	saltenv := ""
	if v, ok := kw.Get("saltenv"); ok && v != nil {
		saltenv = pyStr(v)
	}
	if fi, err := os.Stat(tem); err != nil || fi.IsDir() {
		c.Retcode = exitCompilerError
		return []any{fmt.Sprintf("Specified SLS %s on local filesystem cannot be found.", tem)}, nil
	}
	s.hs.localFile = tem
	state, errs := s.hs.renderState(tem, saltenv, map[string]bool{}, nil)
	if len(errs) > 0 {
		c.Retcode = exitCompilerError
		return stringsToAny(errs), nil
	}
	high, ok := asMap(state)
	if !ok {
		high = &payload.Map{}
	}
	ret, err := s.run.callHigh(high, nil)
	if err != nil {
		return nil, err
	}
	ret = normalize(ret)
	setRetcode(c, ret, high)
	return ret, nil
}

// templateStr is state.template_str: State.call_template_str, the string
// rendered with the minion's renderer, checked and padded as
// State.render_template does, then call_high.
func (x *execModule) templateStr(ctx context.Context, c *modules.Call, kw *payload.Map) (any, error) {
	if conflict := x.checkQueue(ctx, c, kw); conflict != nil {
		return conflict, nil
	}
	s, err := x.prepare(ctx, c, kw, prepareOpts{test: true, pillar: true})
	if err != nil {
		return nil, err
	}
	run := s.run
	rc := &render.Context{Opts: run.opts.payloadMap(), Saltenv: "base", Salt: ExecCaller{Env: run.env}, Files: run.files, Log: run.log}
	if run.env != nil {
		rc.Grains, rc.Pillar = run.env.Grains, run.env.Pillar
	}
	rd := x.rd
	if rd == nil {
		rd = render.Default()
	}
	v, err := rd.Render(ctx, []byte(payload.Text(c.Args.Get("tem"))), run.opts.strDefault("renderer", render.DefaultPipeline), rc)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, renderErrText(err))
	}
	if !payload.Truthy(v) {
		return v, nil
	}
	high, errs := padTemplate(v, "<template-str>")
	if len(errs) > 0 {
		c.Retcode = exitCompilerError
		return stringsToAny(errs), nil
	}
	ret, err := run.callHigh(high, nil)
	if err != nil {
		return nil, err
	}
	ret = normalize(ret)
	setRetcode(c, ret, nil)
	return ret, nil
}

// padTemplate is State.render_template: a single template may not
// include, exclude or extend; short "mod.fun" declarations are padded and
// "mod.fun: [args]" keys become "mod: [args, fun]".
func padTemplate(v any, template string) (*payload.Map, []string) {
	high, ok := asMap(v)
	if !ok {
		return nil, []string{fmt.Sprintf("Template %s does not render to a dictionary", template)}
	}
	for _, item := range []string{"include", "exclude", "extends"} {
		if high.Has(item) {
			return high, []string{fmt.Sprintf("The '%s' declaration found on '%s' is invalid when rendering single templates", item, template)}
		}
	}
	var errs []string
	for _, it := range high.Items() {
		name := keyText(it.Key)
		body, isMap := asMap(it.Value)
		if !isMap {
			if str, isStr := it.Value.(string); isStr && strings.Contains(str, ".") {
				comps := strings.Split(str, ".")
				high.SetKey(it.Key, payload.NewMap(comps[0], []any{comps[1]}))
				continue
			}
			if _, isStr := it.Value.(string); isStr {
				errs = append(errs, fmt.Sprintf("ID %s in template %s is not a dictionary", name, template))
			}
			continue
		}
		keys := append([]string(nil), body.Keys()...)
		sort.Strings(keys)
		skeys := map[string]bool{}
		for _, key := range keys {
			if strings.HasPrefix(key, "_") {
				continue
			}
			val, _ := body.Get(key)
			if val == nil {
				errs = append(errs, fmt.Sprintf("ID '%s' in template %s contains a short declaration (%s) with a trailing colon. When not passing any arguments to a state, the colon must be omitted.", name, template, key))
				continue
			}
			l, isList := val.([]any)
			if !isList {
				continue
			}
			if strings.Contains(key, ".") {
				comps := strings.Split(key, ".")
				if skeys[comps[0]] {
					errs = append(errs, fmt.Sprintf("ID '%s' in template '%s' contains multiple state declarations of the same type", name, template))
					continue
				}
				body.Delete(key)
				body.Set(comps[0], append(append([]any(nil), l...), comps[1]))
				skeys[comps[0]] = true
				continue
			}
			skeys[key] = true
		}
	}
	return high, errs
}

// top is state.top: a highstate whose top file is salt://<topfn> (and
// state_top_saltenv the saltenv argument when given).
func (x *execModule) top(ctx context.Context, c *modules.Call, kw *payload.Map) (any, error) {
	if conflict := x.checkQueue(ctx, c, kw); conflict != nil {
		return conflict, nil
	}
	if t := c.Args.Get("test"); t != nil {
		kw.Set("test", t)
	}
	s, err := x.prepare(ctx, c, kw, prepareOpts{test: true, pillar: true, jid: true})
	if err != nil {
		return nil, err
	}
	if pf := pillarFailure(c, s.run.env, kw); pf != nil {
		return pf, nil
	}
	topfn := strings.ReplaceAll(payload.Text(c.Args.Get("topfn")), "\\", "/")
	s.run.opts.Set("state_top", "salt://"+strings.TrimPrefix(topfn, "/"))
	if v, ok := kw.Get("saltenv"); ok {
		s.run.opts.Set("state_top_saltenv", v)
	}
	exclude, ok := kw.Get("exclude")
	if !ok {
		exclude = []any{}
	}
	ret, err := s.hs.callHighstate(exclude, nil, false, mapGetStr(kw, "orchestration_jid"))
	if err != nil {
		return nil, err
	}
	ret = normalize(ret)
	setRetcode(c, ret, s.hs.building)
	return ret, nil
}

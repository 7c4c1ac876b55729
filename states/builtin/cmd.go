package builtin

import (
	"context"
	"errors"
	"fmt"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"unicode"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// cmdStates is Salt's cmd state module (salt/states/cmd.py): cmd.run,
// cmd.script, cmd.wait, cmd.watch, cmd.wait_script and cmd.mod_watch. Every
// one of them has cmd.mod_watch as its watch function. cmd.call and
// cmd.wait_call take a Python callable and have no gsalt equivalent.
func cmdStates() []states.Function {
	successParams := []modules.Param{sbOpt("success_retcodes", nil), sbOpt("success_stdout", nil), sbOpt("success_stderr", nil)}
	runSpec := modules.Spec{Params: append([]modules.Param{sbReq("name"), sbOpt("cwd", nil), sbOpt("root", nil),
		sbOpt("runas", nil), sbOpt("shell", nil), sbOpt("env", nil), sbOpt("prepend_path", nil), sbOpt("stateful", false),
		sbOpt("output_loglevel", "debug"), sbOpt("hide_output", false), sbOpt("timeout", nil), sbOpt("ignore_timeout", false),
		sbOpt("use_vt", false)}, successParams...), Kwargs: true}
	waitSpec := modules.Spec{Params: append([]modules.Param{sbReq("name"), sbOpt("cwd", nil), sbOpt("root", nil),
		sbOpt("runas", nil), sbOpt("shell", nil), sbOpt("env", []any{}), sbOpt("stateful", false),
		sbOpt("output_loglevel", "debug"), sbOpt("hide_output", false), sbOpt("use_vt", false)}, successParams...), Kwargs: true}
	scriptSpec := modules.Spec{Params: append([]modules.Param{sbReq("name"), sbOpt("source", nil), sbOpt("template", nil),
		sbOpt("cwd", nil), sbOpt("runas", nil), sbOpt("password", nil), sbOpt("shell", nil), sbOpt("env", nil),
		sbOpt("stateful", false), sbOpt("timeout", nil), sbOpt("use_vt", false), sbOpt("output_loglevel", "debug"),
		sbOpt("hide_output", false), sbOpt("defaults", nil), sbOpt("context", nil)}, successParams...), Kwargs: true}
	waitScriptSpec := modules.Spec{Params: append([]modules.Param{sbReq("name"), sbOpt("source", nil), sbOpt("template", nil),
		sbOpt("cwd", nil), sbOpt("runas", nil), sbOpt("shell", nil), sbOpt("env", nil), sbOpt("stateful", false),
		sbOpt("use_vt", false), sbOpt("output_loglevel", "debug"), sbOpt("hide_output", false)}, successParams...), Kwargs: true}
	noop := func(_ context.Context, c *states.Call) (states.Ret, error) {
		return states.Ret{Name: sbName(c), Result: states.True}, nil
	}
	return []states.Function{
		{Name: "cmd.run", Spec: runSpec, Watch: cmdModWatch,
			Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
				return cmdRun(ctx, c, sbName(c), sbLowKwargs(c, runSpec))
			}},
		{Name: "cmd.script", Spec: scriptSpec, Watch: cmdModWatch,
			Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
				return cmdScriptState(ctx, c, sbName(c), sbLowKwargs(c, scriptSpec))
			}},
		{Name: "cmd.wait", Spec: waitSpec, Fn: noop, Watch: cmdModWatch},
		{Name: "cmd.watch", Spec: waitSpec, Fn: noop, Watch: cmdModWatch},
		{Name: "cmd.wait_script", Spec: waitScriptSpec, Fn: noop, Watch: cmdModWatch},
		{Name: "cmd.mod_watch", Spec: modules.Spec{Params: []modules.Param{sbReq("name")}, Kwargs: true}, Fn: cmdModWatch},
	}
}

// cmdModWatch is cmd.mod_watch: the state function named by sfun (the
// function the watching state declared) runs for real with the low chunk's
// arguments.
func cmdModWatch(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	kw := sbLowKwargs(c, sbModuleSpec("cmd"))
	sfun, ok := sbSfun(c, kw)
	if !ok {
		return states.Ret{}, errors.New("KeyError: 'sfun'")
	}
	var run func(context.Context, *states.Call, string, *payload.Map) (states.Ret, error)
	switch sfun {
	case "wait", "run", "watch":
		run = cmdRun
	case "wait_script", "script":
		run = cmdScriptState
	case "wait_call", "call":
		if v, _ := kw.Get("func"); payload.Truthy(v) {
			return states.Ret{Name: name, Comment: "cmd." + sfun + " is not supported by gsalt: it needs a Python callable"}, nil
		}
		return states.Ret{Name: name, Comment: "cmd." + sfun + " needs a named parameter func"}, nil
	default:
		return states.Ret{Name: name, Comment: "cmd." + sfun + " does not work with the watch requisite, please use cmd.wait or cmd.wait_script"}, nil
	}
	if v, _ := kw.Get("stateful"); payload.Truthy(v) {
		kw.Delete("stateful")
		ret, err := run(ctx, c, name, kw)
		if err != nil {
			return ret, err
		}
		return cmdReinterpret(ret)
	}
	return run(ctx, c, name, kw)
}

// cmdStateful reads the stateful argument: a list whose first entry holds
// test_name, or true (only the boolean counts).
func cmdStateful(v any) (stateful bool, testName string, hasTestName bool, err error) {
	list, isList := v.([]any)
	if !isList {
		return v == true, "", false, nil
	}
	if len(list) == 0 {
		return false, "", false, errors.New("IndexError: list index out of range")
	}
	if m, ok := list[0].(*payload.Map); ok {
		if tn, has := m.Get("test_name"); has {
			return true, payload.Text(tn), true, nil
		}
	}
	return true, "", false, nil
}

// cmdEnvValid is the env check: None, a list or a dict.
func cmdEnvValid(env any) bool {
	switch env.(type) {
	case nil, []any, *payload.Map:
		return true
	}
	return false
}

// cmdShell is `shell or __grains__["shell"]`; nil when neither is set.
func cmdShell(c *states.Call, shell any) any {
	if payload.Truthy(shell) {
		return shell
	}
	if c.Env != nil && c.Env.Grains != nil {
		if v, ok := c.Env.Grains.Get("shell"); ok {
			return v
		}
	}
	return nil
}

// cmdIsDir is os.path.isdir.
func cmdIsDir(p any) bool {
	st, err := os.Stat(payload.Text(p))
	return err == nil && st.IsDir()
}

// cmdRun is the body of cmd.run. kw holds the low chunk's arguments (name
// excluded); the ones cmd.run does not declare go to cmd.run_all.
func cmdRun(ctx context.Context, c *states.Call, name string, kw *payload.Map) (states.Ret, error) {
	ret := states.Ret{Name: name, Result: states.False}
	p := sbPop(kw)
	cwd, root, runas, shell := p("cwd", nil), p("root", nil), p("runas", nil), p("shell", nil)
	env, prependPath := p("env", nil), p("prepend_path", nil)
	statefulArg, loglevel, hideOutput := p("stateful", false), p("output_loglevel", "debug"), p("hide_output", false)
	timeout, ignoreTimeout, useVT := p("timeout", nil), p("ignore_timeout", false), p("use_vt", false)
	successRetcodes, successStdout, successStderr := p("success_retcodes", nil), p("success_stdout", nil), p("success_stderr", nil)

	stateful, testName, hasTestName, err := cmdStateful(statefulArg)
	if err != nil {
		return ret, err
	}
	if c.Test && hasTestName {
		name = testName
	}
	if !cmdEnvValid(env) {
		ret.Comment = "Invalidly-formatted 'env' parameter. See documentation."
		return ret, nil
	}
	cmdKwargs := kw.Clone()
	cmdKwargs.Set("cwd", cwd).Set("root", root).Set("runas", runas).Set("use_vt", useVT)
	if sh := cmdShell(c, shell); sh != nil {
		cmdKwargs.Set("shell", sh)
	}
	cmdKwargs.Set("env", env).Set("prepend_path", prependPath).Set("output_loglevel", loglevel).
		Set("hide_output", hideOutput).Set("success_retcodes", successRetcodes).
		Set("success_stdout", successStdout).Set("success_stderr", successStderr)

	if c.Test && !hasTestName {
		ret.Result = states.None
		ret.Comment = `Command "` + name + `" would have been executed`
		if stateful {
			return cmdReinterpret(ret)
		}
		return ret, nil
	}
	if payload.Truthy(cwd) && !cmdIsDir(cwd) {
		ret.Comment = `Desired working directory "` + payload.Text(cwd) + `" is not available`
		return ret, nil
	}
	fun := "cmd.run_all"
	if payload.Truthy(root) {
		fun = "cmd.run_chroot"
	}
	cmdKwargs.Set("cmd", name).Set("timeout", timeout).Set("python_shell", true)
	out, err := sbExec(ctx, c, fun, nil, cmdKwargs)
	if err != nil {
		ret.Comment = sbErrText(err)
		return ret, nil
	}
	cmdAll, _ := out.(*payload.Map)
	if cmdAll == nil {
		cmdAll = &payload.Map{}
	}
	retcode, _ := cmdAll.Get("retcode")
	ret.Changes = cmdAll
	ret.Result = states.ResultOf(!payload.Truthy(retcode))
	ret.Comment = `Command "` + name + `" run`
	if payload.Truthy(ignoreTimeout) {
		rc, _ := cmdAll.Get("retcode")
		stdout, _ := cmdAll.Get("stdout")
		if n, ok := payload.AsInt(rc); ok && n == 1 && strings.Contains(payload.Text(stdout), "Timed out after") {
			cmdAll.Set("retcode", int64(0))
			ret.Result = states.True
		}
	}
	if stateful {
		if ret, err = cmdReinterpret(ret); err != nil {
			return ret, err
		}
	}
	if c.Test && py.Equal(retcode, 0) && ret.Changes != nil && ret.Changes.Len() > 0 {
		ret.Result = states.None
	}
	return ret, nil
}

// cmdScriptState is the body of cmd.script.
func cmdScriptState(ctx context.Context, c *states.Call, name string, kw *payload.Map) (states.Ret, error) {
	p := sbPop(kw)
	source, template, cwd, runas, password := p("source", nil), p("template", nil), p("cwd", nil), p("runas", nil), p("password", nil)
	shell, env, statefulArg, timeout, useVT := p("shell", nil), p("env", nil), p("stateful", false), p("timeout", nil), p("use_vt", false)
	loglevel, hideOutput, defaults, tplContext := p("output_loglevel", "debug"), p("hide_output", false), p("defaults", nil), p("context", nil)
	successRetcodes, successStdout, successStderr := p("success_retcodes", nil), p("success_stdout", nil), p("success_stderr", nil)

	stateful, testName, hasTestName, err := cmdStateful(statefulArg)
	if err != nil {
		return states.Ret{Name: name}, err
	}
	if c.Test && hasTestName {
		name = testName
	}
	ret := states.Ret{Name: name, Result: states.False}
	if !cmdEnvValid(env) {
		ret.Comment = "Invalidly-formatted 'env' parameter. See documentation."
		return ret, nil
	}
	if _, ok := tplContext.(*payload.Map); payload.Truthy(tplContext) && !ok {
		ret.Comment = "Invalidly-formatted 'context' parameter. Must be formed as a dict."
		return ret, nil
	}
	if _, ok := defaults.(*payload.Map); payload.Truthy(defaults) && !ok {
		ret.Comment = "Invalidly-formatted 'defaults' parameter. Must be formed as a dict."
		return ret, nil
	}
	tmpctx := &payload.Map{}
	if m, ok := defaults.(*payload.Map); ok && m.Len() > 0 {
		tmpctx = m.Clone()
	}
	if m, ok := tplContext.(*payload.Map); ok {
		for _, it := range m.Items() {
			tmpctx.SetKey(it.Key, it.Value)
		}
	}
	saltenv := c.Saltenv
	if saltenv == "" {
		saltenv = "base"
	}
	cmdKwargs := kw.Clone()
	cmdKwargs.Set("runas", runas).Set("password", password)
	if sh := cmdShell(c, shell); sh != nil {
		cmdKwargs.Set("shell", sh)
	}
	cmdKwargs.Set("env", env).Set("cwd", cwd).Set("template", template).Set("timeout", timeout).
		Set("output_loglevel", loglevel).Set("hide_output", hideOutput).Set("use_vt", useVT).
		Set("context", tmpctx).Set("saltenv", saltenv).Set("success_retcodes", successRetcodes).
		Set("success_stdout", successStdout).Set("success_stderr", successStderr)
	if source == nil {
		source = name
	}
	if args, _ := cmdKwargs.Get("args"); !payload.Truthy(args) && len(strings.Fields(name)) > 1 {
		_, rest, found := strings.Cut(name, " ")
		if !found {
			return ret, errors.New("IndexError: list index out of range")
		}
		cmdKwargs.Set("args", rest)
	}
	if c.Test && !hasTestName {
		ret.Result = states.None
		ret.Comment = "Command '" + name + "' would have been executed"
		if stateful {
			return cmdReinterpret(ret)
		}
		return ret, nil
	}
	if payload.Truthy(cwd) && !cmdIsDir(cwd) {
		ret.Comment = `Desired working directory "` + payload.Text(cwd) + `" is not available`
		return ret, nil
	}
	runSource := source
	if payload.Truthy(template) {
		// gsalt's cmd.script execution function renders no templates:
		// the state renders the script and hands over the local result.
		path, ok := cmdRenderScript(ctx, c, payload.Text(source), payload.Text(template), tmpctx, saltenv)
		if !ok {
			return cmdScriptDone(c, ret, name, source, saltenv, stateful, kw,
				payload.NewMap("pid", int64(0), "retcode", int64(1), "stdout", "", "stderr", "", "cache_error", true))
		}
		defer os.Remove(path)
		runSource = path
		cmdKwargs.Set("template", nil)
	}
	cmdKwargs.Set("python_shell", true)
	out, err := sbExec(ctx, c, "cmd.script", []any{runSource}, cmdKwargs)
	if err != nil {
		ret.Comment = sbErrText(err)
		return ret, nil
	}
	return cmdScriptDone(c, ret, name, source, saltenv, stateful, kw, out)
}

// cmdScriptDone turns cmd.script's return into the state's ret.
func cmdScriptDone(c *states.Call, ret states.Ret, name string, source any, saltenv string, stateful bool, kw *payload.Map, out any) (states.Ret, error) {
	cmdAll, _ := out.(*payload.Map)
	if cmdAll == nil {
		cmdAll = &payload.Map{}
	}
	ret.Changes = cmdAll
	retcode, _ := cmdAll.Get("retcode")
	if v, _ := kw.Get("retcode"); payload.Truthy(v) {
		ret.Result = states.ResultOf(!payload.Truthy(out))
	} else {
		ret.Result = states.ResultOf(!payload.Truthy(retcode))
	}
	if v, _ := cmdAll.Get("cache_error"); payload.Truthy(v) {
		ret.Comment = fmt.Sprintf("Unable to cache script %s from saltenv '%s'", pyfmt.Str(source), saltenv)
	} else {
		ret.Comment = "Command '" + name + "' run"
	}
	if stateful {
		var err error
		if ret, err = cmdReinterpret(ret); err != nil {
			return ret, err
		}
	}
	if c.Test && py.Equal(retcode, 0) && ret.Changes != nil && ret.Changes.Len() > 0 {
		ret.Result = states.None
	}
	return ret, nil
}

// cmdRenderScript fetches source (salt://, file:// or an absolute path) and
// renders it with the template engine into a temporary file named with the
// source's extension, as cp.get_template does for cmd.script. It returns
// false, after logging why, when the script cannot be fetched or rendered.
func cmdRenderScript(ctx context.Context, c *states.Call, source, template string, vars *payload.Map, saltenv string) (string, bool) {
	log := sbLog(c)
	srcPath := source
	if i := strings.IndexByte(srcPath, '?'); i >= 0 && strings.HasPrefix(srcPath, "salt://") {
		srcPath = srcPath[:i]
	}
	var local string
	switch {
	case strings.HasPrefix(source, "file://"):
		local = strings.TrimPrefix(source, "file://")
	case !strings.Contains(source, "://"):
		local = source
	case c.Files == nil:
		log.Error("cmd.script: no file client available to fetch the script", "source", source)
		return "", false
	default:
		p, err := c.Files.CacheFile(ctx, source, saltenv)
		if err != nil || p == "" {
			log.Error("cmd.script: unable to fetch the script", "source", source, "err", err)
			return "", false
		}
		local = p
	}
	src, err := os.ReadFile(local)
	if err != nil {
		log.Error("cmd.script: unable to read the script", "source", source, "err", err)
		return "", false
	}
	if c.Render == nil {
		log.Error("cmd.script: no template engines available", "template", template)
		return "", false
	}
	rc := c.RenderContext()
	if strings.HasPrefix(source, "salt://") {
		rc.Source = srcPath
	}
	rc.Vars = vars
	text, err := c.Render.Text(ctx, template, src, rc)
	if err != nil {
		log.Error("Failed to render template with error: "+err.Error(), "source", source)
		return "", false
	}
	f, err := os.CreateTemp("", "__salt.tmp.*"+filepath.Ext(srcPath))
	if err != nil {
		log.Error("cmd.script: cannot create a temporary file", "err", err)
		return "", false
	}
	_, werr := f.WriteString(text)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		log.Error("cmd.script: cannot write the rendered script", "err", werr)
		return "", false
	}
	return f.Name(), true
}

// cmdReinterpret is cmd's stateful mode: the command's output (a JSON
// object, or a last line of name=value pairs) says whether something
// changed and what the comment is.
func cmdReinterpret(ret states.Ret) (states.Ret, error) {
	orig := ret.Changes
	if orig == nil {
		orig = &payload.Map{}
	}
	ret.Changes = &payload.Map{}
	ret.Comment = ""
	outV, _ := orig.Get("stdout")
	if !payload.Truthy(outV) {
		if errV, _ := orig.Get("stderr"); payload.Truthy(errV) {
			ret.Comment = payload.Text(errV)
		}
		return ret, nil
	}
	out := payload.Text(outV)
	isJSON := false
	idx := -1
	var data *payload.Map
	if v, err := cmdJSON(out); err == nil {
		m, ok := v.(*payload.Map)
		if !ok {
			ret.Comment = "script JSON output must be a JSON object (e.g., {})!"
			ret.Result = states.False
			return ret, nil
		}
		data, isJSON = m, true
	} else {
		runes := []rune(strings.TrimRightFunc(out, unicode.IsSpace))
		for i := len(runes) - 1; i >= 0; i-- {
			if runes[i] == '\n' {
				idx = i
				break
			}
		}
		if idx != -1 {
			out = string([]rune(out)[idx+1:])
		}
		data = &payload.Map{}
		items, err := py.ShlexSplit(out)
		for _, item := range items {
			if err != nil {
				break
			}
			parts := strings.Split(item, "=")
			if len(parts) != 2 {
				err = errors.New("ValueError")
				break
			}
			data.Set(parts[0], parts[1])
		}
		if err != nil {
			ret.Comment = "Failed parsing script output! Stdout must be JSON or a line of name=value pairs."
			ret.Result = states.False
			for _, it := range orig.Items() {
				ret.Changes.SetKey(it.Key, it.Value)
			}
			return ret, nil
		}
	}
	changedV, ok := data.Get("changed")
	if !ok {
		changedV = "no"
	}
	changed, err := cmdIsTrue(changedV)
	if err != nil {
		return ret, err
	}
	if cm, ok := data.Get("comment"); ok {
		ret.Comment = pyfmt.Str(cm)
		data.Delete("comment")
	}
	if changed {
		for _, it := range orig.Items() {
			if _, has := data.GetKey(it.Key); !has {
				data.SetKey(it.Key, it.Value)
			}
		}
		if isJSON {
			data.Set("stdout", "")
		} else {
			so, _ := data.Get("stdout")
			data.Set("stdout", sbPySliceTo(payload.Text(so), idx))
		}
		ret.Changes = data
	}
	return ret, nil
}

// cmdJSON is json.loads: one JSON document, anything else is an error.
func cmdJSON(s string) (any, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("ValueError: Expecting value")
	}
	return render.DecodeJSON([]byte(s))
}

// cmdIsTrue is cmd's _is_true.
func cmdIsTrue(v any) (bool, error) {
	s := strings.ToLower(pyfmt.Str(v))
	if payload.Truthy(v) && (s == "true" || s == "yes" || s == "1") {
		return true, nil
	}
	if s == "false" || s == "no" || s == "0" {
		return false, nil
	}
	return false, fmt.Errorf("ValueError: Failed parsing boolean value: %s", pyfmt.Str(v))
}

// ---- helpers shared by the cmd, test, event and module state modules ----

// sbReq and sbOpt build Params.
func sbReq(name string) modules.Param          { return modules.Param{Name: name, Required: true} }
func sbOpt(name string, def any) modules.Param { return modules.Param{Name: name, Default: def} }

// sbName is the state's name argument (the ID when not given).
func sbName(c *states.Call) string {
	if c.Args != nil && c.Args.Given("name") {
		return payload.Text(c.Args.Get("name"))
	}
	return c.Name
}

// sbLog is the call's logger.
func sbLog(c *states.Call) *slog.Logger {
	if c.Env != nil && c.Env.Log != nil {
		return c.Env.Log
	}
	return slog.Default()
}

// sbInternalKeyword is Salt's STATE_INTERNAL_KEYWORDS: low-chunk keys the
// state system consumes and never passes to a state function's **kwargs.
func sbInternalKeyword(k string) bool { return mbuiltin.IsStateInternalKeyword(k) }

// sbModuleSpec returns a Spec holding the parameters of every state
// function of a module this package registers, each once: a watch function
// reads whatever named arguments the low chunk gave, whichever of the
// module's Specs they were bound with.
func sbModuleSpec(state string) modules.Spec {
	var list []states.Function
	switch state {
	case "cmd":
		list = cmdStates()
	case "test":
		list = testStates()
	case "event":
		list = eventStates()
	case "module":
		list = moduleStates()
	}
	spec := modules.Spec{Kwargs: true}
	seen := map[string]bool{}
	for _, f := range list {
		for _, p := range f.Spec.Params {
			if !seen[p.Name] {
				seen[p.Name] = true
				p.Required = false
				spec.Params = append(spec.Params, p)
			}
		}
	}
	return spec
}

// sbLowKwargs returns the arguments the low chunk gave, as Salt's
// format_call passes them: the given named parameters of spec (name
// excluded) in order, then the extra keys that are not state-system
// keywords.
func sbLowKwargs(c *states.Call, spec modules.Spec) *payload.Map {
	out := &payload.Map{}
	if c.Args == nil {
		return out
	}
	for _, p := range spec.Params {
		if p.Name != "name" && c.Args.Given(p.Name) {
			out.Set(p.Name, c.Args.Get(p.Name))
		}
	}
	if c.Args.Kwargs != nil {
		for _, it := range c.Args.Kwargs.Items() {
			k := payload.KeyString(it.Key)
			if k == "name" || sbInternalKeyword(k) || out.Has(k) {
				continue
			}
			out.Set(k, it.Value)
		}
	}
	return out
}

// sbSfun is the watching state's function: the low chunk's sfun, else
// the call's Fun when it is not mod_watch itself.
func sbSfun(c *states.Call, kw *payload.Map) (string, bool) {
	if v, ok := kw.Get("sfun"); ok && v != nil {
		return payload.Text(v), true
	}
	if c.Low != nil {
		if v, ok := c.Low.Get("sfun"); ok && v != nil {
			return payload.Text(v), true
		}
	}
	if c.Fun != "" && c.Fun != "mod_watch" {
		return c.Fun, true
	}
	return "", false
}

// sbPop returns a function popping a key from kw, or returning def.
func sbPop(kw *payload.Map) func(key string, def any) any {
	return func(key string, def any) any {
		if v, ok := kw.Delete(key); ok {
			return v
		}
		return def
	}
}

// sbPySliceTo is Python's s[:idx] on code points.
func sbPySliceTo(s string, idx int) string {
	r := []rune(s)
	if idx < 0 {
		idx += len(r)
		if idx < 0 {
			idx = 0
		}
	}
	if idx > len(r) {
		idx = len(r)
	}
	return string(r[:idx])
}

// errNoFunction is the KeyError of __salt__[fun] for a missing function.
var errNoFunction = errors.New("states/builtin: execution function not available")

// sbExec calls an execution function the way a state module's
// __salt__[fun](*args, **kwargs) does: Python binding (TypeErrors worded as
// Python words them, wrapping modules.ErrArguments) and the function's own
// Go error returned as is, so callers can tell exception kinds apart. A
// missing function is errNoFunction, whose text is Python's KeyError.
func sbExec(ctx context.Context, c *states.Call, fun string, args []any, kwargs *payload.Map) (res any, err error) {
	if c.Env == nil || c.Env.Registry == nil {
		return nil, fmt.Errorf("%w: '%s'", errNoFunction, fun)
	}
	fn, ok := c.Env.Registry.Lookup(fun)
	if !ok {
		return nil, fmt.Errorf("%w: '%s'", errNoFunction, fun)
	}
	if mod, _, _ := strings.Cut(fun, "."); c.Env.Registry.Unavailable(mod, c.Env) != nil {
		// a module whose __virtual__ refuses the minion is not in __salt__
		return nil, fmt.Errorf("%w: '%s'", errNoFunction, fun)
	}
	bound, err := sbBind(fn, args, kwargs)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("%v\n%s", p, debug.Stack())
		}
	}()
	call := &modules.Call{Fun: fun, Env: c.Env, Args: bound}
	return fn.Fn(ctx, call)
}

// sbBind binds positional args and keyword kwargs to fn's Spec like a
// Python call.
func sbBind(fn *modules.Function, args []any, kwargs *payload.Map) (*modules.Args, error) {
	spec := fn.Spec
	short := fn.Name[strings.IndexByte(fn.Name, '.')+1:]
	kw := &payload.Map{}
	var extra []any
	for i, v := range args {
		if i < len(spec.Params) {
			kw.Set(spec.Params[i].Name, v)
			continue
		}
		if !spec.Varargs {
			return nil, fmt.Errorf("%w: %s", modules.ErrArguments, sbTooMany(short, spec, len(args)))
		}
		extra = append(extra, v)
	}
	isParam := map[string]bool{}
	for _, p := range spec.Params {
		isParam[p.Name] = true
	}
	if kwargs != nil {
		for _, it := range kwargs.Items() {
			k := payload.KeyString(it.Key)
			if !isParam[k] && !spec.Kwargs {
				return nil, fmt.Errorf("%w: %s() got an unexpected keyword argument '%s'", modules.ErrArguments, short, k)
			}
			if kw.Has(k) {
				return nil, fmt.Errorf("%w: %s() got multiple values for argument '%s'", modules.ErrArguments, short, k)
			}
			kw.Set(k, it.Value)
		}
	}
	var missing []string
	for _, p := range spec.Params {
		if p.Required && !kw.Has(p.Name) {
			missing = append(missing, "'"+p.Name+"'")
		}
	}
	if len(missing) > 0 {
		noun := "argument"
		list := missing[0]
		if len(missing) > 1 {
			noun = "arguments"
			list = strings.Join(missing[:len(missing)-1], ", ") + " and " + missing[len(missing)-1]
		}
		return nil, fmt.Errorf("%w: %s() missing %d required positional %s: %s", modules.ErrArguments, short, len(missing), noun, list)
	}
	a, err := modules.BindKeywords(spec, kw)
	if err != nil {
		return nil, err
	}
	a.Varargs = extra
	return a, nil
}

// sbTooMany is Python's "takes N positional arguments but M were given".
func sbTooMany(short string, spec modules.Spec, given int) string {
	required := 0
	for _, p := range spec.Params {
		if p.Required {
			required++
		}
	}
	total := len(spec.Params)
	takes := fmt.Sprintf("%d positional argument", total)
	if required != total {
		takes = fmt.Sprintf("from %d to %d positional argument", required, total)
	}
	if total != 1 || required != total {
		takes += "s"
	}
	verb := "were"
	if given == 1 {
		verb = "was"
	}
	return fmt.Sprintf("%s() takes %s but %d %s given", short, takes, given, verb)
}

// sbErrText is Python's str(exception) for an execution function's error:
// the message without gsalt's sentinel prefix, or without the Python
// exception name ("ValueError: ...") gsalt's modules put before the
// message of other errors.
func sbErrText(err error) string {
	s := err.Error()
	for _, sentinel := range []error{modules.ErrExecution, modules.ErrInvocation, modules.ErrArguments,
		modules.ErrCommandNotFound, modules.ErrNotAvailable, errNoFunction} {
		if errors.Is(err, sentinel) {
			return strings.TrimPrefix(s, sentinel.Error()+": ")
		}
	}
	if head, rest, ok := strings.Cut(s, ": "); ok && sbPyExceptionName(head) {
		return rest
	}
	return s
}

// sbPyExceptionName reports whether s looks like a Python exception class
// name (an identifier ending in Error or Exception, or Exception itself).
func sbPyExceptionName(s string) bool {
	if !strings.HasSuffix(s, "Error") && !strings.HasSuffix(s, "Exception") {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r == '.' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

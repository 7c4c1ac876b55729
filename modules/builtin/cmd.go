package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// FileClient is the service cmd.script uses to fetch a script that is not a
// local path (salt://, http://, ...). The minion registers it under the
// service name "files". CacheFile returns the local path of the cached copy,
// or "" (or an error) when the source could not be cached.
type FileClient interface {
	CacheFile(ctx context.Context, src, saltenv string) (localPath string, err error)
}

// cmdMaxOutput bounds how much of each output stream of a command is kept in
// memory; the rest is read and discarded so the command never blocks on a
// full pipe. Salt itself keeps everything.
const cmdMaxOutput = 32 << 20

// cmdKillGrace is how long the output pipes are drained after a timed-out
// process group was killed, before they are closed (some process outside the
// group may still hold them).
const cmdKillGrace = 2 * time.Second

// cmdFunctions is Salt's cmd module (salt/modules/cmdmod.py).
func cmdFunctions() []modules.Function {
	defShell := os.Getenv("SHELL")
	if defShell == "" {
		defShell = "/bin/sh"
	}
	spec := func(required string, optional ...string) modules.Spec {
		return cmdSpec(defShell, required, optional...)
	}
	runParams := []string{"cwd", "stdin", "runas", "group", "shell", "python_shell", "env", "clean_env", "template",
		"rstrip", "umask", "output_encoding", "output_loglevel", "log_callback", "hide_output", "timeout",
		"reset_system_locale", "ignore_retcode", "saltenv", "use_vt"}
	tail := []string{"password", "prepend_path", "success_retcodes", "success_stdout", "success_stderr"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	without := func(list []string, drop string) []string {
		var out []string
		for _, s := range list {
			if s != drop {
				out = append(out, s)
			}
		}
		return out
	}
	return []modules.Function{
		{Name: "cmd.run", Doc: "Execute the passed command and return its output (stdout and stderr\ncombined) as a string.\n\nCLI Example:\n\n    salt '*' cmd.run \"ls -l | awk '/foo/{print \\\\$2}'\"",
			Spec: spec("cmd", cat(runParams, []string{"bg", "password", "encoded_cmd", "raise_err", "prepend_path", "success_retcodes", "success_stdout", "success_stderr"})...),
			Fn:   cmdRunFn},
		{Name: "cmd.shell", Doc: "Execute the passed command through the shell and return its output as a\nstring.\n\nCLI Example:\n\n    salt '*' cmd.shell \"ls -l | awk '/foo/{print \\\\$2}'\"",
			Spec: spec("cmd", cat(without(runParams, "python_shell"), []string{"bg"}, tail)...),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if !c.Args.Kwargs.Has("python_shell") {
					c.Args.Kwargs.Set("python_shell", true)
				}
				return cmdRunFn(ctx, c)
			}},
		{Name: "cmd.run_stdout", Doc: "Execute a command, and only return the standard out.\n\nCLI Example:\n\n    salt '*' cmd.run_stdout \"ls -l | awk '/foo/{print \\\\$2}'\"",
			Spec: spec("cmd", cat(runParams, tail)...),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				out, err := cmdRunCore(ctx, c, cmdRequestFrom(c, false))
				if err != nil {
					return nil, err
				}
				if payload.Truthy(c.Args.Get("hide_output")) {
					return "", nil
				}
				return out.stdout, nil
			}},
		{Name: "cmd.run_stderr", Doc: "Execute a command and only return the standard error.\n\nCLI Example:\n\n    salt '*' cmd.run_stderr \"ls -l | awk '/foo/{print \\\\$2}'\"",
			Spec: spec("cmd", cat(runParams, tail)...),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				out, err := cmdRunCore(ctx, c, cmdRequestFrom(c, false))
				if err != nil {
					return nil, err
				}
				if payload.Truthy(c.Args.Get("hide_output")) {
					return "", nil
				}
				return out.stderr, nil
			}},
		{Name: "cmd.run_all", Doc: "Execute the passed command and return a dict of return data: pid,\nretcode, stdout and stderr.\n\nCLI Example:\n\n    salt '*' cmd.run_all \"ls -l | awk '/foo/{print \\\\$2}'\"",
			Spec: spec("cmd", cat(runParams, []string{"redirect_stderr", "password", "encoded_cmd"}, tail[1:])...),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				out, err := cmdRunCore(ctx, c, cmdRequestFrom(c, payload.Truthy(c.Args.Get("redirect_stderr"))))
				if err != nil {
					return nil, err
				}
				if payload.Truthy(c.Args.Get("hide_output")) {
					out.stdout, out.stderr = "", ""
				}
				return out.toMap(), nil
			}},
		{Name: "cmd.retcode", Doc: "Execute a shell command and return the command's return code.\n\nCLI Example:\n\n    salt '*' cmd.retcode \"file /bin/bash\"",
			Spec: spec("cmd", cat(without(without(runParams, "rstrip"), "hide_output"), tail[:1], tail[2:])...),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				out, err := cmdRunCore(ctx, c, cmdRequestFrom(c, true))
				if err != nil {
					return nil, err
				}
				return out.retcode, nil
			}},
		{Name: "cmd.run_bg", Doc: "Execute the passed command in the background and return its pid.\n\nCLI Example:\n\n    salt '*' cmd.run_bg \"fstrim-all\"",
			Spec: spec("cmd", "cwd", "runas", "group", "shell", "python_shell", "env", "clean_env", "template", "umask",
				"timeout", "output_encoding", "output_loglevel", "log_callback", "reset_system_locale", "ignore_retcode",
				"saltenv", "password", "prepend_path", "success_retcodes", "success_stdout", "success_stderr"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				req := cmdRequestFrom(c, false)
				req.bg, req.rstrip, req.stdin = true, false, nil
				out, err := cmdRunCore(ctx, c, req)
				if err != nil {
					return nil, err
				}
				return payload.NewMap("pid", int64(out.pid)), nil
			}},
		{Name: "cmd.script", Doc: "Download a script from a remote location (or use a local path) and\nexecute it locally. Returns a dict like cmd.run_all.\n\nCLI Example:\n\n    salt '*' cmd.script salt://scripts/runme.sh 'arg1 arg2 \"arg 3\"'",
			Spec: spec("source", "args", "cwd", "stdin", "runas", "group", "shell", "python_shell", "env", "template",
				"umask", "output_encoding", "output_loglevel", "log_callback", "hide_output", "timeout",
				"reset_system_locale", "saltenv", "use_vt", "bg", "password", "success_retcodes", "success_stdout",
				"success_stderr"),
			Fn: cmdScript},
		{Name: "cmd.which", Doc: "Returns the path of an executable available on the minion, None otherwise\n\nCLI Example:\n\n    salt '*' cmd.which cat",
			Spec: spec("cmd"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				if p := cmdWhich(c.Args.Get("cmd")); p != "" {
					return p, nil
				}
				return nil, nil
			}},
		{Name: "cmd.which_bin", Doc: "Returns the first command found in a list of commands\n\nCLI Example:\n\n    salt '*' cmd.which_bin '[pip2, pip, pip-python]'",
			Spec: spec("cmds"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				list, ok := c.Args.Get("cmds").([]any)
				if !ok {
					if s, isStr := c.Args.Get("cmds").(string); isStr {
						for _, r := range s {
							list = append(list, string(r))
						}
					}
				}
				for _, name := range list {
					if p := cmdWhich(name); p != "" {
						return p, nil
					}
				}
				return nil, nil
			}},
		{Name: "cmd.has_exec", Doc: "Returns true if the executable is available on the minion, false otherwise\n\nCLI Example:\n\n    salt '*' cmd.has_exec cat",
			Spec: spec("cmd"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return cmdWhich(c.Args.Get("cmd")) != "", nil
			}},
	}
}

// cmdSpec builds a cmd-module signature: one required parameter, then the
// named optional ones with Salt's defaults, then **kwargs.
func cmdSpec(defShell, required string, optional ...string) modules.Spec {
	defaults := map[string]any{
		"shell": defShell, "clean_env": false, "rstrip": true, "output_loglevel": "debug",
		"hide_output": false, "reset_system_locale": true, "ignore_retcode": false, "use_vt": false,
		"bg": false, "encoded_cmd": false, "raise_err": false, "redirect_stderr": false,
	}
	params := []modules.Param{req(required)}
	for _, name := range optional {
		params = append(params, opt(name, defaults[name]))
	}
	return modules.Spec{Params: params, Kwargs: len(optional) > 0}
}

// cmdRequest is everything _run needs, read from a call's arguments.
type cmdRequest struct {
	cmd             any
	cwd             any
	stdin           any
	runas           string
	group           string
	shell           string
	pythonShell     any
	env             any
	cleanEnv        bool
	rstrip          bool
	umask           any
	loglevel        string
	timeout         any
	resetLocale     bool
	ignoreRetcode   bool
	bg              bool
	prependPath     string
	successRetcodes any
	successStdout   any
	successStderr   any
	mergeStderr     bool
	template        any
	rawNewlines     bool
	pubJid          bool
}

// cmdRequestFrom reads the _run arguments of a cmd.* call. Parameters a
// function does not declare read as their Python default.
func cmdRequestFrom(c *modules.Call, mergeStderr bool) cmdRequest {
	a := c.Args
	strOr := func(name, def string) string {
		if v := a.Get(name); v != nil {
			return pyfmt.Str(v)
		}
		return def
	}
	boolOr := func(name string, def bool) bool {
		if !a.Given(name) {
			return def
		}
		return payload.Truthy(a.Get(name))
	}
	shell := strOr("shell", "")
	if shell == "" {
		shell = "/bin/sh"
	}
	req := cmdRequest{
		cmd:             a.Get("cmd"),
		cwd:             a.Get("cwd"),
		stdin:           a.Get("stdin"),
		runas:           cmdOptStr(a.Get("runas")),
		group:           cmdOptStr(a.Get("group")),
		shell:           shell,
		env:             a.Get("env"),
		cleanEnv:        boolOr("clean_env", false),
		rstrip:          boolOr("rstrip", true),
		umask:           a.Get("umask"),
		loglevel:        strOr("output_loglevel", "debug"),
		timeout:         a.Get("timeout"),
		resetLocale:     boolOr("reset_system_locale", true),
		ignoreRetcode:   boolOr("ignore_retcode", false),
		bg:              boolOr("bg", false),
		prependPath:     cmdOptStr(a.Get("prepend_path")),
		successRetcodes: a.Get("success_retcodes"),
		successStdout:   a.Get("success_stdout"),
		successStderr:   a.Get("success_stderr"),
		mergeStderr:     mergeStderr,
		template:        a.Get("template"),
		rawNewlines:     cmdKwargTrue(a, "stdin_raw_newlines"),
		pubJid:          a.Kwargs != nil && a.Kwargs.Has("__pub_jid"),
	}
	req.pythonShell = cmdPythonShellDefault(c, a.Get("python_shell"))
	return req
}

func cmdKwargTrue(a *modules.Args, name string) bool {
	if a.Kwargs == nil {
		return false
	}
	v, ok := a.Kwargs.Get(name)
	return ok && payload.Truthy(v)
}

// cmdOptStr is str(v) for a set value and "" for None or "".
func cmdOptStr(v any) string {
	if v == nil {
		return ""
	}
	return pyfmt.Str(v)
}

// cmdPythonShellDefault is _python_shell_default: a command published by a
// job (there is a __pub_jid) runs through the shell unless python_shell is
// given, and so does every command when the cmd_safe option is False.
func cmdPythonShellDefault(c *modules.Call, v any) any {
	if v != nil {
		return v
	}
	if c.Args.Kwargs != nil {
		if jid, ok := c.Args.Kwargs.Get("__pub_jid"); ok && payload.Truthy(jid) {
			return true
		}
	}
	if c.Env != nil && c.Env.Opts != nil {
		if safe, ok := c.Env.Opts.Get("cmd_safe"); ok && safe == false {
			return true
		}
	}
	return nil
}

// cmdOutcome is _run's return dict.
type cmdOutcome struct {
	pid      int
	retcode  any // int64, or nil for a background command
	stdout   string
	stderr   string
	timedOut bool
}

func (o *cmdOutcome) toMap() *payload.Map {
	if o.timedOut {
		return payload.NewMap("stdout", o.stdout, "stderr", o.stderr, "retcode", o.retcode, "pid", int64(o.pid))
	}
	return payload.NewMap("pid", int64(o.pid), "retcode", o.retcode, "stdout", o.stdout, "stderr", o.stderr)
}

func cmdRunFn(ctx context.Context, c *modules.Call) (any, error) {
	req := cmdRequestFrom(c, true)
	out, err := cmdRunCore(ctx, c, req)
	if err != nil {
		return nil, err
	}
	hide := payload.Truthy(c.Args.Get("hide_output"))
	if !strings.EqualFold(req.loglevel, "quiet") && !req.ignoreRetcode && !cmdRetcodeZero(out.retcode) {
		c.Log().Error(fmt.Sprintf("Command '%s' failed with return code: %s", cmdLogName(req.cmd), pyfmt.Str(out.retcode)))
		if payload.Truthy(c.Args.Get("raise_err")) {
			msg := out.stdout
			if hide {
				msg = ""
			}
			return nil, fmt.Errorf("%w: %s", modules.ErrExecution, msg)
		}
	}
	if hide {
		return "", nil
	}
	return out.stdout, nil
}

func cmdRetcodeZero(v any) bool {
	n, ok := payload.AsInt(v)
	return ok && n == 0
}

// cmdLogName is _log_cmd: the first word of the command.
func cmdLogName(cmd any) string {
	if l, ok := cmd.([]any); ok {
		if len(l) == 0 {
			return ""
		}
		return strings.TrimSpace(pyfmt.Str(l[0]))
	}
	f := strings.Fields(pyfmt.Str(cmd))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// cmdEnvList is an insertion-ordered environment.
type cmdEnvList struct {
	keys []string
	vals map[string]string
}

func newCmdEnv() *cmdEnvList { return &cmdEnvList{vals: map[string]string{}} }

func (e *cmdEnvList) set(k, v string) {
	if _, ok := e.vals[k]; !ok {
		e.keys = append(e.keys, k)
	}
	e.vals[k] = v
}

func (e *cmdEnvList) setDefault(k, v string) {
	if _, ok := e.vals[k]; !ok {
		e.set(k, v)
	}
}

func (e *cmdEnvList) del(k string) {
	if _, ok := e.vals[k]; !ok {
		return
	}
	delete(e.vals, k)
	for i, key := range e.keys {
		if key == k {
			e.keys = append(e.keys[:i], e.keys[i+1:]...)
			break
		}
	}
}

func (e *cmdEnvList) has(k string) bool { _, ok := e.vals[k]; return ok }

func (e *cmdEnvList) environ() []string {
	out := make([]string, 0, len(e.keys))
	for _, k := range e.keys {
		out = append(out, k+"="+e.vals[k])
	}
	return out
}

// cmdParseEnv is _parse_env plus the None-to-"" fix-up: a dict, or a list
// of one-key dicts (repack_dictlist), else nothing.
func cmdParseEnv(v any, log *slog.Logger) *cmdEnvList {
	env := newCmdEnv()
	add := func(k, val any) {
		key := pyfmt.Str(k)
		if val == nil {
			log.Error(fmt.Sprintf("Environment variable '%s' passed without a value. Setting value to an empty string", key))
			env.set(key, "")
			return
		}
		env.set(key, pyfmt.Str(val))
	}
	switch x := v.(type) {
	case *payload.Map:
		for _, it := range x.Items() {
			add(it.Key, it.Value)
		}
	case []any:
		for _, el := range x {
			switch e := el.(type) {
			case string, int64, float64:
			case *payload.Map:
				if e.Len() != 1 {
					log.Error("Invalid input for repack_dictlist: key/value pairs must contain only one element")
					return newCmdEnv()
				}
			default:
				log.Error("Invalid input for repack_dictlist: element is not a string/dict/numeric value")
				return newCmdEnv()
			}
		}
		for _, el := range x {
			if m, ok := el.(*payload.Map); ok {
				it := m.Items()[0]
				add(it.Key, it.Value)
			} else {
				add(el, nil)
			}
		}
	}
	return env
}

// cmdRunCore is Salt's _run: it validates the request, runs the command
// (never longer than its timeout, killing the whole process group) and sets
// the call's retcode the way Salt sets __context__["retcode"].
func cmdRunCore(ctx context.Context, c *modules.Call, req cmdRequest) (*cmdOutcome, error) {
	log := c.Log()
	quiet := strings.EqualFold(req.loglevel, "quiet")
	level := cmdLogLevel(req.loglevel, log)
	if !quiet && cmdValidShell(req.shell) == cmdShellInvalid {
		log.Warn(fmt.Sprintf("Attempt to run a shell command with what may be an invalid shell! Check to ensure that the shell <%s> is valid for this user.", req.shell))
	}

	runas, group := req.runas, req.group
	var cwd string
	if !payload.Truthy(req.cwd) {
		cwd = cmdHomeDir(runas)
		if syscall.Access(cwd, 4) != nil {
			cwd = "/"
		}
	} else {
		cwd = pyfmt.Str(req.cwd)
	}
	ignoreRetcode := req.ignoreRetcode
	if req.bg {
		ignoreRetcode = true
	}
	if fi, err := os.Stat(req.shell); err != nil || !fi.Mode().IsRegular() || syscall.Access(req.shell, 1) != nil {
		return nil, fmt.Errorf("%w: The shell %s is not available", modules.ErrExecution, req.shell)
	}
	if payload.Truthy(req.template) {
		return nil, fmt.Errorf("%w: Attempted to render file paths with unavailable engine %s", modules.ErrExecution, pyfmt.Str(req.template))
	}
	if req.pubJid && !cmdCheckAvail(c.Env, req.cmd) {
		return nil, fmt.Errorf("%w: The shell command \"%s\" is not permitted", modules.ErrExecution, pyfmt.Str(req.cmd))
	}
	env := cmdParseEnv(req.env, log)
	if level != nil {
		who := ""
		if runas != "" {
			who = fmt.Sprintf("as user '%s' ", runas)
		}
		if group != "" {
			who += fmt.Sprintf("in group '%s' ", group)
		}
		q := "'"
		if _, isList := req.cmd.([]any); isList {
			q = ""
		}
		bgNote := ""
		if req.bg {
			bgNote = ". Executing command in the background, no output will be logged."
		}
		log.Info(fmt.Sprintf("Executing command %s%s%s %sin directory '%s'%s", q, cmdLogName(req.cmd), q, who, cwd, bgNote))
	}

	var cred *syscall.Credential
	if runas != "" || group != "" {
		var err error
		cred, err = cmdCredential(runas, group)
		if err != nil {
			return nil, err
		}
	}
	if runas != "" {
		// Salt reads the login environment of the user through su; gsalt
		// sets the variables a login would set and Salt forces.
		u, _ := user.Lookup(runas)
		env.setDefault("HOME", u.HomeDir)
		env.setDefault("USER", runas)
		env.setDefault("LOGNAME", runas)
		env.setDefault("SHELL", req.shell)
		env.set("USER", runas)
		env.set("HOME", u.HomeDir)
	}
	if req.resetLocale {
		// the variables reset_system_locale sets to C
		for _, k := range [...]string{"LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY", "LC_MESSAGES",
			"LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION", "LANGUAGE"} {
			env.setDefault(k, "C")
		}
	}
	runEnv := newCmdEnv()
	if !req.cleanEnv {
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				runEnv.set(k, v)
			}
		}
	}
	for _, k := range env.keys {
		runEnv.set(k, env.vals[k])
	}
	if req.prependPath != "" {
		runEnv.set("PATH", req.prependPath+":"+runEnv.vals["PATH"])
	}
	if !env.has("NOTIFY_SOCKET") {
		runEnv.del("NOTIFY_SOCKET")
	}

	var stdin []byte
	if req.stdin != nil && !req.bg {
		s := pyfmt.Str(req.stdin)
		if !req.rawNewlines {
			s = strings.ReplaceAll(s, `\n`, "\n")
		}
		stdin = []byte(s)
	}

	umask := -1
	if req.umask != nil {
		s := strings.TrimLeft(pyfmt.Str(req.umask), "0")
		if s == "" {
			return nil, fmt.Errorf("%w: Zero umask is not allowed.", modules.ErrExecution)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(strings.ReplaceAll(s, "_", "")), 8, 64)
		if err != nil || n < 0 || n > 0o7777 {
			return nil, fmt.Errorf("%w: Invalid umask: '%s'", modules.ErrExecution, pyfmt.Str(req.umask))
		}
		umask = int(n)
	}

	if fi, err := os.Stat(cwd); !filepath.IsAbs(cwd) || err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: Specified cwd '%s' either not absolute or does not exist", modules.ErrExecution, cwd)
	}

	pythonShell := payload.Truthy(req.pythonShell)
	var args []string
	var shown any // what TimedProc calls the command
	switch x := req.cmd.(type) {
	case []any:
		for _, el := range x {
			args = append(args, pyfmt.Str(el))
		}
		shown = cmdStrList(args)
	default:
		s := pyfmt.Str(x)
		if req.pythonShell == true {
			args = []string{s}
			shown = s
		} else {
			var err error
			args, err = py.ShlexSplit(s)
			if err != nil {
				return nil, fmt.Errorf("ValueError: %s", err.Error())
			}
			shown = cmdStrList(args)
		}
	}

	okCodes := []int64{0}
	if req.successRetcodes != nil {
		okCodes = nil
		for _, v := range cmdSplitInput(req.successRetcodes) {
			n, ok := cmdPyInt(v)
			if !ok {
				return nil, fmt.Errorf("%w: success_retcodes must be a list of integers", modules.ErrInvocation)
			}
			okCodes = append(okCodes, n)
		}
	}
	var okOut, okErr []string
	if req.successStdout != nil {
		for _, v := range cmdSplitInput(req.successStdout) {
			okOut = append(okOut, pyfmt.Str(v))
		}
	}
	if req.successStderr != nil {
		for _, v := range cmdSplitInput(req.successStderr) {
			okErr = append(okErr, pyfmt.Str(v))
		}
	}

	timeout, err := cmdTimeout(req.timeout)
	if err != nil {
		return nil, err
	}

	proc := &cmdProc{
		env: runEnv.environ(), dir: cwd, stdin: stdin, merge: req.mergeStderr, timeout: timeout,
		cred: cred, umask: umask, bg: req.bg, maxOut: cmdMaxOutput,
	}
	if pythonShell {
		proc.path = req.shell
		proc.argv = append([]string{req.shell, "-c"}, args...)
	} else {
		if len(args) == 0 {
			return nil, fmt.Errorf("IndexError: list index out of range")
		}
		path, lerr := cmdLookPath(args[0], runEnv.vals["PATH"], runEnv.has("PATH"), cwd)
		if lerr != nil {
			return nil, cmdStartError(shown, quiet, cwd, pythonShell, lerr)
		}
		proc.path = path
		proc.argv = args
	}

	res, err := proc.run(ctx)
	if err != nil {
		if errors.Is(err, errCmdStart) {
			return nil, cmdStartError(shown, quiet, cwd, pythonShell, err)
		}
		return nil, err
	}
	if res.timedOut {
		return &cmdOutcome{
			stdout:   fmt.Sprintf("%s : Timed out after %s seconds", pyfmt.Str(shown), pyfmt.Str(req.timeout)),
			stderr:   "",
			retcode:  int64(1),
			pid:      res.pid,
			timedOut: true,
		}, nil
	}
	out := &cmdOutcome{pid: res.pid}
	if req.bg {
		out.retcode = nil
	} else {
		out.stdout = cmdDecode(res.stdout, "stdout", req.cmd, quiet, log)
		out.stderr = cmdDecode(res.stderr, "stderr", req.cmd, quiet, log)
		if req.rstrip {
			out.stdout = strings.TrimRightFunc(out.stdout, cmdPyIsSpace)
			out.stderr = strings.TrimRightFunc(out.stderr, cmdPyIsSpace)
		}
		code := int64(res.code)
		for _, ok := range okCodes {
			if code == ok {
				code = 0
			}
		}
		for _, s := range okOut {
			if strings.Contains(out.stdout, s) {
				code = 0
			}
		}
		for _, s := range okErr {
			if strings.Contains(out.stderr, s) {
				code = 0
			}
		}
		out.retcode = code
	}
	if ignoreRetcode {
		c.Retcode = 0
	} else if n, ok := payload.AsInt(out.retcode); ok {
		c.Retcode = int(n)
	}
	if res.truncated && !quiet {
		log.Warn("command output exceeded the in-memory limit and was truncated", "limit_bytes", cmdMaxOutput)
	}
	if level != nil {
		lvl := *level
		if !ignoreRetcode && !cmdRetcodeZero(out.retcode) {
			if lvl < slog.LevelError {
				lvl = slog.LevelError
			}
			log.Error(fmt.Sprintf("Command '%s' failed with return code: %s", cmdLogName(req.cmd), pyfmt.Str(out.retcode)))
		}
		if out.stdout != "" {
			log.Log(ctx, lvl, "stdout: "+out.stdout)
		}
		if out.stderr != "" {
			log.Log(ctx, lvl, "stderr: "+out.stderr)
		}
		if !cmdRetcodeZero(out.retcode) && out.retcode != nil {
			log.Log(ctx, lvl, "retcode: "+pyfmt.Str(out.retcode))
		}
	}
	return out, nil
}

// cmdStartError is the CommandExecutionError _run raises when Popen fails.
// Salt prints the whole Popen context (environment included); gsalt keeps
// only cwd and shell.
func cmdStartError(shown any, quiet bool, cwd string, shell bool, err error) error {
	what := pyfmt.Str(shown)
	if quiet {
		what = "REDACTED"
	}
	context := pyfmt.Str(payload.NewMap("cwd", cwd, "shell", shell))
	return fmt.Errorf("%w: Unable to run command '%s' with the context '%s', reason: %s",
		modules.ErrExecution, what, context, cmdPyOSError(err))
}

// cmdStrList renders a list of strings as Python's repr of a list.
func cmdStrList(items []string) string {
	l := make([]any, len(items))
	for i, s := range items {
		l[i] = s
	}
	return pyfmt.Str(l)
}

// cmdLogLevel maps an output_loglevel to a slog level; nil means quiet.
func cmdLogLevel(level string, log *slog.Logger) *slog.Level {
	var l slog.Level
	switch strings.ToLower(level) {
	case "quiet":
		return nil
	case "all", "garbage", "trace":
		l = slog.LevelDebug - 4
	case "debug", "profile":
		l = slog.LevelDebug
	case "info":
		l = slog.LevelInfo
	case "warning", "warn":
		l = slog.LevelWarn
	case "error", "critical":
		l = slog.LevelError
	default:
		log.Error(fmt.Sprintf("Invalid output_loglevel '%s'. Valid levels are: all, critical, debug, error, garbage, info, profile, quiet, trace, warning. Falling back to 'info'.", level))
		l = slog.LevelInfo
	}
	return &l
}

const (
	cmdShellUnknown = iota
	cmdShellValid
	cmdShellInvalid
)

// cmdValidShell is _is_valid_shell: is the shell listed in /etc/shells?
func cmdValidShell(shell string) int {
	data, err := os.ReadFile("/etc/shells")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return cmdShellUnknown
		}
		return cmdShellValid
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if !strings.HasPrefix(line, "#") && line == shell {
			return cmdShellValid
		}
	}
	return cmdShellInvalid
}

// cmdCheckAvail is _check_avail: cmd_blacklist_glob and cmd_whitelist_glob.
func cmdCheckAvail(env *modules.Env, cmd any) bool {
	var text string
	if l, ok := cmd.([]any); ok {
		parts := make([]string, len(l))
		for i, v := range l {
			parts[i] = pyfmt.Str(v)
		}
		text = strings.Join(parts, " ")
	} else {
		text = pyfmt.Str(cmd)
	}
	allowed := true
	if black := configGet(env, "cmd_blacklist_glob", ""); payload.Truthy(black) {
		for _, pat := range cmdIterable(black) {
			if py.Fnmatch(text, pyfmt.Str(pat)) {
				allowed = false
			}
		}
	}
	white := configGet(env, "cmd_whitelist_glob", []any{})
	if payload.Truthy(white) {
		listed := false
		for _, pat := range cmdIterable(white) {
			if py.Fnmatch(text, pyfmt.Str(pat)) {
				listed = true
				break
			}
		}
		return allowed && listed
	}
	return allowed
}

// cmdIterable iterates a value the way a Python for loop would (strings by
// character, dicts by key).
func cmdIterable(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case string:
		out := make([]any, 0, len(x))
		for _, r := range x {
			out = append(out, string(r))
		}
		return out
	case *payload.Map:
		out := make([]any, 0, x.Len())
		for _, it := range x.Items() {
			out = append(out, it.Key)
		}
		return out
	}
	return nil
}

// cmdHomeDir is os.path.expanduser("~user") (or "~" for the minion's user).
func cmdHomeDir(name string) string {
	if name == "" {
		if h := os.Getenv("HOME"); h != "" {
			return h
		}
		if u, err := user.Current(); err == nil {
			return u.HomeDir
		}
		return "~"
	}
	if u, err := user.Lookup(name); err == nil {
		return u.HomeDir
	}
	return "~" + name
}

// cmdCredential resolves runas/group into the credential the child starts
// with (Salt's chugid_and_umask). It is nil when nothing changes.
func cmdCredential(runas, group string) (*syscall.Credential, error) {
	var u *user.User
	if runas != "" {
		var err error
		u, err = user.Lookup(runas)
		if err != nil {
			return nil, fmt.Errorf("%w: User '%s' is not available", modules.ErrExecution, runas)
		}
	}
	var g *user.Group
	if group != "" {
		var err error
		g, err = user.LookupGroup(group)
		if err != nil {
			return nil, fmt.Errorf("%w: Group '%s' is not available", modules.ErrExecution, group)
		}
	}
	cur, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("%w: cannot resolve the current user: %v", modules.ErrExecution, err)
	}
	switchUser := u != nil && u.Username != cur.Username
	gidStr := cur.Gid
	switchGroup := false
	if g != nil {
		gidStr = g.Gid
		switchGroup = g.Gid != cur.Gid
	} else if switchUser {
		gidStr = u.Gid
		switchGroup = true
	}
	if !switchUser && !switchGroup {
		return nil, nil
	}
	who := cur
	if switchUser {
		who = u
	}
	uid, err1 := strconv.ParseUint(who.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(gidStr, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("%w: User '%s' is not available", modules.ErrExecution, who.Username)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if ids, err := who.GroupIds(); err == nil {
		for _, s := range ids {
			if n, err := strconv.ParseUint(s, 10, 32); err == nil {
				cred.Groups = append(cred.Groups, uint32(n))
			}
		}
	}
	if cred.Groups == nil {
		cred.Groups = []uint32{cred.Gid}
	}
	return cred, nil
}

// cmdTimeout reads the timeout argument (seconds; None or 0 for none).
func cmdTimeout(v any) (time.Duration, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case bool:
		if x {
			return time.Second, nil
		}
		return 0, nil
	case int64:
		if x <= 0 {
			return 0, nil
		}
		if x > math.MaxInt64/int64(time.Second) {
			x = math.MaxInt64 / int64(time.Second)
		}
		return time.Duration(x) * time.Second, nil
	case float64:
		if x <= 0 || math.IsNaN(x) {
			return 0, nil
		}
		if x > float64(math.MaxInt64/int64(time.Second)) {
			x = float64(math.MaxInt64 / int64(time.Second))
		}
		return time.Duration(x * float64(time.Second)), nil
	}
	if !payload.Truthy(v) {
		return 0, nil
	}
	return 0, fmt.Errorf("TimedProcTimeoutError: Error: timeout %s must be a number", pyfmt.Str(v))
}

// cmdSplitInput is salt.utils.args.split_input.
func cmdSplitInput(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	parts := strings.Split(pyfmt.Str(v), ",")
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = strings.TrimSpace(p)
	}
	return out
}

// cmdPyInt is Python's int() on a value.
func cmdPyInt(v any) (int64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false
		}
		return int64(x), true
	case string:
		s := strings.TrimSpace(strings.ReplaceAll(x, "_", ""))
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	return payload.AsInt(v)
}

// cmdPyIsSpace is Python's str.isspace for one character.
func cmdPyIsSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// cmdDecode turns command output into text, replacing bytes that are not
// UTF-8 as Python's errors="replace" does (one U+FFFD per bad byte).
func cmdDecode(b []byte, stream string, cmd any, quiet bool, log *slog.Logger) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			sb.WriteRune(utf8.RuneError)
			b = b[1:]
			continue
		}
		sb.WriteRune(r)
		b = b[n:]
	}
	if !quiet {
		log.Error(fmt.Sprintf("Failed to decode %s from command %s, non-decodable characters have been replaced", stream, cmdLogName(cmd)))
	}
	return sb.String()
}

// cmdLookPath finds a program the way Python's subprocess does for a
// command without a shell: names holding a '/' are used as they are,
// others are searched in the PATH of the command's environment.
func cmdLookPath(name, pathEnv string, havePath bool, cwd string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	if !havePath {
		pathEnv = "/bin:/usr/bin"
	}
	var saved error
	for _, dir := range strings.Split(pathEnv, ":") {
		p := filepath.Join(dir, name)
		if dir == "" {
			p = name
		}
		check := p
		if !filepath.IsAbs(check) {
			check = filepath.Join(cwd, check)
		}
		fi, err := os.Stat(check)
		if err != nil {
			continue
		}
		if fi.Mode().IsRegular() && syscall.Access(check, 1) == nil {
			return p, nil
		}
		if saved == nil {
			saved = &os.PathError{Op: "exec", Path: name, Err: syscall.EACCES}
		}
	}
	if saved != nil {
		return "", saved
	}
	return "", &os.PathError{Op: "exec", Path: name, Err: syscall.ENOENT}
}

// cmdWhich is salt.utils.path.which.
func cmdWhich(v any) string {
	if !payload.Truthy(v) {
		return ""
	}
	return saltWhichIn(pyfmt.Str(v), os.Getenv("PATH"), saltWhichDirs)
}

// saltWhichDirs are the directories salt.utils.path.which searches after
// PATH ("in case someone's PATH is busted").
var saltWhichDirs = []string{"/sbin", "/bin", "/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"}

// saltWhichIn is salt.utils.path.which over the PATH value path, then
// the extra directories not on it.
func saltWhichIn(exe, path string, extra []string) string {
	isExec := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular() && syscall.Access(p, 1) == nil
	}
	if isExec(exe) {
		return exe
	}
	dirs := strings.Split(path, ":")
	seen := map[string]bool{}
	for _, d := range dirs {
		seen[d] = true
	}
	for _, d := range extra {
		if !seen[d] {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		p := exe
		if d != "" {
			p = strings.TrimSuffix(d, "/") + "/" + exe
		}
		if isExec(p) {
			return p
		}
	}
	return ""
}

// cmdPyOSError renders an OS error the way Python prints an OSError:
// "[Errno 2] No such file or directory: 'name'".
func cmdPyOSError(err error) string {
	var errno syscall.Errno
	name := ""
	var pe *os.PathError
	if errors.As(err, &pe) {
		name = pe.Path
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		name = le.Old
	}
	if !errors.As(err, &errno) {
		return strings.TrimPrefix(err.Error(), errCmdStart.Error()+": ")
	}
	msg := fmt.Sprintf("[Errno %d] %s", int(errno), cmdStrerror(errno))
	if name != "" {
		msg += ": " + strings.Trim(cmdStrList([]string{name}), "[]")
	}
	return msg
}

// cmdPyExceptionName is the Python OSError subclass for an errno.
func cmdPyExceptionName(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return "OSError"
	}
	switch errno {
	case syscall.ENOENT:
		return "FileNotFoundError"
	case syscall.EACCES, syscall.EPERM:
		return "PermissionError"
	case syscall.EEXIST:
		return "FileExistsError"
	case syscall.EISDIR:
		return "IsADirectoryError"
	case syscall.ENOTDIR:
		return "NotADirectoryError"
	}
	return "OSError"
}

// cmdStrerror is the C library's text for an errno (Go's, capitalised).
func cmdStrerror(errno syscall.Errno) string {
	s := errno.Error()
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// errCmdStart marks a failure to start the process.
var errCmdStart = errors.New("cmd: cannot start process")

// cmdProc is one process to run.
type cmdProc struct {
	path    string
	argv    []string
	env     []string
	dir     string
	stdin   []byte // nil: /dev/null
	merge   bool   // stderr into the stdout pipe
	timeout time.Duration
	cred    *syscall.Credential
	umask   int // -1: inherit
	bg      bool
	maxOut  int
}

// cmdProcResult is what running a cmdProc produced.
type cmdProcResult struct {
	pid       int
	code      int // exit status, or -signal like Python's returncode
	stdout    []byte
	stderr    []byte
	timedOut  bool
	truncated bool
}

// cmdLimitedBuffer keeps the first max bytes written and counts the rest.
type cmdLimitedBuffer struct {
	buf     []byte
	max     int
	dropped int64
}

func (b *cmdLimitedBuffer) Write(p []byte) (int, error) {
	room := b.max - len(b.buf)
	if room > 0 {
		if len(p) <= room {
			b.buf = append(b.buf, p...)
		} else {
			b.buf = append(b.buf, p[:room]...)
			b.dropped += int64(len(p) - room)
		}
	} else {
		b.dropped += int64(len(p))
	}
	return len(p), nil
}

// run starts the process in its own process group and waits for it and for
// the end of its output. On timeout or cancellation the whole group is
// killed; pipes still held open by processes that left the group are closed
// after a short grace period, so run always returns.
func (p *cmdProc) run(ctx context.Context) (*cmdProcResult, error) {
	path, argv := p.path, p.argv
	if p.umask >= 0 {
		// Go cannot set the child's umask between fork and exec; a tiny
		// POSIX shell does it and then execs the real program in place.
		// (exec -a is not POSIX, so the program sees its path as argv[0].)
		argv = append([]string{"/bin/sh", "-c", fmt.Sprintf("umask %04o && exec \"$0\" \"$@\"", p.umask), path}, argv[1:]...)
		path = "/bin/sh"
	}
	attr := &syscall.SysProcAttr{Setpgid: true, Credential: p.cred}
	if p.bg {
		cmd, err := cmdStartRetry(func() *exec.Cmd {
			return &exec.Cmd{Path: path, Args: argv, Env: p.env, Dir: p.dir, SysProcAttr: attr}
		})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errCmdStart, err)
		}
		go func() { _ = cmd.Wait() }() // reap; the command outlives the call
		return &cmdProcResult{pid: cmd.Process.Pid}, nil
	}

	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("cmd: pipe: %w", err)
	}
	var errR, errW *os.File
	if !p.merge {
		if errR, errW, err = os.Pipe(); err != nil {
			outR.Close()
			outW.Close()
			return nil, fmt.Errorf("cmd: pipe: %w", err)
		}
	}
	var inR, inW *os.File
	if p.stdin != nil {
		if inR, inW, err = os.Pipe(); err != nil {
			outR.Close()
			outW.Close()
			if errR != nil {
				errR.Close()
				errW.Close()
			}
			return nil, fmt.Errorf("cmd: pipe: %w", err)
		}
	}
	cmd, startErr := cmdStartRetry(func() *exec.Cmd {
		cmd := &exec.Cmd{Path: path, Args: argv, Env: p.env, Dir: p.dir, Stdout: outW, SysProcAttr: attr}
		if p.merge {
			cmd.Stderr = outW
		} else {
			cmd.Stderr = errW
		}
		if inR != nil {
			cmd.Stdin = inR
		}
		return cmd
	})
	// The parent's copies of the child's ends are not needed any more.
	outW.Close()
	if errW != nil {
		errW.Close()
	}
	if inR != nil {
		inR.Close()
	}
	if startErr != nil {
		outR.Close()
		if errR != nil {
			errR.Close()
		}
		if inW != nil {
			inW.Close()
		}
		return nil, fmt.Errorf("%w: %w", errCmdStart, startErr)
	}
	pid := cmd.Process.Pid

	if inW != nil {
		go func() {
			_, _ = inW.Write(p.stdin) // EPIPE when the command does not read it all
			inW.Close()
		}()
	}
	stdout := &cmdLimitedBuffer{max: p.maxOut}
	stderr := &cmdLimitedBuffer{max: p.maxOut}
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		_, _ = io.Copy(stdout, outR)
	}()
	if errR != nil {
		readers.Add(1)
		go func() {
			defer readers.Done()
			_, _ = io.Copy(stderr, errR)
		}()
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	outputDone := make(chan struct{})
	go func() {
		readers.Wait()
		close(outputDone)
	}()
	allDone := make(chan struct{})
	go func() {
		<-exited
		<-outputDone
		close(allDone)
	}()

	var timer <-chan time.Time
	if p.timeout > 0 {
		t := time.NewTimer(p.timeout)
		defer t.Stop()
		timer = t.C
	}
	res := &cmdProcResult{pid: pid}
	var cancelled error
	select {
	case <-allDone:
	case <-timer:
		res.timedOut = true
	case <-ctx.Done():
		cancelled = ctx.Err()
	}
	if res.timedOut || cancelled != nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
		grace := time.NewTimer(cmdKillGrace)
		select {
		case <-allDone:
		case <-grace.C:
			// Someone outside the group still holds the pipes.
			outR.Close()
			if errR != nil {
				errR.Close()
			}
			<-allDone
		}
		grace.Stop()
	}
	outR.Close()
	if errR != nil {
		errR.Close()
	}
	if cancelled != nil {
		return nil, fmt.Errorf("cmd: command cancelled: %w", cancelled)
	}
	res.stdout, res.stderr = stdout.buf, stderr.buf
	res.truncated = stdout.dropped > 0 || stderr.dropped > 0
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.code = -int(ws.Signal())
	} else {
		res.code = cmd.ProcessState.ExitCode()
	}
	return res, nil
}

// cmdStartRetry starts the command build returns, retrying a few times on
// ETXTBSY (a script just written may briefly be held open by a concurrently
// forked child).
func cmdStartRetry(build func() *exec.Cmd) (*exec.Cmd, error) {
	var err error
	for attempt := 0; ; attempt++ {
		cmd := build()
		err = cmd.Start()
		if err == nil {
			return cmd, nil
		}
		if !errors.Is(err, syscall.ETXTBSY) || attempt >= 4 {
			return nil, err
		}
		time.Sleep(time.Duration(attempt+1) * 20 * time.Millisecond)
	}
}

// cmdScript is cmd.script.
func cmdScript(ctx context.Context, c *modules.Call) (any, error) {
	a := c.Args
	saltenv := cmdOptStr(a.Get("saltenv"))
	if a.Get("saltenv") == nil {
		saltenv = "base"
		if c.Env != nil && c.Env.Opts != nil {
			if v, ok := c.Env.Opts.Get("saltenv"); ok && v != nil {
				saltenv = pyfmt.Str(v)
			}
		}
	}
	source := pyfmt.Str(a.Get("source"))
	srcPath := source
	if i := strings.Index(srcPath, "?"); i >= 0 && strings.HasPrefix(srcPath, "salt://") {
		srcPath = srcPath[:i]
	}
	ext := filepath.Ext(srcPath)
	dir := os.TempDir()
	if cwd := a.Get("cwd"); cwd != nil {
		dir = pyfmt.Str(cwd)
	}
	tmp, err := os.CreateTemp(dir, "__salt.tmp.*"+ext)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", cmdPyExceptionName(err), cmdPyOSError(err))
	}
	path := tmp.Name()
	tmp.Close()
	cleanup := func() {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.Log().Error(fmt.Sprintf("cmd.script: Unable to clean tempfile '%s': %v", path, err))
		}
	}
	cacheError := payload.NewMap("pid", int64(0), "retcode", int64(1), "stdout", "", "stderr", "", "cache_error", true)
	if payload.Truthy(a.Get("template")) {
		cleanup()
		return nil, fmt.Errorf("%w: Attempted to render file paths with unavailable engine %s", modules.ErrExecution, pyfmt.Str(a.Get("template")))
	}
	cached, err := cmdCacheSource(ctx, c, source, saltenv)
	if err != nil {
		cleanup()
		return nil, err
	}
	if cached == "" {
		cleanup()
		return cacheError, nil
	}
	if err := cmdCopyFile(cached, path); err != nil {
		cleanup()
		return nil, fmt.Errorf("%s: %s", cmdPyExceptionName(err), cmdPyOSError(err))
	}
	if err := os.Chmod(path, 0o500); err != nil {
		cleanup()
		return nil, fmt.Errorf("%s: %s", cmdPyExceptionName(err), cmdPyOSError(err))
	}
	runas := cmdOptStr(a.Get("runas"))
	uid := os.Getuid()
	if runas != "" {
		if u, err := user.Lookup(runas); err == nil {
			if n, err := strconv.Atoi(u.Uid); err == nil {
				uid = n
			}
		}
	}
	if uid != os.Getuid() {
		if err := os.Chown(path, uid, -1); err != nil {
			cleanup()
			return nil, fmt.Errorf("%s: %s", cmdPyExceptionName(err), cmdPyOSError(err))
		}
	}
	req := cmdRequestFrom(c, false)
	cmdText := py.ShlexQuote(path)
	if args := a.Get("args"); payload.Truthy(args) {
		cmdText += " " + pyfmt.Str(args)
	}
	req.cmd = cmdText
	req.rstrip = true
	req.cleanEnv = false
	req.prependPath = ""
	req.template = nil
	req.ignoreRetcode = false
	out, err := cmdRunCore(ctx, c, req)
	cleanup()
	if err != nil {
		return nil, err
	}
	if payload.Truthy(a.Get("hide_output")) {
		out.stdout, out.stderr = "", ""
	}
	return out.toMap(), nil
}

// cmdCacheSource is cp.cache_file for cmd.script: local paths are used in
// place, anything else goes through the "files" service.
func cmdCacheSource(ctx context.Context, c *modules.Call, source, saltenv string) (string, error) {
	local := ""
	switch {
	case strings.HasPrefix(source, "file://"):
		local = strings.TrimPrefix(source, "file://")
	case !strings.Contains(source, "://"):
		local = source
	}
	if local != "" || !strings.Contains(source, "://") {
		if !filepath.IsAbs(local) {
			return "", fmt.Errorf("%w: Path '%s' is not absolute", modules.ErrExecution, local)
		}
		return local, nil
	}
	fc, ok := modules.Service[FileClient](c.Env, "files")
	if !ok {
		c.Log().Error("cmd.script: no file client available to cache the source", "source", source)
		return "", nil
	}
	p, err := fc.CacheFile(ctx, source, saltenv)
	if err != nil {
		c.Log().Error("cmd.script: unable to cache the source", "source", source, "err", err)
		return "", nil
	}
	return p, nil
}

// cmdCopyFile is shutil.copyfile: the content of src into dst (existing
// permissions of dst are kept).
func cmdCopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

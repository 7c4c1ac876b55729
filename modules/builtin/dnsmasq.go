package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// dnsmasqMaxConfig bounds the size of one dnsmasq configuration file the
// module reads (real ones are a few KiB; reservation files a few MiB).
const dnsmasqMaxConfig = 64 << 20

// dnsmasqDefaultConfig is Salt's default config_file.
const dnsmasqDefaultConfig = "/etc/dnsmasq.conf"

// dnsmasqDefaultPidFile is where Debian's dnsmasq package writes its pid.
const dnsmasqDefaultPidFile = "/run/dnsmasq/dnsmasq.pid"

// DnsmasqFunctions returns the dnsmasq functions, for callers and tests
// that build a registry with only some modules (Register adds them too
// once wired).
func DnsmasqFunctions() []modules.Function { return dnsmasqFunctions() }

// dnsmasqFunctions is Salt's dnsmasq module plus the gsalt-only
// dnsmasq.reload. version and fullversion run "dnsmasq -v" through
// cmd.run, set_config edits files through cmd.run_all (sed, as Salt's
// file.sed does) and file.append, so those functions must be in the
// caller's registry.
func dnsmasqFunctions() []modules.Function {
	return []modules.Function{
		{Name: "dnsmasq.version", Fn: dnsmasqVersion,
			Doc: "Shows installed version of dnsmasq.\n\nCLI Example:\n\n    salt '*' dnsmasq.version"},
		{Name: "dnsmasq.fullversion", Fn: dnsmasqFullversion,
			Doc: "Shows installed version of dnsmasq and compile options.\n\nCLI Example:\n\n    salt '*' dnsmasq.fullversion"},
		{Name: "dnsmasq.get_config", Fn: dnsmasqGetConfig,
			Spec: modules.Spec{Params: []modules.Param{opt("config_file", dnsmasqDefaultConfig)}},
			Doc:  "Dumps all options from the config file.\n\nconfig_file\n    The location of the config file from which to obtain contents.\n    Defaults to ``/etc/dnsmasq.conf``.\n\nCLI Examples:\n\n    salt '*' dnsmasq.get_config\n    salt '*' dnsmasq.get_config config_file=/etc/dnsmasq.conf"},
		{Name: "dnsmasq.set_config", Fn: dnsmasqSetConfig,
			Spec: modules.Spec{Params: []modules.Param{opt("config_file", dnsmasqDefaultConfig), opt("follow", true)}, Kwargs: true},
			Doc: "Sets a value or a set of values in the specified file. By default, if\nconf-dir is configured in this file, the option is set inside any file of\nthe conf-dir where it is already enabled; otherwise it is appended to the\nmain config file. follow=False turns that off.\n\n" +
				"An option that appears several times (such as dhcp-host) is appended to\nthe main config file.\n\n:param string config_file: config file where settings should be updated / added.\n:param bool follow: attempt to set the config option inside any file within\n    the ``conf-dir`` where it has already been enabled.\n:param kwargs: key value pairs that contain the configuration settings that you\n    want set.\n\nCLI Examples:\n\n    salt '*' dnsmasq.set_config domain=mydomain.com\n    salt '*' dnsmasq.set_config follow=False domain=mydomain.com\n    salt '*' dnsmasq.set_config config_file=/etc/dnsmasq.conf domain=mydomain.com"},
		{Name: "dnsmasq.reload", Fn: dnsmasqReload,
			Spec: modules.Spec{Params: []modules.Param{opt("pid_file", dnsmasqDefaultPidFile)}},
			Doc:  "gsalt-specific (Salt's dnsmasq module has no such function): send SIGHUP\nto the dnsmasq whose pid is in pid_file, so it re-reads its hosts files\n(--addn-hosts, --hostsdir, --dhcp-hostsfile, --dhcp-optsfile) and clears\nits cache. Portable alternative: cmd.run 'kill -HUP $(cat PIDFILE)'.\n\nReturns ``True``.\n\nCLI Example:\n\n    salt '*' dnsmasq.reload pid_file=/run/dnsmasq/dnsmasq.pid"},
	}
}

// dnsmasqVersionLines runs "dnsmasq -v" through cmd.run and splits its
// output like Python's splitlines.
func dnsmasqVersionLines(ctx context.Context, c *modules.Call) ([]string, error) {
	out, err := callFunction(ctx, c, "cmd.run", []any{"dnsmasq -v"}, nil)
	if err != nil {
		return nil, err
	}
	return py.SplitLines(payload.Text(out), false), nil
}

// errDnsmasqIndex is Python's IndexError from indexing past a list's end (the
// output of dnsmasq -v is not what Salt expects).
var errDnsmasqIndex = errors.New("IndexError: list index out of range")

func dnsmasqVersion(ctx context.Context, c *modules.Call) (any, error) {
	lines, err := dnsmasqVersionLines(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(lines) < 1 {
		return nil, errDnsmasqIndex
	}
	comps := dnsmasqSplit(lines[0])
	if len(comps) < 3 {
		return nil, errDnsmasqIndex
	}
	return comps[2], nil
}

func dnsmasqFullversion(ctx context.Context, c *modules.Call) (any, error) {
	lines, err := dnsmasqVersionLines(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(lines) < 1 {
		return nil, errDnsmasqIndex
	}
	comps := dnsmasqSplit(lines[0])
	if len(comps) < 3 {
		return nil, errDnsmasqIndex
	}
	version := comps[2]
	if len(lines) < 2 {
		return nil, errDnsmasqIndex
	}
	comps = dnsmasqSplit(lines[1])
	opts := []any{}
	for i := 3; i < len(comps); i++ {
		opts = append(opts, comps[i])
	}
	return payload.NewMap("version", version, "compile options", opts), nil
}

func dnsmasqGetConfig(_ context.Context, c *modules.Call) (any, error) {
	return dnsmasqConfig(c.Args.Str("config_file"))
}

// dnsmasqConfig is Salt's get_config: the options of file, then every file
// of its conf-dir (in directory order, without names starting with "." or
// ending in "~" or "#") laid over them key by key.
func dnsmasqConfig(file string) (*payload.Map, error) {
	opts, err := dnsmasqParse(file)
	if err != nil {
		return nil, err
	}
	if !opts.Has("conf-dir") {
		return opts, nil
	}
	dir, _ := opts.Get("conf-dir")
	names, err := dnsmasqListdir(dir)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") || strings.HasSuffix(name, "#") {
			continue
		}
		sub, err := dnsmasqParse(payload.Text(dir) + "/" + name)
		if err != nil {
			return nil, err
		}
		for _, it := range sub.Items() {
			opts.SetKey(it.Key, it.Value)
		}
	}
	return opts, nil
}

// dnsmasqListdir is os.listdir: the names in directory order (unsorted,
// like Python), with Python's errors.
func dnsmasqListdir(dir any) ([]string, error) {
	path, ok := dir.(string)
	if !ok {
		// Two conf-dir lines make a list, which os.listdir refuses.
		return nil, fmt.Errorf("TypeError: listdir: path should be string, bytes, os.PathLike, integer or None, not %s", payload.TypeName(dir))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, filePyError(err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, filePyError(err)
	}
	return names, nil
}

// dnsmasqParse is Salt's _parse_dnamasq: every line that is neither blank
// nor starts with '#' is either "key=value" (the key as written, the value
// up to a second '=' and stripped; a repeated key becomes a list) or, with
// no '=', kept whole (newline included) in the "unparsed" list.
func dnsmasqParse(file string) (*payload.Map, error) {
	if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: Error: No such file '%s'", modules.ErrExecution, file)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, filePyError(err)
	}
	defer f.Close()
	data := make([]byte, 0, 4096)
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		data = append(data, buf[:n]...)
		if len(data) > dnsmasqMaxConfig {
			return nil, fmt.Errorf("%w: %s is larger than %d bytes", modules.ErrExecution, file, dnsmasqMaxConfig)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, filePyError(err)
		}
	}
	if !utf8.Valid(data) {
		return nil, fileUnicodeError(data)
	}
	opts := &payload.Map{}
	for _, line := range dnsmasqTextLines(string(data)) {
		if strings.TrimFunc(line, cmdPyIsSpace) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, rest, hasEq := strings.Cut(line, "=")
		if !hasEq {
			if cur, ok := opts.Get("unparsed"); ok {
				opts.Set("unparsed", dnsmasqAppend(cur, line))
			} else {
				opts.Set("unparsed", []any{line})
			}
			continue
		}
		value, _, _ := strings.Cut(rest, "=")
		value = strings.TrimFunc(value, cmdPyIsSpace)
		if cur, ok := opts.Get(key); ok {
			opts.Set(key, dnsmasqAppend(cur, value))
		} else {
			opts.Set(key, value)
		}
	}
	return opts, nil
}

// dnsmasqAppend is Salt's "turn a string into a one-element list, then append".
func dnsmasqAppend(cur any, v string) []any {
	if l, ok := cur.([]any); ok {
		return append(l, v)
	}
	return []any{cur, v}
}

// dnsmasqTextLines splits text read in Python's universal-newline mode:
// "\r\n" and "\r" become "\n", and every line keeps its "\n" (the last
// one only if the file ends with one).
func dnsmasqTextLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// dnsmasqSplit is str.split() with no separator.
func dnsmasqSplit(s string) []string { return strings.FieldsFunc(s, cmdPyIsSpace) }

func dnsmasqSetConfig(ctx context.Context, c *modules.Call) (any, error) {
	file := c.Args.Str("config_file")
	opts, err := dnsmasqConfig(file)
	if err != nil {
		return nil, err
	}
	includes := []string{file}
	if c.Args.Get("follow") == true && opts.Has("conf-dir") {
		dir, _ := opts.Get("conf-dir")
		names, err := dnsmasqListdir(dir)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			if strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") || strings.HasSuffix(name, "bak") || strings.HasSuffix(name, "#") {
				continue
			}
			includes = append(includes, payload.Text(dir)+"/"+name)
		}
	}
	ret := &payload.Map{}
	if c.Args.Kwargs == nil {
		return ret, nil
	}
	for _, it := range c.Args.Kwargs.Items() {
		key := payload.KeyString(it.Key)
		if strings.HasPrefix(key, "__") {
			continue
		}
		ret.SetKey(it.Key, it.Value)
		line := key + "=" + pyfmt.Str(it.Value)
		if cur, ok := opts.Get(key); ok {
			if _, isStr := cur.(string); isStr {
				for _, path := range includes {
					if err := dnsmasqSed(ctx, c, path, "^"+key+"=.*", line); err != nil {
						return nil, err
					}
				}
				continue
			}
		}
		// The line goes in as file.append's "args" keyword: a positional
		// "key=value" string would be bound as a keyword argument.
		if _, err := callFunction(ctx, c, "file.append", []any{file}, payload.NewMap("args", []any{line})); err != nil {
			return nil, err
		}
	}
	return ret, nil
}

// dnsmasqSed is what Salt's file.sed(path, before, after) runs with its
// defaults: sed -i.bak -r -e s/BEFORE/AFTER/g PATH through cmd.run_all,
// with ' and / escaped the way Salt escapes them (its quote escape is meant
// for a shell that is not used, so a ' ends up as '"'"' in the file, as
// with Salt). A missing path is left alone; sed's own failures are
// ignored, as set_config ignores file.sed's return.
func dnsmasqSed(ctx context.Context, c *modules.Call, path, before, after string) error {
	if _, err := os.Stat(fileExpand(path)); err != nil {
		return nil
	}
	esc := strings.NewReplacer("'", `'"'"'`, "/", `\/`)
	expr := "s/" + esc.Replace(before) + "/" + esc.Replace(after) + "/g"
	cmd := []any{"sed", "-i.bak", "-r", "-e", expr, fileExpand(path)}
	_, err := callFunction(ctx, c, "cmd.run_all", []any{cmd}, payload.NewMap("python_shell", false))
	return err
}

func dnsmasqReload(_ context.Context, c *modules.Call) (any, error) {
	path := c.Args.Str("pid_file")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read the dnsmasq pid file: %s", modules.ErrExecution, cmdPyOSError(err))
	}
	defer f.Close()
	buf := make([]byte, 64)
	n, _ := f.Read(buf)
	text := strings.TrimSpace(string(buf[:n]))
	pid, err := strconv.Atoi(text)
	if err != nil || pid <= 0 {
		// pid 0 or a negative pid would signal a whole process group.
		return nil, fmt.Errorf("%w: %s does not hold a process id: %q", modules.ErrExecution, path, text)
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		return nil, fmt.Errorf("%w: cannot signal dnsmasq (pid %d): %s", modules.ErrExecution, pid, cmdPyOSError(err))
	}
	return true, nil
}

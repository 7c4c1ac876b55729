package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's salt_proxy module (salt/modules/salt_proxy.py):
// configure_proxy writes the proxy configuration file (one line,
// "master: <the master grain>") when there is none and starts a proxy
// process for a proxy id unless one runs; is_running looks for that
// process in ps. Where Salt starts salt-proxy, gsalt starts gsalt-proxy
// with the same arguments (found on PATH as Salt finds salt-proxy). The
// process check is Salt's own pattern, "salt-proxy --proxyid=<id>", which
// also matches a gsalt-proxy command line, so a running salt-proxy or
// gsalt-proxy for the id counts.

// SaltProxyConfigDirOpt is the option naming the directory configure_proxy
// writes its "proxy" file to (a gsalt addition: Salt writes to its
// installation's configuration directory, /etc/salt on Linux). When it is
// not /etc/salt, the gsalt-proxy started also gets "-c <dir>", so it reads
// the file written there.
const SaltProxyConfigDirOpt = "salt_proxy.config_dir"

// saltProxyCommand is the proxy daemon configure_proxy starts.
const saltProxyCommand = "gsalt-proxy"

// saltProxyTimeout is the timeout (seconds) of the ps and start commands.
const saltProxyTimeout = int64(5)

func saltProxyFunctions() []modules.Function {
	return []modules.Function{
		{Name: "salt_proxy.configure_proxy", Fn: saltProxyConfigure,
			Spec: modules.Spec{Params: []modules.Param{req("proxyname"), opt("start", true)}},
			Doc: "Write the proxy configuration file (proxy in the configuration directory,\n" +
				"one line: master: <the master grain>) when there is none, and start a\n" +
				"gsalt-proxy process for the proxy id unless one is running.\n\n" +
				"proxyname:\n    The proxy id (it should match the proxies' pillar)\nstart:\n    Whether to start the proxy process (default True)\n\n" +
				"Returns result and changes {old, new} (text lines). With test=True nothing\nis written or started.\n\n" +
				"CLI Example:\n\n    salt deviceminion salt_proxy.configure_proxy p8000"},
		{Name: "salt_proxy.is_running", Fn: saltProxyIsRunning,
			Spec: modules.Spec{Params: []modules.Param{req("proxyname")}},
			Doc: "Report whether a proxy process (salt-proxy or gsalt-proxy) runs for the\nproxy id: {'result': True} or {'result': False}.\n\n" +
				"proxyname:\n    The proxy id (p8000 for example)\n\n" +
				"CLI Example:\n\n    salt deviceminion salt_proxy.is_running p8000"},
	}
}

// saltProxyQuote is shlex.quote(proxyname): a false value is two single
// quotes, a value other than a string Python's TypeError.
func saltProxyQuote(v any) (string, error) {
	if !payload.Truthy(v) {
		return "''", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%w: expected string or bytes-like object, got '%s'", modules.ErrArguments, py.TypeName(v))
	}
	return py.ShlexQuote(s), nil
}

// saltProxyConfigDir is the directory of the proxy file.
func saltProxyConfigDir(c *modules.Call) string {
	if c.Env != nil && c.Env.Opts != nil {
		if v, ok := c.Env.Opts.Get(SaltProxyConfigDirOpt); ok && v != nil {
			if s := pyfmt.Str(v); s != "" {
				return s
			}
		}
	}
	return config.DefaultConfigDir
}

// saltProxyRunning is _is_proxy_running: Salt's ps pipeline through
// cmd.run_all; any output means running.
func saltProxyRunning(ctx context.Context, c *modules.Call, proxyname any) (bool, error) {
	q, err := saltProxyQuote(proxyname)
	if err != nil {
		return false, err
	}
	cmdline := fmt.Sprintf(`ps ax | grep "salt-proxy --proxyid=%s" | grep -v grep`, q)
	res, err := callFunction(ctx, c, "cmd.run_all", []any{cmdline}, payload.NewMap("timeout", saltProxyTimeout, "python_shell", true))
	if err != nil {
		return false, err
	}
	m, _ := res.(*payload.Map)
	if m == nil {
		return false, nil
	}
	out, _ := m.Get("stdout")
	return payload.Truthy(out), nil
}

// saltProxyWriteConf is _write_proxy_conf: the file holds "master: " and
// the master grain, without a newline (a missing grain is Python's
// KeyError).
func saltProxyWriteConf(c *modules.Call, path string) (string, error) {
	var master any
	ok := false
	if c.Env != nil && c.Env.Grains != nil {
		master, ok = c.Env.Grains.Get("master")
	}
	if !ok {
		return "", errors.New("KeyError: 'master'")
	}
	if err := os.WriteFile(path, []byte("master: "+pyfmt.Str(master)), 0o666); err != nil {
		return "", &saltProxyOSError{err}
	}
	return "Wrote proxy file " + path, nil
}

// saltProxyOSError is an OSError from writing the proxy file, which
// configure_proxy reports in its changes.
type saltProxyOSError struct{ err error }

func (e *saltProxyOSError) Error() string { return cmdPyOSError(e.err) }
func (e *saltProxyOSError) Unwrap() error { return e.err }

// saltProxyConfFile is _proxy_conf_file.
func saltProxyConfFile(c *modules.Call, path string, test bool) (ok bool, added, existing []string, err error) {
	ok = true
	if _, statErr := os.Stat(path); statErr == nil {
		msg := fmt.Sprintf("Salt Proxy: %s already exists, skipping", path)
		c.Log().Debug(msg)
		return ok, nil, []string{msg}, nil
	}
	var msg string
	if test {
		msg = "Salt Proxy: Update required to proxy conf " + path
	} else {
		wrote, werr := saltProxyWriteConf(c, path)
		var oe *saltProxyOSError
		switch {
		case errors.As(werr, &oe):
			ok = false
			msg = "Salt Proxy: Error writing proxy file " + oe.Error()
			c.Log().Error(msg)
			added = append(added, msg)
		case werr != nil:
			return false, nil, nil, werr
		default:
			added = append(added, wrote)
			msg = "Salt Proxy: Wrote proxy conf " + path
		}
	}
	added = append(added, msg)
	c.Log().Debug(msg)
	return ok, added, nil, nil
}

// saltProxyProcess is _proxy_process: start the proxy daemon unless one
// runs for proxyname.
func saltProxyProcess(ctx context.Context, c *modules.Call, proxyname any, test bool) (added, existing []string, err error) {
	running, err := saltProxyRunning(ctx, c, proxyname)
	if err != nil {
		return nil, nil, err
	}
	name := pyfmt.Str(proxyname)
	switch {
	case running:
		existing = append(existing, "Salt Proxy: already running for "+name)
	case test:
		added = append(added, fmt.Sprintf("Salt Proxy: process %s will be started", name))
	default:
		q, err := saltProxyQuote(proxyname)
		if err != nil {
			return nil, nil, err
		}
		cmdline := fmt.Sprintf("%s --proxyid=%s -l info -d", saltProxyCommand, q)
		if dir := saltProxyConfigDir(c); filepath.Clean(dir) != config.DefaultConfigDir {
			// after Salt's arguments: the command line keeps the
			// "salt-proxy --proxyid=<id>" the process check looks for
			cmdline += " -c " + py.ShlexQuote(dir)
		}
		// Salt does not look at the result of the start either
		if _, err := callFunction(ctx, c, "cmd.run_all", []any{cmdline}, payload.NewMap("timeout", saltProxyTimeout)); err != nil {
			return nil, nil, err
		}
		added = append(added, "Salt Proxy: Started proxy process for "+name)
	}
	return added, existing, nil
}

func saltProxyConfigure(ctx context.Context, c *modules.Call) (any, error) {
	proxyname := c.Args.Get("proxyname")
	test := false
	if c.Env != nil && c.Env.Opts != nil {
		v, _ := c.Env.Opts.Get("test")
		test = payload.Truthy(v)
	}
	path := filepath.Join(saltProxyConfigDir(c), "proxy")
	okFile, added, existing, err := saltProxyConfFile(c, path, test)
	if err != nil {
		return nil, err
	}
	okProc := false
	if payload.Truthy(c.Args.Get("start")) {
		a, e, err := saltProxyProcess(ctx, c, proxyname, test)
		if err != nil {
			return nil, err
		}
		okProc = true
		existing = append(existing, e...)
		added = append(added, a...)
	} else {
		existing = append(existing, "Start is False, not starting salt-proxy process")
		c.Log().Debug("Process not started")
	}
	return payload.NewMap(
		"result", okFile && okProc,
		"changes", payload.NewMap("old", strings.Join(existing, "\n"), "new", strings.Join(added, "\n")),
	), nil
}

func saltProxyIsRunning(ctx context.Context, c *modules.Call) (any, error) {
	running, err := saltProxyRunning(ctx, c, c.Args.Get("proxyname"))
	if err != nil {
		return nil, err
	}
	return payload.NewMap("result", running), nil
}

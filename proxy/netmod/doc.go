// Package netmod holds the execution modules of napalm proxy minions, Go
// versions of Salt's napalm_network (net.*), napalm_mod (napalm.*, with
// the napalm.netmiko_* functions over the proxy's own SSH session),
// napalm_ntp (ntp.*), napalm_bgp (bgp.*), napalm_route (route.*),
// napalm_probes (probes.*), napalm_snmp (snmp.*) and napalm_users
// (users.*): one file per Salt module (net.config_changed/config_control,
// which the network state modules call, in config_control.go).
//
// Every function runs against the job's device through
// proxymod.With[*proxymod.Napalm] (the proxy framework serialises calls per
// device) and returns what Salt returns: the {out, result, comment} dict of
// salt.utils.napalm.call, or net.load_config's {result, comment,
// already_configured, loaded_config, diff}. A device without always_alive
// that cannot be opened makes a function return Salt's string "Cannot
// connect to <host>[:<port>] as <user>.. See log for details.".
//
// Services used from Env.Services: "proxy" (proxymod.Service, required)
// and "files" (anything with CacheFile(ctx, src, saltenv) (string, error),
// for salt:// files of net.load_config and net.load_template).
package netmod

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/wire/payload"
)

// filesServiceName is the Env.Services key of the file client.
const filesServiceName = "files"

// maxFileSize bounds configuration files and templates read from disk.
const maxFileSize = 16 << 20

// FileClient fetches salt:// files (the minion's "files" service).
type FileClient interface {
	CacheFile(ctx context.Context, src, saltenv string) (localPath string, err error)
}

// Functions returns every execution function of the package, to be
// registered for napalm devices (proxymod.Type.Functions).
func Functions() []modules.Function {
	var out []modules.Function
	out = append(out, netFunctions()...)
	out = append(out, napalmFunctions()...)
	out = append(out, ntpFunctions()...)
	out = append(out, bgpFunctions()...)
	out = append(out, routeFunctions()...)
	out = append(out, snmpChangeFunctions()...)
	out = append(out, usersChangeFunctions()...)
	out = append(out, configControlFunctions()...)
	out = append(out, probesFunctions()...)
	out = append(out, probesChangeFunctions()...)
	out = append(out, netmikoFunctions()...)
	out = append(out, snmpFunctions()...)
	out = append(out, usersFunctions()...)
	return out
}

// Type is proxymod.NapalmType with this package's functions attached.
func Type() proxymod.Type {
	t := proxymod.NapalmType()
	t.Functions = Functions
	return t
}

// run executes fn with the job's napalm device, opened for the duration
// of the function (Salt's proxy_napalm_wrap).
func run(ctx context.Context, c *modules.Call, fn func(ctx context.Context, n *proxymod.Napalm) (any, error)) (any, error) {
	return proxymod.With(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
		release, err := n.Connect(ctx)
		if err != nil {
			return proxymod.ConnectMessage(err), nil
		}
		defer release(ctx)
		return fn(ctx, n)
	})
}

func p(name string, def any) modules.Param { return modules.Param{Name: name, Default: def} }
func rp(name string) modules.Param         { return modules.Param{Name: name, Required: true} }

// kwargsOnly is the spec of functions taking only **kwargs.
var kwargsOnly = modules.Spec{Kwargs: true}

// str is the text of an optional argument ("" for None).
func str(v any) string {
	if v == nil {
		return ""
	}
	return payload.Text(v)
}

// intArg reads an optional integer argument (0 for None or junk).
func intArg(v any) int {
	if n, ok := payload.AsInt(v); ok {
		return int(n)
	}
	if s, ok := v.(string); ok {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(s), &n); err == nil {
			return n
		}
	}
	return 0
}

// readSource returns the text of a salt:// or local file, and false when
// it cannot be read (cp.get_file_str returning False).
func readSource(ctx context.Context, c *modules.Call, src, saltenv string) (string, bool) {
	path := src
	if fc, ok := modules.Service[FileClient](c.Env, filesServiceName); ok {
		lp, err := fc.CacheFile(ctx, src, saltenv)
		if err != nil || lp == "" {
			c.Log().Error("cannot cache file", "src", src, "err", err)
			return "", false
		}
		path = lp
	} else if strings.Contains(src, "://") {
		path = strings.TrimPrefix(src, "file://")
		if strings.Contains(path, "://") {
			return "", false
		}
	}
	st, err := os.Stat(path)
	if err != nil || st.IsDir() || st.Size() > maxFileSize {
		return "", false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	return string(b), true
}

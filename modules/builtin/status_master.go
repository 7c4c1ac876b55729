package builtin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/procnet"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// Tags of the events status.master fires on the minion's own bus when the
// connection to the master is not what the caller expected (the tags the
// minion's multi-master logic listens to).
const (
	statusTagMasterConnected    = "__master_connected"
	statusTagMasterDisconnected = "__master_disconnected"
)

// statusMasterFunctions is status.master: whether this host holds an
// established TCP connection to the master's publish port.
func statusMasterFunctions() []modules.Function {
	return []modules.Function{
		{Name: "status.master", Spec: modules.Spec{Params: []modules.Param{opt("master", nil), opt("connected", true)}},
			Doc: "Report whether this minion has an established TCP connection to the\n" +
				"given master's publish port (config publish_port, 4505 by default).\n" +
				"The master name is resolved to its addresses; an unresolvable or empty\n" +
				"name returns None. When the state found differs from connected, a\n" +
				"__master_connected or __master_disconnected event carrying the master\n" +
				"name is fired on the minion's event bus. Meant for the scheduler.\n\n" +
				"CLI Example:\n\n    salt '*' status.master 10.0.0.1",
			Fn: statusMaster},
	}
}

func statusMaster(ctx context.Context, c *modules.Call) (any, error) {
	master := c.Args.Get("master")
	if !payload.Truthy(master) {
		return nil, nil
	}
	ips := statusHostIPs(ctx, payload.Text(master))
	if len(ips) == 0 {
		return nil, nil
	}
	port, err := statusPortNumber(configGet(c.Env, "publish_port", int64(4505)))
	if err != nil {
		return nil, err
	}
	remotes, err := statusRemotesOnPort(ctx, port)
	if err != nil {
		return nil, err
	}
	up := false
	for _, ip := range ips {
		if remotes[ip] {
			up = true
			break
		}
	}
	// Salt compares with "is not": only a boolean equal to the state found
	// keeps the event from firing.
	if want, ok := c.Args.Get("connected").(bool); !ok || want != up {
		tag := statusTagMasterDisconnected
		if up {
			tag = statusTagMasterConnected
		}
		eventFire(ctx, c, payload.NewMap("master", master), tag)
	}
	return up, nil
}

// statusHostIPs is the addresses a host name resolves to (nil when it
// does not), as getaddrinfo gives them: IPv6 zone suffixes dropped.
func statusHostIPs(ctx context.Context, host string) []string {
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		if i := strings.IndexByte(a, '%'); i >= 0 {
			a = a[:i]
		}
		out = append(out, a)
	}
	return out
}

// statusPortNumber is Python's int(port) for a config value.
func statusPortNumber(v any) (int, error) {
	switch x := v.(type) {
	case int64:
		return int(x), nil
	case float64:
		return int(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	s := strings.TrimSpace(payload.Text(v))
	n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	if err != nil {
		return 0, &modules.PyException{Class: "ValueError", Message: fmt.Sprintf("invalid literal for int() with base 10: %s", pyReprString(payload.Text(v)))}
	}
	return n, nil
}

// pyReprString is Python's repr of a str without quotes inside.
func pyReprString(s string) string { return "'" + s + "'" }

// statusRemotesOnPort is the set of remote addresses of the established
// TCP connections whose remote port is port: from "ss -ant dst :port"
// when ss runs and prints its header, else from /proc/net/tcp and tcp6.
func statusRemotesOnPort(ctx context.Context, port int) (map[string]bool, error) {
	argv := []string{"ss", "-ant", "dst", ":" + strconv.Itoa(port)}
	path, err := exec.LookPath("ss")
	if err == nil {
		cmd := exec.CommandContext(ctx, path, argv[1:]...)
		out, err := cmd.Output()
		var exitErr *exec.ExitError
		switch {
		case errors.As(err, &exitErr):
			return nil, &modules.PyException{Class: "subprocess.CalledProcessError",
				Message: fmt.Sprintf("Command '['ss', '-ant', 'dst', ':%d']' returned non-zero exit status %d.", port, exitErr.ExitCode())}
		case err == nil:
			if set, ok := statusParseSS(string(out), port); ok {
				return set, nil
			}
		}
		// Not runnable: Salt's OSError branch falls back to /proc.
	}
	set := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := readBounded(f, maxProcFile)
		if err != nil {
			continue
		}
		for remote, rport := range statusProcTCPEstablished(string(b)) {
			if rport[port] {
				set[remote] = true
			}
		}
	}
	return set, nil
}

// statusParseSS reads ss -ant output: the remote hosts (brackets
// stripped) of ESTAB lines whose peer port is port. ok is false when no
// header line was seen (an ss that printed nothing usable).
func statusParseSS(out string, port int) (map[string]bool, bool) {
	set := map[string]bool{}
	valid := false
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, "Address:Port") {
			valid = true
			continue
		}
		if !strings.Contains(line, "ESTAB") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		i := strings.LastIndexByte(f[4], ':')
		if i < 0 {
			continue
		}
		rp, err := strconv.Atoi(f[4][i+1:])
		if err != nil || rp != port {
			continue
		}
		set[strings.Trim(f[4][:i], "[]")] = true
	}
	return set, valid
}

// statusProcTCPEstablished reads a /proc/net/tcp or tcp6 table: for each
// remote address of an ESTABLISHED socket, the remote ports seen.
func statusProcTCPEstablished(table string) map[string]map[int]bool {
	out := map[string]map[int]bool{}
	sc := bufio.NewScanner(strings.NewReader(table))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || f[0] == "sl" {
			continue
		}
		if st, err := strconv.ParseUint(f[3], 16, 8); err != nil || st != 1 {
			continue
		}
		addr, p, ok := procnet.ParseAddr(f[2])
		if !ok {
			continue
		}
		ip := procnet.AddrText(addr)
		if out[ip] == nil {
			out[ip] = map[int]bool{}
		}
		out[ip][p] = true
	}
	return out
}

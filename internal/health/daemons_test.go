package health_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"go.etcd.io/bbolt"
)

// The tests below run gsalt's daemons as real processes, built from this
// tree, with metrics_port on free 127.0.0.1 ports.

func TestMain(m *testing.M) { proc.Main(m) }

// buildDaemons builds the commands the tests run (once) and returns their
// folder.
func buildDaemons(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs gsalt's daemons; skipped with -short")
	}
	var pkgs []string
	for _, c := range []string{"gsalt", "gsalt-master", "gsalt-minion", "gsalt-proxy", "gsalt-api", "gsalt-devsim"} {
		pkgs = append(pkgs, "./cmd/"+c)
	}
	return proc.Build(t, pkgs...)
}

// start starts args as name, its output in dir/name.err; it is stopped
// when the test ends.
func start(t *testing.T, dir, name string, args ...string) *proc.Proc {
	t.Helper()
	return proc.Start(t, name, exec.Command(args[0], args[1:]...), proc.Options{Log: filepath.Join(dir, name+".err"), Tail: 3000})
}

// probe returns the status and body of a probe, or 0 and the error.
func probe(url string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitProbe polls url until ok(code, body) or the deadline; it fails the
// test with the last answer otherwise, or when p exits.
func waitProbe(t *testing.T, p *proc.Proc, what, url string, d time.Duration, ok func(int, string) bool) (int, string) {
	t.Helper()
	var code int
	var body string
	if !testutil.Poll(d, func() bool {
		if p != nil && p.Exited() {
			return true
		}
		code, body = probe(url)
		return ok(code, body)
	}) || (p != nil && p.Exited()) {
		if p != nil && p.Exited() {
			t.Fatalf("%s: %s exited: %s", what, p.Name, p.Tail(3000))
		}
		t.Fatalf("%s: last answer from %s: %d %q", what, url, code, body)
	}
	return code, body
}

func is200(code int, _ string) bool { return code == 200 }

// listening returns the TCP ports pid listens on (from /proc).
func listening(t *testing.T, pid int) []int {
	t.Helper()
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var ports []int
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fl := strings.Fields(sc.Text())
			// sl local_address rem_address st ... inode (field 9)
			if len(fl) < 10 || fl[3] != "0A" || !inodes[fl[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(fl[1], ":")
			if n, err := strconv.ParseInt(hexPort, 16, 32); err == nil {
				ports = append(ports, int(n))
			}
		}
		fh.Close()
	}
	return ports
}

// lab is one master's configuration folder and ports.
type lab struct {
	t        *testing.T
	bin, dir string
	pub, ret int
}

func (l *lab) masterConf() string { return filepath.Join(l.dir, "etc") }

// newLab builds the daemons (once) and gives a test its short folder
// (unix socket paths are limited) and the master's free ports.
func newLab(t *testing.T) *lab {
	t.Helper()
	bin := buildDaemons(t)
	return &lab{t: t, bin: bin, dir: testutil.ShortDir(t, "gsh"), pub: proc.FreePort(t), ret: proc.FreePort(t)}
}

// writeMaster writes the master's configuration: its ports and folders,
// auto_accept, then the extra lines.
func (l *lab) writeMaster(extra string) {
	testutil.WriteFile(l.t, filepath.Join(l.masterConf(), "master"), fmt.Sprintf(
		"interface: 127.0.0.1\npublish_port: %[2]d\nret_port: %[3]d\nroot_dir: %[1]s\npki_dir: %[1]s/pki\ncachedir: %[1]s/cache\n"+
			"sock_dir: %[1]s/sock\nlog_file: %[1]s/master.log\nuser: root\nauto_accept: True\n", l.dir, l.pub, l.ret)+extra, 0o644)
}

// writeMinionConf writes dir/etc/file (minion or proxy) for a daemon of
// the lab's master: id (when not ""), its folders under dir, the master's
// address, then the extra lines.
func (l *lab) writeMinionConf(dir, file, id, extra string) {
	head := ""
	if id != "" {
		head = "id: " + id + "\n"
	}
	testutil.WriteFile(l.t, filepath.Join(dir, "etc", file), head+fmt.Sprintf(
		"root_dir: %[1]s\npki_dir: %[1]s/pki\ncachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/log\n"+
			"master: 127.0.0.1\nmaster_port: %[2]d\nacceptance_wait_time: 1\n", dir, l.ret)+extra, 0o644)
}

// gsalt runs the salt CLI and returns its JSON output.
func (l *lab) gsalt(args ...string) (map[string]any, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(l.bin, "gsalt"), append([]string{"-c", l.masterConf(), "--out", "json", "--static"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	var v map[string]any
	_ = json.Unmarshal(out.Bytes(), &v)
	return v, out.String() + errb.String()
}

// TestDaemonsHealthAndMetrics runs gsalt-master, gsalt-minion,
// gsalt-proxy (with two gsalt-devsim fleets) and gsalt-api with their
// metrics endpoints on: each becomes ready only when its readiness
// condition holds, every scrape parses strictly, and the counters move
// with the work done.
func TestDaemonsHealthAndMetrics(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	bin, dir := l.bin, l.dir
	mport, aport, apiPort := proc.FreePort(t), proc.FreePort(t), proc.FreePort(t)
	l.writeMaster(fmt.Sprintf(`file_roots: {base: [%[1]s/srv/salt]}
pillar_roots: {base: [%[1]s/srv/pillar]}
metrics_port: %[2]d
metrics_heartbeat_timeout: 10
netapi_enable_clients: [local]
rest_cherrypy:
  port: %[3]d
  host: 127.0.0.1
  disable_ssl: True
  metrics_port: %[4]d
`, dir, mport, apiPort, aport))
	mbase := fmt.Sprintf("http://127.0.0.1:%d", mport)

	// The master is not ready while its job cache is held by another
	// process (bbolt's file lock): nothing is bound yet.
	if err := os.MkdirAll(filepath.Join(dir, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	held, err := bbolt.Open(filepath.Join(dir, "cache", "gsalt-jobs.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	master := start(t, dir, "gsalt-master", filepath.Join(bin, "gsalt-master"), "-c", l.masterConf(), "-l", "info")
	_, body := waitProbe(t, master, "master not ready while the job cache is locked", mbase+"/readyz", 60*time.Second,
		func(code int, body string) bool {
			return code == 503 && strings.Contains(body, "fail job cache: not open")
		})
	for _, want := range []string{"fail publish port: not bound", "fail request port: not bound"} {
		if !strings.Contains(body, want) {
			t.Errorf("/readyz before bind: %q lacks %q", body, want)
		}
	}
	if code, body := probe(mbase + "/healthz"); code != 200 || !strings.Contains(body, "ok maintenance loop") {
		t.Errorf("/healthz while starting: %d %q", code, body)
	}
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}
	_, body = waitProbe(t, master, "master ready", mbase+"/readyz", 60*time.Second, is200)
	for _, want := range []string{
		fmt.Sprintf("ok publish port: bound on 127.0.0.1:%d", l.pub),
		fmt.Sprintf("ok request port: bound on 127.0.0.1:%d", l.ret),
		"ok job cache: open",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/readyz: %q lacks %q", body, want)
		}
	}
	fams := scrape(t, mbase)
	for _, name := range []string{"gsalt_master_jobs_published_total", "gsalt_master_returns_received_total", "gsalt_jobcache_write_errors_total"} {
		if v := value(t, fams, name, nil); v != 0 {
			t.Errorf("%s = %v at start, want 0", name, v)
		}
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "gsalt_event_bus_subscribers", "gsalt_master_request_queue_capacity"} {
		if v := value(t, fams, name, nil); v <= 0 {
			t.Errorf("%s = %v, want > 0", name, v)
		}
	}

	// A minion with metrics: ready once authenticated and subscribed.
	minPort := proc.FreePort(t)
	mdir := filepath.Join(dir, "m1")
	l.writeMinionConf(mdir, "minion", "m1", fmt.Sprintf("metrics_port: %d\n", minPort))
	minion := start(t, dir, "gsalt-minion", filepath.Join(bin, "gsalt-minion"), "-c", filepath.Join(mdir, "etc"), "-l", "info")
	minBase := fmt.Sprintf("http://127.0.0.1:%d", minPort)
	_, body = waitProbe(t, minion, "minion ready", minBase+"/readyz", 90*time.Second, is200)
	if want := fmt.Sprintf("ok master: authenticated and connected to 127.0.0.1:%d", l.ret); !strings.Contains(body, want) {
		t.Errorf("minion /readyz: %q lacks %q", body, want)
	}
	if code, body := probe(minBase + "/healthz"); code != 200 {
		t.Errorf("minion /healthz: %d %q", code, body)
	}
	fams = scrape(t, mbase)
	if v := value(t, fams, "gsalt_master_auth_total", map[string]string{"outcome": "accepted"}); v < 1 {
		t.Errorf("accepted auths = %v, want >= 1", v)
	}
	// A job moves the master's counters.
	ret, out := l.gsalt("m1", "test.ping", "-t", "60")
	if ret["m1"] != true {
		t.Fatalf("test.ping: %s", out)
	}
	if !testutil.Poll(30*time.Second, func() bool {
		fams = scrape(t, mbase)
		return value(t, fams, "gsalt_master_returns_received_total", nil) >= 1
	}) {
		t.Fatalf("no return counted")
	}
	if v := value(t, fams, "gsalt_master_jobs_published_total", nil); v < 1 {
		t.Errorf("jobs published = %v", v)
	}
	if v := value(t, fams, "gsalt_jobcache_writes_total", nil); v < 2 {
		t.Errorf("job cache writes = %v, want >= 2 (load and return)", v)
	}
	mf := scrape(t, minBase)
	for name, want := range map[string]float64{"gsalt_minion_connected": 1, "gsalt_minion_authenticated": 1} {
		if v := value(t, mf, name, nil); v != want {
			t.Errorf("minion %s = %v, want %v", name, v, want)
		}
	}
	if v := value(t, mf, "gsalt_minion_authentications_total", nil); v < 1 {
		t.Errorf("minion authentications = %v", v)
	}

	// gsalt-api: ready while the master answers; requests counted by path
	// and status.
	apiBase := fmt.Sprintf("http://127.0.0.1:%d", aport)
	api := start(t, dir, "gsalt-api", filepath.Join(bin, "gsalt-api"), "-c", l.masterConf(), "-l", "info")
	_, body = waitProbe(t, api, "api ready", apiBase+"/readyz", 60*time.Second, is200)
	if want := fmt.Sprintf("ok master: master request port 127.0.0.1:%d reachable", l.ret); !strings.Contains(body, want) {
		t.Errorf("api /readyz: %q lacks %q", body, want)
	}
	waitProbe(t, api, "api live", apiBase+"/healthz", 30*time.Second, is200)
	for _, p := range []string{"/", "/minions", "/nosuch/x"} {
		code, _ := probe(fmt.Sprintf("http://127.0.0.1:%d%s", apiPort, p))
		if code == 0 {
			t.Fatalf("the API does not answer %s", p)
		}
	}
	af := scrape(t, apiBase)
	if v := value(t, af, "gsalt_api_requests_total", map[string]string{"path": "/", "status": "200"}); v != 1 {
		t.Errorf(`api requests {path="/",status="200"} = %v, want 1`, v)
	}
	if v := value(t, af, "gsalt_api_requests_total", map[string]string{"path": "/minions", "status": "401"}); v != 1 {
		t.Errorf(`api requests {path="/minions",status="401"} = %v, want 1`, v)
	}
	if v := value(t, af, "gsalt_api_requests_total", map[string]string{"path": "other"}); v != 1 {
		t.Errorf(`api requests {path="other"} = %v, want 1`, v)
	}

	t.Run("proxy readiness follows the devices", func(t *testing.T) { proxyShare(t, l) })

	// Without the master the API is not ready (but alive).
	master.Stop()
	waitProbe(t, api, "api not ready without the master", apiBase+"/readyz", 60*time.Second,
		func(code int, body string) bool { return code == 503 && strings.Contains(body, "unreachable") })
	if code, body := probe(apiBase + "/healthz"); code != 200 {
		t.Errorf("api /healthz without the master: %d %q", code, body)
	}
	waitProbe(t, minion, "minion not ready without the master", minBase+"/readyz", 60*time.Second,
		func(code int, _ string) bool { return code == 503 })
}

// devsim starts a gsalt-devsim of one ios device on a free port and
// returns the process and the port.
func devsim(t *testing.T, l *lab, name string) (*proc.Proc, int) {
	t.Helper()
	p := start(t, l.dir, name, filepath.Join(l.bin, "gsalt-devsim"), "--base-port", "0", "--devices", "1",
		"--platform", "ios", "--user", "admin", "--password", "admin", "--log-level", "error")
	// "gsalt-devsim: 1 ios devices on 127.0.0.1:PORT .. 127.0.0.1:PORT"
	m := p.WaitLog(t, 60*time.Second, devsimLine)
	port, _ := strconv.Atoi(m[1])
	return p, port
}

var devsimLine = regexp.MustCompile(` devices on 127\.0\.0\.1:(\d+) `)

// proxyShare: gsalt-proxy serves 4 napalm devices, each simulated by its
// own gsalt-devsim, with metrics_ready_share 0.7 and --metrics-port: ready
// at 4/4 and at 3/4, not ready at 2/4 as the simulators stop; the session
// counters move.
func proxyShare(t *testing.T, l *lab) {
	pdir := filepath.Join(l.dir, "px")
	var sims []*proc.Proc
	var top strings.Builder
	top.WriteString("base:\n")
	var ids []string
	for i := 1; i <= 4; i++ {
		p, port := devsim(t, l, fmt.Sprintf("devsim-%d", i))
		sims = append(sims, p)
		id := fmt.Sprintf("sw%d", i)
		ids = append(ids, id)
		fmt.Fprintf(&top, "  '%s':\n    - %s\n", id, id)
		testutil.WriteFile(t, filepath.Join(l.dir, "srv", "pillar", id+".sls"), fmt.Sprintf(
			"proxy:\n  proxytype: napalm\n  driver: ios\n  host: 127.0.0.1\n  username: admin\n  password: admin\n"+
				"  optional_args:\n    port: %d\n    keepalive: 1\n", port), 0o644)
	}
	testutil.WriteFile(t, filepath.Join(l.dir, "srv", "pillar", "top.sls"), top.String(), 0o644)
	l.writeMinionConf(pdir, "proxy", "", "metrics_ready_share: 0.7\n")
	testutil.WriteFile(t, filepath.Join(pdir, "ids"), strings.Join(ids, "\n")+"\n", 0o644)
	pport := proc.FreePort(t)
	px := start(t, l.dir, "gsalt-proxy", filepath.Join(l.bin, "gsalt-proxy"), "-c", filepath.Join(pdir, "etc"),
		"--proxyids-file", filepath.Join(pdir, "ids"), "--metrics-port", strconv.Itoa(pport), "-l", "info")
	base := fmt.Sprintf("http://127.0.0.1:%d", pport)
	_, body := waitProbe(t, px, "proxy ready at 4/4", base+"/readyz", 180*time.Second, func(code int, body string) bool {
		return code == 200 && strings.Contains(body, "4/4 devices connected")
	})
	if want := "ok devices: 4/4 devices connected (100.0%, ready at 70.0%)"; !strings.Contains(body, want) {
		t.Errorf("proxy /readyz: %q lacks %q", body, want)
	}
	if code, body := probe(base + "/healthz"); code != 200 || !strings.Contains(body, "ok device table") {
		t.Errorf("proxy /healthz: %d %q", code, body)
	}
	// A job through the proxies reaches the devices.
	ret, out := l.gsalt("sw*", "test.ping", "-t", "60")
	if len(ret) != 4 {
		t.Errorf("test.ping on the proxies: %s", out)
	}
	fams := scrape(t, base)
	if v := value(t, fams, "gsalt_proxy_device_sessions_up_total", nil); v < 4 {
		t.Errorf("sessions up = %v, want >= 4", v)
	}
	if v := value(t, fams, "gsalt_proxy_devices", map[string]string{"state": "up"}); v != 4 {
		t.Errorf("devices up = %v, want 4", v)
	}
	for _, step := range []struct {
		stop  int
		code  int
		share string
	}{
		{3, 200, "ok devices: 3/4 devices connected (75.0%, ready at 70.0%)"},
		{2, 503, "fail devices: 2/4 devices connected (50.0%, ready at 70.0%)"},
	} {
		sims[step.stop].Stop()
		waitProbe(t, px, "proxy readiness after a simulator stopped", base+"/readyz", 120*time.Second, func(code int, body string) bool {
			return code == step.code && strings.Contains(body, step.share)
		})
	}
	fams = scrape(t, base)
	if v := value(t, fams, "gsalt_proxy_devices", map[string]string{"state": "down"}); v != 2 {
		t.Errorf("devices down = %v, want 2", v)
	}
	if v := value(t, fams, "gsalt_proxy_devices_connected", nil); v != 2 {
		t.Errorf("devices connected = %v, want 2", v)
	}
	if v := value(t, fams, "gsalt_proxy_device_sessions_down_total", nil); v < 2 {
		t.Errorf("sessions down = %v, want >= 2", v)
	}
	if v := value(t, fams, "gsalt_proxy_device_connect_errors_total", nil); v < 2 {
		t.Errorf("connect errors = %v, want >= 2", v)
	}
}

// TestMetricsOffByDefault: a daemon without metrics_port opens no
// listener at all.
func TestMetricsOffByDefault(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	bin, dir := l.bin, l.dir
	l.writeMaster("")
	master := start(t, dir, "gsalt-master", filepath.Join(bin, "gsalt-master"), "-c", l.masterConf(), "-l", "info")
	mdir := filepath.Join(dir, "m1")
	l.writeMinionConf(mdir, "minion", "m1", "")
	minion := start(t, dir, "gsalt-minion", filepath.Join(bin, "gsalt-minion"), "-c", filepath.Join(mdir, "etc"), "-l", "info")
	if !testutil.Poll(90*time.Second, func() bool { r, _ := l.gsalt("m1", "test.ping", "-t", "10"); return r["m1"] == true }) {
		_, out := l.gsalt("m1", "test.ping", "-t", "10")
		t.Fatalf("the minion does not answer: %s", out)
	}
	if ports := listening(t, minion.Pid()); len(ports) != 0 {
		t.Errorf("gsalt-minion without metrics_port listens on %v", ports)
	}
	ports := listening(t, master.Pid())
	want := map[int]bool{l.pub: true, l.ret: true}
	if len(ports) != 2 || !want[ports[0]] || !want[ports[1]] {
		t.Errorf("gsalt-master without metrics_port listens on %v, want only %d and %d", ports, l.pub, l.ret)
	}

	// --metrics-port turns the endpoints on: a swarm is ready once its
	// identities are connected.
	sdir := filepath.Join(dir, "swarm")
	l.writeMinionConf(sdir, "minion", "sw", "metrics_ready_share: 1\n")
	sport := proc.FreePort(t)
	swarm := start(t, dir, "gsalt-minion-swarm", filepath.Join(bin, "gsalt-minion"), "-c", filepath.Join(sdir, "etc"),
		"--swarm", "3", "--metrics-port", strconv.Itoa(sport), "-l", "info")
	sbase := fmt.Sprintf("http://127.0.0.1:%d", sport)
	waitProbe(t, swarm, "swarm ready", sbase+"/readyz", 120*time.Second, func(code int, body string) bool {
		return code == 200 && strings.Contains(body, "ok swarm: 3/3 minions connected (100.0%, ready at 100.0%)")
	})
	fams := scrape(t, sbase)
	if v := value(t, fams, "gsalt_minion_swarm_connected", nil); v != 3 {
		t.Errorf("gsalt_minion_swarm_connected = %v, want 3", v)
	}
	if got := listening(t, swarm.Pid()); len(got) != 1 || got[0] != sport {
		t.Errorf("the swarm listens on %v, want only %d", got, sport)
	}
}

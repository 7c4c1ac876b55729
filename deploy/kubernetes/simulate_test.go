package kubernetes

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gsalt/gsalt/internal/fleetlab"
)

// pod is one simulated pod: its name, spec, and where its volumes live on
// this machine.
type pod struct {
	name  string
	spec  *corev1.PodSpec
	vols  map[string]string // volume name -> host directory
	ports map[string]string // container port -> local port
	procs []*fleetlab.Proc
}

// simulation runs a rendered kustomization's pods as local processes: the
// containers' exact command lines and environment, their ConfigMap,
// Secret and projected volumes written to directories, the other volumes
// as directories (a shared claim is one directory for every pod). Only
// addresses and paths are rewritten: mount paths become the directories,
// Service names and 0.0.0.0 become 127.0.0.1, and the well-known ports
// become free loopback ports (shared ones the same for every pod,
// per-pod ones such as metrics and the API different for each pod).
type simulation struct {
	t        *testing.T
	r        *Rendered
	dir, bin string
	shared   map[string]string // port -> local port, the same for every pod
	perPod   []string          // ports each pod gets its own local port for
	services *regexp.Regexp
}

func (s *simulation) newPod(name string, spec *corev1.PodSpec, claims []corev1.PersistentVolumeClaim) *pod {
	p := &pod{name: name, spec: spec, vols: map[string]string{}, ports: map[string]string{}}
	for k, v := range s.shared {
		p.ports[k] = v
	}
	for _, k := range s.perPod {
		p.ports[k] = strconv.Itoa(fleetlab.FreePort(s.t))
	}
	for _, c := range claims {
		p.vols[c.Name] = filepath.Join(s.dir, name, "claim-"+c.Name)
	}
	for _, v := range spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			p.vols[v.Name] = filepath.Join(s.dir, "pvc-"+v.PersistentVolumeClaim.ClaimName)
		} else {
			p.vols[v.Name] = filepath.Join(s.dir, name, "vol-"+v.Name)
		}
	}
	for _, d := range p.vols {
		if err := os.MkdirAll(d, 0o755); err != nil {
			s.t.Fatal(err)
		}
	}
	return p
}

var portRe = regexp.MustCompile(`\b\d{4,5}\b`)

// rewrite applies the address and path rewrites of pod p for container c.
func (s *simulation) rewrite(p *pod, c *corev1.Container, text string, names bool) string {
	// Ports first: the directories may hold digits.
	text = portRe.ReplaceAllStringFunc(text, func(port string) string {
		if v, ok := p.ports[port]; ok {
			return v
		}
		return port
	})
	mounts := append([]corev1.VolumeMount(nil), c.VolumeMounts...)
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i].MountPath) > len(mounts[j].MountPath) })
	text = strings.ReplaceAll(text, "0.0.0.0", "127.0.0.1")
	if names {
		text = s.services.ReplaceAllString(text, "127.0.0.1")
	}
	// Placeholders first so that a replaced path is not replaced again.
	for i, m := range mounts {
		text = strings.ReplaceAll(text, m.MountPath, fmt.Sprintf("\x00%d\x00", i))
	}
	for i, m := range mounts {
		text = strings.ReplaceAll(text, fmt.Sprintf("\x00%d\x00", i), p.vols[m.Name])
	}
	return text
}

// start writes the container's files and starts its command.
func (s *simulation) start(p *pod, c *corev1.Container) *fleetlab.Proc {
	for path, content := range podFiles(s.t, s.r, p.spec, c) {
		host := s.rewrite(p, c, path, false)
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			s.t.Fatal(err)
		}
		if err := os.WriteFile(host, []byte(s.rewrite(p, c, content, true)), 0o644); err != nil {
			s.t.Fatal(err)
		}
	}
	args := make([]string, 0, len(c.Command)+len(c.Args))
	for _, a := range append(c.Command[1:], c.Args...) {
		args = append(args, s.rewrite(p, c, a, false))
	}
	env := []string{"HOSTNAME=" + p.name}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env = append(env, e.Name+"="+p.name)
		case e.ValueFrom != nil:
			s.t.Fatalf("%s: env %s: only metadata.name is simulated", p.name, e.Name)
		default:
			env = append(env, e.Name+"="+e.Value)
		}
	}
	proc := fleetlab.Start(s.t, s.dir, p.name+"-"+c.Name, filepath.Join(s.bin, c.Command[0]), args, env)
	p.procs = append(p.procs, proc)
	return proc
}

func waitTCP(t *testing.T, what, addr string) {
	fleetlab.Wait(t, what, 60*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// TestSimulateDevsimOverlay runs overlays/devsim as processes: the
// gsalt-devsim pod, the gsalt-master pod (master and gsalt-api) and the
// three gsalt-proxy pods (HOSTNAME=gsalt-proxy-0..2) with their exact
// command lines. Every one of the 30 devices must answer test.ping exactly
// once, accepted through the fleet token (autosign_grains); the API
// listens; and where the daemons serve metrics_port, /healthz and /readyz
// of every pod answer 200.
func TestSimulateDevsimOverlay(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes; skipped with -short")
	}
	bin := bins(t)
	r := render(t, "overlays/devsim")
	dir, err := os.MkdirTemp("", "k8s-sim-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var names []string
	for n := range r.Services {
		names = append(names, regexp.QuoteMeta(n))
	}
	s := &simulation{t: t, r: r, dir: dir, bin: bin,
		shared: map[string]string{
			"4505": strconv.Itoa(fleetlab.FreePort(t)),
			"4506": strconv.Itoa(fleetlab.FreePort(t)),
		},
		perPod:   []string{"9100", "8000"},
		services: regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`),
	}
	// The simulated switches: the devsim's --base-port is a shared port.
	ds := r.Deployments["gsalt-devsim"]
	dc := &ds.Spec.Template.Spec.Containers[0]
	basePort, _ := flagValue(dc.Command, "--base-port")
	count, _ := flagValue(dc.Command, "--devices")
	n, _ := strconv.Atoi(count)
	s.shared[basePort] = strconv.Itoa(fleetlab.FreeRange(t, n))
	devsim := s.newPod("gsalt-devsim-0", &ds.Spec.Template.Spec, nil)
	s.start(devsim, dc)
	waitTCP(t, "gsalt-devsim", "127.0.0.1:"+s.shared[basePort])

	ms := r.StatefulSets["gsalt-master"]
	master := s.newPod("gsalt-master-0", &ms.Spec.Template.Spec, claimsOf(ms.Spec.VolumeClaimTemplates))
	mc := &ms.Spec.Template.Spec.Containers[0]
	s.start(master, mc)
	waitTCP(t, "gsalt-master", "127.0.0.1:"+s.shared["4506"])
	for i := 1; i < len(ms.Spec.Template.Spec.Containers); i++ {
		s.start(master, &ms.Spec.Template.Spec.Containers[i])
	}
	mfiles := podFiles(t, r, &ms.Spec.Template.Spec, mc)
	mcfg := daemonConfig(t, mfiles, "/etc/salt", "master")
	m := fleetlab.AttachMaster(bin, s.rewrite(master, mc, "/etc/salt", false),
		s.rewrite(master, mc, fmt.Sprint(mcfg["sock_dir"]), false), s.rewrite(master, mc, fmt.Sprint(mcfg["pki_dir"]), false))

	ps := r.StatefulSets["gsalt-proxy"]
	var proxies []*pod
	for i := 0; i < int(*ps.Spec.Replicas); i++ {
		p := s.newPod(fmt.Sprintf("gsalt-proxy-%d", i), &ps.Spec.Template.Spec, claimsOf(ps.Spec.VolumeClaimTemplates))
		s.start(p, &ps.Spec.Template.Spec.Containers[0])
		proxies = append(proxies, p)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range append([]*pod{devsim, master}, proxies...) {
				for _, pr := range p.procs {
					t.Logf("%s:\n%s", pr.Name, pr.Tail(1500))
				}
			}
		}
	})

	ids, _ := flagValue(ps.Spec.Template.Spec.Containers[0].Command, "--proxyids-file")
	devices := podFiles(t, r, &ps.Spec.Template.Spec, &ps.Spec.Template.Spec.Containers[0])[ids]
	list := strings.Fields(strings.ReplaceAll(devices, "- ", ""))
	if len(list) != n {
		t.Fatalf("the device list has %d devices, the simulator %d", len(list), n)
	}
	res := m.WaitAllAnswer(t, list, 3*time.Minute)
	if twice := res.Twice(); len(twice) > 0 {
		t.Fatalf("devices answered twice: %v", twice)
	}
	if len(res.Returns) != n {
		t.Fatalf("%d devices returned, want %d", len(res.Returns), n)
	}
	if acc, pre := m.Keys("minions"), m.Keys("minions_pre"); len(acc) != n || len(pre) != 0 {
		t.Fatalf("master keys: %d accepted, %d pending; want %d, 0 (autosign_grains)", len(acc), len(pre), n)
	}
	waitTCP(t, "gsalt-api", "127.0.0.1:"+master.ports["8000"])
	for _, p := range append([]*pod{master}, proxies...) {
		for _, pr := range p.procs {
			if done, err := pr.Exited(); done {
				t.Fatalf("%s exited: %v", pr.Name, err)
			}
		}
	}

	// The probes, where this build serves metrics_port.
	get := func(p *pod, path string) (int, error) {
		resp, err := http.Get("http://127.0.0.1:" + p.ports["9100"] + path)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	if _, err := get(master, "/healthz"); err != nil {
		t.Logf("metrics_port is not served by this build (%v): probe endpoints not checked", err)
		return
	}
	for _, p := range append([]*pod{master}, proxies...) {
		for _, path := range []string{"/healthz", "/readyz"} {
			var code int
			fleetlab.Wait(t, p.name+path, 60*time.Second, func() bool {
				code, _ = get(p, path)
				return code == http.StatusOK
			})
		}
	}
}

func claimsOf(vcts []corev1.PersistentVolumeClaim) []corev1.PersistentVolumeClaim { return vcts }

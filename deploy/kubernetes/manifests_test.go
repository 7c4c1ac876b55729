// Package kubernetes holds gsalt's Kubernetes manifests (a kustomize
// base, components and overlays) and the tests that check them: every
// manifest decodes strictly into the Kubernetes API types, every
// kustomization renders, and the pods' command lines, probes, ports,
// volumes and shard settings match the daemons' real flags and
// configuration. It is a test-only package: nothing imports it, so the
// Kubernetes modules never reach the daemons' binaries.
package kubernetes

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	k8syaml "sigs.k8s.io/yaml"

	"github.com/gsalt/gsalt/internal/fleetlab"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/proxy"
)

// kustomizations are the directories kustomize builds (components are
// built through the overlays that use them).
var kustomizations = []string{"base", "overlays/production", "overlays/devsim"}

// Rendered is one kustomization's output, decoded strictly.
type Rendered struct {
	ConfigMaps   map[string]*corev1.ConfigMap
	Secrets      map[string]*corev1.Secret
	Services     map[string]*corev1.Service
	PVCs         map[string]*corev1.PersistentVolumeClaim
	StatefulSets map[string]*appsv1.StatefulSet
	Deployments  map[string]*appsv1.Deployment
	Ingresses    map[string]*networkingv1.Ingress
	Namespaces   []string
}

// decodeStrict decodes one Kubernetes object: unknown or misspelt fields
// and wrong types are errors.
func decodeStrict(data []byte, r *Rendered) error {
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := k8syaml.Unmarshal(data, &meta); err != nil {
		return err
	}
	strict := func(v any) error { return k8syaml.UnmarshalStrict(data, v) }
	var err error
	switch meta.APIVersion + " " + meta.Kind {
	case "v1 ConfigMap":
		o := &corev1.ConfigMap{}
		if err = strict(o); err == nil {
			r.ConfigMaps[o.Name] = o
		}
	case "v1 Secret":
		o := &corev1.Secret{}
		if err = strict(o); err == nil {
			r.Secrets[o.Name] = o
		}
	case "v1 Service":
		o := &corev1.Service{}
		if err = strict(o); err == nil {
			r.Services[o.Name] = o
		}
	case "v1 PersistentVolumeClaim":
		o := &corev1.PersistentVolumeClaim{}
		if err = strict(o); err == nil {
			r.PVCs[o.Name] = o
		}
	case "v1 Namespace":
		o := &corev1.Namespace{}
		if err = strict(o); err == nil {
			r.Namespaces = append(r.Namespaces, o.Name)
		}
	case "apps/v1 StatefulSet":
		o := &appsv1.StatefulSet{}
		if err = strict(o); err == nil {
			r.StatefulSets[o.Name] = o
		}
	case "apps/v1 Deployment":
		o := &appsv1.Deployment{}
		if err = strict(o); err == nil {
			r.Deployments[o.Name] = o
		}
	case "networking.k8s.io/v1 Ingress":
		o := &networkingv1.Ingress{}
		if err = strict(o); err == nil {
			r.Ingresses[o.Name] = o
		}
	default:
		return fmt.Errorf("unexpected object %s %s", meta.APIVersion, meta.Kind)
	}
	return err
}

func newRendered() *Rendered {
	return &Rendered{ConfigMaps: map[string]*corev1.ConfigMap{}, Secrets: map[string]*corev1.Secret{},
		Services: map[string]*corev1.Service{}, PVCs: map[string]*corev1.PersistentVolumeClaim{},
		StatefulSets: map[string]*appsv1.StatefulSet{}, Deployments: map[string]*appsv1.Deployment{},
		Ingresses: map[string]*networkingv1.Ingress{}}
}

// render builds a kustomization with kustomize's own library and decodes
// every resulting object strictly.
func render(t testing.TB, dir string) *Rendered {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	r := newRendered()
	for _, res := range m.Resources() {
		y, err := res.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		if err := decodeStrict(y, r); err != nil {
			t.Fatalf("%s: %s %s: %v", dir, res.GetKind(), res.GetName(), err)
		}
	}
	return r
}

// TestManifestFilesStrict decodes every object of every YAML file under
// deploy/kubernetes (resources and strategic-merge patches) strictly; the
// kustomization files themselves must name only files that exist.
func TestManifestFilesStrict(t *testing.T) {
	n := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if filepath.Base(path) == "kustomization.yaml" {
			var k struct {
				Resources  []string `yaml:"resources"`
				Components []string `yaml:"components"`
				Patches    []struct {
					Path string `yaml:"path"`
				} `yaml:"patches"`
			}
			if err := yaml.Unmarshal(data, &k); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			refs := append(k.Resources, k.Components...)
			for _, p := range k.Patches {
				if p.Path != "" {
					refs = append(refs, p.Path)
				}
			}
			for _, ref := range refs {
				if _, err := os.Stat(filepath.Join(filepath.Dir(path), ref)); err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
			}
			return nil
		}
		r := newRendered()
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			if err := decodeStrict(doc, r); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 15 {
		t.Fatalf("only %d objects decoded", n)
	}
	// A misspelt field must fail: the check itself works.
	bad := []byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  prots: []\n")
	if err := decodeStrict(bad, newRendered()); err == nil {
		t.Fatal("a Service with a misspelt field decoded")
	}
}

// bins builds the gsalt commands once for the package's tests.
func bins(t *testing.T) string {
	t.Helper()
	return fleetlab.Build(t)
}

func TestMain(m *testing.M) { proc.Main(m) }

// checkFlags parses a container's command line with the real command: the
// binary is run with the same arguments plus --help, which cobra parses
// fully (an unknown flag or a bad value fails) before printing the usage.
func checkFlags(t *testing.T, bin string, command []string) {
	t.Helper()
	if len(command) == 0 {
		t.Fatal("container without a command")
	}
	name := command[0]
	if !slices.Contains(fleetlab.Binaries, name) {
		t.Fatalf("command %q is not a gsalt daemon", name)
	}
	out, err := exec.Command(filepath.Join(bin, name), append(slices.Clone(command[1:]), "--help")...).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("Usage:")) {
		t.Fatalf("%v: the real %s refuses the flags: %v\n%s", command, name, err, out)
	}
}

// flagValue returns the value of a flag (long or short, "--f v" or "--f=v").
func flagValue(args []string, names ...string) (string, bool) {
	for i, a := range args {
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1], true
			}
			if v, ok := strings.CutPrefix(a, n+"="); ok {
				return v, true
			}
		}
	}
	return "", false
}

// podFiles returns the files a container sees from its ConfigMap, Secret
// and projected volumes: mount path + key -> content.
func podFiles(t *testing.T, r *Rendered, spec *corev1.PodSpec, c *corev1.Container) map[string]string {
	t.Helper()
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	cmData := func(name string, items []corev1.KeyToPath) map[string]string {
		cm, ok := r.ConfigMaps[name]
		if !ok {
			t.Fatalf("ConfigMap %s is not in the render", name)
		}
		return pick(t, cm.Data, items, "ConfigMap "+name)
	}
	secData := func(name string, items []corev1.KeyToPath) map[string]string {
		s, ok := r.Secrets[name]
		if !ok {
			t.Fatalf("Secret %s is not in the render", name)
		}
		data := map[string]string{}
		for k, v := range s.StringData {
			data[k] = v
		}
		for k, v := range s.Data {
			data[k] = string(v)
		}
		return pick(t, data, items, "Secret "+name)
	}
	out := map[string]string{}
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			continue // a volumeClaimTemplate
		}
		add := func(files map[string]string) {
			for p, content := range files {
				out[filepath.Join(m.MountPath, p)] = content
			}
		}
		switch {
		case v.ConfigMap != nil:
			add(cmData(v.ConfigMap.Name, v.ConfigMap.Items))
		case v.Secret != nil:
			add(secData(v.Secret.SecretName, v.Secret.Items))
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				switch {
				case s.ConfigMap != nil:
					add(cmData(s.ConfigMap.Name, s.ConfigMap.Items))
				case s.Secret != nil:
					add(secData(s.Secret.Name, s.Secret.Items))
				}
			}
		}
	}
	return out
}

func pick(t *testing.T, data map[string]string, items []corev1.KeyToPath, what string) map[string]string {
	t.Helper()
	if len(items) == 0 {
		return data
	}
	out := map[string]string{}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			t.Fatalf("%s has no key %s", what, it.Key)
		}
		out[it.Path] = v
	}
	return out
}

// mounted reports whether path lies under one of the container's mounts.
func mounted(c *corev1.Container, path string) bool {
	for _, m := range c.VolumeMounts {
		if path == m.MountPath || strings.HasPrefix(path, m.MountPath+"/") {
			return true
		}
	}
	return false
}

// daemonConfig merges DIR/<name> and DIR/<name>.d/*.conf as the container
// sees them (a shallow merge, enough for the keys checked here).
func daemonConfig(t *testing.T, files map[string]string, dir, name string) map[string]any {
	t.Helper()
	main, ok := files[filepath.Join(dir, name)]
	if !ok {
		t.Fatalf("%s/%s is not in the pod", dir, name)
	}
	cfg := map[string]any{}
	if err := yaml.Unmarshal([]byte(main), &cfg); err != nil {
		t.Fatalf("%s/%s: %v", dir, name, err)
	}
	var extra []string
	for p := range files {
		if filepath.Dir(p) == filepath.Join(dir, name+".d") && strings.HasSuffix(p, ".conf") {
			extra = append(extra, p)
		}
	}
	slices.Sort(extra)
	for _, p := range extra {
		more := map[string]any{}
		if err := yaml.Unmarshal([]byte(files[p]), &more); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for k, v := range more {
			cfg[k] = v
		}
	}
	return cfg
}

func containerPort(t *testing.T, c *corev1.Container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port %q", c.Name, name)
	return 0
}

func asInt(v any) int {
	switch v := v.(type) {
	case int:
		return v
	case string:
		var n int
		fmt.Sscan(v, &n)
		return n
	}
	return -1
}

// checkProbes: liveness /healthz and readiness /readyz on the port that
// serves metrics_port.
func checkProbes(t *testing.T, c *corev1.Container, cfg map[string]any) {
	t.Helper()
	port := asInt(cfg["metrics_port"])
	if port <= 0 {
		t.Fatalf("%s: metrics_port not set (%v): the probes have nothing to ask", c.Name, cfg["metrics_port"])
	}
	if h := cfg["metrics_host"]; h != "0.0.0.0" {
		t.Fatalf("%s: metrics_host %v: the kubelet could not reach the probes", c.Name, h)
	}
	for _, pc := range []struct {
		p    *corev1.Probe
		path string
	}{{c.LivenessProbe, "/healthz"}, {c.ReadinessProbe, "/readyz"}} {
		if pc.p == nil || pc.p.HTTPGet == nil {
			t.Fatalf("%s: no HTTP probe for %s", c.Name, pc.path)
		}
		if pc.p.HTTPGet.Path != pc.path {
			t.Fatalf("%s: probe path %s, want %s", c.Name, pc.p.HTTPGet.Path, pc.path)
		}
		if got := containerPort(t, c, pc.p.HTTPGet.Port.StrVal); int(got) != port {
			t.Fatalf("%s: probe port %d, metrics_port %d", c.Name, got, port)
		}
	}
}

// TestKustomizations renders every kustomization and checks that the pods
// agree with the daemons: real flags, configuration files present, paths
// on volumes, probes on metrics_port, Service ports on the daemon's
// ports, shard count equal to the replicas.
func TestKustomizations(t *testing.T) {
	bin := bins(t)
	for _, dir := range kustomizations {
		t.Run(strings.ReplaceAll(dir, "/", "_"), func(t *testing.T) {
			r := render(t, dir)
			checkMaster(t, bin, r)
			checkProxy(t, bin, r)
			checkAPI(t, r)
			for _, d := range r.Deployments {
				for i := range d.Spec.Template.Spec.Containers {
					checkFlags(t, bin, d.Spec.Template.Spec.Containers[i].Command)
				}
			}
			if dir == "overlays/production" {
				ms := r.StatefulSets["gsalt-master"]
				files := podFiles(t, r, &ms.Spec.Template.Spec, &ms.Spec.Template.Spec.Containers[0])
				cfg := daemonConfig(t, files, "/etc/salt", "master")
				if cfg["master_job_cache"] != "pgjsonb" || cfg["pgjsonb.host"] == nil || cfg["pgjsonb.db"] == nil || cfg["pgjsonb.user"] == nil || cfg["pgjsonb.pass"] == nil {
					t.Fatalf("production: the postgres component's options are missing: %v", cfg)
				}
				nats, _ := cfg["nats"].(map[string]any)
				if !strings.HasPrefix(fmt.Sprint(nats["url"]), "nats://") || nats["subject_prefix"] != "salt" {
					t.Fatalf("production: the nats component's options are missing: %v", cfg["nats"])
				}
				if len(r.Namespaces) != 1 || r.Namespaces[0] != "gsalt" {
					t.Fatalf("production namespaces %v", r.Namespaces)
				}
			}
		})
	}
}

func checkMaster(t *testing.T, bin string, r *Rendered) {
	t.Helper()
	ss, ok := r.StatefulSets["gsalt-master"]
	if !ok {
		t.Fatal("no gsalt-master StatefulSet")
	}
	spec := &ss.Spec.Template.Spec
	c := &spec.Containers[0]
	checkFlags(t, bin, c.Command)
	confDir, _ := flagValue(c.Command, "-c", "--config-dir")
	files := podFiles(t, r, spec, c)
	cfg := daemonConfig(t, files, confDir, "master")
	checkProbes(t, c, cfg)
	// pki and cache on the claim of a volumeClaimTemplate.
	claims := map[string]bool{}
	for _, vct := range ss.Spec.VolumeClaimTemplates {
		claims[vct.Name] = true
	}
	for _, key := range []string{"pki_dir", "cachedir"} {
		p := fmt.Sprint(cfg[key])
		onClaim := false
		for _, m := range c.VolumeMounts {
			if claims[m.Name] && strings.HasPrefix(p, m.MountPath+"/") {
				onClaim = true
			}
		}
		if !onClaim {
			t.Fatalf("master %s %s is not on a persistent volume", key, p)
		}
	}
	for _, key := range []string{"sock_dir", "autosign_grains_dir"} {
		if !mounted(c, fmt.Sprint(cfg[key])) {
			t.Fatalf("master %s %v is not on a volume", key, cfg[key])
		}
	}
	if !mounted(c, filepath.Dir(fmt.Sprint(cfg["log_file"]))) {
		t.Fatalf("master log_file %v is not on a volume", cfg["log_file"])
	}
	roots, _ := cfg["pillar_roots"].(map[string]any)
	for _, p := range roots["base"].([]any) {
		if !mounted(c, p.(string)) {
			t.Fatalf("pillar root %v not mounted", p)
		}
	}
	if _, ok := files[filepath.Join(fmt.Sprint(cfg["autosign_grains_dir"]), "fleet_token")]; !ok {
		t.Fatal("the fleet token is not in autosign_grains_dir")
	}
	// The Service publishes the daemon's ports.
	svc, ok := r.Services["gsalt-master"]
	if !ok {
		t.Fatal("no gsalt-master Service")
	}
	want := map[int32]bool{int32(asInt(cfg["publish_port"])): true, int32(asInt(cfg["ret_port"])): true}
	for _, p := range svc.Spec.Ports {
		got := containerPort(t, c, p.TargetPort.StrVal)
		if got != p.Port {
			t.Fatalf("Service port %d targets container port %d", p.Port, got)
		}
		delete(want, got)
	}
	if len(want) != 0 || svc.Spec.Selector["app.kubernetes.io/name"] != ss.Spec.Template.Labels["app.kubernetes.io/name"] {
		t.Fatalf("gsalt-master Service misses ports %v or does not select the master", want)
	}
	for i := range spec.Containers {
		checkFlags(t, bin, spec.Containers[i].Command)
	}
}

func checkProxy(t *testing.T, bin string, r *Rendered) {
	t.Helper()
	ss, ok := r.StatefulSets["gsalt-proxy"]
	if !ok {
		t.Fatal("no gsalt-proxy StatefulSet")
	}
	spec := &ss.Spec.Template.Spec
	c := &spec.Containers[0]
	checkFlags(t, bin, c.Command)
	confDir, _ := flagValue(c.Command, "-c", "--config-dir")
	files := podFiles(t, r, spec, c)
	cfg := daemonConfig(t, files, confDir, "proxy")
	checkProbes(t, c, cfg)
	// The shards: GSALT_SHARDS equals replicas and each pod name gives
	// its shard.
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name" {
			env[e.Name] = "<pod name>"
		}
	}
	if env["HOSTNAME"] != "<pod name>" {
		t.Fatalf("HOSTNAME is not the pod name: %q", env["HOSTNAME"])
	}
	replicas := int(*ss.Spec.Replicas)
	for i := 0; i <= replicas; i++ {
		pod := fmt.Sprintf("%s-%d", ss.Name, i)
		sh, err := proxy.ShardFromEnv(func(k string) string {
			if k == "HOSTNAME" {
				return pod
			}
			return env[k]
		})
		if i < replicas && (err != nil || sh != (proxy.Shard{Index: i, Count: replicas})) {
			t.Fatalf("pod %s: shard %v, %v; want %d/%d (GSALT_SHARDS=%q)", pod, sh, err, i, replicas, env["GSALT_SHARDS"])
		}
		if i == replicas && err == nil {
			t.Fatalf("pod %s beyond replicas got shard %v", pod, sh)
		}
	}
	// The device list is in the pod and parses.
	list, ok := flagValue(c.Command, "--proxyids-file")
	if !ok {
		t.Fatal("gsalt-proxy without --proxyids-file")
	}
	ids, err := proxy.ReadDeviceList([]byte(files[list]))
	if err != nil || len(ids) == 0 {
		t.Fatalf("device list %s: %d ids, %v", list, len(ids), err)
	}
	total := 0
	for i := 0; i < replicas; i++ {
		total += len(proxy.Shard{Index: i, Count: replicas}.Select(ids))
	}
	if total != len(ids) {
		t.Fatalf("the shards serve %d of %d devices", total, len(ids))
	}
	// Paths on volumes; pki on the shared claim.
	for _, key := range []string{"pki_dir", "cachedir", "sock_dir"} {
		if !mounted(c, fmt.Sprint(cfg[key])) {
			t.Fatalf("proxy %s %v is not on a volume", key, cfg[key])
		}
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath != fmt.Sprint(cfg["pki_dir"]) {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && (v.PersistentVolumeClaim == nil || r.PVCs[v.PersistentVolumeClaim.ClaimName] == nil) {
				t.Fatalf("proxy pki_dir is not on a shared claim of the render")
			}
		}
	}
	// Autosign: the grain the proxy sends is the master's token.
	grains, _ := cfg["grains"].(map[string]any)
	as, _ := cfg["autosign_grains"].([]any)
	if len(as) != 1 || grains == nil || grains[fmt.Sprint(as[0])] == nil {
		t.Fatalf("proxy autosign_grains %v without the grain in %v", as, grains)
	}
	ms := r.StatefulSets["gsalt-master"]
	mfiles := podFiles(t, r, &ms.Spec.Template.Spec, &ms.Spec.Template.Spec.Containers[0])
	mcfg := daemonConfig(t, mfiles, "/etc/salt", "master")
	tok := strings.TrimSpace(mfiles[filepath.Join(fmt.Sprint(mcfg["autosign_grains_dir"]), fmt.Sprint(as[0]))])
	if tok == "" || tok != fmt.Sprint(grains[fmt.Sprint(as[0])]) {
		t.Fatalf("the proxy's %v grain does not match the master's autosign file", as[0])
	}
	// The master it names is a Service with its master_port.
	svc, ok := r.Services[fmt.Sprint(cfg["master"])]
	if !ok {
		t.Fatalf("proxy master %v is not a Service", cfg["master"])
	}
	found := false
	for _, p := range svc.Spec.Ports {
		found = found || int(p.Port) == asInt(cfg["master_port"])
	}
	if !found {
		t.Fatalf("Service %s has no port %v", svc.Name, cfg["master_port"])
	}
}

func checkAPI(t *testing.T, r *Rendered) {
	t.Helper()
	ing, ok := r.Ingresses["gsalt-api"]
	if !ok {
		t.Fatal("no gsalt-api Ingress")
	}
	b := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service
	svc, ok := r.Services[b.Name]
	if !ok {
		t.Fatalf("Ingress backend %s is not a Service", b.Name)
	}
	var target string
	for _, p := range svc.Spec.Ports {
		if p.Name == b.Port.Name {
			target = p.TargetPort.StrVal
		}
	}
	ms := r.StatefulSets["gsalt-master"]
	var api *corev1.Container
	for i, c := range ms.Spec.Template.Spec.Containers {
		if c.Command[0] == "gsalt-api" {
			api = &ms.Spec.Template.Spec.Containers[i]
		}
	}
	if api == nil || target == "" {
		t.Fatalf("no gsalt-api container or Service port %q", b.Port.Name)
	}
	files := podFiles(t, r, &ms.Spec.Template.Spec, api)
	cfg := daemonConfig(t, files, "/etc/salt", "master")
	rc, _ := cfg["rest_cherrypy"].(map[string]any)
	if got := containerPort(t, api, target); int(got) != asInt(rc["port"]) {
		t.Fatalf("gsalt-api Service targets %d, rest_cherrypy port %v", got, rc["port"])
	}
	if svc.Spec.Selector["app.kubernetes.io/name"] != ms.Spec.Template.Labels["app.kubernetes.io/name"] {
		t.Fatal("gsalt-api Service does not select the master's pod")
	}
	// The sockets the API talks through are shared with the master.
	if !mounted(api, fmt.Sprint(cfg["sock_dir"])) {
		t.Fatal("gsalt-api does not see the master's sock_dir")
	}
}

// TestDaemonsLinkNoKubernetes keeps the Kubernetes modules out of the
// daemons: only this test package imports them.
func TestDaemonsLinkNoKubernetes(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./cmd/...")
	cmd.Dir = fleetlab.RepoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/") || strings.HasPrefix(dep, "sigs.k8s.io/") {
			t.Errorf("a daemon links %s", dep)
		}
	}
}

//go:build libvirt_dlopen

package virt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/virt"
	"github.com/gsalt/gsalt/wire/payload"
)

const (
	poolAuthStepsFile  = "testdata/pool_auth_steps.json"
	poolAuthGoldenFile = "testdata/pool_auth_golden.json"
)

// authStep is a step of pool_auth_steps.json: gsalt, when set, is what
// gsalt returns where it knowingly differs from Salt 3006 (why says how).
type authStep struct {
	step
	Gsalt any    `json:"gsalt"`
	Why   string `json:"why"`
}

// UnmarshalJSON decodes the step in order (step.UnmarshalJSON) and the
// two extra keys (the embedded step's method would otherwise drop them).
func (a *authStep) UnmarshalJSON(data []byte) error {
	if err := a.step.UnmarshalJSON(data); err != nil {
		return err
	}
	var extra struct {
		Gsalt any    `json:"gsalt"`
		Why   string `json:"why"`
	}
	if err := json.Unmarshal(data, &extra); err != nil {
		return err
	}
	a.Gsalt, a.Why = extra.Gsalt, extra.Why
	return nil
}

// secrets lists the daemon's libvirt secrets like update_golden.py's
// __secrets__ step: each one's virsh secret-dumpxml (uuid replaced) and
// the base64 value libvirtd stored.
func secrets(t *testing.T, f *initFixture) []any {
	t.Helper()
	out, err := f.d.Virsh("-q", "secret-list")
	if err != nil {
		t.Fatalf("virsh secret-list: %v %s", err, out)
	}
	var res []*payload.Map
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		uuid := fields[0]
		x, err := f.d.Virsh("secret-dumpxml", uuid)
		if err != nil {
			t.Fatalf("virsh secret-dumpxml: %v %s", err, x)
		}
		v, err := os.ReadFile(filepath.Join(f.d.Dir, "etc", "secrets", uuid+".base64"))
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, payload.NewMap("xml", strings.ReplaceAll(x, uuid, "UUID"), "value", strings.TrimSpace(string(v))))
	}
	sort.Slice(res, func(i, j int) bool { return res[i].Str("xml") < res[j].Str("xml") })
	list := []any{}
	for _, r := range res {
		list = append(list, r)
	}
	return list
}

// TestPoolAuthGolden: pool_define, pool_update and pool_undefine with
// source_auth on a private libvirtd's iscsi pools (libvirt defines them
// without the target existing) create, update and remove the libvirt
// secret as Salt 3006 does, checked against Salt's returns, pool XML and
// the stored secrets. libvirt has no rbd backend here and refuses the
// pool, as a step shows; the rbd pool and secret definitions gsalt would
// send are compared with the ones Salt's templates render.
func TestPoolAuthGolden(t *testing.T) {
	t.Parallel() // its own private libvirtd, folders and ports
	f := newInitFixture(t)
	if testutil.Update() {
		out := runGoldenScript(t, 5*time.Minute, "update_golden.py", poolAuthStepsFile, f.d.URI, f.images, f.roots, f.cache)
		if err := os.WriteFile(poolAuthGoldenFile, []byte(f.normalize(string(out), nil)), 0o644); err != nil {
			t.Fatal(err)
		}
		// Salt leaves pools and secrets behind: start gsalt's run clean.
		f.removePoolsAndSecrets()
	}
	steps := readStepsFile[authStep](t, poolAuthStepsFile)
	golden, ok := loadJSON(t, poolAuthGoldenFile).([]any)
	if !ok || len(golden) != len(steps) {
		t.Fatalf("%s holds %d results for %d steps: regenerate with -update", poolAuthGoldenFile, len(golden), len(steps))
	}
	env := f.env(t)
	ctx := context.Background()
	for i, st := range steps {
		var res any
		switch st.Fun {
		case "__secrets__":
			res = map[string]any{"ret": secrets(t, f)}
		case "__pool_xml__":
			kw := payload.NewMap("name", st.Args[0], "ptype", st.Args[1])
			for _, it := range st.Kwargs.Items() {
				kw.SetKey(it.Key, toPayload(it.Value))
			}
			pool, secret, err := virt.PoolDefinitionXML(kw)
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			res = map[string]any{"ret": map[string]any{"pool": pool, "secret": secret}}
		default:
			res = call(ctx, env, st.step)
		}
		want := golden[i]
		if st.Gsalt != nil {
			t.Logf("step %d %s: gsalt differs from Salt 3006 (%s); Salt: %v", i, st.Fun, st.Why, golden[i])
			want = toPayload(st.Gsalt)
		}
		gotv := asGolden(t, res, func(s string) string { return f.normalize(s, nil) })
		got := canonAll(normalize(gotv))
		wantc := canonAll(normalize(want))
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(wantc)
		if !bytes.Equal(gj, wj) {
			t.Errorf("step %d %s %v %v:\n got  %s\n want %s", i, st.Fun, st.Args, st.Kwargs, gj, wj)
		}
	}
	if out, _ := f.d.Virsh("-q", "secret-list"); strings.TrimSpace(out) != "" {
		t.Errorf("secrets left behind: %s", out)
	}
}

// removePoolsAndSecrets undefines every storage pool and secret of the
// daemon (Salt 3006 leaves some behind, see pool_auth_steps.json).
func (f *initFixture) removePoolsAndSecrets() {
	if names, err := f.d.Virsh("pool-list", "--all", "--name"); err == nil {
		for _, n := range strings.Fields(names) {
			_, _ = f.d.Virsh("pool-destroy", n)
			_, _ = f.d.Virsh("pool-undefine", n)
		}
	}
	if lines, err := f.d.Virsh("-q", "secret-list"); err == nil {
		for _, l := range strings.Split(lines, "\n") {
			if fs := strings.Fields(l); len(fs) > 0 {
				_, _ = f.d.Virsh("secret-undefine", fs[0])
			}
		}
	}
}

package multimaster

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// saltMaster is a real Salt 3006 salt-master from the source tree.
type saltMaster struct {
	src, dir, conf, pki string
	host                string // the address it binds (interface)
	ret, pub            int
}

// startSaltMaster writes the configuration of a real salt-master under
// base/name with pki_dir pki (plus the extra configuration lines) and
// starts it.
func startSaltMaster(t *testing.T, src, base, name, pki string, extra ...string) *saltMaster {
	t.Helper()
	ports := proc.FreePorts(t, 2)
	return startSaltMasterAt(t, src, base, name, pki, "127.0.0.1", ports[0], ports[1], extra...)
}

// startSaltMasterAt is startSaltMaster on the given address and ports.
func startSaltMasterAt(t *testing.T, src, base, name, pki, host string, pub, ret int, extra ...string) *saltMaster {
	t.Helper()
	sm := &saltMaster{src: src, dir: filepath.Join(base, name), pki: pki, host: host, pub: pub, ret: ret}
	sm.conf = filepath.Join(sm.dir, "etc")
	write(t, filepath.Join(sm.conf, "master"), masterConfText(sm.dir, pki, base, name, host, sm.pub, sm.ret, "worker_threads: 2\n"+strings.Join(extra, "")))
	p := start(t, "salt-master "+name, saltpeer.Command(context.Background(), src, "salt-master", "-c", sm.conf, "-l", "warning"),
		filepath.Join(sm.dir, "stdout"))
	p.WaitFor(t, 180*time.Second, "listening", func() bool {
		if _, err := os.Stat(filepath.Join(sm.dir, "sock", "master_event_pub.ipc")); err != nil {
			return false
		}
		return proc.Dials(net.JoinHostPort(sm.host, strconv.Itoa(sm.ret)))
	})
	return sm
}

// run runs a Salt CLI script against the master and returns its stdout.
func (sm *saltMaster) run(t *testing.T, script string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(180*time.Second))
	defer cancel()
	cmd := saltpeer.Command(ctx, sm.src, script, append([]string{"-c", sm.conf}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Logf("salt-master %s %v: %v\n%s", script, args, err, errb.String())
	}
	return out.Bytes()
}

// pingAll runs test.ping on ids through publish and returns who answered.
func pingAll(t *testing.T, publish func(args ...string) []byte, ids []string) map[string]any {
	t.Helper()
	var v map[string]any
	out := publish("-t", "20", "-L", strings.Join(ids, ","), "test.ping", "--out", "json", "--static")
	_ = json.Unmarshal(out, &v)
	return v
}

// TestSaltAndGsaltMastersServeBothMinions: a gsalt-master and a real
// salt-master share one pki_dir (so one master key and one set of
// accepted keys); a real salt-minion and a gsalt-minion, each with
// master: [gsalt-master, salt-master], answer jobs from both masters, and
// a job's returns land in the publishing master's job cache only.
func TestSaltAndGsaltMastersServeBothMinions(t *testing.T) {
	t.Parallel()
	src := saltpeer.Require(t)
	bin, base := newLab(t)
	pki := filepath.Join(base, "pki")
	g := newMaster(t, bin, base, "gm", pki)
	g.start(t) // generates the shared master key
	sm := startSaltMaster(t, src, base, "sm", pki)

	for _, mn := range []struct{ name, id string }{{"gminion", "mm-gsalt"}, {"sminion", "mm-salt"}} {
		dir := filepath.Join(base, mn.name)
		minionConfPorts(t, base, mn.name, "minion", mn.id, []int{g.ret, sm.ret}, "")
		var cmd *exec.Cmd
		if mn.name == "gminion" {
			cmd = exec.Command(filepath.Join(bin, "gsalt-minion"), "-c", filepath.Join(dir, "etc"), "-l", "info")
		} else {
			cmd = saltpeer.Command(context.Background(), src, "salt-minion", "-c", filepath.Join(dir, "etc"), "-l", "warning")
		}
		start(t, mn.name, cmd, filepath.Join(dir, "stdout"))
	}
	ids := []string{"mm-gsalt", "mm-salt"}
	for _, id := range ids {
		acceptOn(t, g, id)
	}
	// salt-key on the real master sees what gsalt-key accepted.
	var keys map[string][]string
	_ = json.Unmarshal(sm.run(t, "salt-key", "-L", "--out", "json"), &keys)
	for _, id := range ids {
		if !has(keys["minions"], id) {
			t.Errorf("salt-key on the salt-master does not list %s as accepted: %v", id, keys)
		}
	}
	gsalt := func(args ...string) []byte { return g.run(t, "gsalt", args...) }
	salt := func(args ...string) []byte { return sm.run(t, "salt", args...) }
	for _, c := range []struct {
		name    string
		publish func(args ...string) []byte
	}{{"gsalt-master", gsalt}, {"salt-master", salt}} {
		var got map[string]any
		ok := testutil.Poll(180*time.Second, func() bool {
			got = pingAll(t, c.publish, ids)
			return got["mm-gsalt"] == true && got["mm-salt"] == true
		})
		if !ok {
			t.Errorf("test.ping from the %s: %v, want both minions true", c.name, got)
		}
	}
	// Returns go to the publishing master: a gsalt-master job is in its
	// job cache, not in the salt-master's; and the other way round.
	jid := g.publishAsync(t, "mm-*", "test.echo", "via-gsalt")
	testutil.Eventually(t, 60*time.Second, func() bool {
		v := g.lookup(t, jid)
		return v["mm-gsalt"] == "via-gsalt" && v["mm-salt"] == "via-gsalt"
	}, "both returns of "+jid+" in the gsalt-master's job cache")
	var v map[string]any
	_ = json.Unmarshal(sm.run(t, "salt-run", "jobs.lookup_jid", jid, "--out", "json"), &v)
	if v["mm-gsalt"] != nil || v["mm-salt"] != nil {
		t.Errorf("the gsalt-master's job %s has returns in the salt-master's job cache: %v", jid, v)
	}
	out := sm.run(t, "salt", "--async", "mm-*", "test.echo", "via-salt")
	m := jidRe.FindSubmatch(out)
	if m == nil {
		t.Fatalf("salt --async: no jid in %q", out)
	}
	sjid := string(m[1])
	testutil.Eventually(t, 90*time.Second, func() bool {
		var v map[string]any
		_ = json.Unmarshal(sm.run(t, "salt-run", "jobs.lookup_jid", sjid, "--out", "json"), &v)
		return v["mm-gsalt"] == "via-salt" && v["mm-salt"] == "via-salt"
	}, "both returns of "+sjid+" in the salt-master's job cache")
	if v := g.lookup(t, sjid); v["mm-gsalt"] != nil || v["mm-salt"] != nil {
		t.Errorf("the salt-master's job %s has returns in the gsalt-master's job cache: %v", sjid, v)
	}
}

package builtin

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// iptablesNetnsEnv marks the copy of the test binary that runs inside
// its own network namespace.
const iptablesNetnsEnv = "GSALT_IPTABLES_NETNS"

// iptablesInNetns runs the calling test in a fresh network namespace:
// outside one it starts this test binary again under `unshare -n` (root
// only; the test skips with one line where that cannot be done) and
// reports that run, returning false; inside it returns true. The host's
// rules are never touched.
func iptablesInNetns(t *testing.T) bool {
	t.Helper()
	if os.Getenv(iptablesNetnsEnv) == "1" {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("iptables state tests: need root for a network namespace")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("iptables state tests: no unshare(1)")
	}
	if out, err := exec.Command("unshare", "-n", "--", "/usr/sbin/iptables", "-S").CombinedOutput(); err != nil {
		t.Skipf("iptables state tests: iptables in a network namespace: %v %s", err, bytes.TrimSpace(out))
	}
	args := []string{"-n", "--", os.Args[0], "-test.run", "^" + t.Name() + "$", "-test.count=1", "-test.v"}
	if f := flag.Lookup("update-golden"); f != nil && f.Value.String() == "true" {
		args = append(args, "-update-golden")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", args...)
	cmd.Env = append(os.Environ(), iptablesNetnsEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the test in a network namespace failed: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
		t.Fatalf("the test in a network namespace did not pass:\n%s", out)
	}
	t.Logf("ran in a network namespace:\n%s", out)
	return false
}

// iptablesReset empties the tables this test uses, in both families,
// each chain's policy back to ACCEPT: the state real Salt's run started
// from, restored before gsalt's.
func iptablesReset(t *testing.T) {
	t.Helper()
	chains := map[string][]string{
		"filter": {"INPUT", "FORWARD", "OUTPUT"},
		"nat":    {"PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"},
		"mangle": {"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"},
	}
	for _, exe := range []string{"/usr/sbin/iptables", "/usr/sbin/ip6tables"} {
		for _, table := range []string{"filter", "nat", "mangle"} {
			run := [][]string{{"-t", table, "-F"}, {"-t", table, "-X"}}
			for _, ch := range chains[table] {
				run = append(run, []string{"-t", table, "-P", ch, "ACCEPT"})
			}
			for _, a := range run {
				if out, err := exec.Command(exe, a...).CombinedOutput(); err != nil {
					t.Fatalf("%s %v: %v %s", exe, a, err, out)
				}
			}
		}
	}
}

// TestIptablesStatesGolden runs the iptables states (and the module
// functions they use) against real iptables in a fresh network
// namespace, in real and test mode, and compares them with Salt 3006's
// run of the same calls from the same state (testdata/golden/iptables.json):
// chains created, flushed and removed, rules appended, inserted (at a
// position, at a negative one), found already set, deleted by rule and
// by position, policies, IPv6, the nat table, saves to a file (with
// iptables.save_filters dropping iptables-save's dated comments) and
// failures iptables reports.
func TestIptablesStatesGolden(t *testing.T) {
	if !iptablesInNetns(t) {
		return
	}
	t.Setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
	iptablesReset(t)
	save := func(c salttest.Call, files map[string]string) salttest.Call {
		c.Kwargs = append(c.Kwargs, "save", "{dir}/rules.v4")
		c.Files = files
		return c
	}
	web := []any{"chain", "INPUT", "jump", "ACCEPT", "match", []any{"state", "comment"}, "comment", "Allow HTTP", "connstate", "NEW", "dport", 80, "protocol", "tcp"}
	calls := []salttest.Call{
		single("chain_present test", "iptables.chain_present", true, "name", "web-in"),
		single("chain_present", "iptables.chain_present", false, "name", "web-in"),
		single("chain_present again", "iptables.chain_present", false, "name", "web-in"),
		single("chain_present nat", "iptables.chain_present", false, "name", "DOCKER", "table", "nat"),
		single("chain_present bad name", "iptables.chain_present", false, "name", "bad name!"),
		single("append test", "iptables.append", true, append([]any{"name", "httpd"}, web...)...),
		save(single("append saved", "iptables.append", false, append([]any{"name", "httpd"}, web...)...), nil),
		save(single("append already set, saved file differs", "iptables.append", false, append([]any{"name", "httpd"}, web...)...), map[string]string{"rules.v4": ""}),
		single("append already set test", "iptables.append", true, append([]any{"name", "httpd"}, web...)...),
		single("append localhost", "iptables.append", false, "name", "lo", "chain", "INPUT", "jump", "ACCEPT", "source", "127.0.0.1"),
		single("append established", "iptables.append", false, "name", "est", "chain", "INPUT", "jump", "ACCEPT", "match", "conntrack", "ctstate", "RELATED,ESTABLISHED"),
		single("append to user chain", "iptables.append", false, "name", "w", "chain", "web-in", "jump", "RETURN", "source", "!10.0.0.0/8", "comment", "not from the lab"),
		single("append jump to missing chain", "iptables.append", false, "name", "bad", "chain", "INPUT", "jump", "NOPE"),
		single("append no chain", "iptables.append", false, "name", "nochain", "jump", "ACCEPT"),
		single("append nat masquerade", "iptables.append", false, "name", "masq", "table", "nat", "chain", "POSTROUTING", "jump", "MASQUERADE", "o", "eth0", "source", "192.168.18.0/24", "destination", "10.20.0.2"),
		single("insert test", "iptables.insert", true, "name", "ssh", "position", 1, "chain", "INPUT", "jump", "ACCEPT", "source", "10.0.0.0/8", "dport", "ssh", "proto", "tcp"),
		single("insert", "iptables.insert", false, "name", "ssh", "position", 1, "chain", "INPUT", "jump", "ACCEPT", "source", "10.0.0.0/8", "dport", "ssh", "proto", "tcp"),
		single("insert already set", "iptables.insert", false, "name", "ssh", "position", 1, "chain", "INPUT", "jump", "ACCEPT", "source", "10.0.0.0/8", "dport", "ssh", "proto", "tcp"),
		single("insert negative position", "iptables.insert", false, "name", "dns", "position", -1, "chain", "INPUT", "jump", "ACCEPT", "dport", 53, "proto", "udp"),
		single("insert string position", "iptables.insert", false, "name", "ntp", "position", "1", "chain", "INPUT", "jump", "ACCEPT", "dport", 123, "proto", "udp"),
		single("insert no position", "iptables.insert", false, "name", "np", "chain", "INPUT", "jump", "ACCEPT", "dport", 25, "proto", "tcp"),
		{Name: "get_rules", Fun: "iptables.get_rules"},
		{Name: "get_policy", Fun: "iptables.get_policy", Args: []any{"filter", "INPUT"}},
		{Name: "check present", Fun: "iptables.check", Args: []any{"filter", "INPUT", "--source 127.0.0.1 --jump ACCEPT"}},
		{Name: "check absent", Fun: "iptables.check", Args: []any{"filter", "INPUT", "--source 127.0.0.2 --jump ACCEPT"}},
		{Name: "check no rule", Fun: "iptables.check", Args: []any{"filter", "INPUT"}},
		{Name: "check_chain", Fun: "iptables.check_chain", Args: []any{"filter", "web-in"}},
		{Name: "check_chain missing", Fun: "iptables.check_chain", Args: []any{"filter", "nope"}},
		{Name: "version", Fun: "iptables.version"},
		{Name: "module append twice", Fun: "iptables.append", Args: []any{"filter", "OUTPUT", "-d 192.0.2.1 -j DROP"}},
		{Name: "module append twice again", Fun: "iptables.append", Args: []any{"filter", "OUTPUT", "-d 192.0.2.1 -j DROP"}},
		{Name: "module insert", Fun: "iptables.insert", Args: []any{"filter", "OUTPUT", 1, "-d 192.0.2.2 -j DROP"}},
		{Name: "module delete both", Fun: "iptables.delete", Args: []any{"filter", "OUTPUT", 1, "-d 192.0.2.2 -j DROP"}},
		{Name: "module delete position", Fun: "iptables.delete", Args: []any{"filter", "OUTPUT", 1}},
		{Name: "module delete missing", Fun: "iptables.delete", Args: []any{"filter", "OUTPUT"}, Kwargs: []any{"rule", "-d 192.0.2.9 -j DROP"}},
		{Name: "module new_chain exists", Fun: "iptables.new_chain", Args: []any{"filter", "web-in"}},
		{Name: "module set_policy bad", Fun: "iptables.set_policy", Args: []any{"filter", "INPUT", "MAYBE"}},
		{Name: "module flush missing chain", Fun: "iptables.flush", Args: []any{"filter", "nope"}},
		{Name: "module save", Fun: "iptables.save", Args: []any{"{dir}/sub/rules.v4"}},
		{Name: "module save v6", Fun: "iptables.save", Args: []any{"{dir}/rules.v6"}, Kwargs: []any{"family", "ipv6"}},
		single("delete test", "iptables.delete", true, append([]any{"name", "httpd"}, web...)...),
		save(single("delete", "iptables.delete", false, append([]any{"name", "httpd"}, web...)...), nil),
		single("delete already absent", "iptables.delete", false, append([]any{"name", "httpd"}, web...)...),
		single("delete by position", "iptables.delete", false, "name", "first", "position", 1, "chain", "INPUT", "jump", "ACCEPT"),
		single("delete by position test", "iptables.delete", true, "name", "first", "position", 1, "chain", "INPUT"),
		single("set_policy test", "iptables.set_policy", true, "name", "drop", "chain", "INPUT", "policy", "DROP"),
		save(single("set_policy", "iptables.set_policy", false, "name", "drop", "chain", "INPUT", "policy", "DROP"), nil),
		single("set_policy already", "iptables.set_policy", false, "name", "drop", "chain", "INPUT", "policy", "DROP"),
		single("set_policy bad", "iptables.set_policy", false, "name", "bad", "chain", "INPUT", "policy", "MAYBE"),
		single("set_policy user chain", "iptables.set_policy", false, "name", "uc", "chain", "web-in", "policy", "DROP"),
		single("set_policy no policy", "iptables.set_policy", false, "name", "np", "chain", "INPUT"),
		single("append ipv6", "iptables.append", false, "name", "lo6", "family", "ipv6", "chain", "INPUT", "jump", "ACCEPT", "source", "::1"),
		single("append ipv6 already test", "iptables.append", true, "name", "lo6", "family", "ipv6", "chain", "INPUT", "jump", "ACCEPT", "source", "::1"),
		single("set_policy ipv6", "iptables.set_policy", false, "name", "drop6", "family", "ipv6", "chain", "FORWARD", "policy", "DROP"),
		single("chain_present ipv6", "iptables.chain_present", false, "name", "v6chain", "family", "ipv6"),
		{Name: "get_rules ipv6", Fun: "iptables.get_rules", Kwargs: []any{"family", "ipv6"}},
		single("flush test", "iptables.flush", true, "name", "fl", "chain", "web-in"),
		single("flush chain", "iptables.flush", false, "name", "fl", "chain", "web-in"),
		single("flush missing chain", "iptables.flush", false, "name", "fl", "chain", "nope"),
		single("chain_absent test", "iptables.chain_absent", true, "name", "web-in"),
		single("chain_absent", "iptables.chain_absent", false, "name", "web-in"),
		single("chain_absent again", "iptables.chain_absent", false, "name", "web-in"),
		single("chain_absent in use", "iptables.chain_absent", false, "name", "DOCKER", "table", "nat"),
		single("flush table", "iptables.flush", false, "name", "all", "table", "nat"),
		single("chain_absent ipv6", "iptables.chain_absent", false, "name", "v6chain", "family", "ipv6"),
		{Name: "get_rules end", Fun: "iptables.get_rules"},
	}
	runStateSuite(t, salttest.Suite{Name: "iptables", Calls: calls, Grains: payloadLinuxGrains(),
		Opts: []any{"iptables.save_filters", []any{"^#"}}, AfterSalt: func() { iptablesReset(t) }})
}

// iptablesAggSLS has two append and two insert rules and a policy, for
// mod_aggregate.
const iptablesAggSLS = `ssh:
  iptables.append:
    - chain: INPUT
    - jump: ACCEPT
    - proto: tcp
    - dport: 22
http:
  iptables.append:
    - chain: INPUT
    - jump: ACCEPT
    - proto: tcp
    - dport: 80
dns:
  iptables.insert:
    - position: 1
    - chain: INPUT
    - jump: ACCEPT
    - proto: udp
    - dport: 53
ntp:
  iptables.insert:
    - position: 1
    - chain: INPUT
    - jump: ACCEPT
    - proto: udp
    - dport: 123
policy:
  iptables.set_policy:
    - chain: INPUT
    - policy: DROP
`

// TestIptablesAggregateGolden applies an SLS of iptables rules with
// state_aggregate on (the first append and the first insert take the
// others' rules through mod_aggregate; the others then find their rules
// set) and off, in test and real mode, in a fresh network namespace, and
// compares with Salt 3006 (testdata/golden/iptables_aggregate.json).
func TestIptablesAggregateGolden(t *testing.T) {
	if !iptablesInNetns(t) {
		return
	}
	t.Setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
	iptablesReset(t)
	agg := []any{"state_aggregate", true}
	calls := []salttest.Call{
		{Name: "aggregate test", Fun: "state.sls", Args: []any{"agg"}, Kwargs: []any{"test", true}, Opts: agg},
		{Name: "plain test", Fun: "state.sls", Args: []any{"agg"}, Kwargs: []any{"test", true}},
		{Name: "aggregate", Fun: "state.sls", Args: []any{"agg"}, Opts: agg},
		{Name: "rules", Fun: "iptables.get_rules"},
		{Name: "aggregate again", Fun: "state.sls", Args: []any{"agg"}, Opts: agg},
	}
	salttest.Run(t, salttest.Suite{Name: "iptables_aggregate", Calls: calls, Grains: payloadLinuxGrains(),
		Srv: map[string]string{"agg.sls": iptablesAggSLS}, Normalize: stateRets,
		AfterSalt: func() { iptablesReset(t) }}, suiteRegistry(t))
}

// oldIptablesPath puts scripts first on PATH that stand for an iptables
// before 1.4.11: iptables and ip6tables print their real --help without
// the --check line and "v1.4.7" for --version, and run the real binary
// (and iptables-save) for everything else. It returns their folder.
func oldIptablesPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, exe := range []string{"iptables", "ip6tables"} {
		script := "#!/bin/sh\ncase \"$1\" in\n--help) /usr/sbin/" + exe + " --help | grep -v -e --check;;\n" +
			"--version|-V) echo '" + exe + " v1.4.7';;\n*) exec /usr/sbin/" + exe + " \"$@\";;\nesac\n"
		for name, body := range map[string]string{exe: script, exe + "-save": "#!/bin/sh\nexec /usr/sbin/" + exe + "-save \"$@\"\n"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Setenv("PATH", dir+":/usr/sbin:/usr/bin:/sbin:/bin")
	return dir
}

// fakeIptablesRe matches the path of a stand-in iptables script in a
// test's temporary folder.
var fakeIptablesRe = regexp.MustCompile(`/\S*/(ip6?tables)\b`)

// maskFakeIptables puts {fake} for the stand-in scripts' folder in every
// string of v (each run has its own temporary folder).
func maskFakeIptables(v any) any {
	switch x := v.(type) {
	case string:
		return fakeIptablesRe.ReplaceAllString(x, "{fake}/$1")
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = maskFakeIptables(e)
		}
		return out
	case *payload.Map:
		out := &payload.Map{}
		for _, it := range x.Items() {
			out.SetKey(maskFakeIptables(it.Key), maskFakeIptables(it.Value))
		}
		return out
	}
	return v
}

// TestIptablesOldCheckGolden runs iptables.check, and the module
// functions and states that use it, against an iptables without --check
// (scripts standing for iptables 1.4.7 in front of the real binaries, in
// a fresh network namespace), and compares with Salt 3006's run of the
// same calls (testdata/golden/iptables_oldcheck.json): check falls back
// to a temporary chain and iptables-save, so a rule written differently
// from iptables-save's canonical form is still found, a rule in another
// chain is not, a rule iptables refuses is absent, and (Salt's quirk:
// the saved lines of every table are searched) a rule asked for in
// another table is found when the same line is in any table.
func TestIptablesOldCheckGolden(t *testing.T) {
	if !iptablesInNetns(t) {
		return
	}
	oldIptablesPath(t)
	iptablesReset(t)
	check := func(name string, args ...any) salttest.Call {
		return salttest.Call{Name: name, Fun: "iptables.check", Args: args}
	}
	calls := []salttest.Call{
		{Name: "version", Fun: "iptables.version"},
		{Name: "append", Fun: "iptables.append", Args: []any{"filter", "INPUT", "-s 127.0.0.1 -j ACCEPT"}},
		{Name: "append tcp", Fun: "iptables.append", Args: []any{"filter", "INPUT", "-p tcp --dport 22 -m comment --comment 'ssh in' -j ACCEPT"}},
		check("check canonical", "filter", "INPUT", "-s 127.0.0.1/32 -j ACCEPT"),
		check("check long options", "filter", "INPUT", "--source 127.0.0.1 --jump ACCEPT"),
		check("check tcp reordered", "filter", "INPUT", "-p tcp -m tcp --dport 22 -m comment --comment 'ssh in' -j ACCEPT"),
		check("check absent", "filter", "INPUT", "-s 127.0.0.2 -j ACCEPT"),
		check("check other chain", "filter", "OUTPUT", "-s 127.0.0.1 -j ACCEPT"),
		check("check other table", "nat", "INPUT", "-s 127.0.0.1 -j ACCEPT"),
		check("check bad rule", "filter", "INPUT", "--nope 1 -j ACCEPT"),
		check("check no chain", "filter", "", "-j ACCEPT"),
		check("check no rule", "filter", "INPUT"),
		{Name: "append again", Fun: "iptables.append", Args: []any{"filter", "INPUT", "--source 127.0.0.1 --jump ACCEPT"}},
		{Name: "insert again", Fun: "iptables.insert", Args: []any{"filter", "INPUT", 1, "-s 127.0.0.1/32 -j ACCEPT"}},
		{Name: "append v6", Fun: "iptables.append", Args: []any{"filter", "INPUT", "-s ::1 -j ACCEPT"}, Kwargs: []any{"family", "ipv6"}},
		{Name: "check v6", Fun: "iptables.check", Args: []any{"filter", "INPUT", "-s ::1/128 -j ACCEPT"}, Kwargs: []any{"family", "ipv6"}},
		{Name: "check v6 absent", Fun: "iptables.check", Args: []any{"filter", "INPUT", "-s ::2 -j ACCEPT"}, Kwargs: []any{"family", "ipv6"}},
		single("state append test", "iptables.append", true, "name", "web", "chain", "INPUT", "jump", "ACCEPT", "proto", "tcp", "dport", 80),
		single("state append", "iptables.append", false, "name", "web", "chain", "INPUT", "jump", "ACCEPT", "proto", "tcp", "dport", 80),
		single("state append already set", "iptables.append", false, "name", "web", "chain", "INPUT", "jump", "ACCEPT", "proto", "tcp", "dport", 80),
		single("state insert already set", "iptables.insert", false, "name", "lo", "position", 1, "chain", "INPUT", "jump", "ACCEPT", "source", "127.0.0.1"),
		single("state delete", "iptables.delete", false, "name", "web", "chain", "INPUT", "jump", "ACCEPT", "proto", "tcp", "dport", 80),
		single("state delete already absent", "iptables.delete", false, "name", "web", "chain", "INPUT", "jump", "ACCEPT", "proto", "tcp", "dport", 80),
		{Name: "get_rules", Fun: "iptables.get_rules"},
		{Name: "chains left", Fun: "cmd.run", Args: []any{"iptables-save -t filter"}},
	}
	salttest.Run(t, salttest.Suite{Name: "iptables_oldcheck", Calls: calls, Grains: payloadLinuxGrains(),
		Normalize: func(name string, v any) any {
			v = stateRet(name, maskFakeIptables(v))
			if name == "chains left" {
				// iptables-save's dated comment lines
				s, _ := v.(string)
				var keep []string
				for _, l := range strings.Split(s, "\n") {
					if !strings.HasPrefix(l, "#") {
						keep = append(keep, l)
					}
				}
				return strings.Join(keep, "\n")
			}
			return v
		},
		AfterSalt: func() { iptablesReset(t) }}, suiteRegistry(t))
}

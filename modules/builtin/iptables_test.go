package builtin_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// iptablesGoldenPath pins where Salt's and gsalt's which find iptables,
// so that full=True command lines name the same binary everywhere.
const iptablesGoldenPath = "/usr/sbin:/usr/bin:/sbin:/bin"

// iptablesRequire skips a test where the iptables binary is missing
// (the module does not load there, in Salt as in gsalt).
func iptablesRequire(t *testing.T) {
	t.Helper()
	for _, d := range filepath.SplitList(iptablesGoldenPath) {
		if _, err := os.Stat(filepath.Join(d, "iptables")); err == nil {
			return
		}
	}
	t.Skip("iptables tests: no iptables binary (apt-get install iptables)")
}

// iptablesBuildRuleCases are build_rule calls written by hand: each
// option build_rule handles on its own, negation with "!" and "not",
// match lists and strings, multiport, comments, jump options with and
// without values, the full=True command lines and their errors.
func iptablesBuildRuleCases() []salttest.Call {
	c := func(name string, args []any, kw ...any) salttest.Call {
		return salttest.Call{Name: "build_rule " + name, Fun: "iptables.build_rule", Args: args, Kwargs: kw}
	}
	full := func(name string, kw ...any) salttest.Call {
		return c(name, nil, append([]any{"table", "filter", "chain", "INPUT", "command", "A", "full", true}, kw...)...)
	}
	return []salttest.Call{
		c("empty", nil),
		c("state doc example", nil, "match", "state", "connstate", "RELATED,ESTABLISHED", "jump", "ACCEPT"),
		c("positional full insert", []any{"filter", "INPUT"}, "command", "I", "position", 3, "full", true, "match", "state", "connstate", "RELATED,ESTABLISHED", "jump", "ACCEPT"),
		full("negated source", "match", "state", "connstate", "RELATED,ESTABLISHED", "source", "!127.0.0.1", "jump", "ACCEPT"),
		full("not destination", "match", "state", "connstate", "RELATED,ESTABLISHED", "destination", "not 127.0.0.1", "jump", "ACCEPT"),
		full("ipv6", "family", "ipv6", "source", "::1", "jump", "ACCEPT"),
		full("ipv6 insert position", "family", "ipv6", "command", "I", "position", 1, "proto", "tcp", "dport", 22, "jump", "ACCEPT"),
		full("long command", "command", "insert", "jump", "DROP"),
		full("two-letter command", "command", "AC", "jump", "DROP"),
		full("unknown family", "family", "ipx", "jump", "DROP"),
		full("position last", "position", "last", "proto", "tcp", "dport", "ssh", "jump", "REJECT"),
		c("full no table", nil, "table", "", "chain", "INPUT", "command", "A", "full", true, "jump", "ACCEPT"),
		c("full no chain", nil, "command", "A", "full", true, "jump", "ACCEPT"),
		c("full no command", nil, "chain", "INPUT", "full", true, "jump", "ACCEPT"),
		c("full string True", nil, "chain", "INPUT", "command", "D", "full", "True", "jump", "ACCEPT"),
		c("full False", nil, "chain", "INPUT", "command", "D", "full", false, "jump", "ACCEPT"),
		c("if and of", nil, "if", "eth0", "of", "!eth1", "jump", "ACCEPT"),
		c("if negated with not space", nil, "if", "not eth0", "jump", "ACCEPT"),
		c("i and o keys", nil, "i", "eth0", "o", "! eth1", "jump", "ACCEPT"),
		c("in-interface long", nil, "in-interface", "eth0", "out-interface", "eth1", "jump", "ACCEPT"),
		c("proto", nil, "proto", "udp", "dport", 53),
		c("protocol negated", nil, "protocol", "!tcp", "jump", "DROP"),
		c("proto and protocol", nil, "protocol", "tcp", "proto", "udp"),
		c("match list", nil, "match", []any{"state", "comment"}, "comment", "Allow HTTP", "connstate", "NEW", "dport", 80, "protocol", "tcp", "sport", "1025:65535", "jump", "ACCEPT"),
		c("match comma string with space", nil, "match", "state, comment", "connstate", "NEW", "jump", "ACCEPT"),
		c("match policy proto", nil, "match", "policy", "dir", "in", "pol", "ipsec", "reqid", 1, "proto", "esp", "jump", "ACCEPT"),
		c("match policy negated proto", nil, "match", "policy", "dir", "out", "pol", "ipsec", "proto", "!esp", "jump", "ACCEPT"),
		c("match list with policy proto", nil, "match", []any{"policy"}, "proto", "esp", "jump", "ACCEPT"),
		c("recent name_", nil, "match", "recent", "name_", "SSH", "set", "", "rsource", "", "jump", "ACCEPT"),
		c("recent name_ with space", nil, "match", " recent", "name_", "SSH", "rcheck", nil, "seconds", 60, "hitcount", 4),
		c("name_ without recent", nil, "match", "state", "name_", "X", "connstate", "NEW"),
		c("match-set string", nil, "match-set", "blacklist src", "jump", "DROP"),
		c("match-set negated list", nil, "match-set", []any{"!allow src", "not deny dst", "other src"}, "jump", "DROP"),
		c("connstate with state match", nil, "match", "state", "connstate", "!INVALID"),
		c("connstate without match", nil, "connstate", "NEW,ESTABLISHED", "jump", "ACCEPT"),
		c("connstate with conntrack", nil, "match", "conntrack", "ctstate", "RELATED,ESTABLISHED", "jump", "ACCEPT"),
		c("state is ignored", nil, "state", "NEW", "jump", "ACCEPT"),
		c("dport sport negated", nil, "proto", "tcp", "dport", "!22", "sport", "not 1024:65535"),
		c("dports list", nil, "proto", "tcp", "dports", []any{80, 443, "8000:8080"}, "jump", "ACCEPT"),
		c("dports list negated", nil, "proto", "tcp", "dports", []any{80, "!443"}, "jump", "ACCEPT"),
		c("dports string negated", nil, "proto", "tcp", "dports", "not 80,443", "jump", "ACCEPT"),
		c("sports and dports", nil, "proto", "udp", "sports", "53,5353", "dports", 1024, "jump", "ACCEPT"),
		c("dports without protocol", nil, "dports", "80,443", "jump", "ACCEPT"),
		c("dports with multiport match", nil, "match", "multiport", "dports", "80,443", "jump", "ACCEPT"),
		c("comment with spaces", nil, "comment", "allow web traffic", "jump", "ACCEPT"),
		c("comment with comment match", nil, "match", "comment", "comment", "x", "jump", "ACCEPT"),
		c("comment negation kept", nil, "comment", "!not really", "jump", "ACCEPT"),
		c("comment number", nil, "comment", 42, "jump", "ACCEPT"),
		c("set truthy", nil, "set", "myset src", "jump", "DROP"),
		c("set negated", nil, "set", "!myset src", "jump", "DROP"),
		c("set empty", nil, "set", "", "jump", "DROP"),
		c("set None", nil, "set", nil, "jump", "DROP"),
		c("set False", nil, "set", false, "jump", "DROP"),
		c("set zero", nil, "set", 0, "jump", "DROP"),
		c("target", nil, "target", "LOG", "log-prefix", "IPT: ", "log-level", 4),
		c("target and jump", nil, "jump", "ACCEPT", "target", "DROP"),
		c("j short", nil, "j", "ACCEPT"),
		c("jump empty string", nil, "jump", ""),
		c("reject-with", nil, "proto", "tcp", "jump", "REJECT", "reject-with", "tcp-reset"),
		c("to-destination and to-ports", nil, "jump", "DNAT", "to-destination", "10.0.0.1:80", "to-ports", 8080),
		c("log-prefix with tab", nil, "jump", "LOG", "log-prefix", "a\tb"),
		c("jump args order", nil, "zone", 1, "to", 2, "clamp-mss-to-pmtu", "", "jump", "TCPMSS", "set-mss", 1400),
		c("jump option None", nil, "jump", "CT", "notrack", nil),
		c("jump option False", nil, "jump", "CT", "notrack", false),
		c("generic short keys", nil, "s", "10.0.0.0/8", "d", "!10.1.0.0/16", "f", "", "jump", "ACCEPT"),
		c("generic long keys", nil, "source", "1.2.3.4", "destination", "5.6.7.8", "tcp-flags", "SYN,RST SYN", "syn", ""),
		c("generic None", nil, "fragment", nil, "jump", "DROP"),
		c("generic True", nil, "physdev-is-bridged", true, "jump", "ACCEPT"),
		c("generic list", nil, "weekdays", []any{"Mon", "Tue"}, "jump", "ACCEPT"),
		c("generic negated nothing", nil, "uid-owner", "nothing", "jump", "ACCEPT"),
		c("bang everywhere", nil, "source", "!1.2.3.4!5 not  x", "jump", "ACCEPT"),
		c("not then tab", nil, "source", "not\t1.2.3.4", "jump", "ACCEPT"),
		c("internal keywords dropped", nil, "require", []any{"x"}, "order", 10, "save", true, "__id__", "id", "__sls__", "s", "onlyif", "true", "jump", "ACCEPT"),
		c("name dropped", nil, "name", "my rule", "jump", "ACCEPT"),
		c("formula allow localhost", nil, "name", "iptables_allow_localhost", "table", "filter", "chain", "INPUT", "jump", "ACCEPT", "source", "127.0.0.1", "save", true),
		c("formula snmp", nil, "position", 1, "table", "filter", "chain", "INPUT", "jump", "ACCEPT", "i", "eth0", "source", "0.0.0.0/0", "dport", "snmp", "proto", "udp", "save", true),
		c("formula nat", nil, "table", "nat", "chain", "POSTROUTING", "jump", "MASQUERADE", "o", "eth0", "source", "192.168.18.0/24", "destination", "10.20.0.2", "save", true),
		c("formula full nat", nil, "table", "nat", "chain", "POSTROUTING", "command", "A", "full", "True", "jump", "MASQUERADE", "o", "eth0", "source", "192.168.18.0/24", "destination", "10.20.0.2"),
	}
}

// iptablesGeneratedCases are build_rule calls over a pool of options
// drawn by a fixed linear congruential sequence: different orders,
// negations and combinations of the options build_rule treats apart and
// the ones it passes through.
func iptablesGeneratedCases(n int) []salttest.Call {
	pool := []struct {
		key    string
		values []any
	}{
		{"proto", []any{"tcp", "udp", "!icmp"}},
		{"protocol", []any{"tcp", "not udp"}},
		{"match", []any{"state", "comment", "conntrack", "multiport", []any{"state", "comment"}, "tcp,state"}},
		{"connstate", []any{"NEW", "RELATED,ESTABLISHED", "!INVALID"}},
		{"ctstate", []any{"NEW", "RELATED,ESTABLISHED"}},
		{"dport", []any{22, "80", "!443", "1024:65535"}},
		{"sport", []any{53, "not 123"}},
		{"dports", []any{"80,443", []any{22, 2222}, []any{"!25", 587}}},
		{"sports", []any{"1024:2048", []any{53}}},
		{"comment", []any{"web", "allow ssh from lab", "a \"quoted\" word"}},
		{"source", []any{"10.0.0.0/8", "!192.168.0.0/16", "not 127.0.0.1", "::1"}},
		{"destination", []any{"10.1.2.3", "!10.0.0.0/8"}},
		{"i", []any{"eth0", "!lo"}},
		{"o", []any{"eth1", "not eth0"}},
		{"if", []any{"eth0", "!br0"}},
		{"of", []any{"eth1"}},
		{"jump", []any{"ACCEPT", "DROP", "REJECT", "LOG", ""}},
		{"target", []any{"RETURN", "MASQUERADE"}},
		{"reject-with", []any{"icmp-port-unreachable", "tcp-reset"}},
		{"log-prefix", []any{"IPT: ", "drop"}},
		{"log-level", []any{4, "debug"}},
		{"to-source", []any{"203.0.113.5"}},
		{"match-set", []any{"bad src", []any{"!good src"}}},
		{"set", []any{"myset src", "", nil}},
		{"limit", []any{"5/min"}},
		{"limit-burst", []any{10}},
		{"icmp-type", []any{8, "echo-request"}},
		{"tcp-flags", []any{"SYN,RST SYN"}},
		{"uid-owner", []any{0, "!33"}},
		{"fragment", []any{"", nil}},
		{"name_", []any{"SSH"}},
		{"name", []any{"rule name"}},
		{"save", []any{true}},
		{"require", []any{[]any{payload.NewMap("pkg", "iptables")}}},
	}
	var out []salttest.Call
	x := uint32(20261129)
	next := func(m int) int {
		x = x*1103515245 + 12345
		return int((x >> 8) % uint32(m))
	}
	for i := 0; i < n; i++ {
		var kw []any
		used := map[string]bool{}
		for k := 1 + next(6); k > 0; k-- {
			o := pool[next(len(pool))]
			if used[o.key] {
				continue
			}
			used[o.key] = true
			kw = append(kw, o.key, o.values[next(len(o.values))])
		}
		switch next(5) {
		case 0:
			kw = append(kw, "full", true, "chain", "INPUT", "command", []string{"A", "I", "D", "C"}[next(4)], "table", []string{"filter", "nat", "mangle"}[next(3)])
			if next(2) == 0 {
				kw = append(kw, "position", 1+next(3))
			}
		case 1:
			kw = append(kw, "family", "ipv6")
			if next(2) == 0 {
				kw = append(kw, "full", true, "chain", "FORWARD", "command", "A")
			}
		}
		out = append(out, salttest.Call{Name: fmt.Sprintf("build_rule generated %03d", i), Fun: "iptables.build_rule", Kwargs: kw})
	}
	return out
}

// iptablesGeneratedSave is an iptables-save text of n rule lines drawn
// by a fixed linear congruential sequence from options of Salt's
// argparse table (short and long forms, abbreviations, "=" values),
// values with and without spaces, "!" before options and values,
// options without values and unknown options.
func iptablesGeneratedSave(n int) string {
	opts := []string{"-p", "--protocol", "-s", "--source", "-d", "--destination", "-i", "-o", "--in-interface",
		"-m", "--match", "--dport", "--sport", "--destination-port", "--dports", "--sports", "--comment",
		"--ctstate", "--state", "--icmp-type", "--limit", "--limit-burst", "--log-prefix", "--log-level",
		"--reject-with", "--to-destination", "--to-source", "--set-xmark", "--tcp-flags", "--syn", "--mac-source",
		"--uid-own", "--hashlimit-up", "--src-range", "--match-set", "--name", "--set", "--rsource", "--seconds",
		"--hitcount", "--string", "--algo", "--to", "--physdev-is-bridged", "--notrack", "--zone", "--goto",
		"-f", "--fragment", "--unknown-opt", "--src-cc", "--dst-cc", "--mode", "--probability", "--weekdays"}
	vals := []string{"tcp", "udp", "10.0.0.0/8", "192.168.1.1/32", "eth0", "22", "80,443", "1024:65535",
		`"two words"`, `"a \"quoted\" one"`, "NEW,ESTABLISHED", "5/min", "icmp-port-unreachable", "0x1/0xffffffff",
		"SYN,RST SYN", "x", "", "! 8", "!"}
	x := uint32(4242)
	next := func(m int) int {
		x = x*1664525 + 1013904223
		return int((x >> 8) % uint32(m))
	}
	var b strings.Builder
	b.WriteString("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [12:3456]\n:gen - [0:0]\n")
	chains := []string{"INPUT", "FORWARD", "gen"}
	for i := 0; i < n; i++ {
		b.WriteString("-A " + chains[next(len(chains))])
		for k := 1 + next(6); k > 0; k-- {
			o := opts[next(len(opts))]
			if next(6) == 0 {
				b.WriteString(" !")
			}
			v := vals[next(len(vals))]
			switch {
			case next(8) == 0 && strings.HasPrefix(o, "--") && v != "" && !strings.Contains(v, " ") && v != "!":
				b.WriteString(" " + o + "=" + v)
			case v == "":
				b.WriteString(" " + o)
			default:
				b.WriteString(" " + o + " " + v)
			}
		}
		b.WriteString(" -j " + []string{"ACCEPT", "DROP", "gen", "LOG"}[next(4)] + "\n")
	}
	b.WriteString("COMMIT\n")
	return b.String()
}

// TestIptablesBuildRuleGolden compares build_rule with Salt 3006's on
// the hand-written cases and 200 generated ones
// (testdata/golden/iptables_build_rule.json).
func TestIptablesBuildRuleGolden(t *testing.T) {
	iptablesRequire(t)
	t.Setenv("PATH", iptablesGoldenPath)
	calls := append(iptablesBuildRuleCases(), iptablesGeneratedCases(200)...)
	runSuite(t, salttest.Suite{Name: "iptables_build_rule", Calls: calls, Grains: payload.NewMap("os", "Debian", "os_family", "Debian", "kernel", "Linux")})
}

// TestIptablesParseGolden compares Salt 3006's parser of iptables-save
// output (get_saved_rules, get_saved_policy) with gsalt's on texts
// captured from iptables-save v1.8.9 (testdata/iptables: IPv4 with four
// tables, comments with spaces and quotes, negations, several matches
// per rule, jump options; IPv6; counters), and on broken texts.
func TestIptablesParseGolden(t *testing.T) {
	iptablesRequire(t)
	t.Setenv("PATH", iptablesGoldenPath)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "iptables", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	v4, v6, counters := read("rules.v4"), read("rules.v6"), read("counters.v4")
	saved := func(name, text string, args ...any) salttest.Call {
		return salttest.Call{Name: name, Fun: "iptables.get_saved_rules", Kwargs: append([]any{"conf_file", "{dir}/rules"}, args...),
			Files: map[string]string{"rules": text}}
	}
	policy := func(name, text string, args ...any) salttest.Call {
		return salttest.Call{Name: name, Fun: "iptables.get_saved_policy", Args: args, Kwargs: []any{"conf_file", "{dir}/rules"},
			Files: map[string]string{"rules": text}}
	}
	calls := []salttest.Call{
		saved("saved v4", v4),
		saved("saved v6", v6, "family", "ipv6"),
		saved("saved counters", counters),
		saved("saved empty", ""),
		saved("saved comments only", "# nothing\nCOMMIT\n"),
		saved("saved crlf", "*filter\r\n:INPUT ACCEPT [1:2]\r\n-A INPUT -s 1.2.3.4/32 -m comment --comment \"a b\" -j DROP\r\nCOMMIT\r\n"),
		saved("saved redeclared chain", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j DROP\n:INPUT DROP [3:4]\n-A INPUT -j ACCEPT\nCOMMIT\n"),
		saved("saved star in name", "*fil*ter\n:X ACCEPT [0:0]\nCOMMIT\n"),
		saved("saved negated match-set", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m set ! --match-set allow src -j DROP\n-A INPUT -p tcp ! --syn -j ACCEPT\n-A INPUT ! -p udp ! -s 1.1.1.1 -j RETURN\nCOMMIT\n"),
		saved("saved equals and unknown options", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT --dport=22 --foo bar -x -j ACCEPT\n-A INPUT -p tcp --sport 1 2 3 -j ACCEPT\n-A INPUT -jACCEPT\n-A INPUT --source-port 5 --destination-country DE -- -j DROP\nCOMMIT\n"),
		saved("saved abbreviations", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT --ctorigsrcp 5 --log-pre x --reject REJ -j ACCEPT\nCOMMIT\n"),
		saved("saved negative number", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT --hashlimit-htable-expire -1 -j ACCEPT\n-A INPUT --comment \"-x y\" -j ACCEPT\nCOMMIT\n"),
		saved("saved duplicate comment", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m comment --comment same -j ACCEPT\n-A INPUT -m comment --comment \"same\" -j DROP\nCOMMIT\n"),
		saved("saved generated rules", iptablesGeneratedSave(200)),
		saved("saved no table", ":INPUT ACCEPT [0:0]\n"),
		saved("saved bad counters", "*filter\n:INPUT ACCEPT [0]\n"),
		saved("saved too many counters", "*filter\n:INPUT ACCEPT [0:0:0]\n"),
		saved("saved short chain line", "*filter\n:INPUT ACCEPT\n"),
		saved("saved rule in unknown chain", "*filter\n:INPUT ACCEPT [0:0]\n-A OUTPUT -j DROP\n"),
		saved("saved unclosed quote", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m comment --comment \"open -j DROP\n"),
		{Name: "saved missing file", Fun: "iptables.get_saved_rules", Kwargs: []any{"conf_file", "{dir}/nope"}},
		policy("saved policy", v4, "filter", "INPUT"),
		policy("saved policy nat", v4, "nat", "DOCKER"),
		policy("saved policy no chain", v4, "filter"),
		policy("saved policy missing chain", v4, "filter", "NOPE"),
		policy("saved policy missing table", v4, "security", "INPUT"),
	}
	runSuite(t, salttest.Suite{Name: "iptables_parse", Calls: calls, Grains: payload.NewMap("os", "Debian", "os_family", "Debian", "kernel", "Linux")})
}

// TestIptablesCheckWithoutCheckOption runs iptables.check and the append
// that uses it against an iptables (scripts first on PATH) whose --help
// names no --check, as iptables before 1.4.11: check takes Salt's
// fallback, a temporary chain named hex(uuid.getnode()) that gets the
// rule, iptables-save (here printing the rule in its canonical form) and
// the chain flushed and removed; the rule is present when the saved line
// with the asked chain's name is there. build_rule leaves --wait out when
// --help lacks it. The same calls against real iptables, compared with
// Salt 3006, are TestIptablesOldCheckGolden in states/builtin.
func TestIptablesCheckWithoutCheckOption(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	write := func(name, script string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("iptables", "#!/bin/sh\ncase \"$1\" in --help) echo 'iptables v1.4.7'; echo '  --append -A chain';;\n*) echo \"$*\" >> "+log+";; esac\n")
	// iptables-save prints the rules appended so far as iptables-save
	// would: "--source 127.0.0.1" becomes "-s 127.0.0.1/32".
	write("iptables-save", "#!/bin/sh\necho '*filter'\necho ':INPUT ACCEPT [0:0]'\necho '-A INPUT -s 127.0.0.1/32 -j ACCEPT'\n"+
		"sed -n 's/^-t filter \\(-A [^ ]*\\) --source \\([0-9.]*\\) --jump \\(.*\\)$/\\1 -s \\2\\/32 -j \\3/p' "+log+"\necho COMMIT\n")
	t.Setenv("PATH", dir+string(os.PathListSeparator)+iptablesGoldenPath)
	r := goldenRegistry(t)
	env := &modules.Env{ID: "m", Registry: r, Opts: payload.NewMap(), Log: slog.New(slog.DiscardHandler),
		Grains: payload.NewMap("os", "Debian", "os_family", "Debian", "kernel", "Linux")}
	calls := []struct {
		fun, rule string
		want      any
	}{
		{"iptables.check", "--source 127.0.0.1 --jump ACCEPT", true},
		{"iptables.check", "--source 127.0.0.2 --jump ACCEPT", false},
		{"iptables.append", "--source 127.0.0.1 --jump ACCEPT", false},
		{"iptables.append", "--source 127.0.0.3 --jump ACCEPT", true},
	}
	for _, tc := range calls {
		if err := os.WriteFile(log, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		res := r.Execute(context.Background(), modules.Binder{}, env, tc.fun, []any{"filter", "INPUT", tc.rule}, nil)
		if res.Return != tc.want {
			t.Errorf("%s %q: retcode %d, return %#v; want %v", tc.fun, tc.rule, res.Retcode, res.Return, tc.want)
		}
		raw, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		if len(lines) < 4 {
			t.Fatalf("%s: commands run %q", tc.fun, lines)
		}
		tmp := strings.Fields(lines[0])[len(strings.Fields(lines[0]))-1]
		if !regexp.MustCompile(`^0x[0-9a-f]{1,12}$`).MatchString(tmp) {
			t.Errorf("temporary chain %q is not hex(uuid.getnode())", tmp)
		}
		want := []string{"-t filter -N " + tmp, "-t filter -A " + tmp + " " + tc.rule, "-t filter -F " + tmp, "-t filter -X " + tmp}
		if tc.fun == "iptables.append" && tc.want == true {
			want = append(want, "-t filter -A INPUT "+tc.rule)
		}
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s %q: commands\n%s\nwant\n%s", tc.fun, tc.rule, strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}
	res := r.Execute(context.Background(), modules.Binder{}, env, "iptables.build_rule",
		[]any{"filter", "INPUT", payload.NewMap("__kwarg__", true, "command", "A", "full", true, "jump", "ACCEPT")}, nil)
	if want := filepath.Join(dir, "iptables") + "  -t filter -A INPUT  --jump ACCEPT"; res.Return != want {
		t.Errorf("build_rule: got %#v, want %q", res.Return, want)
	}
}

// BenchmarkIptablesGetSavedRules parses the captured IPv4 iptables-save
// text (4 tables, 39 rules) through iptables.get_saved_rules.
func BenchmarkIptablesGetSavedRules(b *testing.B) {
	r := modules.NewRegistry()
	if err := builtin.Register(r); err != nil {
		b.Fatal(err)
	}
	env := &modules.Env{ID: "m", Registry: r, Opts: payload.NewMap(), Log: slog.New(slog.DiscardHandler),
		Grains: payload.NewMap("os", "Debian", "os_family", "Debian", "kernel", "Linux")}
	args := []any{filepath.Join("testdata", "iptables", "rules.v4")}
	b.ReportAllocs()
	for b.Loop() {
		if res := r.Execute(context.Background(), modules.Binder{}, env, "iptables.get_saved_rules", args, nil); res.Retcode != 0 {
			b.Fatal(res.Return)
		}
	}
}

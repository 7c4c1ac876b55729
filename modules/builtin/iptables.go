package builtin

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's iptables module (salt/modules/iptables.py): rules
// built into iptables command lines (build_rule), run through the
// iptables/ip6tables binaries with cmd.run_* (check runs `iptables -C`),
// and iptables-save output parsed with Salt's argparse table of the
// options in iptables(8) and iptables-extensions(8) (get_rules,
// get_saved_rules). Every public function of Salt's module is here,
// check's fallback for an iptables without --check (iptables < 1.4.11)
// included: the rule goes into a temporary chain and iptables-save's
// canonical line for it is looked for in the asked chain.

// ErrIptablesNotFound is the reason the iptables module does not load
// (its __virtual__ text): no iptables binary.
var ErrIptablesNotFound = errors.New("The iptables execution module cannot be loaded: iptables not installed.")

// maxIptablesFile bounds a saved rules file read into memory.
const maxIptablesFile = 64 << 20

func iptablesFunctions() []modules.Function {
	fam := opt("family", "ipv4")
	return []modules.Function{
		{Name: "iptables.version", Spec: modules.Spec{Params: []modules.Param{fam}},
			Doc: "Return version from iptables --version\n\nCLI Example:\n\n    salt '*' iptables.version\n\n    IPv6:\n    salt '*' iptables.version family=ipv6",
			Fn:  iptablesVersion},
		{Name: "iptables.build_rule", Spec: modules.Spec{Params: []modules.Param{opt("table", "filter"), opt("chain", nil), opt("command", nil),
			opt("position", ""), opt("full", nil), fam}, Kwargs: true},
			Doc: "Build a well-formatted iptables rule based on kwargs. A `table` and `chain`\nare not required, unless `full` is True.\n\nCLI Examples:\n\n    salt '*' iptables.build_rule match=state \\\n        connstate=RELATED,ESTABLISHED jump=ACCEPT\n\n    salt '*' iptables.build_rule filter INPUT command=I position=3 \\\n        full=True match=state connstate=RELATED,ESTABLISHED jump=ACCEPT",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return iptablesBuildRule(ctx, c, c.Args.Get("table"), c.Args.Get("chain"), c.Args.Get("command"), c.Args.Get("position"),
					c.Args.Get("full"), c.Args.Get("family"), c.Args.Kwargs)
			}},
		{Name: "iptables.get_saved_rules", Spec: modules.Spec{Params: []modules.Param{opt("conf_file", nil), fam}},
			Doc: "Return a data structure of the rules in the conf file\n\nCLI Example:\n\n    salt '*' iptables.get_saved_rules\n\n    IPv6:\n    salt '*' iptables.get_saved_rules family=ipv6",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return iptablesParseConf(ctx, c, c.Args.Get("conf_file"), false, c.Args.Get("family"))
			}},
		{Name: "iptables.get_rules", Spec: modules.Spec{Params: []modules.Param{fam}},
			Doc: "Return a data structure of the current, in-memory rules\n\nCLI Example:\n\n    salt '*' iptables.get_rules\n\n    IPv6:\n    salt '*' iptables.get_rules family=ipv6",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return iptablesParseConf(ctx, c, nil, true, c.Args.Get("family"))
			}},
		{Name: "iptables.get_saved_policy", Spec: modules.Spec{Params: []modules.Param{opt("table", "filter"), opt("chain", nil), opt("conf_file", nil), fam}},
			Doc: "Return the current policy for the specified table/chain\n\nCLI Examples:\n\n    salt '*' iptables.get_saved_policy filter INPUT\n    salt '*' iptables.get_saved_policy filter INPUT \\\n        conf_file=/etc/iptables.saved",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return iptablesPolicy(ctx, c, c.Args.Get("conf_file"), false)
			}},
		{Name: "iptables.get_policy", Spec: modules.Spec{Params: []modules.Param{opt("table", "filter"), opt("chain", nil), fam}},
			Doc: "Return the current policy for the specified table/chain\n\nCLI Example:\n\n    salt '*' iptables.get_policy filter INPUT\n\n    IPv6:\n    salt '*' iptables.get_policy filter INPUT family=ipv6",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return iptablesPolicy(ctx, c, nil, true)
			}},
		{Name: "iptables.set_policy", Spec: modules.Spec{Params: []modules.Param{opt("table", "filter"), opt("chain", nil), opt("policy", nil), fam}},
			Doc: "Set the current policy for the specified table/chain\n\nCLI Example:\n\n    salt '*' iptables.set_policy filter INPUT ACCEPT\n\n    IPv6:\n    salt '*' iptables.set_policy filter INPUT ACCEPT family=ipv6",
			Fn:  iptablesSetPolicy},
		{Name: "iptables.save", Spec: modules.Spec{Params: []modules.Param{opt("filename", nil), fam}},
			Doc: "Save the current in-memory rules to disk\n\nCLI Example:\n\n    salt '*' iptables.save /etc/sysconfig/iptables\n\n    IPv6:\n    salt '*' iptables.save /etc/sysconfig/iptables family=ipv6",
			Fn:  iptablesSave},
		{Name: "iptables.check", Spec: modules.Spec{Params: []modules.Param{opt("table", "filter"), opt("chain", nil), opt("rule", nil), fam}},
			Doc: "Check for the existence of a rule in the table and chain\n\nCLI Example:\n\n    salt '*' iptables.check filter INPUT \\\n        rule='-m state --state RELATED,ESTABLISHED -j ACCEPT'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return iptablesCheck(ctx, c, c.Args.Get("table"), c.Args.Get("chain"), c.Args.Get("rule"), c.Args.Get("family"))
			}},
		{Name: "iptables.check_chain", Spec: modules.Spec{Params: []modules.Param{opt("table", "filter"), opt("chain", nil), fam}},
			Doc: "Check for the existence of a chain in the table\n\nCLI Example:\n\n    salt '*' iptables.check_chain filter INPUT\n\n    IPv6:\n    salt '*' iptables.check_chain filter INPUT family=ipv6",
			Fn:  iptablesCheckChain},
		{Name: "iptables.new_chain", Spec: modules.Spec{Params: []modules.Param{opt("table", "filter"), opt("chain", nil), fam}},
			Doc: "Create new custom chain to the specified table.\n\nCLI Example:\n\n    salt '*' iptables.new_chain filter CUSTOM_CHAIN\n\n    IPv6:\n    salt '*' iptables.new_chain filter CUSTOM_CHAIN family=ipv6",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return iptablesChainOp(ctx, c, "-N")
			}},
		{Name: "iptables.delete_chain", Spec: modules.Spec{Params: []modules.Param{opt("table", "filter"), opt("chain", nil), fam}},
			Doc: "Delete custom chain to the specified table.\n\nCLI Example:\n\n    salt '*' iptables.delete_chain filter CUSTOM_CHAIN\n\n    IPv6:\n    salt '*' iptables.delete_chain filter CUSTOM_CHAIN family=ipv6",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return iptablesChainOp(ctx, c, "-X")
			}},
		{Name: "iptables.append", Spec: modules.Spec{Params: []modules.Param{opt("table", "filter"), opt("chain", nil), opt("rule", nil), fam}},
			Doc: "Append a rule to the specified table/chain.\n\nCLI Example:\n\n    salt '*' iptables.append filter INPUT \\\n        rule='-m state --state RELATED,ESTABLISHED -j ACCEPT'",
			Fn:  iptablesAppend},
		{Name: "iptables.insert", Spec: modules.Spec{Params: []modules.Param{opt("table", "filter"), opt("chain", nil), opt("position", nil), opt("rule", nil), fam}},
			Doc: "Insert a rule into the specified table/chain, at the specified position.\n\nCLI Examples:\n\n    salt '*' iptables.insert filter INPUT position=3 \\\n        rule='-m state --state RELATED,ESTABLISHED -j ACCEPT'",
			Fn:  iptablesInsert},
		{Name: "iptables.delete", Spec: modules.Spec{Params: []modules.Param{req("table"), opt("chain", nil), opt("position", nil), opt("rule", nil), fam}},
			Doc: "Delete a rule from the specified table/chain, specifying either the rule\n    in its entirety, or the rule's position in the chain.\n\nCLI Examples:\n\n    salt '*' iptables.delete filter INPUT position=3\n    salt '*' iptables.delete filter INPUT \\\n        rule='-m state --state RELATED,ESTABLISHED -j ACCEPT'",
			Fn:  iptablesDelete},
		{Name: "iptables.flush", Spec: modules.Spec{Params: []modules.Param{opt("table", "filter"), opt("chain", ""), fam}},
			Doc: "Flush the chain in the specified table, flush all chains in the specified\ntable if not specified chain.\n\nCLI Example:\n\n    salt '*' iptables.flush filter INPUT\n\n    IPv6:\n    salt '*' iptables.flush filter INPUT family=ipv6",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return iptablesRunWaitStderr(ctx, c, c.Args.Get("family"), "%s %s -t %s -F %s", pyfmt.Str(c.Args.Get("table")), pyfmt.Str(c.Args.Get("chain")))
			}},
	}
}

// iptablesCmd is _iptables_cmd: the path of ip6tables for family "ipv6",
// else of iptables ("None" where it is not found, as Python formats it).
func iptablesCmd(family any) string {
	exe := "iptables"
	if s, ok := family.(string); ok && s == "ipv6" {
		exe = "ip6tables"
	}
	if p := saltWhichIn(exe, os.Getenv("PATH"), saltWhichDirs); p != "" {
		return p
	}
	return "None"
}

// iptablesRun runs cmd as cmd.run_* does from a module (python_shell
// False: the string is shlex-split), quietly, and sets the call's
// retcode as cmd.run_* sets __context__["retcode"].
func iptablesRun(ctx context.Context, c *modules.Call, cmd string) (stdout, stderr string, err error) {
	v, err := callFunction(ctx, c, "cmd.run_all", []any{cmd}, payload.NewMap("python_shell", false, "output_loglevel", "quiet", "ignore_retcode", true))
	if err != nil {
		return "", "", err
	}
	m, _ := v.(*payload.Map)
	if m == nil {
		return "", "", fmt.Errorf("%w: cmd.run_all returned %s", modules.ErrExecution, pyfmt.Repr(v))
	}
	rcv, _ := m.Get("retcode")
	if rc, ok := cmdPyInt(rcv); ok {
		c.Retcode = int(rc)
	}
	return m.Str("stdout"), m.Str("stderr"), nil
}

// iptablesRunStderr runs cmd and returns its standard error, as
// cmd.run_stderr does.
func iptablesRunStderr(ctx context.Context, c *modules.Call, cmd string) (any, error) {
	_, stderr, err := iptablesRun(ctx, c, cmd)
	if err != nil {
		return nil, err
	}
	return stderr, nil
}

// iptablesHasOption is _has_option: whether `iptables --help` names option.
func iptablesHasOption(ctx context.Context, c *modules.Call, option string, family any) (bool, error) {
	out, _, err := iptablesRun(ctx, c, iptablesCmd(family)+" --help")
	if err != nil {
		return false, err
	}
	return strings.Contains(out, option), nil
}

// iptablesWait is the "--wait" Salt puts in its commands when iptables
// has the option, else "".
func iptablesWait(ctx context.Context, c *modules.Call, family any) (string, error) {
	ok, err := iptablesHasOption(ctx, c, "--wait", family)
	if err != nil || !ok {
		return "", err
	}
	return "--wait", nil
}

// iptablesRunWaitStderr runs the command format makes of the iptables
// command, its "--wait" and args, and returns its standard error.
func iptablesRunWaitStderr(ctx context.Context, c *modules.Call, family any, format string, args ...any) (any, error) {
	wait, err := iptablesWait(ctx, c, family)
	if err != nil {
		return nil, err
	}
	return iptablesRunStderr(ctx, c, fmt.Sprintf(format, append([]any{iptablesCmd(family), wait}, args...)...))
}

// iptablesConf is _conf: the rules file of the minion's OS family.
func iptablesConf(c *modules.Call, family any) (string, error) {
	v6 := false
	if s, ok := family.(string); ok && s == "ipv6" {
		v6 = true
	}
	pick := func(v4, v6path string) string {
		if v6 {
			return v6path
		}
		return v4
	}
	var osFamily, osName any
	if c.Env != nil && c.Env.Grains != nil {
		osFamily, _ = c.Env.Grains.Get("os_family")
		osName, _ = c.Env.Grains.Get("os")
	}
	is := func(v any, s string) bool { t, ok := v.(string); return ok && t == s }
	switch {
	case is(osFamily, "RedHat"):
		return pick("/etc/sysconfig/iptables", "/etc/sysconfig/ip6tables"), nil
	case is(osFamily, "Arch"):
		return pick("/etc/iptables/iptables.rules", "/etc/iptables/ip6tables.rules"), nil
	case is(osFamily, "Debian"):
		return pick("/etc/iptables/rules.v4", "/etc/iptables/rules.v6"), nil
	case is(osName, "Gentoo"):
		return pick("/var/lib/iptables/rules-save", "/var/lib/ip6tables/rules-save"), nil
	case is(osFamily, "Suse"):
		return "/etc/sysconfig/scripts/SuSEfirewall2-custom", nil
	case is(osFamily, "Void"):
		if s, ok := family.(string); ok && s == "ipv4" {
			return "/etc/iptables/iptables.rules", nil
		}
		return "/etc/iptables/ip6tables.rules", nil
	case is(osName, "Alpine"):
		return pick("/etc/iptables/rules-save", "/etc/iptables/rules6-save"), nil
	case is(osFamily, "NILinuxRT"):
		return pick("/etc/natinst/share/iptables.conf", "/etc/natinst/share/ip6tables.conf"), nil
	}
	if osName == nil && (c.Env == nil || c.Env.Grains == nil || !c.Env.Grains.Has("os")) {
		return "", &modules.PyException{Class: "KeyError", Message: "'os'"}
	}
	return "", &modules.PyException{Class: "salt.exceptions.SaltException",
		Message: "Saving iptables to file is not supported on " + pyfmt.Str(osName) + ". Please file an issue with SaltStack"}
}

func iptablesVersion(ctx context.Context, c *modules.Call) (any, error) {
	out, _, err := iptablesRun(ctx, c, iptablesCmd(c.Args.Get("family"))+" --version")
	if err != nil {
		return nil, err
	}
	f := strings.FieldsFunc(out, cmdPyIsSpace)
	if len(f) < 2 {
		return nil, &modules.PyException{Class: "IndexError", Message: "list index out of range"}
	}
	return f[1], nil
}

// iptablesAfterJump are the options build_rule puts after the jump, in
// this order: the jump itself, then the target options of iptables(8),
// iptables-extensions(8) and xtables-addons.
var iptablesAfterJump = strings.Fields(`j jump add-set and-mark and-tos checksum-fill clamp-mss-to-pmtu clustermac
	ctevents ctmask del-set ecn-tcp-remove exist expevents gateway hash-init hashmode helper label local-node
	log-ip-options log-level log-prefix log-tcp-options log-tcp-sequence log-uid mask new nfmask nflog-group
	nflog-prefix nflog-range nflog-threshold nodst notrack on-ip on-port or-mark or-tos persistent queue-balance
	queue-bypass queue-num random rateest-ewmalog rateest-interval rateest-name reject-with restore restore-mark
	save-mark selctx set-class set-dscp set-dscp-class set-mark set-mss set-tos set-xmark strip-options timeout
	to to-destination to-ports to-source total-nodes tproxy-mark ttl-dec ttl-inc ttl-set type ulog-cprange
	ulog-nlgroup ulog-prefix ulog-qthreshold xor-mark xor-tos zone dst-pfx hl-dec hl-inc hl-set hmark-dport-mask
	hmark-dst-prefix hmark-mod hmark-offset hmark-proto-mask hmark-rnd hmark-spi-mask hmark-sport-mask
	hmark-src-prefix hmark-tuple led-always-blink led-delay led-trigger-id queue-cpu-fanout src-pfx to-port addr
	and-mask delude honeypot or-mask prefix reset reuse set-mac shift static tarpit tname ttl`)

// iptablesStripBang is re.sub(r"(!|not)\s?", "", s): every "!" and "not"
// removed with one white space character after it.
func iptablesStripBang(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		n := 0
		switch {
		case s[i] == '!':
			n = 1
		case strings.HasPrefix(s[i:], "not"):
			n = 3
		}
		if n == 0 {
			b.WriteByte(s[i])
			i++
			continue
		}
		i += n
		if i < len(s) {
			r, size := []rune(s[i:])[0], 0
			if cmdPyIsSpace(r) {
				size = len(string(r))
			}
			i += size
		}
	}
	return b.String()
}

// iptablesNegated reports whether a value starts with "!" or "not".
func iptablesNegated(s string) bool { return strings.HasPrefix(s, "!") || strings.HasPrefix(s, "not") }

// iptablesNoValue is Python's `value in (None, "")`.
func iptablesNoValue(v any) bool {
	if v == nil {
		return true
	}
	s, ok := v.(string)
	return ok && s == ""
}

// iptablesBuildRule is build_rule.
func iptablesBuildRule(ctx context.Context, c *modules.Call, table, chain, command, position, full, family any, kwargs *payload.Map) (any, error) {
	kw := &payload.Map{}
	if kwargs != nil {
		for _, it := range kwargs.Items() {
			kw.SetKey(it.Key, it.Value)
		}
	}
	if v, ok := kw.Delete("target"); ok {
		kw.Set("jump", v)
	}
	kw.Delete("name")
	kw.Delete("state")
	var drop []string
	for _, it := range kw.Items() {
		if k := payload.KeyString(it.Key); IsStateInternalKeyword(k) || k == "chain" || k == "save" || k == "table" {
			drop = append(drop, k)
		}
	}
	for _, k := range drop {
		kw.Delete(k)
	}
	get := func(k string) any { v, _ := kw.Get(k); return v }
	str := func(k string) string { return pyfmt.Str(get(k)) }
	neg := func(k string) string {
		v := str(k)
		if iptablesNegated(v) {
			kw.Set(k, iptablesStripBang(v))
			return "! "
		}
		return ""
	}
	var rule []string
	has := func(s string) bool {
		for _, r := range rule {
			if r == s {
				return true
			}
		}
		return false
	}
	protocol := false
	if kw.Has("if") {
		n := neg("if")
		rule = append(rule, n+"-i "+str("if"))
		kw.Delete("if")
	}
	if kw.Has("of") {
		n := neg("of")
		rule = append(rule, n+"-o "+str("of"))
		kw.Delete("of")
	}
	isPolicy := func() bool { s, ok := get("match").(string); return ok && s == "policy" }
	if kw.Has("proto") && !isPolicy() {
		kw.Set("protocol", get("proto"))
		kw.Delete("proto")
	}
	if kw.Has("protocol") {
		n := neg("protocol")
		rule = append(rule, n+"-p "+str("protocol"))
		protocol = true
		kw.Delete("protocol")
	}
	if kw.Has("match") {
		var matches []any
		switch m := get("match").(type) {
		case []any:
			matches = m
		case string:
			for _, s := range strings.Split(m, ",") {
				matches = append(matches, s)
			}
		default:
			return nil, &modules.PyException{Class: "AttributeError", Message: fmt.Sprintf("'%s' object has no attribute 'split'", pyfmt.TypeName(m))}
		}
		for _, m := range matches {
			rule = append(rule, "-m "+pyfmt.Str(m))
			if kw.Has("name_") {
				ms, ok := m.(string)
				if !ok {
					return nil, &modules.PyException{Class: "AttributeError", Message: fmt.Sprintf("'%s' object has no attribute 'strip'", pyfmt.TypeName(m))}
				}
				switch strings.TrimFunc(ms, cmdPyIsSpace) {
				case "pknock", "quota2", "recent":
					rule = append(rule, "--name "+str("name_"))
					kw.Delete("name_")
				}
			}
		}
		if kw.Has("proto") && isPolicy() {
			n := neg("proto")
			rule = append(rule, n+"--proto "+str("proto"))
			kw.Delete("proto")
		}
		kw.Delete("match")
	}
	if kw.Has("match-set") {
		var sets []any
		switch v := get("match-set").(type) {
		case string:
			sets = []any{v}
		case []any:
			sets = v
		default:
			return nil, &modules.PyException{Class: "TypeError", Message: fmt.Sprintf("'%s' object is not iterable", pyfmt.TypeName(v))}
		}
		for _, ms := range sets {
			s, ok := ms.(string)
			if !ok {
				return nil, &modules.PyException{Class: "AttributeError", Message: fmt.Sprintf("'%s' object has no attribute 'startswith'", pyfmt.TypeName(ms))}
			}
			n := ""
			if iptablesNegated(s) {
				n = "! "
				s = iptablesStripBang(s)
			}
			rule = append(rule, "-m set "+n+"--match-set "+s)
		}
		kw.Delete("match-set")
	}
	if kw.Has("connstate") {
		if !has("-m state") {
			rule = append(rule, "-m state")
		}
		n := neg("connstate")
		rule = append(rule, n+"--state "+str("connstate"))
		kw.Delete("connstate")
	}
	for _, k := range []string{"dport", "sport"} {
		if kw.Has(k) {
			n := neg(k)
			rule = append(rule, n+"--"+k+" "+str(k))
			kw.Delete(k)
		}
	}
	for _, k := range []string{"dports", "sports"} {
		if !kw.Has(k) {
			continue
		}
		if !has("-m multiport") {
			rule = append(rule, "-m multiport")
			if !protocol {
				return "Error: protocol must be specified", nil
			}
		}
		var ports string
		if l, ok := get(k).([]any); ok {
			items := make([]string, len(l))
			negated := false
			for i, p := range l {
				items[i] = pyfmt.Str(p)
				if iptablesNegated(items[i]) {
					negated = true
				}
			}
			if negated {
				for i := range items {
					items[i] = iptablesStripBang(items[i])
				}
				rule = append(rule, "!")
			}
			ports = strings.Join(items, ",")
		} else {
			ports = str(k)
			if iptablesNegated(ports) {
				ports = iptablesStripBang(ports)
				rule = append(rule, "!")
			}
		}
		rule = append(rule, "--"+k+" "+ports)
		kw.Delete(k)
	}
	if kw.Has("comment") {
		if !has("-m comment") {
			rule = append(rule, "-m comment")
		}
		rule = append(rule, `--comment "`+str("comment")+`"`)
		kw.Delete("comment")
	}
	if kw.Has("set") && payload.Truthy(get("set")) {
		n := neg("set")
		rule = append(rule, n+"--match-set "+str("set"))
		kw.Delete("set")
	}
	var afterJump []string
	for _, a := range iptablesAfterJump {
		if !kw.Has(a) {
			continue
		}
		v := get(a)
		switch {
		case iptablesNoValue(v):
			afterJump = append(afterJump, "--"+a)
		case strings.ContainsAny(pyfmt.Str(v), " \t\n\r\x0b\x0c"):
			afterJump = append(afterJump, "--"+a+` "`+pyfmt.Str(v)+`"`)
		default:
			afterJump = append(afterJump, "--"+a+" "+pyfmt.Str(v))
		}
		kw.Delete(a)
	}
	var keys []string
	for _, it := range kw.Items() {
		keys = append(keys, payload.KeyString(it.Key))
	}
	for _, key := range keys {
		n := neg(key)
		flag := "--"
		if len([]rune(key)) == 1 {
			flag = "-"
		}
		value := ""
		if v := get(key); !iptablesNoValue(v) {
			value = " " + pyfmt.Str(v)
		}
		rule = append(rule, n+flag+key+value)
	}
	rule = append(rule, afterJump...)
	if !payload.Truthy(full) {
		return strings.Join(rule, " "), nil
	}
	switch {
	case !payload.Truthy(table):
		return "Error: Table needs to be specified", nil
	case !payload.Truthy(chain):
		return "Error: Chain needs to be specified", nil
	case !payload.Truthy(command):
		return "Error: Command needs to be specified", nil
	}
	cs, ok := command.(string)
	if !ok {
		return nil, &modules.PyException{Class: "TypeError", Message: fmt.Sprintf("'in <string>' requires string as left operand, not %s", pyfmt.TypeName(command))}
	}
	flag := "--"
	if strings.Contains("ACDIRLSFZNXPE", cs) {
		flag = "-"
	}
	wait, err := iptablesWait(ctx, c, family)
	if err != nil {
		return nil, err
	}
	return fmt.Sprintf("%s %s -t %s %s%s %s %s %s", iptablesCmd(family), wait, pyfmt.Str(table),
		flag, cs, pyfmt.Str(chain), pyfmt.Str(position), strings.Join(rule, " ")), nil
}

// IsStateInternalKeyword reports membership in Salt's
// STATE_INTERNAL_KEYWORDS, which build_rule drops from its kwargs.
func IsStateInternalKeyword(k string) bool {
	switch k {
	case "onchanges", "onchanges_any", "onfail", "onfail_any", "onfail_all", "onfail_stop", "prereq",
		"prerequired", "watch", "watch_any", "require", "require_any", "listen",
		"onchanges_in", "onfail_in", "prereq_in", "watch_in", "require_in", "listen_in",
		"fun", "state", "check_cmd", "cmd_opts_exclude", "failhard", "onlyif", "unless", "creates", "retry",
		"order", "parallel", "reload_modules", "reload_grains", "reload_pillar", "runas", "runas_password",
		"fire_event", "saltenv", "umask", "use", "use_in", "__env__", "__sls__", "__id__",
		"__orchestration_jid__", "__pub_user", "__pub_arg", "__pub_jid", "__pub_fun", "__pub_tgt",
		"__pub_ret", "__pub_pid", "__pub_tgt_type", "__prereq__", "__prerequired__", "__umask__":
		return true
	}
	return false
}

// iptablesPolicy is get_policy (inMem) and get_saved_policy.
func iptablesPolicy(ctx context.Context, c *modules.Call, confFile any, inMem bool) (any, error) {
	chain := c.Args.Get("chain")
	if !payload.Truthy(chain) {
		return "Error: Chain needs to be specified", nil
	}
	rules, err := iptablesParseConf(ctx, c, confFile, inMem, c.Args.Get("family"))
	if err != nil {
		return nil, err
	}
	t, _ := rules.GetKey(c.Args.Get("table"))
	tm, _ := t.(*payload.Map)
	if tm == nil {
		return nil, nil
	}
	ch, _ := tm.GetKey(chain)
	chm, _ := ch.(*payload.Map)
	if chm == nil {
		return nil, nil
	}
	p, _ := chm.Get("policy")
	return p, nil
}

func iptablesSetPolicy(ctx context.Context, c *modules.Call) (any, error) {
	if !payload.Truthy(c.Args.Get("chain")) {
		return "Error: Chain needs to be specified", nil
	}
	if !payload.Truthy(c.Args.Get("policy")) {
		return "Error: Policy needs to be specified", nil
	}
	family := c.Args.Get("family")
	return iptablesRunWaitStderr(ctx, c, family, "%s %s -t %s -P %s %s",
		pyfmt.Str(c.Args.Get("table")), pyfmt.Str(c.Args.Get("chain")), pyfmt.Str(c.Args.Get("policy")))
}

func iptablesSave(ctx context.Context, c *modules.Call) (any, error) {
	family := c.Args.Get("family")
	filename := c.Args.Get("filename")
	if _, err := iptablesConf(c, "ipv4"); err != nil {
		return nil, err
	}
	if !payload.Truthy(filename) {
		f, err := iptablesConf(c, family)
		if err != nil {
			return nil, err
		}
		filename = f
	}
	name := pyfmt.Str(filename)
	if parent := pyDirname(name); !isDir(parent) {
		if parent == "" {
			return nil, &modules.PyException{Class: "FileNotFoundError", Message: "[Errno 2] No such file or directory: ''"}
		}
		if err := os.MkdirAll(parent, 0o777); err != nil {
			return nil, &modules.PyException{Class: cmdPyExceptionName(err), Message: cmdPyOSError(err)}
		}
	}
	ipt, _, err := iptablesRun(ctx, c, iptablesCmd(family)+"-save")
	if err != nil {
		return nil, err
	}
	if filters, ok := configOptionValue(c, "iptables.save_filters", []any{}).([]any); ok && len(filters) > 0 {
		ipt = iptablesFilterSave(c, ipt, filters)
	}
	return callFunction(ctx, c, "file.write", []any{name, ipt}, nil)
}

// isDir is os.path.isdir.
func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// iptablesFilterSave is _regex_iptables_save: the lines of iptables-save
// output matching none of the iptables.save_filters patterns (Python
// regular expressions; a pattern that does not compile is skipped with a
// warning).
func iptablesFilterSave(c *modules.Call, out string, filters []any) string {
	var res []*regexp.Regexp
	for _, f := range filters {
		pat := pyfmt.Str(f)
		src, err := target.TranslatePCRE(pat)
		if err == nil {
			var re *regexp.Regexp
			if re, err = regexp.Compile(src); err == nil {
				res = append(res, re)
				continue
			}
		}
		c.Log().Warn(fmt.Sprintf("Skipping regex rule: '%s': %v", pat, err))
	}
	if len(res) == 0 {
		return out
	}
	var b strings.Builder
	for _, line := range py.SplitLines(out, true) {
		keep := true
		for _, re := range res {
			if re.MatchString(line) {
				keep = false
				break
			}
		}
		if keep {
			b.WriteString(line)
		}
	}
	return b.String()
}

// iptablesCheck is check.
func iptablesCheck(ctx context.Context, c *modules.Call, table, chain, rule, family any) (any, error) {
	if !payload.Truthy(chain) {
		return "Error: Chain needs to be specified", nil
	}
	if !payload.Truthy(rule) {
		return "Error: Rule needs to be specified", nil
	}
	ok, err := iptablesHasOption(ctx, c, "--check", family)
	if err != nil {
		return nil, err
	}
	if !ok {
		return iptablesCheckBySave(ctx, c, table, chain, rule, family)
	}
	if _, _, err := iptablesRun(ctx, c, fmt.Sprintf("%s -t %s -C %s %s", iptablesCmd(family), pyfmt.Str(table), pyfmt.Str(chain), pyfmt.Str(rule))); err != nil {
		return nil, err
	}
	return c.Retcode == 0, nil
}

// iptablesCheckBySave is check's branch for an iptables without --check:
// the rule is appended to a temporary chain named hex(uuid.getnode()),
// iptables-save prints it in its canonical form, the chain is flushed
// and removed, and the rule is present when that line, with the
// temporary chain's name replaced by chain, is a line of the output.
// The commands' own failures are ignored, as Salt's cmd.run calls do.
func iptablesCheckBySave(ctx context.Context, c *modules.Call, table, chain, rule, family any) (any, error) {
	ipt := iptablesCmd(family)
	tmp := pyHexInt(uuidNode())
	tbl, ch := pyfmt.Str(table), pyfmt.Str(chain)
	run := func(format string, args ...any) (string, error) {
		out, _, err := iptablesRun(ctx, c, fmt.Sprintf(format, args...))
		return out, err
	}
	if _, err := run("%s -t %s -N %s", ipt, tbl, tmp); err != nil {
		return nil, err
	}
	if _, err := run("%s -t %s -A %s %s", ipt, tbl, tmp, pyfmt.Str(rule)); err != nil {
		return nil, err
	}
	out, err := run("%s-save", ipt)
	if err != nil {
		return nil, err
	}
	if _, err := run("%s -t %s -F %s", ipt, tbl, tmp); err != nil {
		return nil, err
	}
	if _, err := run("%s -t %s -X %s", ipt, tbl, tmp); err != nil {
		return nil, err
	}
	lines := py.SplitLines(out, false)
	for _, l := range lines {
		if strings.HasPrefix(l, "-A "+tmp) && slices.Contains(lines, strings.ReplaceAll(l, tmp, ch)) {
			return true, nil
		}
	}
	return false, nil
}

// pyHexInt is Python's hex() of a non-negative integer.
func pyHexInt(n uint64) string { return "0x" + strconv.FormatUint(n, 16) }

// uuidNode is Python's uuid.getnode() on Linux, where libuuid picks the
// node: the hardware address of the first interface (in index order)
// that has an IPv4 address and a non-zero 6-byte address, else 48 random
// bits with the multicast bit set (a new value each call, as each
// process of Salt's gets its own).
func uuidNode() uint64 {
	ifs, _ := net.Interfaces()
	for _, ifc := range ifs {
		if len(ifc.HardwareAddr) != 6 || !slices.ContainsFunc(ifc.HardwareAddr, func(b byte) bool { return b != 0 }) {
			continue
		}
		addrs, _ := ifc.Addrs()
		if !slices.ContainsFunc(addrs, func(a net.Addr) bool {
			ipn, ok := a.(*net.IPNet)
			return ok && ipn.IP.To4() != nil
		}) {
			continue
		}
		var n uint64
		for _, b := range ifc.HardwareAddr {
			n = n<<8 | uint64(b)
		}
		return n
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return (binary.BigEndian.Uint64(b[:])>>16 | 1<<40) & (1<<48 - 1)
}

func iptablesCheckChain(ctx context.Context, c *modules.Call) (any, error) {
	chain := c.Args.Get("chain")
	if !payload.Truthy(chain) {
		return "Error: Chain needs to be specified", nil
	}
	out, _, err := iptablesRun(ctx, c, fmt.Sprintf("%s-save -t %s", iptablesCmd(c.Args.Get("family")), pyfmt.Str(c.Args.Get("table"))))
	if err != nil {
		return nil, err
	}
	return strings.Contains(out, ":"+pyfmt.Str(chain)+" "), nil
}

// iptablesChainOp is new_chain (-N) and delete_chain (-X): True, or the
// command's standard error.
func iptablesChainOp(ctx context.Context, c *modules.Call, op string) (any, error) {
	chain := c.Args.Get("chain")
	if !payload.Truthy(chain) {
		return "Error: Chain needs to be specified", nil
	}
	family := c.Args.Get("family")
	out, err := iptablesRunWaitStderr(ctx, c, family, "%s %s -t %s %s %s", pyfmt.Str(c.Args.Get("table")), op, pyfmt.Str(chain))
	if err != nil || payload.Truthy(out) {
		return out, err
	}
	return true, nil
}

// iptablesWaitCheck is what append and insert do before adding a rule:
// the "--wait" option, and check's answer (present only when it is True).
func iptablesWaitCheck(ctx context.Context, c *modules.Call, table, chain, rule, family any) (string, bool, error) {
	wait, err := iptablesWait(ctx, c, family)
	if err != nil {
		return "", false, err
	}
	exists, err := iptablesCheck(ctx, c, table, chain, rule, family)
	if err != nil {
		return "", false, err
	}
	b, ok := exists.(bool)
	return wait, ok && b, nil
}

func iptablesAppend(ctx context.Context, c *modules.Call) (any, error) {
	table, chain, rule, family := c.Args.Get("table"), c.Args.Get("chain"), c.Args.Get("rule"), c.Args.Get("family")
	if !payload.Truthy(chain) {
		return "Error: Chain needs to be specified", nil
	}
	if !payload.Truthy(rule) {
		return "Error: Rule needs to be specified", nil
	}
	wait, present, err := iptablesWaitCheck(ctx, c, table, chain, rule, family)
	if err != nil || present {
		return false, err
	}
	out, err := iptablesRunStderr(ctx, c, fmt.Sprintf("%s %s -t %s -A %s %s", iptablesCmd(family), wait, pyfmt.Str(table), pyfmt.Str(chain), pyfmt.Str(rule)))
	if err != nil {
		return nil, err
	}
	return !payload.Truthy(out), nil
}

func iptablesInsert(ctx context.Context, c *modules.Call) (any, error) {
	table, chain, position, rule, family := c.Args.Get("table"), c.Args.Get("chain"), c.Args.Get("position"), c.Args.Get("rule"), c.Args.Get("family")
	if !payload.Truthy(chain) {
		return "Error: Chain needs to be specified", nil
	}
	if !payload.Truthy(position) {
		return "Error: Position needs to be specified or use append (-A)", nil
	}
	if !payload.Truthy(rule) {
		return "Error: Rule needs to be specified", nil
	}
	var negative bool
	switch p := position.(type) {
	case bool:
	case float64:
		negative = p < 0
	case int:
		negative = p < 0
	case int64:
		negative = p < 0
	case uint64:
	default:
		return nil, &modules.PyException{Class: "TypeError", Message: fmt.Sprintf("'<' not supported between instances of '%s' and 'int'", pyfmt.TypeName(p))}
	}
	if negative {
		rules, err := iptablesParseConf(ctx, c, nil, true, family)
		if err != nil {
			return nil, err
		}
		size, err := iptablesRuleCount(rules, table, chain)
		if err != nil {
			return nil, err
		}
		if f, ok := position.(float64); ok {
			f = float64(size) + f + 1
			if f == 0 {
				position = int64(1)
			} else {
				position = f
			}
		} else {
			n, _ := cmdPyInt(position)
			n = int64(size) + n + 1
			if n == 0 {
				n = 1
			}
			position = n
		}
	}
	wait, present, err := iptablesWaitCheck(ctx, c, table, chain, rule, family)
	if err != nil || present {
		return false, err
	}
	return iptablesRunStderr(ctx, c, fmt.Sprintf("%s %s -t %s -I %s %s %s", iptablesCmd(family), wait, pyfmt.Str(table), pyfmt.Str(chain),
		pyfmt.Str(position), pyfmt.Str(rule)))
}

// iptablesRuleCount is len(rules[table][chain]["rules"]).
func iptablesRuleCount(rules *payload.Map, table, chain any) (int, error) {
	t, ok := rules.GetKey(table)
	tm, _ := t.(*payload.Map)
	if !ok || tm == nil {
		return 0, &modules.PyException{Class: "KeyError", Message: pyfmt.Repr(table)}
	}
	ch, ok := tm.GetKey(chain)
	chm, _ := ch.(*payload.Map)
	if !ok || chm == nil {
		return 0, &modules.PyException{Class: "KeyError", Message: pyfmt.Repr(chain)}
	}
	l, _ := chm.Get("rules")
	ll, _ := l.([]any)
	return len(ll), nil
}

func iptablesDelete(ctx context.Context, c *modules.Call) (any, error) {
	position, rule, family := c.Args.Get("position"), c.Args.Get("rule"), c.Args.Get("family")
	if payload.Truthy(position) && payload.Truthy(rule) {
		return "Error: Only specify a position or a rule, not both", nil
	}
	if payload.Truthy(position) {
		rule = position
	}
	return iptablesRunWaitStderr(ctx, c, family, "%s %s -t %s -D %s %s", pyfmt.Str(c.Args.Get("table")), pyfmt.Str(c.Args.Get("chain")), pyfmt.Str(rule))
}

// iptablesParseConf is _parse_conf: the rules of conf_file, of
// iptables-save (inMem), or of the OS family's saved rules file.
func iptablesParseConf(ctx context.Context, c *modules.Call, confFile any, inMem bool, family any) (*payload.Map, error) {
	if _, err := iptablesConf(c, "ipv4"); err != nil {
		return nil, err
	}
	if !payload.Truthy(confFile) && !inMem {
		f, err := iptablesConf(c, family)
		if err != nil {
			return nil, err
		}
		confFile = f
	}
	var text string
	switch {
	case payload.Truthy(confFile):
		name := pyfmt.Str(confFile)
		b, err := readBounded(name, maxIptablesFile)
		if err != nil {
			return nil, &modules.PyException{Class: cmdPyExceptionName(err), Message: cmdPyOSError(err)}
		}
		text = string(b)
	case inMem:
		out, _, err := iptablesRun(ctx, c, iptablesCmd(family)+"-save")
		if err != nil {
			return nil, err
		}
		text = out
	default:
		return nil, &modules.PyException{Class: "salt.exceptions.SaltException", Message: "A file was not found to parse"}
	}
	return iptablesParseSave(text)
}

// iptablesParser is Salt's argparse parser of iptables-save rule lines.
var iptablesParser = func() *py.ArgParser {
	p := py.NewArgParser()
	for _, e := range iptablesOptions {
		f := strings.Fields(e)
		p.Add(f[0], f[1:]...)
	}
	return p
}()

// iptablesParseSave parses iptables-save output as Salt's _parse_conf
// does: table -> chain -> {policy, packet count, byte count, rules,
// rules_comment}, each rule the options it sets (argparse destinations,
// each a list of values) and rules_comment the rules by comment. Errors
// are the Python exceptions Salt's parser raises on such input.
func iptablesParseSave(text string) (*payload.Map, error) {
	ret := &payload.Map{}
	table := ""
	tableMap := func() (*payload.Map, error) {
		t, ok := ret.Get(table)
		if !ok {
			return nil, &modules.PyException{Class: "KeyError", Message: pyfmt.Repr(table)}
		}
		return t.(*payload.Map), nil
	}
	for _, line := range py.SplitLines(text, false) {
		switch {
		case strings.HasPrefix(line, "*"):
			table = strings.ReplaceAll(line, "*", "")
			ret.Set(table, &payload.Map{})
		case strings.HasPrefix(line, ":"):
			comps := strings.FieldsFunc(line, cmdPyIsSpace)
			chain := strings.ReplaceAll(comps[0], ":", "")
			t, err := tableMap()
			if err != nil {
				return nil, err
			}
			if len(comps) < 3 {
				return nil, &modules.PyException{Class: "IndexError", Message: "list index out of range"}
			}
			counters := strings.Split(strings.NewReplacer("[", "", "]", "").Replace(comps[2]), ":")
			if len(counters) != 2 {
				msg := "too many values to unpack (expected 2)"
				if len(counters) < 2 {
					msg = fmt.Sprintf("not enough values to unpack (expected 2, got %d)", len(counters))
				}
				return nil, &modules.PyException{Class: "ValueError", Message: msg}
			}
			t.Set(chain, payload.NewMap("policy", comps[1], "packet count", counters[0], "byte count", counters[1],
				"rules", []any{}, "rules_comment", &payload.Map{}))
		case strings.HasPrefix(line, "-A"):
			if err := iptablesParseRule(line, tableMap); err != nil {
				return nil, err
			}
		}
	}
	return ret, nil
}

// iptablesParseRule adds one "-A CHAIN ..." line to its chain.
func iptablesParseRule(line string, tableMap func() (*payload.Map, error)) error {
	args, err := py.ShlexSplit(line)
	if err != nil {
		return &modules.PyException{Class: "ValueError", Message: strings.TrimPrefix(err.Error(), "ValueError: ")}
	}
	// Salt's preparation for argparse: "! -x v" becomes "-x ! v", the
	// words of a value are joined, and an option without a value gets "".
	for i := 0; i+1 < len(args); i++ {
		swap := args[i] == "!" && strings.HasPrefix(args[i+1], "-")
		if swap {
			args[i], args[i+1] = args[i+1], args[i]
		}
		if strings.HasPrefix(args[i], "-") {
			i++
			if strings.HasPrefix(args[i], "-") || (args[i] == "!" && !swap) {
				args = append(args[:i], append([]string{""}, args[i:]...)...)
			} else {
				for i+1 < len(args) && args[i+1] != "!" && !strings.HasPrefix(args[i+1], "-") {
					args[i] += " " + args[i+1]
					args = append(args[:i+1], args[i+2:]...)
				}
			}
		}
	}
	if len(args) > 0 && strings.HasPrefix(args[len(args)-1], "-") {
		args = append(args, "")
	}
	vals, _, err := iptablesParser.ParseKnown(args)
	if err != nil {
		return &modules.PyException{Class: "SystemExit", Message: strings.TrimPrefix(err.Error(), py.ErrArgparse.Error()+": ")}
	}
	retArgs := &payload.Map{}
	var chain, comment []string
	for i, d := range iptablesParser.Dests() {
		switch d {
		case "append":
			chain = vals[i]
			continue
		case "comment":
			comment = vals[i]
		}
		if len(vals[i]) > 0 {
			l := make([]any, len(vals[i]))
			for j, v := range vals[i] {
				l[j] = v
			}
			retArgs.Set(d, l)
		}
	}
	if len(chain) == 0 {
		return &modules.PyException{Class: "TypeError", Message: "'NoneType' object is not subscriptable"}
	}
	t, err := tableMap()
	if err != nil {
		return err
	}
	ch, ok := t.Get(chain[0])
	if !ok {
		return &modules.PyException{Class: "KeyError", Message: pyfmt.Repr(chain[0])}
	}
	chm := ch.(*payload.Map)
	if comment != nil {
		rc, _ := chm.Get("rules_comment")
		rc.(*payload.Map).Set(strings.Trim(comment[0], `"`), retArgs)
	}
	rules, _ := chm.Get("rules")
	chm.Set("rules", append(rules.([]any), retArgs))
	return nil
}

// iptablesOptions is the argparse table of Salt's _parser: each entry is a
// destination and its option strings, in the order Salt adds them.
var iptablesOptions = []string{
	"append -A --append", "delete -D --delete", "insert -I --insert", "replace -R --replace",
	"list -L --list", "flush -F --flush", "zero -Z --zero", "new-chain -N --new-chain",
	"delete-chain -X --delete-chain", "policy -P --policy", "rename-chain -E --rename-chain",
	"protocol -p --protocol", "source -s --source", "destination -d --destination", "jump -j --jump",
	"goto -g --goto", "in-interface -i --in-interface", "out-interface -o --out-interface",
	"fragment -f --fragment", "set-counters -c --set-counters", "match -m --match",
	"src-type --src-type", "dst-type --dst-type", "limit-iface-in --limit-iface-in",
	"limit-iface-out --limit-iface-out", "ahspi --ahspi", "ahlen --ahlen", "ahres --ahres",
	"bytecode --bytecode", "cgroup --cgroup", "cluster-total-nodes --cluster-total-nodes",
	"cluster-local-node --cluster-local-node", "cluster-local-nodemask --cluster-local-nodemask",
	"cluster-hash-seed --cluster-hash-seed", "h-length --h-length", "mangle-mac-s --mangle-mac-s",
	"mangle-mac-d --mangle-mac-d", "comment --comment", "connbytes --connbytes",
	"connbytes-dir --connbytes-dir", "connbytes-mode --connbytes-mode", "label --label",
	"connlimit-upto --connlimit-upto", "connlimit-above --connlimit-above",
	"connlimit-mask --connlimit-mask", "connlimit-saddr --connlimit-saddr",
	"connlimit-daddr --connlimit-daddr", "mark --mark", "ctstate --ctstate", "ctproto --ctproto",
	"ctorigsrc --ctorigsrc", "ctorigdst --ctorigdst", "ctreplsrc --ctreplsrc", "ctrepldst --ctrepldst",
	"ctorigsrcport --ctorigsrcport", "ctorigdstport --ctorigdstport", "ctreplsrcport --ctreplsrcport",
	"ctrepldstport --ctrepldstport", "ctstatus --ctstatus", "ctexpire --ctexpire", "ctdir --ctdir",
	"cpu --cpu", "source_port --sport --source-port", "destination_port --dport --destination-port",
	"dccp-types --dccp-types", "dccp-option --dccp-option", "src-group --src-group",
	"dst-group --dst-group", "dscp --dscp", "dscp-class --dscp-class", "dst-len --dst-len",
	"dst-opts --dst-opts", "ecn-tcp-cwr --ecn-tcp-cwr", "ecn-tcp-ece --ecn-tcp-ece",
	"ecn-ip-ect --ecn-ip-ect", "espspi --espspi", "fragid --fragid", "fraglen --fraglen",
	"fragres --fragres", "fragfirst --fragfirst", "fragmore --fragmore", "fraglast --fraglast",
	"hashlimit-upto --hashlimit-upto", "hashlimit-above --hashlimit-above",
	"hashlimit-burst --hashlimit-burst", "hashlimit-mode --hashlimit-mode",
	"hashlimit-srcmask --hashlimit-srcmask", "hashlimit-dstmask --hashlimit-dstmask",
	"hashlimit-name --hashlimit-name", "hashlimit-htable-size --hashlimit-htable-size",
	"hashlimit-htable-max --hashlimit-htable-max", "hashlimit-htable-expire --hashlimit-htable-expire",
	"hashlimit-htable-gcinterval --hashlimit-htable-gcinterval", "hbh-len --hbh-len",
	"hbh-opts --hbh-opts", "helper --helper", "hl-eq --hl-eq", "hl-lt --hl-lt", "hl-gt --hl-gt",
	"icmp-type --icmp-type", "icmpv6-type --icmpv6-type", "src-range --src-range",
	"dst-range --dst-range", "soft --soft", "header --header", "ipvs --ipvs", "vproto --vproto",
	"vaddr --vaddr", "vport --vport", "vdir --vdir", "vmethod --vmethod", "vportctl --vportctl",
	"length --length", "limit --limit", "limit-burst --limit-burst", "mac-source --mac-source",
	"mh-type --mh-type", "source-ports --sports --source-ports",
	"destination-ports --dports --destination-ports", "ports --ports", "nfacct-name --nfacct-name",
	"genre --genre", "ttl --ttl", "log --log", "uid-owner --uid-owner", "gid-owner --gid-owner",
	"socket-exists --socket-exists", "physdev-in --physdev-in", "physdev-out --physdev-out",
	"physdev-is-in --physdev-is-in", "physdev-is-out --physdev-is-out",
	"physdev-is-bridged --physdev-is-bridged", "pkt-type --pkt-type", "dir --dir", "pol --pol",
	"strict --strict", "reqid --reqid", "spi --spi", "proto --proto", "mode --mode",
	"tunnel-src --tunnel-src", "tunnel-dst --tunnel-dst", "next --next", "quota --quota",
	"rateest --rateest", "rateest1 --rateest1", "rateest2 --rateest2", "rateest-delta --rateest-delta",
	"rateest-bps --rateest-bps", "rateest-bps1 --rateest-bps1", "rateest-bps2 --rateest-bps2",
	"rateest-pps --rateest-pps", "rateest-pps1 --rateest-pps1", "rateest-pps2 --rateest-pps2",
	"rateest-lt --rateest-lt", "rateest-gt --rateest-gt", "rateest-eq --rateest-eq",
	"rateest-name --rateest-name", "rateest-interval --rateest-interval",
	"rateest-ewma --rateest-ewma", "realm --realm", "name --name", "set --set", "rsource --rsource",
	"rdest --rdest", "mask --mask", "rcheck --rcheck", "update --update", "remove --remove",
	"seconds --seconds", "reap --reap", "hitcount --hitcount", "rttl --rttl", "loose --loose",
	"validmark --validmark", "accept-local --accept-local", "invert --invert", "rt-type --rt-type",
	"rt-segsleft --rt-segsleft", "rt-len --rt-len", "rt-0-res --rt-0-res", "rt-0-addrs --rt-0-addrs",
	"rt-0-not-strict --rt-0-not-strict", "chunk-types --chunk-types", "match-set --match-set",
	"return-nomatch --return-nomatch", "update-counters --update-counters",
	"update-subcounters --update-subcounters", "packets-eq --packets-eq", "packets-lt --packets-lt",
	"packets-gt --packets-gt", "bytes-eq --bytes-eq", "bytes-lt --bytes-lt", "bytes-gt --bytes-gt",
	"transparent --transparent", "nowildcard --nowildcard", "state --state",
	"probability --probability", "every --every", "packet --packet", "algo --algo", "from --from",
	"to --to", "string --string", "hex-string --hex-string", "tcp-flags --tcp-flags", "syn --syn",
	"tcp-option --tcp-option", "mss --mss", "datestart --datestart", "datestop --datestop",
	"timestart --timestart", "timestop --timestop", "monthdays --monthdays", "weekdays --weekdays",
	"contiguous --contiguous", "kerneltz --kerneltz", "utc --utc", "localtz --localtz", "tos --tos",
	"ttl-eq --ttl-eq", "ttl-gt --ttl-gt", "ttl-lt --ttl-lt", "u32 --u32", "condition --condition",
	"mac --mac", "lower-limit --lower-limit", "upper-limit --upper-limit",
	"source-country --src-cc --source-country", "destination-country --dst-cc --destination-country",
	"enabled --enabled", "disabled --disabled", "iface --iface", "dev-in --dev-in",
	"dev-out --dev-out", "up --up", "down --down", "broadcast --broadcast", "loopback --loopback",
	"pointtopoint --pointtopoint", "running --running", "noarp --noarp", "arp --arp",
	"promisc --promisc", "multicast --multicast", "dynamic --dynamic", "lower-up --lower-up",
	"dormant --dormant", "edk --edk", "kazaa --kazaa", "gnu --gnu", "dc --dc", "bit --bit",
	"apple --apple", "soul --soul", "winmx --winmx", "ares --ares", "debug --debug", "flags --flags",
	"any --any", "layer3 --layer3", "layer4 --layer4", "layer5 --layer5", "stealth --stealth",
	"synscan --synscan", "cnscan --cnscan", "grscan --grscan",
	"psd-weight-threshold --psd-weight-threshold", "psd-delay-threshold --psd-delay-threshold",
	"psd-lo-ports-weight --psd-lo-ports-weight", "psd-hi-ports-weight --psd-hi-ports-weight",
	"grow --grow", "no-change --no-change", "packets --packets", "knockports --knockports",
	"time --time", "autoclose --autoclose", "checkip --checkip", "type --type",
	"checksum-fill --checksum-fill", "set-class --set-class", "new --new", "hashmode --hashmode",
	"clustermac --clustermac", "total-nodes --total-nodes", "local-node --local-node",
	"hash-init --hash-init", "set-xmark --set-xmark", "save-mark --save-mark",
	"restore-mark --restore-mark", "and-mark --and-mark", "or-mark --or-mark", "xor-mark --xor-mark",
	"set-mark --set-mark", "nfmask --nfmask", "ctmask --ctmask", "save --save", "restore --restore",
	"notrack --notrack", "ctevents --ctevents", "expevents --expevents", "zone --zone",
	"timeout --timeout", "to-destination --to-destination", "random --random",
	"persistent --persistent", "src-pfx --src-pfx", "dst-pfx --dst-pfx", "set-dscp --set-dscp",
	"set-dscp-class --set-dscp-class", "ecn-tcp-remove --ecn-tcp-remove", "hl-set --hl-set",
	"hl-dec --hl-dec", "hl-inc --hl-inc", "hmark-tuple --hmark-tuple", "hmark-mod --hmark-mod",
	"hmark-offset --hmark-offset", "hmark-src-prefix --hmark-src-prefix",
	"hmark-dst-prefix --hmark-dst-prefix", "hmark-sport-mask --hmark-sport-mask",
	"hmark-dport-mask --hmark-dport-mask", "hmark-spi-mask --hmark-spi-mask",
	"hmark-proto-mask --hmark-proto-mask", "hmark-rnd --hmark-rnd", "led-trigger-id --led-trigger-id",
	"led-delay --led-delay", "led-always-blink --led-always-blink", "log-level --log-level",
	"log-prefix --log-prefix", "log-tcp-sequence --log-tcp-sequence",
	"log-tcp-options --log-tcp-options", "log-ip-options --log-ip-options", "log-uid --log-uid",
	"to-ports --to-ports", "nflog-group --nflog-group", "nflog-prefix --nflog-prefix",
	"nflog-range --nflog-range", "nflog-threshold --nflog-threshold", "queue-num --queue-num",
	"queue-balance --queue-balance", "queue-bypass --queue-bypass",
	"queue-cpu-fanout --queue-cpu-fanout", "rateest-ewmalog --rateest-ewmalog",
	"reject-with --reject-with", "nodst --nodst", "selctx --selctx", "add-set --add-set",
	"del-set --del-set", "exist --exist", "to-source --to-source", "set-mss --set-mss",
	"clamp-mss-to-pmtu --clamp-mss-to-pmtu", "strip-options --strip-options", "gateway --gateway",
	"set-tos --set-tos", "and-tos --and-tos", "or-tos --or-tos", "xor-tos --xor-tos",
	"on-port --on-port", "on-ip --on-ip", "tproxy-mark --tproxy-mark", "ttl-set --ttl-set",
	"ttl-dec --ttl-dec", "ttl-inc --ttl-inc", "ulog-nlgroup --ulog-nlgroup",
	"ulog-prefix --ulog-prefix", "ulog-cprange --ulog-cprange", "ulog-qthreshold --ulog-qthreshold",
	"addr --addr", "tname --tname", "delude --delude", "tarpit --tarpit", "set-mac --set-mac",
	"prefix --prefix", "reuse --reuse", "static --static", "and-mask --and-mask", "or-mask --or-mask",
	"shift --shift", "honeypot --honeypot", "reset --reset",
}

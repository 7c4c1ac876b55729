package saltcli

import (
	"bytes"
	"errors"
	"math/big"
	"strings"
	"unicode"

	saltjid "github.com/gsalt/gsalt/internal/jid"

	"gopkg.in/yaml.v3"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/output"
	"github.com/gsalt/gsalt/wire/payload"
)

// ParseKwarg splits a "name=value" word the way Salt's KWARG_REGEX
// (^([^\d\W][\w.-]*)=(?!=)(.*)$) does: the name starts with a letter or
// underscore and holds word characters, dots and dashes; "==" is not an
// assignment; the value is everything after the first "=" and may not span
// lines (a single trailing newline is dropped, as Python's "$" allows).
func ParseKwarg(word string) (name, value string, ok bool) {
	i := strings.IndexByte(word, '=')
	if i <= 0 {
		return "", "", false
	}
	name, value = word[:i], word[i+1:]
	for j, r := range name {
		isWord := r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
		if j == 0 {
			if !isWord || unicode.Is(unicode.Nd, r) {
				return "", "", false
			}
			continue
		}
		if !isWord && r != '.' && r != '-' {
			return "", "", false
		}
	}
	if strings.HasPrefix(value, "=") {
		return "", "", false
	}
	if n := strings.IndexByte(value, '\n'); n >= 0 {
		if n != len(value)-1 {
			return "", "", false
		}
		value = value[:n]
	}
	return name, value, true
}

// pyStrip is Python's str.strip().
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
}

// YamlifyArg is salt.utils.args.yamlify_arg: a command-line word is
// YAML-loaded (YAML 1.1, Salt's loader) when that gives None, a number, a
// boolean, a string, a braced dict or a bracketed list; otherwise the word
// stays as it was.
func YamlifyArg(arg string) any {
	s := pyStrip(arg)
	if s == "" || s == "---" || s == "..." {
		return arg
	}
	if strings.Contains(arg, "_") && strings.Trim(s, "0123456789_") == "" {
		return arg
	}
	if strings.ContainsAny(arg, "\t\r\n") {
		return arg
	}
	if strings.Contains(arg, "#") {
		v, err := loadYAML(arg)
		if err != nil {
			return arg
		}
		if _, isStr := v.(string); isStr || v == nil {
			return arg
		}
		return v
	}
	var v any
	if arg != "None" {
		var err error
		if v, err = loadYAML(arg); err != nil {
			return arg
		}
	}
	switch x := v.(type) {
	case *payload.Map:
		if !strings.HasPrefix(arg, "{") {
			return arg
		}
		return x
	case []any:
		if !strings.HasPrefix(arg, "[") {
			return arg
		}
		return x
	case nil:
		if strings.HasPrefix(pyStrip(arg), "#") || arg == "!" {
			return arg
		}
		return nil
	case string:
		if x == "" && (arg == "|" || arg == "!") {
			return arg
		}
		return x
	case int64, uint64, *big.Int, float64, bool:
		return x
	}
	// Types yamlify_arg does not pass on (binary, sets as lists from
	// tags, ...): the word itself.
	return arg
}

// loadYAML decodes one word with Salt's YAML semantics (config.DecodeYAML)
// and rebuilds maps in document order with their typed keys, as Python's
// dicts keep them.
func loadYAML(s string) (any, error) {
	v, err := config.DecodeYAML([]byte(s))
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader([]byte(s))).Decode(&doc); err != nil {
		return fromConfigYAML(v, nil), nil
	}
	var root *yaml.Node
	if len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	return fromConfigYAML(v, root), nil
}

func derefNode(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	return n
}

// keyValue decodes a mapping key scalar on its own, giving the Python
// type of the key (PyYAML keeps int, bool, None and float keys).
func keyValue(kn *yaml.Node) (any, bool) {
	if kn == nil || kn.Kind != yaml.ScalarNode {
		return nil, false
	}
	text, err := yaml.Marshal(kn)
	if err != nil {
		return nil, false
	}
	v, err := config.DecodeYAML(text)
	if err != nil {
		return nil, false
	}
	return fromConfigYAML(v, nil), true
}

// fromConfigYAML converts config.DecodeYAML's values (Go ints, maps with
// string keys) to the payload tree; n, when it matches, gives map order
// and key types.
func fromConfigYAML(v any, n *yaml.Node) any {
	n = derefNode(n)
	switch x := v.(type) {
	case int:
		return int64(x)
	case *big.Int:
		if x.IsInt64() {
			return x.Int64()
		}
		if x.Sign() > 0 && x.IsUint64() {
			return x.Uint64()
		}
		return x
	case []any:
		out := make([]any, len(x))
		seq := n != nil && n.Kind == yaml.SequenceNode && len(n.Content) == len(x)
		for i, e := range x {
			var en *yaml.Node
			if seq {
				en = n.Content[i]
			}
			out[i] = fromConfigYAML(e, en)
		}
		return out
	case map[string]any:
		if m, ok := orderedMap(x, n); ok {
			return m
		}
		m := payload.NewMap()
		for _, k := range sortedKeys(x) {
			m.Set(k, fromConfigYAML(x[k], nil))
		}
		return m
	}
	return v
}

// orderedMap rebuilds a decoded mapping in document order with typed keys;
// ok is false when the node does not line up (merge keys, aliases as keys).
func orderedMap(x map[string]any, n *yaml.Node) (*payload.Map, bool) {
	if n == nil || n.Kind != yaml.MappingNode || len(n.Content)/2 != len(x) {
		return nil, false
	}
	m := payload.NewMap()
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn := derefNode(n.Content[i])
		if kn == nil || kn.Kind != yaml.ScalarNode || kn.Value == "<<" {
			return nil, false
		}
		key, ok := keyValue(kn)
		if !ok {
			return nil, false
		}
		val, ok := x[output.PyStr(key)]
		if !ok {
			return nil, false
		}
		m.SetKey(key, fromConfigYAML(val, n.Content[i+1]))
	}
	if m.Len() != len(x) {
		return nil, false
	}
	return m, true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// ParseInput is salt.utils.args.parse_input followed by condition_input:
// name=value words become keyword arguments (YAML-loaded unless the name is
// in noParse), other words YAML-loaded positionals; the keyword arguments
// travel as a trailing {"__kwarg__": true, ...} map.
func ParseInput(words []string, noParse []string) []any {
	var args []any
	kwargs := payload.NewMap()
	for _, w := range words {
		if name, value, ok := ParseKwarg(w); ok {
			if contains(noParse, name) {
				kwargs.Set(name, value)
			} else {
				kwargs.Set(name, YamlifyArg(value))
			}
			continue
		}
		args = append(args, YamlifyArg(w))
	}
	return ConditionInput(args, kwargs)
}

// ConditionInput is salt.utils.args.condition_input: integer arguments that
// look like job ids become strings, and non-empty kwargs are appended as
// a {"__kwarg__": true, ...} map.
func ConditionInput(args []any, kwargs *payload.Map) []any {
	out := make([]any, 0, len(args)+1)
	for _, a := range args {
		out = append(out, wireValue(condJID(a)))
	}
	if kwargs != nil && kwargs.Len() > 0 {
		kw := payload.NewMap("__kwarg__", true)
		for _, it := range kwargs.Items() {
			kw.SetKey(it.Key, wireValue(it.Value))
		}
		out = append(out, kw)
	}
	return out
}

func condJID(a any) any {
	var s string
	switch x := a.(type) {
	case int64, uint64, *big.Int:
		s = output.PyRepr(x)
	default:
		return a
	}
	if saltjid.Is(s) {
		return s
	}
	return a
}

// wireValue makes a value encodable: Python ints beyond 64 bits travel as
// their decimal text (what Salt's payload encoder does with them).
func wireValue(v any) any {
	switch x := v.(type) {
	case *big.Int:
		return x.String()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = wireValue(e)
		}
		return out
	case *payload.Map:
		m := payload.NewMap()
		for _, it := range x.Items() {
			m.SetKey(wireValue(it.Key), wireValue(it.Value))
		}
		return m
	}
	return v
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// Command is the parsed positional part of a salt command line.
type Command struct {
	// Tgt is a string, or a []any of strings for -L.
	Tgt any
	// Fun is a string, or a []any of strings for a multi-function job.
	Fun any
	// Arg is the publish arg list (a list of lists for multi-function jobs).
	Arg []any
}

// Command-line errors; Salt exits with status 42 for them.
var (
	// ErrNoTarget: no positional word at all.
	ErrNoTarget = errors.New("saltcli: cannot execute command without defining a target")
	// ErrIncomplete: a target but no function.
	ErrIncomplete = errors.New("saltcli: incomplete options passed")
	// ErrTooFewArgGroups: a multi-function job with fewer argument groups
	// than functions.
	ErrTooFewArgGroups = errors.New("saltcli: cannot execute compound command without defining all arguments")
	// ErrTooManyArgGroups: more argument groups than functions.
	ErrTooManyArgGroups = errors.New("saltcli: cannot execute compound command with more arguments than commands")
)

// SplitList is how the salt CLI splits a -L target: on commas (spaces
// removed) when there is a comma, else on whitespace.
func SplitList(tgt string) []any {
	var parts []string
	if strings.Contains(tgt, ",") {
		parts = strings.Split(strings.ReplaceAll(tgt, " ", ""), ",")
	} else {
		parts = strings.Fields(tgt)
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}

// ParseCommand turns the positional words TARGET FUN [ARG ...] into the
// publish target, function and arguments the way SaltCMDOptionParser does
// (including comma-separated multi-function jobs and their argument groups,
// split by sep).
func ParseCommand(words []string, list bool, sep string, noParse []string) (*Command, error) {
	switch len(words) {
	case 0:
		return nil, ErrNoTarget
	case 1:
		return nil, ErrIncomplete
	}
	if sep == "" {
		sep = ","
	}
	c := &Command{Tgt: words[0]}
	if list {
		c.Tgt = SplitList(words[0])
	}
	if !strings.Contains(words[1], ",") {
		c.Fun = words[1]
		c.Arg = ParseInput(words[2:], noParse)
		if c.Arg == nil {
			c.Arg = []any{}
		}
		return c, nil
	}
	funs := strings.Split(words[1], ",")
	groups := [][]string{{}}
	rest := words[2:]
	count := 0
	for _, w := range rest {
		if w == sep {
			count++
		}
	}
	if count == len(funs)-1 {
		for _, w := range rest {
			if w == sep {
				groups = append(groups, []string{})
				continue
			}
			groups[len(groups)-1] = append(groups[len(groups)-1], w)
		}
	} else {
		for _, w := range rest {
			if !strings.Contains(w, sep) {
				groups[len(groups)-1] = append(groups[len(groups)-1], w)
				continue
			}
			subs := strings.Split(w, sep)
			for i, s := range subs {
				if s != "" {
					groups[len(groups)-1] = append(groups[len(groups)-1], s)
				}
				if i != len(subs)-1 {
					groups = append(groups, []string{})
				}
			}
		}
		if len(funs) > len(groups) {
			return nil, ErrTooFewArgGroups
		}
		if len(funs) < len(groups) {
			return nil, ErrTooManyArgGroups
		}
	}
	fl := make([]any, len(funs))
	for i, f := range funs {
		fl[i] = f
	}
	c.Fun = fl
	c.Arg = make([]any, len(groups))
	for i, g := range groups {
		a := ParseInput(g, noParse)
		if a == nil {
			a = []any{}
		}
		c.Arg[i] = a
	}
	return c, nil
}

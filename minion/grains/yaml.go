package grains

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gsalt/gsalt/wire/payload"
)

// Limits for grains files.
const (
	maxGrainsFile  = 16 << 20
	maxYAMLDepth   = 128
	maxYAMLNodes   = 1 << 20
	grainsFileMode = 0o600
)

// ReadFile reads a grains file: a YAML mapping, decoded with YAML 1.1
// scalar rules as Salt's loader does. A missing or empty file, or one
// that does not hold a mapping, gives an empty map (Salt ignores those);
// unreadable files and bad YAML give an error wrapping ErrGrainsFile.
func ReadFile(path string) (*payload.Map, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &payload.Map{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGrainsFile, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGrainsFile+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGrainsFile, err)
	}
	if len(data) > maxGrainsFile {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrGrainsFile, path, maxGrainsFile)
	}
	v, err := DecodeYAML(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrGrainsFile, path, err)
	}
	if m, ok := v.(*payload.Map); ok {
		return m, nil
	}
	return &payload.Map{}, nil
}

// WriteFile replaces the grains file with m in block-style YAML with
// sorted keys (like Salt's safe_dump with default_flow_style=False),
// atomically, creating the directory if needed.
func WriteFile(path string, m *payload.Map) error {
	data, err := EncodeYAML(m)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrGrainsFile, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("grains: write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".grains-*")
	if err != nil {
		return fmt.Errorf("grains: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("grains: write %s: %w", path, err)
	}
	mode := os.FileMode(grainsFileMode)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("grains: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("grains: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("grains: write %s: %w", path, err)
	}
	return nil
}

// EncodeYAML renders a payload value as block-style YAML with sorted map
// keys.
func EncodeYAML(v any) ([]byte, error) {
	n, err := toNode(v, 0)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func toNode(v any, depth int) (*yaml.Node, error) {
	if depth > maxYAMLDepth {
		return nil, errors.New("value nested too deeply")
	}
	scalar := func(tag, val string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: val}
	}
	switch x := v.(type) {
	case nil:
		return scalar("!!null", "null"), nil
	case bool:
		if x {
			return scalar("!!bool", "true"), nil
		}
		return scalar("!!bool", "false"), nil
	case int64:
		return scalar("!!int", strconv.FormatInt(x, 10)), nil
	case int:
		return scalar("!!int", strconv.Itoa(x)), nil
	case uint64:
		return scalar("!!int", strconv.FormatUint(x, 10)), nil
	case float64:
		switch {
		case math.IsNaN(x):
			return scalar("!!float", ".nan"), nil
		case math.IsInf(x, 1):
			return scalar("!!float", ".inf"), nil
		case math.IsInf(x, -1):
			return scalar("!!float", "-.inf"), nil
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return scalar("!!float", s), nil
	case string:
		n := scalar("!!str", x)
		if resolvePlain(x) != "str" {
			n.Style = yaml.SingleQuotedStyle
		}
		return n, nil
	case []byte:
		return toNode(string(x), depth)
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range x {
			c, err := toNode(e, depth+1)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		return n, nil
	case *payload.Map:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		items := append([]payload.Item(nil), x.Items()...)
		sort.SliceStable(items, func(i, j int) bool {
			return payload.KeyString(items[i].Key) < payload.KeyString(items[j].Key)
		})
		for _, it := range items {
			k, err := toNode(it.Key, depth+1)
			if err != nil {
				return nil, err
			}
			val, err := toNode(it.Value, depth+1)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, k, val)
		}
		return n, nil
	}
	return nil, fmt.Errorf("cannot represent %T in YAML", v)
}

// YAML 1.1 implicit resolvers as PyYAML's SafeLoader applies them.
var (
	reYBool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	reYFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	reYInt   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	reYNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
)

// resolvePlain names the YAML 1.1 type of a plain scalar.
func resolvePlain(s string) string {
	switch {
	case reYNull.MatchString(s):
		return "null"
	case reYBool.MatchString(s):
		return "bool"
	case reYInt.MatchString(s):
		return "int"
	case reYFloat.MatchString(s):
		return "float"
	}
	return "str"
}

// DecodeYAML parses one YAML document into payload values (maps in
// document order), resolving plain scalars with YAML 1.1 rules.
func DecodeYAML(src []byte) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	d := &yamlDec{}
	return d.value(&doc, 0)
}

type yamlDec struct{ nodes int }

func (d *yamlDec) value(n *yaml.Node, depth int) (any, error) {
	if depth > maxYAMLDepth {
		return nil, fmt.Errorf("line %d: nesting deeper than %d levels", n.Line, maxYAMLDepth)
	}
	if d.nodes++; d.nodes > maxYAMLNodes {
		return nil, fmt.Errorf("line %d: more than %d nodes", n.Line, maxYAMLNodes)
	}
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.value(n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: unknown alias", n.Line)
		}
		return d.value(n.Alias, depth+1)
	case yaml.ScalarNode:
		return scalarValue(n)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := d.value(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := &payload.Map{}
		var merges []*payload.Map
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			if kn.Kind == yaml.ScalarNode && kn.Value == "<<" && kn.Style == 0 {
				v, err := d.value(vn, depth+1)
				if err != nil {
					return nil, err
				}
				switch x := v.(type) {
				case *payload.Map:
					merges = append(merges, x)
				case []any:
					for _, e := range x {
						if m, ok := e.(*payload.Map); ok {
							merges = append(merges, m)
						}
					}
				}
				continue
			}
			k, err := d.value(kn, depth+1)
			if err != nil {
				return nil, err
			}
			switch k.(type) {
			case *payload.Map, []any:
				return nil, fmt.Errorf("line %d: found unacceptable (unhashable) mapping key", kn.Line)
			}
			if _, dup := out.GetKey(k); dup {
				return nil, fmt.Errorf("line %d: found conflicting ID '%s'", kn.Line, payload.KeyString(k))
			}
			v, err := d.value(vn, depth+1)
			if err != nil {
				return nil, err
			}
			out.SetKey(k, v)
		}
		for _, m := range merges {
			for _, it := range m.Items() {
				if _, ok := out.GetKey(it.Key); !ok {
					out.SetKey(it.Key, it.Value)
				}
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

func scalarValue(n *yaml.Node) (any, error) {
	typ := "str"
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		switch n.Tag {
		case "!!str", "!!binary", "!!timestamp":
		case "!!null":
			typ = "null"
		case "!!bool":
			typ = "bool"
		case "!!int":
			typ = "int"
		case "!!float":
			typ = "float"
		default:
			return nil, fmt.Errorf("line %d: could not determine a constructor for the tag %q", n.Line, n.Tag)
		}
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0:
	default:
		typ = resolvePlain(n.Value)
	}
	s := n.Value
	switch typ {
	case "null":
		return nil, nil
	case "bool":
		switch strings.ToLower(s) {
		case "yes", "true", "on":
			return true, nil
		}
		return false, nil
	case "int":
		if v, ok := yamlInt(s); ok {
			return v, nil
		}
	case "float":
		if v, ok := yamlFloat(s); ok {
			return v, nil
		}
	}
	return s, nil
}

// yamlInt constructs a YAML 1.1 int the way PyYAML does (leading-zero
// octal, 0b, 0x, base 60).
func yamlInt(s string) (int64, bool) {
	// Salt's loader reads an unsigned leading-zero int as decimal.
	if strings.HasPrefix(s, "0") && !strings.HasPrefix(s, "0b") && !strings.HasPrefix(s, "0x") {
		s = strings.TrimLeft(s, "0")
		if s == "" {
			s = "0"
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
		return n, err == nil
	}
	v := strings.ReplaceAll(s, "_", "")
	sign := int64(1)
	if v != "" && (v[0] == '-' || v[0] == '+') {
		if v[0] == '-' {
			sign = -1
		}
		v = v[1:]
	}
	var (
		n   int64
		err error
	)
	switch {
	case v == "0":
		return 0, true
	case strings.HasPrefix(v, "0b"):
		n, err = strconv.ParseInt(v[2:], 2, 64)
	case strings.HasPrefix(v, "0x"):
		n, err = strconv.ParseInt(v[2:], 16, 64)
	case strings.HasPrefix(v, "0"):
		n, err = strconv.ParseInt(v[1:], 8, 64)
	case strings.Contains(v, ":"):
		for _, p := range strings.Split(v, ":") {
			d, e := strconv.ParseInt(p, 10, 64)
			if e != nil {
				return 0, false
			}
			n = n*60 + d
		}
	default:
		n, err = strconv.ParseInt(v, 10, 64)
	}
	if err != nil {
		return 0, false
	}
	return sign * n, true
}

// yamlFloat constructs a YAML 1.1 float.
func yamlFloat(s string) (float64, bool) {
	v := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if v != "" && (v[0] == '-' || v[0] == '+') {
		if v[0] == '-' {
			sign = -1
		}
		v = v[1:]
	}
	switch {
	case v == ".inf":
		return sign * math.Inf(1), true
	case v == ".nan":
		return math.NaN(), true
	case strings.Contains(v, ":"):
		parts := strings.Split(v, ":")
		var f float64
		for _, p := range parts {
			x, err := strconv.ParseFloat(p, 64)
			if err != nil {
				return 0, false
			}
			f = f*60 + x
		}
		return sign * f, true
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false
	}
	return sign * f, true
}

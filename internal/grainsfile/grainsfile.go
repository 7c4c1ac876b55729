// Package grainsfile reads and writes Salt's static grains file (the YAML
// file "grains" in the minion's configuration directory). It is a leaf so
// the minion (which loads grains) and the grains execution module (which
// edits the file) share it without the module layer importing the minion.
package grainsfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/atomicfile"
	"github.com/gsalt/gsalt/wire/payload"
)

// ErrGrainsFile reports a grains file that cannot be read or parsed.
var ErrGrainsFile = errors.New("grains: bad grains file")

// FileName is the name of the static grains file in the configuration
// directory.
const FileName = "grains"

// Limits for grains files (decoding has config.DecodeYAMLPayload's own).
const (
	maxGrainsFile  = 16 << 20
	maxYAMLDepth   = 128 // nesting written by EncodeYAML
	grainsFileMode = 0o600
)

// ReadFile reads a grains file: a YAML mapping, decoded like Salt's loader
// does (config.DecodeYAMLPayload). A missing or empty file, or one
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
	v, err := config.DecodeYAMLPayload(data)
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
	mode := os.FileMode(grainsFileMode)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := atomicfile.WriteFile(path, data, mode, false); err != nil {
		return fmt.Errorf("grains: %w", err)
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
	case *big.Int:
		return scalar("!!int", x.String()), nil
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
		if v, err := config.ResolveScalar(x); err != nil || v != x {
			n.Style = yaml.SingleQuotedStyle // a plain x would not read back as x
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

package output

import (
	"errors"

	"github.com/gsalt/gsalt/internal/pyyaml"
)

// This file reproduces what Salt's yaml outputter prints:
// yaml.dump(data, Dumper=SafeOrderedDumper, default_flow_style=False,
// allow_unicode=True), where SafeOrderedDumper is PyYAML's CSafeDumper: the
// SafeRepresenter (sorted dict keys, YAML 1.1 implicit resolvers) feeding
// libyaml's emitter (width 80, indent 2). The port is internal/pyyaml's.

// ErrYAMLDepth is returned for values nested deeper than the renderer
// allows.
var ErrYAMLDepth = errors.New("output: value nested too deeply for YAML")

// YAMLOptions are the safe_dump arguments Salt uses.
type YAMLOptions struct {
	// Indent is the block indent (PyYAML keeps 2 unless 1 < Indent < 10).
	Indent int
	// Flow is default_flow_style=True: every collection in flow style.
	Flow bool
}

// YAML renders v like Salt's yaml outputter (before Salt strips the
// trailing newline). Bytes are !!binary; values Salt's decoder never makes
// are represented as NULL, as SafeOrderedDumper does.
func YAML(v any, o YAMLOptions) (string, error) {
	s, err := pyyaml.Dump(v, pyyaml.Options{
		Flavor:        pyyaml.LibYAML,
		Flow:          o.Flow,
		Indent:        o.Indent,
		AllowUnicode:  true,
		SortKeys:      sortKeys,
		Normalize:     normalize,
		Binary:        true,
		UnknownAsNull: true,
		MaxDepth:      maxReprDepth,
	})
	if errors.Is(err, pyyaml.ErrTooDeep) {
		return "", ErrYAMLDepth
	}
	return s, err
}

package render

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyyaml"
	"github.com/gsalt/gsalt/wire/payload"
)

// YAMLDump serialises payload data the way Salt's yaml filter does
// (salt.utils.yaml.safe_dump: PyYAML's SafeDumper, allow_unicode, width
// 80, indent 2, dict keys sorted as PyYAML sorts plain dicts), in flow
// style when flow is true and in block style otherwise. The text ends with
// a newline; the filter strips it.
func YAMLDump(v any, flow bool) (string, error) {
	s, err := pyyaml.Dump(v, pyyaml.Options{Flow: flow, AllowUnicode: true, SortKeys: sortItems, MaxDepth: maxConvertDepth})
	if errors.Is(err, pyyaml.ErrTooDeep) {
		return "", fmt.Errorf("%w: data nested too deeply for YAML", ErrTemplate)
	}
	return s, err
}

// trimYAMLDoc is Salt's post-processing of safe_dump output: strip, and
// drop a trailing document end marker.
func trimYAMLDoc(s string) string {
	s = strings.TrimSpace(s)
	return strings.TrimSuffix(s, "\n...")
}

// sortItems is sorted(d.items()) with pyCompare's ordering, for the yaml
// and json filters.
func sortItems(m *payload.Map) ([]payload.Item, error) {
	items := append([]payload.Item(nil), m.Items()...)
	var cmpErr error
	sort.SliceStable(items, func(i, j int) bool {
		c, err := pyCompare(items[i].Key, items[j].Key)
		if err != nil && cmpErr == nil {
			cmpErr = err
		}
		return c < 0
	})
	if cmpErr != nil {
		return nil, cmpErr
	}
	return items, nil
}

// yamlDoubleQuoted is Salt's yaml_dquote.
func yamlDoubleQuoted(s string) string { return pyyaml.DoubleQuoted(s) }

// yamlSingleQuoted is Salt's yaml_squote.
func yamlSingleQuoted(s string) string { return pyyaml.SingleQuoted(s) }

// yamlScalarText is the plain text of a non-string YAML scalar as PyYAML's
// SafeRepresenter writes it.
func yamlScalarText(v any) string { return pyyaml.ScalarText(v) }

// yamlDumpUnknownNull is YAMLDump writing values outside the data model
// as NULL, as Salt's SafeOrderedDumper does.
func yamlDumpUnknownNull(v any, flow bool) (string, error) {
	s, err := pyyaml.Dump(v, pyyaml.Options{Flow: flow, AllowUnicode: true, SortKeys: sortItems, MaxDepth: maxConvertDepth, UnknownAsNull: true})
	if errors.Is(err, pyyaml.ErrTooDeep) {
		return "", fmt.Errorf("%w: data nested too deeply for YAML", ErrTemplate)
	}
	return s, err
}

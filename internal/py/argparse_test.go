package py

import (
	"errors"
	"reflect"
	"testing"
)

// TestArgParser checks ParseKnown against what Python 3.11's argparse
// answers for the same parser and arguments (parse_known_args, run by
// hand with /usr/bin/python3): abbreviations, "=" and "-xVALUE"
// arguments, "--", negative numbers, values with spaces, unknown
// options, and the errors (ambiguous abbreviation, missing value, an
// explicit argument to -h).
func TestArgParser(t *testing.T) {
	p := NewArgParser()
	p.Add("append", "-A", "--append")
	p.Add("source", "-s", "--source")
	p.Add("dst-type", "--dst-type")
	p.Add("dst-len", "--dst-len")
	p.Add("source_port", "--sport", "--source-port")
	cases := []struct {
		args   []string
		vals   [][]string
		extras []string
		err    string
	}{
		{args: []string{"-A", "X", "--dst", "1"}, err: "argparse error: ambiguous option: --dst could match --dst-type, --dst-len"},
		{args: []string{"-s"}, err: "argparse error: argument -s/--source: expected one argument"},
		{args: []string{"-s", "-A"}, err: "argparse error: argument -s/--source: expected one argument"},
		{args: []string{"-s", "--", "v"}, err: "argparse error: argument -s/--source: expected one argument"},
		{args: []string{"-hX"}, err: "argparse error: argument -h/--help: ignored explicit argument 'X'"},
		{args: []string{"-AX", "-s=1", "--sp", "2", "--", "-s"},
			vals: [][]string{{"X"}, {"1"}, nil, nil, {"2"}}, extras: []string{"--", "-s"}},
		{args: []string{"--dst-t=3", "-1", "x y", "--unk", "v", "-s", "-2"},
			vals: [][]string{nil, {"-2"}, {"3"}, nil, nil}, extras: []string{"-1", "x y", "--unk", "v"}},
		{args: []string{"-A", "a", "--append", "b", "--source-port", "", "-s", "! 1.2.3.4"},
			vals: [][]string{{"a", "b"}, {"! 1.2.3.4"}, nil, nil, {""}}},
	}
	for _, c := range cases {
		vals, extras, err := p.ParseKnown(c.args)
		if c.err != "" {
			if err == nil || err.Error() != c.err || !errors.Is(err, ErrArgparse) {
				t.Errorf("%q: got error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if !reflect.DeepEqual(vals, c.vals) || !reflect.DeepEqual(extras, c.extras) {
			t.Errorf("%q: got %q %q, want %q %q", c.args, vals, extras, c.vals, c.extras)
		}
	}
}

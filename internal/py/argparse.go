package py

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrArgparse is an argparse error: Python's parser.error, which prints
// the usage and raises SystemExit(2) (SystemExit(0) for -h/--help).
var ErrArgparse = errors.New("argparse error")

// ArgParser is the part of Python 3.10/3.11's argparse.ArgumentParser that
// a parser made only of optional arguments taking one value each
// (add_argument(..., action="append"), nargs None, add_help=True) uses in
// parse_known_args: exact options, unique abbreviations of long options
// (an ambiguous one is an error), "--opt=value" and "-oVALUE" arguments,
// "--", negative numbers and arguments with spaces taken as values.
type ArgParser struct {
	// dests in the order their first argument was added (vars(namespace))
	dests []string
	// option strings in the order added, "-h" and "--help" first
	order []string
	// option string -> index in dests, or -1 for help
	action map[string]int
	// option strings of each dest, for error texts
	strs [][]string
}

// NewArgParser returns a parser with argparse's -h/--help only.
func NewArgParser() *ArgParser {
	return &ArgParser{order: []string{"-h", "--help"}, action: map[string]int{"-h": -1, "--help": -1}}
}

// Add is add_argument(*options, dest=dest, action="append").
func (p *ArgParser) Add(dest string, options ...string) {
	idx := -1
	for i, d := range p.dests {
		if d == dest {
			idx = i
		}
	}
	if idx < 0 {
		idx = len(p.dests)
		p.dests = append(p.dests, dest)
		p.strs = append(p.strs, nil)
	}
	for _, o := range options {
		p.order = append(p.order, o)
		p.action[o] = idx
	}
	p.strs[idx] = append(p.strs[idx], options...)
}

// Dests returns the destinations in namespace order.
func (p *ArgParser) Dests() []string { return p.dests }

// argOption is what _parse_optional found: an action (dest index, -1
// help, -2 unknown option), the option string and an explicit argument.
type argOption struct {
	dest     int
	str      string
	explicit *string
}

// negativeNumberRe is argparse's _negative_number_matcher.
var negativeNumberRe = regexp.MustCompile(`^-\d+$|^-\d*\.\d+$`)

// optionTuples is _get_option_tuples.
func (p *ArgParser) optionTuples(arg string) []argOption {
	var out []argOption
	if len(arg) > 1 && arg[1] == '-' {
		prefix, explicit, hasEq := strings.Cut(arg, "=")
		for _, o := range p.order {
			if strings.HasPrefix(o, prefix) {
				t := argOption{dest: p.action[o], str: o}
				if hasEq {
					e := explicit
					t.explicit = &e
				}
				out = append(out, t)
			}
		}
		return out
	}
	short, shortExplicit := arg[:2], arg[2:]
	for _, o := range p.order {
		if o == short {
			e := shortExplicit
			out = append(out, argOption{dest: p.action[o], str: o, explicit: &e})
		} else if strings.HasPrefix(o, arg) {
			out = append(out, argOption{dest: p.action[o], str: o})
		}
	}
	return out
}

// parseOptional is _parse_optional: nil for a value ("A").
func (p *ArgParser) parseOptional(arg string) (*argOption, error) {
	if arg == "" || arg[0] != '-' {
		return nil, nil
	}
	if d, ok := p.action[arg]; ok {
		return &argOption{dest: d, str: arg}, nil
	}
	if len(arg) == 1 {
		return nil, nil
	}
	if o, e, ok := strings.Cut(arg, "="); ok {
		if d, ok := p.action[o]; ok {
			return &argOption{dest: d, str: o, explicit: &e}, nil
		}
	}
	tuples := p.optionTuples(arg)
	if len(tuples) > 1 {
		names := make([]string, len(tuples))
		for i, t := range tuples {
			names[i] = t.str
		}
		return nil, fmt.Errorf("%w: ambiguous option: %s could match %s", ErrArgparse, arg, strings.Join(names, ", "))
	}
	if len(tuples) == 1 {
		return &tuples[0], nil
	}
	if negativeNumberRe.MatchString(arg) {
		return nil, nil
	}
	if strings.Contains(arg, " ") {
		return nil, nil
	}
	return &argOption{dest: -2, str: arg}, nil
}

// ParseKnown is parse_known_args(args): the values appended to each dest
// (in Dests order, nil where none) and the extras. An error wraps
// ErrArgparse with argparse's message.
func (p *ArgParser) ParseKnown(args []string) ([][]string, []string, error) {
	pattern := make([]byte, len(args))
	opts := map[int]*argOption{}
	maxOpt := -1
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			pattern[i] = '-'
			for j := i + 1; j < len(args); j++ {
				pattern[j] = 'A'
			}
			break
		}
		o, err := p.parseOptional(args[i])
		if err != nil {
			return nil, nil, err
		}
		if o == nil {
			pattern[i] = 'A'
			continue
		}
		pattern[i] = 'O'
		opts[i] = o
		maxOpt = i
	}
	vals := make([][]string, len(p.dests))
	var extras []string
	start := 0
	for start <= maxOpt {
		next := start
		for opts[next] == nil {
			next++
		}
		if opts[start] == nil {
			extras = append(extras, args[start:next]...)
			start = next
		}
		o := opts[start]
		if o.dest == -2 {
			extras = append(extras, args[start])
			start++
			continue
		}
		if o.dest == -1 {
			if o.explicit != nil && *o.explicit != "" {
				return nil, nil, fmt.Errorf("%w: argument -h/--help: ignored explicit argument %s", ErrArgparse, pyReprString(*o.explicit))
			}
			return nil, nil, fmt.Errorf("%w: help requested", ErrArgparse)
		}
		if o.explicit != nil {
			vals[o.dest] = append(vals[o.dest], *o.explicit)
			start++
			continue
		}
		// nargs None: an optional takes exactly the next argument, which
		// must be a value ("A"; argparse drops "--" from an optional's
		// pattern)
		if start+1 >= len(args) || pattern[start+1] != 'A' {
			return nil, nil, fmt.Errorf("%w: argument %s: expected one argument", ErrArgparse, strings.Join(p.strs[o.dest], "/"))
		}
		vals[o.dest] = append(vals[o.dest], args[start+1])
		start += 2
	}
	if start < len(args) {
		extras = append(extras, args[start:]...)
	}
	return vals, extras, nil
}

// pyReprString is repr() of a str with no quotes or backslashes needing
// care beyond Python's choice of quote.
func pyReprString(s string) string {
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

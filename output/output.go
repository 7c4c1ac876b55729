// Package output renders return data exactly as Salt 3006's outputters do
// (salt/output/*.py): nested (the default, with Salt's colours), json, yaml,
// txt, raw (Python repr), pprint, newline_values_only, no_return, quiet and
// highstate.
// Values are the payload tree decoded from the event bus (wire/payload),
// printed the way Python prints the objects Salt's decoder makes of them.
//
// Format mirrors salt.output.try_printout (outputter, then nested, then raw
// when an outputter raises, trailing whitespace stripped) and Display
// mirrors salt.output.display_output (print, or append to --out-file).
package output

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// ErrFallback means an outputter cannot render the value (Python raises
// KeyError, AttributeError or TypeError there) and Salt falls back to the
// nested outputter.
var ErrFallback = errors.New("output: outputter cannot render this value")

// Options are the parts of Salt's opts the outputters read.
type Options struct {
	// Color is opts["color"]: ANSI colours in nested and no_return.
	Color bool
	// KeepColors is strip_colors: False (escape characters in strings are
	// kept instead of being replaced by "?").
	KeepColors bool
	// Retcode is the _retcode the CLI passes: non-zero turns nested keys
	// and list markers red.
	Retcode int
	// NestedIndent is nested_indent (base indent of nested).
	NestedIndent int
	// Indent is output_indent when it is set (nil when the option is not
	// in opts at all, which is not the same as 0 for json).
	Indent *int
	// IndentPretty is output_indent: pretty (json: indent 4, sorted keys).
	IndentPretty bool
	// Logger receives Salt's "Invalid outputter" error; nil means
	// slog.Default().
	Logger *slog.Logger
	// Highstate holds the state_* settings of the highstate outputter;
	// nil means DefaultHighstateOptions().
	Highstate *HighstateOptions
}

// Names lists the outputters this package implements.
var Names = []string{"nested", "json", "yaml", "txt", "raw", "pprint", "newline_values_only", "no_return", "quiet", "highstate", "virt_query"}

// Known reports whether name is an outputter of this package (after Salt's
// "text" → "txt" alias).
func Known(name string) bool {
	if name == "text" {
		return true
	}
	for _, n := range Names {
		if n == name {
			return true
		}
	}
	return false
}

// render runs one outputter. present is false when the outputter returns
// None (yaml on an exception, quiet).
func render(name string, data any, o Options) (text string, present bool, err error) {
	switch name {
	case "nested":
		return Nested(data, o), true, nil
	case "highstate":
		return highstateOutput(data, o), true, nil
	case "no_return":
		if !allSortable(data, 0) {
			return "", false, ErrFallback
		}
		return NoReturn(data, o), true, nil
	case "json":
		return jsonOutput(data, o), true, nil
	case "yaml":
		yo := YAMLOptions{Indent: 2}
		if o.Indent != nil {
			if *o.Indent >= 0 {
				yo.Indent = *o.Indent
			} else {
				yo.Flow, yo.Indent = true, 0
			}
		}
		s, err := YAML(data, yo)
		if err != nil {
			o.logger().Error("Exception encountered when trying to serialize", "error", err)
			return "", false, nil
		}
		return s, true, nil
	case "txt":
		return Txt(data), true, nil
	case "raw":
		return PyStr(data), true, nil
	case "pprint":
		ind := 1
		if o.Indent != nil && *o.Indent >= 0 {
			ind = *o.Indent
		}
		return PPrint(data, ind), true, nil
	case "newline_values_only":
		s, err := NewlineValuesOnly(data)
		return s, err == nil, err
	case "quiet":
		return "", false, nil
	case "virt_query":
		s, err := VirtQuery(data)
		return s, err == nil, err
	}
	return "", false, fmt.Errorf("%w: unknown outputter %q", ErrFallback, name)
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// Resolve maps an outputter request onto the name Salt uses: "" → nested,
// "text" → txt, an unknown name → nested with Salt's error log.
func Resolve(name string, o Options) string {
	switch {
	case name == "":
		return "nested"
	case name == "text":
		return "txt"
	case !Known(name):
		if name != "grains" {
			o.logger().Error(fmt.Sprintf("Invalid outputter %s specified, fall back to nested", name))
		}
		return "nested"
	}
	return name
}

// Format renders data with the named outputter like try_printout: the
// outputter, else nested, else raw; the result has trailing whitespace
// removed. ok is false when the outputter printed nothing (None).
func Format(name string, data any, o Options) (string, bool) {
	name = Resolve(name, o)
	text, present, err := render(name, data, o)
	if err != nil {
		o.logger().Debug("outputter failed, falling back to nested", "outputter", name, "error", err)
		text, present = Nested(data, o), true
	}
	if !present {
		return "", false
	}
	return strings.TrimRightFunc(text, py.IsSpace), true
}

// Display prints data like salt.output.display_output: the formatted text
// and a newline to w, or appended to outFile when it is not empty. Nothing
// is printed for an empty rendering.
func Display(w io.Writer, outFile, name string, data any, o Options) error {
	text, ok := Format(name, data, o)
	if !ok || text == "" {
		return nil
	}
	if outFile != "" {
		f, err := os.OpenFile(outFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("output: %w", err)
		}
		_, werr := io.WriteString(f, text+"\n")
		cerr := f.Close()
		if werr != nil {
			return fmt.Errorf("output: %w", werr)
		}
		if cerr != nil {
			return fmt.Errorf("output: %w", cerr)
		}
		return nil
	}
	if _, err := io.WriteString(w, text+"\n"); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}

// allSortable reports whether every dict under v has keys Python can sort
// (no_return sorts them and raises TypeError otherwise).
func allSortable(v any, depth int) bool {
	m, ok := normalize(v).(*payload.Map)
	if !ok || depth > maxReprDepth {
		return true
	}
	if _, sortable := sortedItems(m); !sortable {
		return false
	}
	for _, it := range m.Items() {
		if !allSortable(it.Value, depth+1) {
			return false
		}
	}
	return true
}

// jsonOutput is salt/output/json_out.py.
func jsonOutput(data any, o Options) string {
	jo := JSONOptions{ReprDefault: true}
	four := 4
	switch {
	case o.IndentPretty:
		jo.Indent, jo.SortKeys = &four, true
	case o.Indent == nil:
		jo.Indent = &four
	case *o.Indent >= 0:
		n := *o.Indent
		jo.Indent = &n
	}
	s, err := PyJSON(data, jo)
	if err != nil {
		o.logger().Debug("An error occurred while outputting JSON", "error", err)
		return "{}"
	}
	return s
}

// Txt renders data like salt/output/txt.py: "key: line" for every line of
// every value of a dict, else the value itself (strings) or its pprint.
func Txt(data any) string {
	var b strings.Builder
	switch x := normalize(data).(type) {
	case *payload.Map:
		for _, it := range x.Items() {
			key := PyStr(it.Key)
			switch v := normalize(it.Value).(type) {
			case string:
				for _, line := range py.SplitLines(v, false) {
					b.WriteString(key + ": " + line + "\n")
				}
			case []byte:
				for _, line := range py.SplitLinesBytes(v, false) {
					b.WriteString(key + ": " + PyBytesRepr(line) + "\n")
				}
			default:
				b.WriteString(key + ": " + PyStr(v) + "\n")
			}
		}
	case string:
		b.WriteString(x + "\n")
	default:
		b.WriteString(PPrint(x, 1) + "\n")
	}
	return b.String()
}

// NewlineValuesOnly renders data like salt/output/newline_values_only.py:
// the str() of every value of the top-level dict (list values flattened one
// level), one a line. A non-dict is ErrFallback (Python raises
// AttributeError and Salt prints nested instead).
func NewlineValuesOnly(data any) (string, error) {
	m, ok := normalize(data).(*payload.Map)
	if !ok {
		return "", ErrFallback
	}
	var vals []string
	for _, it := range m.Items() {
		if l, isList := normalize(it.Value).([]any); isList {
			for _, e := range l {
				vals = append(vals, PyStr(e))
			}
			continue
		}
		vals = append(vals, PyStr(it.Value))
	}
	return strings.Join(vals, "\n"), nil
}

// Config is what a command's output settings are read from (a master or
// minion configuration).
type Config interface {
	Get(key string) (any, bool)
	Int(key string) (int, error)
}

// Flags are a command line's output flags.
type Flags struct {
	// IsTerminal: standard output is a terminal (color by default).
	IsTerminal bool
	// ForceColor and NoColor are --force-color and --no-color.
	ForceColor, NoColor bool
	// OutIndent is --out-indent when given.
	OutIndent *int
	// StateOpts are --state-output / --state-verbose, by option name.
	StateOpts map[string]any
	// Logger receives outputter warnings.
	Logger *slog.Logger
}

// FromConfig returns the Options of a command from its flags and its
// configuration's color, strip_colors, nested_indent, output_indent,
// state_output and state_verbose, flags winning as in Salt.
func FromConfig(f Flags, cfg Config) Options {
	color := f.IsTerminal
	if v, ok := cfg.Get("color"); ok {
		color = payload.Truthy(payload.FromGo(v))
	}
	if f.ForceColor {
		color = true
	} else if f.NoColor {
		color = false
	}
	out := Options{Color: color, Logger: f.Logger}
	hs := HighstateOptionsFrom(func(key string) (any, bool) {
		if v, ok := f.StateOpts[key]; ok {
			return v, true
		}
		return cfg.Get(key)
	})
	out.Highstate = &hs
	if v, ok := cfg.Get("strip_colors"); ok {
		out.KeepColors = !payload.Truthy(payload.FromGo(v))
	}
	if n, err := cfg.Int("nested_indent"); err == nil {
		out.NestedIndent = n
	}
	if f.OutIndent != nil {
		n := *f.OutIndent
		out.Indent = &n
	} else if v, ok := cfg.Get("output_indent"); ok {
		switch x := v.(type) {
		case string:
			if x == "pretty" {
				out.IndentPretty = true
			}
		case nil:
			neg := -1
			out.Indent = &neg
		default:
			if n, err := cfg.Int("output_indent"); err == nil {
				out.Indent = &n
			}
		}
	}
	return out
}

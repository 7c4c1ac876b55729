package saltcli

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gsalt/gsalt/internal/saltlog"
)

// CLIFlags are the command-line options gsalt and gsalt-run share:
// --no-parse, the outputter options (--out, --out-indent, --out-file,
// --out-file-append, --no-color, --force-color and Salt's hidden aliases
// --output, --output-indent, --output-file, --output-file-append,
// --no-colour, --force-colour) and --log-level. Add registers them; the
// command copies the fields and methods into its Options.
type CLIFlags struct {
	// Out is --out.
	Out string
	// OutFile is --out-file.
	OutFile string
	// OutFileAppend is --out-file-append.
	OutFileAppend bool
	// NoColor is --no-color.
	NoColor bool
	// ForceColor is --force-color.
	ForceColor bool

	fs                        *pflag.FlagSet
	outIndent                 int
	noParse, logLevel         string
	stateOutput, stateVerbose string
}

// Add registers the shared flags on fs.
func (c *CLIFlags) Add(fs *pflag.FlagSet) {
	c.fs = fs
	fs.StringVar(&c.noParse, "no-parse", "", "comma-separated argument names whose values are not YAML-parsed")
	fs.StringVar(&c.Out, "out", "", "outputter: nested, json, yaml, txt, raw, pprint, newline_values_only")
	fs.StringVar(&c.Out, "output", "", "alias of --out")
	fs.IntVar(&c.outIndent, "out-indent", 0, "indentation of the json/yaml output (negative: none)")
	fs.IntVar(&c.outIndent, "output-indent", 0, "alias of --out-indent")
	fs.StringVar(&c.OutFile, "out-file", "", "write the output to this file")
	fs.StringVar(&c.OutFile, "output-file", "", "alias of --out-file")
	fs.BoolVar(&c.OutFileAppend, "out-file-append", false, "append to --out-file instead of truncating it")
	fs.BoolVar(&c.OutFileAppend, "output-file-append", false, "alias of --out-file-append")
	fs.BoolVar(&c.NoColor, "no-color", false, "disable colours")
	fs.BoolVar(&c.NoColor, "no-colour", false, "alias of --no-color")
	fs.BoolVar(&c.ForceColor, "force-color", false, "force colours")
	fs.BoolVar(&c.ForceColor, "force-colour", false, "alias of --force-color")
	fs.StringVarP(&c.logLevel, "log-level", "l", "warning", "console log level: debug, info, warning, error, quiet")
	fs.StringVar(&c.stateOutput, "state-output", "", "highstate outputter mode: full, terse, mixed, changes, filter (and the _id variants)")
	fs.StringVar(&c.stateOutput, "state_output", "", "alias of --state-output")
	fs.StringVar(&c.stateVerbose, "state-verbose", "", "show states without changes in the highstate output (True/False)")
	fs.StringVar(&c.stateVerbose, "state_verbose", "", "alias of --state-verbose")
	for _, alias := range []string{"output", "output-indent", "output-file", "output-file-append", "no-colour", "force-colour", "state_output", "state_verbose"} {
		_ = fs.MarkHidden(alias)
	}
}

// OutIndent is --out-indent (or --output-indent), nil when neither was
// given.
func (c *CLIFlags) OutIndent() *int {
	if c.fs.Changed("out-indent") || c.fs.Changed("output-indent") {
		return &c.outIndent
	}
	return nil
}

// StateOpts returns the highstate outputter options given on the command
// line (state_output, state_verbose), which win over the config file's.
func (c *CLIFlags) StateOpts() map[string]any {
	out := map[string]any{}
	if c.stateOutput != "" {
		out["state_output"] = c.stateOutput
	}
	if c.stateVerbose != "" {
		v := strings.ToLower(c.stateVerbose)
		out["state_verbose"] = v == "true" || v == "1" || v == "yes" || v == "on"
	}
	return out
}

// NoParse lists the names given with --no-parse, or in SALT_NO_PARSE when
// the flag is empty (comma-separated, blanks trimmed, empty names dropped).
func (c *CLIFlags) NoParse() []string {
	noParse := c.noParse
	if noParse == "" {
		noParse = os.Getenv("SALT_NO_PARSE")
	}
	var names []string
	for _, n := range strings.Split(noParse, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// Logger logs to stderr at the --log-level, one of Salt's console level
// names, in Salt's console format ("[DEBUG   ] message"). An unknown
// level name is an error, as Salt's option parser refuses it.
func (c *CLIFlags) Logger() (*slog.Logger, error) {
	lv := c.logLevel
	if _, ok := saltlog.SaltLevel(lv); !ok {
		return nil, fmt.Errorf("option -l/--log-level: invalid choice: '%s' (choose from 'all', 'garbage', 'trace', 'debug', 'profile', 'info', 'warning', 'error', 'critical', 'quiet')", lv)
	}
	l, _, err := saltlog.Setup(os.Stderr, lv, "", "")
	return l, err
}

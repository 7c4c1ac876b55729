// Package saltfile applies a Saltfile to a command's flags the way Salt
// 3006's command-line tools do (salt.utils.parsers.SaltfileMixIn).
//
// A Saltfile is a YAML mapping from a tool's name ("salt", "salt-run",
// "salt-key", ...) to option values named by the option's destination
// ("config_dir", "timeout", "output", "log_level"). The file is the one
// given with --saltfile, else $SALT_SALTFILE, else ./Saltfile, else
// ~/.salt/Saltfile. An option given on the command line wins over the
// Saltfile. gsalt's tools read their own section ("gsalt-run") and fall
// back to Salt's ("salt-run"), so an existing Saltfile works unchanged.
package saltfile

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gsalt/gsalt/config"
)

// ErrNotFound is returned when the Saltfile named with --saltfile or
// $SALT_SALTFILE does not exist.
var ErrNotFound = errors.New("Saltfile not found")

// ErrInvalid is returned for a Saltfile that is not a YAML mapping of
// tool names to mappings of options.
var ErrInvalid = errors.New("invalid Saltfile")

// Env is what Find reads from the process: an environment lookup, the
// working directory and the home directory. Zero fields mean the real
// process values.
type Env struct {
	Getenv func(string) string
	Cwd    string
	Home   string
}

func (e Env) getenv(k string) string {
	if e.Getenv != nil {
		return e.Getenv(k)
	}
	return os.Getenv(k)
}

// Find returns the Saltfile to read: explicit (--saltfile) if set, else
// $SALT_SALTFILE, else ./Saltfile, else ~/.salt/Saltfile when they exist.
// "" means there is none. A file named explicitly or by the environment
// that does not exist is ErrNotFound, with Salt's message.
func Find(explicit string, e Env) (string, error) {
	p := explicit
	if p == "" {
		p = e.getenv("SALT_SALTFILE")
	}
	if p == "" {
		cwd := e.Cwd
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		home := e.Home
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		var cands []string
		if cwd != "" {
			cands = append(cands, filepath.Join(cwd, "Saltfile"))
		}
		if home != "" {
			cands = append(cands, filepath.Join(home, ".salt", "Saltfile"))
		}
		for _, cand := range cands {
			if st, err := os.Stat(cand); err == nil && st.Mode().IsRegular() {
				return cand, nil
			}
		}
		return "", nil
	}
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("%w: '%s' file does not exist.", ErrNotFound, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrNotFound, p, err)
	}
	return abs, nil
}

// Result says what Apply did.
type Result struct {
	// Path is the Saltfile read ("" when there was none).
	Path string
	// Section is the tool name whose section was used ("" when the file
	// has none of the names).
	Section string
	// Applied lists the flags set from the Saltfile, sorted.
	Applied []string
	// Ignored lists the Saltfile options that match no flag of the tool,
	// sorted (Salt keeps them as attributes nobody reads).
	Ignored []string
}

// aliases maps Salt option destinations to gsalt flag names where the
// flag is not simply the destination with "_" as "-".
var aliases = map[string][]string{
	"batch":              {"batch", "batch-size"},
	"output":             {"out"},
	"output_file":        {"out-file"},
	"output_indent":      {"out-indent"},
	"output_file_append": {"out-file-append"},
	"no_color":           {"no-color"},
	"force_color":        {"force-color"},
}

// Apply reads the Saltfile at path (nothing happens for "") and sets the
// flags of fs that were not given on the command line from the first of
// names that the file has a section for.
func Apply(fset *pflag.FlagSet, path string, names ...string) (Result, error) {
	res := Result{Path: path}
	if path == "" {
		return res, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("%w: '%s' file does not exist.", ErrNotFound, path)
		}
		return res, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	doc, err := config.DecodeYAML(data)
	if err != nil {
		return res, fmt.Errorf("%w: %s: %w", ErrInvalid, path, err)
	}
	if doc == nil {
		return res, nil
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return res, fmt.Errorf("%w: %s: the file must hold a mapping of tool names to options", ErrInvalid, path)
	}
	var section map[string]any
	for _, n := range names {
		v, ok := top[n]
		if !ok {
			continue
		}
		if v == nil {
			return res, nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return res, fmt.Errorf("%w: %s: the %q section must be a mapping of options", ErrInvalid, path, n)
		}
		section, res.Section = m, n
		break
	}
	keys := make([]string, 0, len(section))
	for k := range section {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := lookup(fset, k)
		if f == nil {
			res.Ignored = append(res.Ignored, k)
			continue
		}
		if changed(fset, k) {
			continue
		}
		val, err := flagValue(section[k])
		if err != nil {
			return res, fmt.Errorf("%w: %s: %s: %w", ErrInvalid, path, k, err)
		}
		if err := fset.Set(f.Name, val); err != nil {
			return res, fmt.Errorf("%w: %s: %s: %w", ErrInvalid, path, k, err)
		}
		res.Applied = append(res.Applied, f.Name)
	}
	return res, nil
}

// candidates lists the flag names an option destination may be.
func candidates(dest string) []string {
	if a, ok := aliases[dest]; ok {
		return a
	}
	return []string{strings.ReplaceAll(dest, "_", "-")}
}

func lookup(fset *pflag.FlagSet, dest string) *pflag.Flag {
	for _, n := range candidates(dest) {
		if f := fset.Lookup(n); f != nil {
			return f
		}
	}
	return nil
}

// changed reports whether the option was given on the command line under
// any of its names (an alias counts).
func changed(fset *pflag.FlagSet, dest string) bool {
	names := candidates(dest)
	if dest == "output" || dest == "output_file" || dest == "output_indent" || dest == "output_file_append" {
		names = append(names, strings.ReplaceAll(dest, "_", "-"))
	}
	for _, n := range names {
		if fset.Changed(n) {
			return true
		}
	}
	return false
}

// flagValue is the text form of a Saltfile value for pflag's Set.
func flagValue(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case fmt.Stringer:
		return x.String(), nil
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			s, err := flagValue(e)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("a %T value cannot be a command-line option", v)
}

// FlagName is the flag that names the Saltfile.
const FlagName = "saltfile"

// AddFlag registers --saltfile on fset.
func AddFlag(fset *pflag.FlagSet) {
	fset.String(FlagName, "", "path to a Saltfile (default: $SALT_SALTFILE, ./Saltfile, ~/.salt/Saltfile)")
}

// Load finds the Saltfile (--saltfile of fset if registered, then the
// environment and the default places) and applies the first section of
// names it has to the flags of fset.
func Load(fset *pflag.FlagSet, names ...string) (Result, error) {
	explicit := ""
	if f := fset.Lookup(FlagName); f != nil {
		explicit = f.Value.String()
	}
	path, err := Find(explicit, Env{})
	if err != nil {
		return Result{}, err
	}
	return Apply(fset, path, names...)
}

// Log writes what Load did to log: Salt's info line naming the file and
// a warning for options no flag of the tool takes.
func (r Result) Log(log *slog.Logger) {
	if r.Path == "" || log == nil {
		return
	}
	log.Info(fmt.Sprintf("Loading Saltfile from '%s'", r.Path))
	for _, k := range r.Ignored {
		log.Warn(fmt.Sprintf("Saltfile %s: option %q of section %q is not an option of this command; ignored", r.Path, k, r.Section))
	}
}

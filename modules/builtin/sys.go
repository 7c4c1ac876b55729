package builtin

import (
	"context"
	"regexp"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// sysFunctions is Salt's sys module (salt/modules/sysmod.py) for execution
// functions, answered from the registry the call came from.
func sysFunctions() []modules.Function {
	return []modules.Function{
		{Name: "sys.doc", Spec: modules.Spec{Varargs: true},
			Doc: "Return the docstrings for all modules. Optionally, specify a module or a\nfunction to narrow the selection.\n\nThe strings are aggregated into a single document on the master for easy\nreading.\n\nMultiple modules/functions can be specified.\n\nCLI Example:\n\n    salt '*' sys.doc\n    salt '*' sys.doc sys\n    salt '*' sys.doc sys.doc\n    salt '*' sys.doc network.traceroute user.info\n\nModules can be specified as globs.\n\n    salt '*' sys.doc 'sys.*'\n    salt '*' sys.doc 'sys.list_*'",
			Fn:  sysDoc},
		{Name: "sys.list_functions", Spec: modules.Spec{Varargs: true, Kwargs: true},
			Doc: "List the functions for all modules. Optionally, specify a module or modules\nfrom which to list.\n\nCLI Example:\n\n    salt '*' sys.list_functions\n    salt '*' sys.list_functions sys\n    salt '*' sys.list_functions sys user\n\nFunction names can be specified as globs.\n\n    salt '*' sys.list_functions 'sys.list_*'",
			Fn:  sysListFunctions},
		{Name: "sys.list_modules", Spec: modules.Spec{Varargs: true},
			Doc: "List the modules loaded on the minion\n\nCLI Example:\n\n    salt '*' sys.list_modules\n\nModule names can be specified as globs.\n\n    salt '*' sys.list_modules 's*'",
			Fn:  sysListModules},
		{Name: "sys.argspec", Spec: modules.Spec{Params: []modules.Param{opt("module", "")}},
			Doc: "Return the argument specification of functions in Salt execution\nmodules.\n\nCLI Example:\n\n    salt '*' sys.argspec pkg.install\n    salt '*' sys.argspec sys\n    salt '*' sys.argspec\n\nModule names can be specified as globs.\n\n    salt '*' sys.argspec 'pkg.*'",
			Fn:  sysArgspec},
		{Name: "sys.reload_modules", Doc: "Tell the minion to reload the execution modules\n\nCLI Example:\n\n    salt '*' sys.reload_modules",
			Fn: func(context.Context, *modules.Call) (any, error) { return true, nil }},
	}
}

// sysRegistry returns the registry a call came from.
func sysRegistry(c *modules.Call) *modules.Registry {
	if c.Env != nil && c.Env.Registry != nil {
		return c.Env.Registry
	}
	return modules.NewRegistry()
}

// sysPatterns returns the *args as strings.
func sysPatterns(c *modules.Call) []string {
	out := make([]string, 0, len(c.Args.Varargs))
	for _, a := range c.Args.Varargs {
		out = append(out, payload.Text(a))
	}
	return out
}

// sysRSTRules are salt.utils.doc.strip_rst's substitutions ('.' matches
// any character, as in Salt's patterns).
var sysRSTRules = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(` *.. code-block:: \S+\n{1,2}`), ""},
	{regexp.MustCompile(`.. note::`), "Note:"},
	{regexp.MustCompile(`.. warning::`), "Warning:"},
	{regexp.MustCompile(`.. versionadded::`), "New in version"},
	{regexp.MustCompile(`.. versionchanged::`), "Changed in version"},
}

func sysStripRST(doc string) string {
	for _, r := range sysRSTRules {
		doc = r.re.ReplaceAllLiteralString(doc, r.repl)
	}
	return doc
}

func sysDocOf(r *modules.Registry, name string) any {
	f, ok := r.Lookup(name)
	if !ok || f.Doc == "" {
		return nil
	}
	return sysStripRST(f.Doc)
}

func sysDoc(_ context.Context, c *modules.Call) (any, error) {
	r := sysRegistry(c)
	names := r.NamesFor(c.Env)
	picked := map[string]bool{}
	args := sysPatterns(c)
	if len(args) == 0 {
		for _, n := range names {
			picked[n] = true
		}
	}
	for _, module := range args {
		switch {
		case strings.Contains(module, "*"):
			for _, n := range names {
				if py.Fnmatch(n, module) {
					picked[n] = true
				}
			}
		default:
			target := module
			if module != "" && !strings.HasSuffix(module, ".") {
				target = module + "."
			}
			for _, n := range names {
				if n == module || strings.HasPrefix(n, target) {
					picked[n] = true
				}
			}
		}
	}
	out := &payload.Map{}
	for _, n := range names {
		if picked[n] {
			out.Set(n, sysDocOf(r, n))
		}
	}
	return out, nil
}

func sysListFunctions(_ context.Context, c *modules.Call) (any, error) {
	names := sysRegistry(c).NamesFor(c.Env)
	args := sysPatterns(c)
	if len(args) == 0 {
		return grainsStrList(names), nil
	}
	picked := map[string]bool{}
	for _, module := range args {
		for _, n := range names {
			if strings.Contains(module, "*") || strings.Contains(module, ".") {
				if py.Fnmatch(n, module) {
					picked[n] = true
				}
			} else if strings.HasPrefix(n, module+".") {
				picked[n] = true
			}
		}
	}
	out := make([]string, 0, len(picked))
	for n := range picked {
		out = append(out, n)
	}
	sort.Strings(out)
	return grainsStrList(out), nil
}

func sysListModules(_ context.Context, c *modules.Call) (any, error) {
	r := sysRegistry(c)
	args := sysPatterns(c)
	if len(args) == 0 {
		return grainsStrList(r.ModulesFor(c.Env)), nil
	}
	picked := map[string]bool{}
	for _, module := range args {
		for _, n := range r.NamesFor(c.Env) {
			mod, _, _ := strings.Cut(n, ".")
			if strings.Contains(module, "*") {
				if py.Fnmatch(n, module) {
					picked[mod] = true
				}
			} else if mod == module {
				picked[mod] = true
			}
		}
	}
	out := make([]string, 0, len(picked))
	for m := range picked {
		out = append(out, m)
	}
	sort.Strings(out)
	return grainsStrList(out), nil
}

// sysArgspecOf is salt.utils.args.argspec_report's entry for a function.
func sysArgspecOf(f *modules.Function) *payload.Map {
	var args, defaults []any
	for _, p := range f.Spec.Params {
		args = append(args, p.Name)
		if !p.Required {
			defaults = append(defaults, payload.DeepClone(p.Default))
		}
	}
	entry := payload.NewMap("args", nil, "defaults", nil, "varargs", nil, "kwargs", nil)
	if len(args) > 0 {
		entry.Set("args", args)
	}
	if len(defaults) > 0 {
		entry.Set("defaults", defaults)
	}
	if f.Spec.Varargs {
		entry.Set("varargs", true)
	}
	if f.Spec.Kwargs {
		entry.Set("kwargs", true)
	}
	return entry
}

func sysArgspec(_ context.Context, c *modules.Call) (any, error) {
	r := sysRegistry(c)
	module := c.Args.Str("module")
	out := &payload.Map{}
	glob := strings.Contains(module, "*") || strings.Contains(module, ".")
	for _, n := range r.NamesFor(c.Env) {
		if glob && !py.Fnmatch(n, module) || !glob && !strings.HasPrefix(n, module+".") {
			continue
		}
		if f, ok := r.Lookup(n); ok {
			out.Set(n, sysArgspecOf(f))
		}
	}
	return out, nil
}

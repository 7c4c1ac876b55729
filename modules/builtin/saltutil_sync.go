package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// saltutilExtPattern is the files Salt's extmods.sync copies.
var saltutilExtPattern = regexp.MustCompile(`\.(pyx?|so|zip)$`)

// PythonNotLoaded is the note gsalt adds to every synced Python module.
const PythonNotLoaded = "not loaded: gsalt does not run Python extension modules"

// saltutilForm is the file server directory (salt://_<form>) and the
// extension_modules subdirectory of a sync kind.
func saltutilForm(kind string) string {
	if kind == "proxymodules" {
		return "proxy"
	}
	return kind
}

// saltutilExtmodsDir is opts extension_modules, else cachedir/extmods.
func saltutilExtmodsDir(c *modules.Call) string {
	if d := optStr(c, "extension_modules"); d != "" {
		return d
	}
	return filepath.Join(optStr(c, "cachedir"), "extmods")
}

// saltutilModList reads extmod_whitelist/extmod_blacklist: nil is the
// option's value, a string is "a,b" for this form, a dict maps forms to
// name lists.
func saltutilModList(c *modules.Call, v any, optName, form string) (names []string, active bool) {
	if v == nil {
		v, _ = optGet(c, optName)
	}
	switch x := v.(type) {
	case string:
		return strings.Split(x, ","), true
	case *payload.Map:
		l, ok := x.Get(form)
		if !ok {
			return nil, false
		}
		items, _ := pyfmt.List(l)
		for _, it := range items {
			names = append(names, pyfmt.Str(it))
		}
		return names, true
	case nil:
		return nil, false
	}
	c.Log().Error(fmt.Sprintf("%s must be a string or dictionary: %s", optName, pyfmt.Str(v)))
	return nil, false
}

// saltutilSync is Salt's _sync/extmods.sync: the .py, .pyx, .so and .zip
// files below salt://_<form> of each saltenv are copied to
// extension_modules/<form>, files no longer on the server are removed
// (clean_dynamic_modules), and the names of the modules copied or changed
// are returned, as in Salt. gsalt runs no Python, so each name carries
// PythonNotLoaded and a warning naming every module present is logged.
func saltutilSync(ctx context.Context, c *modules.Call, kind string, saltenvArg, white, black any) ([]any, error) {
	form := saltutilForm(kind)
	fc, err := cpClient(c)
	if err != nil {
		// Salt logs a failed sync and returns what it synced.
		c.Log().Error(fmt.Sprintf("Failed to sync %s module: %v", form, err))
		return []any{}, nil
	}
	var envs []string
	switch x := saltenvArg.(type) {
	case nil:
		if v, err := fc.Envs(ctx); err == nil {
			l, _ := pyfmt.List(v)
			for _, e := range l {
				envs = append(envs, pyfmt.Str(e))
			}
		}
		if len(envs) == 0 {
			envs = []string{"base"}
		}
	case string:
		envs = strings.Split(x, ",")
	default:
		l, _ := pyfmt.List(x)
		for _, e := range l {
			envs = append(envs, pyfmt.Str(e))
		}
	}
	whitelist, useWhite := saltutilModList(c, white, "extmod_whitelist", form)
	blacklist, useBlack := saltutilModList(c, black, "extmod_blacklist", form)
	modDir := filepath.Join(saltutilExtmodsDir(c), form)
	if err := os.MkdirAll(modDir, 0o700); err != nil {
		c.Log().Error(fmt.Sprintf("Cannot create cache module directory %s. Check permissions.", modDir))
	}
	ret := []any{}
	var present []string
	remote := map[string]bool{}
	touched := false
	for _, env := range envs {
		list, err := fc.FileList(ctx, env, "_"+form)
		if err != nil {
			c.Log().Error(fmt.Sprintf("Failed to sync %s module: %v", form, err))
			continue
		}
		files, _ := pyfmt.List(list)
		for _, f := range files {
			p := pyfmt.Str(f)
			rel, ok := strings.CutPrefix(p, "_"+form+"/")
			if !ok || !saltutilExtPattern.MatchString(rel) {
				continue
			}
			relname := strings.ReplaceAll(strings.TrimSuffix(rel, filepath.Ext(rel)), "/", ".")
			if useWhite && !containsStr(whitelist, relname) {
				continue
			}
			if useBlack && containsStr(blacklist, relname) {
				continue
			}
			remote[rel] = true
			local, err := fc.CacheFile(ctx, "salt://"+p, env)
			if err != nil || local == "" {
				c.Log().Error(fmt.Sprintf("Failed to sync %s module: cannot fetch salt://%s", form, p))
				continue
			}
			dest := filepath.Join(modDir, filepath.FromSlash(rel))
			changed, err := copyIfDifferent(local, dest)
			if err != nil {
				c.Log().Error(fmt.Sprintf("Failed to sync %s module: %v", form, err))
				continue
			}
			present = append(present, form+"."+relname)
			if changed {
				touched = true
				ret = append(ret, fmt.Sprintf("%s.%s (%s)", form, relname, PythonNotLoaded))
			}
		}
	}
	if v, ok := optGet(c, "clean_dynamic_modules"); !ok || v == true {
		_ = filepath.WalkDir(modDir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(modDir, p)
			if !remote[filepath.ToSlash(rel)] {
				touched = true
				_ = os.Remove(p)
			}
			return nil
		})
		removeEmptyDirs(modDir)
	}
	if touched && optStr(c, "cachedir") != "" {
		if f, err := os.OpenFile(filepath.Join(optStr(c, "cachedir"), "module_refresh"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
			_ = f.Close()
		}
	}
	if len(present) > 0 {
		c.Log().Warn("gsalt does not load Python extension modules; the synced files are kept in extension_modules but their functions are not available",
			"kind", kind, "dir", modDir, "modules", strings.Join(present, ","))
	}
	return ret, nil
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// copyIfDifferent copies src to dest unless dest has the same content.
func copyIfDifferent(src, dest string) (bool, error) {
	want, err := os.ReadFile(src)
	if err != nil {
		return false, err
	}
	if have, err := os.ReadFile(dest); err == nil && string(have) == string(want) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return false, err
	}
	in, err := os.Open(src)
	if err != nil {
		return false, err
	}
	defer in.Close()
	out, err := os.OpenFile(dest, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return false, err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return false, err
	}
	return true, out.Close()
}

// removeEmptyDirs removes the empty directories below root.
func removeEmptyDirs(root string) {
	var dirs []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != root {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		_ = os.Remove(d)
	}
}

func saltutilSyncAll(ctx context.Context, c *modules.Call) (any, error) {
	ret := &payload.Map{}
	kinds := append([]string{}, saltutilSyncKinds...)
	if optStr(c, "file_client") == "local" {
		kinds = append(kinds, "pillar")
	}
	for _, k := range kinds {
		l, err := saltutilSync(ctx, c, k, c.Args.Get("saltenv"), c.Args.Get("extmod_whitelist"), c.Args.Get("extmod_blacklist"))
		if err != nil {
			return nil, err
		}
		ret.Set(k, l)
	}
	if payload.Truthy(c.Args.Get("refresh")) {
		eventFire(ctx, c, &payload.Map{}, "module_refresh")
		saltutilDoRefreshPillar(ctx, c, false, 30*time.Second)
	}
	return ret, nil
}

// ErrPythonModule marks a call of a function of a Python extension module
// that was synced to the minion but that gsalt cannot run.
var ErrPythonModule = errors.New("python extension module not loaded")

// PythonModuleMissing explains a missing function fun ("mod.func") when a
// Python module of kind ("modules", "states", ...) named mod, by file name
// or __virtualname__, was synced to extDir/<kind>; "" when there is none.
func PythonModuleMissing(extDir, kind, fun string) string {
	mod, _, ok := strings.Cut(fun, ".")
	if !ok {
		return ""
	}
	why := pythonExtension(extDir, kind, mod)
	if why == "" {
		return ""
	}
	return fmt.Sprintf("'%s' is not available: %s", fun, why)
}

// PythonRendererMissing explains a renderer name that no renderer has
// when a Python renderer of that name was synced to extDir/renderers
// (saltutil.sync_renderers); "" when there is none.
func PythonRendererMissing(extDir, name string) string {
	return pythonExtension(extDir, "renderers", name)
}

// pythonExtension says that mod is a custom Python module of kind synced
// to extDir/<kind>, which gsalt does not load; "" when there is none.
func pythonExtension(extDir, kind, mod string) string {
	if extDir == "" || mod == "" {
		return ""
	}
	path := findPythonModule(filepath.Join(extDir, kind), mod)
	if path == "" {
		return ""
	}
	what := map[string]string{"modules": "execution module", "states": "state module", "renderers": "renderer", "grains": "grains module"}[kind]
	if what == "" {
		what = strings.TrimSuffix(kind, "s") + " module"
	}
	return fmt.Sprintf("%s is a custom Python %s (%s, synced from salt://_%s) and gsalt does not load Python extension modules", mod, what, path, kind)
}

// virtualNameRe finds __virtualname__ = "name" in a module.
var virtualNameRe = regexp.MustCompile(`(?m)^__virtualname__\s*=\s*["']([^"']+)["']`)

// findPythonModule returns the file of module mod below dir.
func findPythonModule(dir, mod string) string {
	for _, cand := range []string{mod + ".py", mod + ".pyx", mod + ".so", filepath.Join(mod, "__init__.py")} {
		p := filepath.Join(dir, cand)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			// A module with another __virtualname__ is known by that name.
			if b, err := os.ReadFile(p); err == nil && len(b) <= 4<<20 {
				if m := virtualNameRe.FindSubmatch(b); m != nil && string(m[1]) != mod {
					continue
				}
			}
			return p
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".py") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil || len(b) > 4<<20 {
			continue
		}
		if m := virtualNameRe.FindSubmatch(b); m != nil && string(m[1]) == mod {
			return p
		}
	}
	return ""
}

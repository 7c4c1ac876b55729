package wheel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/atomicfile"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxReadFile bounds a file returned by file_roots.read and
// pillar_roots.read.
const maxReadFile = 64 << 20

// ErrFile means a roots wheel function met a file it cannot return (too
// large, not UTF-8 text).
var ErrFile = errors.New("wheel: unusable file")

var (
	rootsPathParams  = []Param{{Name: "path", Required: true}, {Name: "saltenv", Default: "base"}}
	rootsWriteParams = []Param{{Name: "data", Required: true}, {Name: "path", Required: true},
		{Name: "saltenv", Default: "base"}, {Name: "index", Default: int64(0)}}
)

// rootsKind is the difference between the file_roots and pillar_roots
// modules: the option read and Salt's path checks.
type rootsKind struct {
	opt string
	// strictFind is file_roots.find's clean_path check: only files
	// directly in a root are found. pillar_roots.find has none in Salt;
	// gsalt still keeps it inside the root.
	strictFind bool
	// invalidPath is write's answer to a path outside the root.
	invalidPath func(path string) string
}

var (
	fileRoots   = rootsKind{opt: "file_roots", strictFind: true, invalidPath: func(p string) string { return "Invalid path: " + p }}
	pillarRoots = rootsKind{opt: "pillar_roots", invalidPath: func(string) string { return "Invalid path" }}
)

// fileRootsFunctions is Salt's file_roots wheel module
// (salt/wheel/file_roots.py).
func fileRootsFunctions() []Function { return rootsFunctions("file_roots", fileRoots) }

func rootsFunctions(mod string, k rootsKind) []Function {
	return []Function{
		{Name: mod + ".find", Params: rootsPathParams, Fn: k.find,
			Doc: "\n    Return a dict of the files located with the given path and environment\n    "},
		{Name: mod + ".list_env", Params: []Param{{Name: "saltenv", Default: "base"}}, Fn: k.listEnv,
			Doc: "\n    Return all of the file paths found in an environment\n    "},
		{Name: mod + ".list_roots", Fn: k.listRoots,
			Doc: "\n    Return all of the files names in all available environments\n    "},
		{Name: mod + ".read", Params: rootsPathParams, Fn: k.read,
			Doc: "\n    Read the contents of a text file, if the file is binary then\n    ignore it\n    "},
		{Name: mod + ".write", Params: rootsWriteParams, Fn: k.write,
			Doc: "\n    Write the named file, by default the first file found is written, but the\n    index of the file can be specified to write to a lower priority file root\n    "},
	}
}

// roots returns the saltenvs of the option (sorted) and their directories.
func (k rootsKind) roots(c *Call) ([]string, map[string][]string) {
	out := map[string][]string{}
	add := func(env string, v any) {
		var dirs []string
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				if s, ok := e.(string); ok {
					dirs = append(dirs, s)
				}
			}
		case []string:
			dirs = append(dirs, x...)
		}
		out[env] = dirs
	}
	switch m := c.opt(k.opt).(type) {
	case map[string]any:
		for env, v := range m {
			add(env, v)
		}
	case map[string][]string:
		for env, v := range m {
			add(env, v)
		}
	case *payload.Map:
		for _, it := range m.Items() {
			add(payload.KeyString(it.Key), it.Value)
		}
	}
	envs := make([]string, 0, len(out))
	for env := range out {
		envs = append(envs, env)
	}
	sort.Strings(envs)
	return envs, out
}

// realpath is os.path.realpath: symlinks resolved as far as they exist.
func realpath(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(p)
	if dir == "" || dir == p {
		return p
	}
	return filepath.Join(realpath(filepath.Clean(dir)), base)
}

// inRoot reports whether full lies in root: directly in it (subdir
// false, Salt's clean_path) or anywhere below it.
func inRoot(root, full string, subdir bool) bool {
	rr := realpath(root)
	if !filepath.IsAbs(rr) {
		return false
	}
	rp := realpath(full)
	if !subdir {
		return filepath.Dir(rp) == rr
	}
	return rp == rr || strings.HasPrefix(rp, rr+string(filepath.Separator))
}

// isText is salt.utils.files.is_text on the first 512 bytes.
func isText(block []byte) bool {
	if bytes.IndexByte(block, 0) >= 0 {
		return false
	}
	if len(block) == 0 || utf8.Valid(block) {
		return true
	}
	non := 0
	for _, b := range block {
		if (b < 32 || b > 126) && !strings.ContainsRune("\n\r\t\f\b", rune(b)) {
			non++
		}
	}
	return float64(non)/float64(len(block)) <= 0.30
}

// found is one file of find: its full path and "txt" or "bin".
type found struct{ path, form string }

func (k rootsKind) findFiles(c *Call) []found {
	_, roots := k.roots(c)
	dirs, ok := roots[c.Str("saltenv")]
	if !ok {
		return nil
	}
	rel := c.Str("path")
	var out []found
	for _, root := range dirs {
		full := rel
		if !filepath.IsAbs(rel) {
			full = filepath.Join(root, rel)
		}
		if !inRoot(root, full, !k.strictFind) {
			continue
		}
		fi, err := os.Stat(full)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		f, err := os.Open(full)
		if err != nil {
			continue
		}
		block := make([]byte, 512)
		n, _ := io.ReadFull(f, block)
		f.Close()
		form := "bin"
		if isText(block[:n]) {
			form = "txt"
		}
		out = append(out, found{full, form})
	}
	return out
}

// find is <roots>.find: [{path: "txt"|"bin"}] for each root holding the
// file.
func (k rootsKind) find(_ context.Context, c *Call) (any, error) {
	out := []any{}
	for _, f := range k.findFiles(c) {
		out = append(out, payload.NewMap(f.path, f.form))
	}
	return out, nil
}

// read is <roots>.read: [{path: text}] for the text files find finds.
func (k rootsKind) read(_ context.Context, c *Call) (any, error) {
	out := []any{}
	for _, f := range k.findFiles(c) {
		if f.form != "txt" {
			continue
		}
		fh, err := os.Open(f.path)
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(io.LimitReader(fh, maxReadFile+1))
		fh.Close()
		if err != nil {
			return nil, err
		}
		if len(b) > maxReadFile {
			return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrFile, f.path, maxReadFile)
		}
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("%w: 'utf-8' codec can't decode %s", ErrFile, f.path)
		}
		out = append(out, payload.NewMap(f.path, string(b)))
	}
	return out, nil
}

// tree lists dir like Salt's list_env walk (os.walk without following
// links): directories (links to directories too, not entered) map to
// their tree, other entries to "f"; directories first, then files, each
// sorted.
func tree(dir string, descend bool) *payload.Map {
	out := payload.NewMap()
	if !descend {
		return out
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	var dirs, files []string
	link := map[string]bool{}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			dirs = append(dirs, e.Name())
			link[e.Name()] = e.Type()&os.ModeSymlink != 0
			continue
		}
		files = append(files, e.Name())
	}
	sort.Strings(dirs)
	sort.Strings(files)
	for _, d := range dirs {
		out.Set(d, tree(filepath.Join(dir, d), !link[d]))
	}
	for _, f := range files {
		out.Set(f, "f")
	}
	return out
}

func (k rootsKind) listEnvOf(c *Call, saltenv string) *payload.Map {
	_, roots := k.roots(c)
	out := payload.NewMap()
	dirs, ok := roots[saltenv]
	if !ok {
		return out
	}
	for _, root := range dirs {
		fi, err := os.Stat(root)
		out.Set(root, tree(root, err == nil && fi.IsDir()))
	}
	return out
}

// listEnv is <roots>.list_env: {root: tree} for each root of saltenv.
func (k rootsKind) listEnv(_ context.Context, c *Call) (any, error) {
	return k.listEnvOf(c, c.Str("saltenv")), nil
}

// listRoots is <roots>.list_roots: {saltenv: [list_env(saltenv)]}.
func (k rootsKind) listRoots(_ context.Context, c *Call) (any, error) {
	envs, _ := k.roots(c)
	out := payload.NewMap()
	for _, env := range envs {
		out.Set(env, []any{k.listEnvOf(c, env)})
	}
	return out, nil
}

// write is <roots>.write: data written to path below the index-th root of
// saltenv; problems are reported in the returned text, as Salt does.
func (k rootsKind) write(_ context.Context, c *Call) (any, error) {
	saltenv, path := c.Str("saltenv"), c.Str("path")
	_, roots := k.roots(c)
	dirs, ok := roots[saltenv]
	if !ok {
		return fmt.Sprintf("Named environment %s is not present", saltenv), nil
	}
	idx, ok := payload.AsInt(c.Args["index"])
	if !ok || idx < 0 {
		return nil, fmt.Errorf("%w: index must be a non-negative integer", ErrArguments)
	}
	if int64(len(dirs)) <= idx {
		return fmt.Sprintf("Specified index %d in environment %s is not present", idx, saltenv), nil
	}
	if filepath.IsAbs(path) {
		return fmt.Sprintf("The path passed in %s is not relative to the environment %s", path, saltenv), nil
	}
	root := dirs[idx]
	dest := filepath.Join(root, path)
	if !inRoot(root, dest, true) || dest == filepath.Clean(root) {
		return k.invalidPath(path), nil
	}
	var data []byte
	switch d := c.Args["data"].(type) {
	case string:
		data = []byte(d)
	case []byte:
		data = d
	default:
		return nil, fmt.Errorf("%w: data must be text, not %s", ErrArguments, payload.TypeName(d))
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(dest, data, 0o644, false); err != nil {
		return nil, err
	}
	return "Wrote data to file " + dest, nil
}

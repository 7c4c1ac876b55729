package pillar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxTreeDepth bounds the directory depth file_tree descends (Salt does
// not filter link loops; gsalt stops there with an error log).
const maxTreeDepth = 64

// maxTreeFile bounds one file read by file_tree.
const maxTreeFile = 64 << 20

// extFileTree is salt/pillar/file_tree.py: for every root (root_dir, or
// root_dir under each pillar_roots directory of the pillarenv when it is
// relative) the trees under nodegroups/<group> of the groups the minion
// is in, then hosts/<minion id>, become nested dicts: directories are
// dicts, files their contents (bytes, or rendered data with template).
// Entries come in directory order, as Python's os.walk gives them.
func extFileTree() ExtModule {
	return ExtModule{Name: "file_tree", Params: []ExtParam{
		{Name: "root_dir"}, {Name: "follow_dir_links", Default: false}, {Name: "debug", Default: false},
		{Name: "keep_newline", Default: false}, {Name: "render_default"}, {Name: "renderer_blacklist"},
		{Name: "renderer_whitelist"}, {Name: "template", Default: false},
	}, Fn: fileTree}
}

type treeOpts struct {
	follow    bool
	debug     bool
	keepNL    any
	render    string
	hasRender bool
	black     []string
	white     []string
	template  bool
}

func fileTree(ctx context.Context, c *ExtCall) (any, error) {
	root := c.Args["root_dir"]
	if !payload.Truthy(root) {
		c.Log.Error("file_tree: no root_dir specified")
		return emptyResult(), nil
	}
	rootDir := c.Str("root_dir")
	o := treeOpts{
		follow: payload.Truthy(c.Args["follow_dir_links"]),
		debug:  c.Args["debug"] == true,
		keepNL: c.Args["keep_newline"],
		black:  strList(c.Args["renderer_blacklist"]),
		white:  strList(c.Args["renderer_whitelist"]),
		// Salt templates only with template exactly True.
		template: c.Args["template"] == true,
	}
	if rd := c.Args["render_default"]; rd != nil {
		o.render, o.hasRender = c.Str("render_default"), true
	}
	var dirs []string
	if !filepath.IsAbs(rootDir) {
		penv, _ := c.r.opts.Get("pillarenv")
		if penv == nil {
			c.Log.Error("file_tree: root_dir is relative but pillarenv is not set")
			return emptyResult(), nil
		}
		env := pyfmt.Str(penv)
		c.Log.Debug("file_tree: pillarenv = " + env)
		roots, ok := c.r.roots.dirs[env]
		if !ok {
			c.Log.Error(fmt.Sprintf("file_tree: root_dir is relative but no pillar_roots are specified  for pillarenv %s", env))
			return emptyResult(), nil
		}
		for _, er := range roots {
			d := filepath.Clean(filepath.Join(er, rootDir))
			if len(dirs) == 0 || dirs[len(dirs)-1] != d {
				dirs = append(dirs, d)
			}
		}
	} else {
		dirs = []string{rootDir}
	}
	result := payload.NewMap()
	for _, d := range dirs {
		dp, err := treeRoot(ctx, c, d, o)
		if err != nil {
			return nil, err
		}
		m, err := mergeRecurse(result, dp, false)
		if err != nil {
			return nil, err
		}
		result = m.(*payload.Map)
	}
	return result, nil
}

// treeRoot is file_tree's _ext_pillar for one root directory.
func treeRoot(ctx context.Context, c *ExtCall, root string, o treeOpts) (*payload.Map, error) {
	c.Log.Debug("file_tree: reading " + root)
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		c.Log.Error(fmt.Sprintf("file_tree: root_dir %s does not exist or is not a directory", root))
		return payload.NewMap(), nil
	}
	switch o.keepNL.(type) {
	case bool, []any:
	default:
		c.Log.Error(fmt.Sprintf("file_tree: keep_newline must be either True/False or a list of file globs. Skipping this ext_pillar for root_dir %s", root))
		return payload.NewMap(), nil
	}
	ngroup := payload.NewMap()
	ngDir := filepath.Join(root, "nodegroups")
	groups := c.r.c.cfg.Nodegroups
	if _, err := os.Lstat(ngDir); err == nil && len(groups) > 0 {
		names, _ := readDirNames(ngDir)
		if len(names) > 0 {
			for _, ng := range names {
				expr, ok := groups[ng]
				if !ok {
					continue
				}
				if !c.r.inNodegroup(expr) {
					continue
				}
				tree, err := constructTree(ctx, c, filepath.Join(ngDir, ng), o)
				if err != nil {
					return nil, err
				}
				m, err := mergeRecurse(ngroup, tree, false)
				if err != nil {
					return nil, err
				}
				ngroup = m.(*payload.Map)
			}
		} else if o.debug {
			c.Log.Debug(fmt.Sprintf("file_tree: no nodegroups found in file tree directory %s, skipping...", pyfmt.Repr(names)))
		}
	} else if o.debug {
		c.Log.Debug("file_tree: no nodegroups found in master configuration")
	}
	hostDir := filepath.Join(root, "hosts", c.MinionID)
	fi, err := os.Stat(hostDir)
	if err != nil {
		if o.debug {
			c.Log.Debug(fmt.Sprintf("file_tree: no pillar data for minion %s found in file tree directory %s", c.MinionID, hostDir))
		}
		return ngroup, nil
	}
	if !fi.IsDir() {
		c.Log.Error(fmt.Sprintf("file_tree: %s exists, but is not a directory", hostDir))
		return ngroup, nil
	}
	host, err := constructTree(ctx, c, hostDir, o)
	if err != nil {
		return nil, err
	}
	m, err := mergeRecurse(ngroup, host, false)
	if err != nil {
		return nil, err
	}
	return m.(*payload.Map), nil
}

// readDirNames lists a directory in the order the kernel gives (Python's
// os.listdir / os.scandir order), not sorted.
func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// constructTree is file_tree's _construct_pillar: an os.walk of top.
func constructTree(ctx context.Context, c *ExtCall, top string, o treeOpts) (*payload.Map, error) {
	out := payload.NewMap()
	return out, walkTree(ctx, c, top, ".", out, o, 0)
}

func walkTree(ctx context.Context, c *ExtCall, dir, prefix string, node *payload.Map, o treeOpts, depth int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if depth > maxTreeDepth {
		c.Log.Error(fmt.Sprintf("file_tree: %s: nested deeper than %d directories, skipped", dir, maxTreeDepth))
		return nil
	}
	names, err := readDirNames(dir)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			c.Log.Error(fmt.Sprintf("%s: %s", dir, pe.Err))
		}
		return nil
	}
	var subdirs, files []string
	descend := map[string]bool{}
	for _, n := range names {
		p := filepath.Join(dir, n)
		fi, err := os.Stat(p)
		if err == nil && fi.IsDir() {
			subdirs = append(subdirs, n)
			if lfi, err := os.Lstat(p); err == nil && (lfi.Mode()&os.ModeSymlink == 0 || o.follow) {
				descend[n] = true
			}
			continue
		}
		files = append(files, n)
	}
	children := map[string]*payload.Map{}
	for _, d := range subdirs {
		m := payload.NewMap()
		children[d] = m
		node.Set(d, m)
	}
	for _, f := range files {
		p := filepath.Join(dir, f)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			c.Log.Error(fmt.Sprintf("file_tree: %s: not a regular file", p))
			continue
		}
		contents, err := readLimited(p)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				c.Log.Error(fmt.Sprintf("file_tree: Error reading %s: %s", p, pe.Err))
			} else {
				c.Log.Error(fmt.Sprintf("file_tree: Error reading %s: %s", p, err))
			}
			continue
		}
		if bytes.HasSuffix(contents, []byte("\n")) && stripNewline(c, prefix, f, o.keepNL) {
			contents = contents[:len(contents)-1]
		}
		var data any = contents
		if o.template {
			if data, err = treeTemplate(ctx, c, contents, o); err != nil {
				return err
			}
		}
		node.Set(f, data)
	}
	for _, d := range subdirs {
		if !descend[d] {
			continue
		}
		sub := filepath.Join(prefix, d)
		if err := walkTree(ctx, c, filepath.Join(dir, d), sub, children[d], o, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func readLimited(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTreeFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxTreeFile {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, p, maxTreeFile)
	}
	return b, nil
}

// stripNewline is file_tree's _check_newline: keep_newline a bool, or
// globs matched (fnmatch) against "<prefix>/<file>" where prefix is the
// directory relative to the minion's or nodegroup's tree ("." at its top).
func stripNewline(c *ExtCall, prefix, file string, keep any) bool {
	if b, ok := keep.(bool); ok {
		return !b
	}
	full := prefix + "/" + file
	if l, ok := keep.([]any); ok {
		for _, p := range l {
			if c.r.c.matcher.Fnmatch(full, pyfmt.Str(p)) {
				return false
			}
		}
	}
	return true
}

// treeTemplate is compile_template_str over a file's text: the shebang
// pipeline or render_default (no default: nothing is rendered and the
// value is {}), renderers disallowed by the black/white lists skipped.
func treeTemplate(ctx context.Context, c *ExtCall, contents []byte, o treeOpts) (any, error) {
	if !utf8.Valid(contents) {
		return nil, errors.New("'utf-8' codec can't decode the file contents: invalid start byte")
	}
	text := string(contents)
	if strings.TrimSpace(text) == "" {
		return payload.NewMap(), nil
	}
	pipeline := ""
	first, _, _ := strings.Cut(text, "\n")
	if strings.HasPrefix(first, "#!") && !strings.HasPrefix(first, "#!/") {
		pipeline = strings.TrimSpace(first)[2:]
	} else if o.hasRender {
		pipeline = o.render
	} else {
		return payload.NewMap(), nil
	}
	var keep []string
	for _, part := range strings.Split(pipeline, "|") {
		name, _, _ := strings.Cut(strings.TrimSpace(part)+" ", " ")
		if (len(o.white) > 0 && !contains(o.white, name)) || (len(o.black) > 0 && contains(o.black, name)) {
			c.Log.Warn(fmt.Sprintf("The renderer \"%s\" is disallowed by configuration and will be skipped.", name))
			continue
		}
		if _, ok := c.r.c.rend.Lookup(name); !ok {
			c.Log.Error(fmt.Sprintf("The renderer \"%s\" is not available", pipeline))
			return payload.NewMap(), nil
		}
		keep = append(keep, strings.TrimSpace(part))
	}
	if len(keep) == 0 {
		return payload.NewMap(), nil
	}
	src := []byte(text)
	if _, rest := render.SplitShebang(src); strings.HasPrefix(first, "#!") {
		src = rest
	}
	rc := &render.Context{Grains: c.r.grains, Pillar: payload.NewMap(), Opts: c.r.opts, Saltenv: "base",
		Salt: c.r.caller, Files: c.r.files, Log: c.Log}
	out, err := c.r.c.rend.Render(ctx, src, strings.Join(keep, "|"), rc)
	if err != nil {
		return nil, err
	}
	if s, ok := out.(string); ok && strings.Contains(text, "\r\n") && !strings.Contains(s, "\r\n") {
		out = strings.ReplaceAll(s, "\n", "\r\n")
	}
	return out, nil
}

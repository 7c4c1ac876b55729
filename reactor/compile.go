package reactor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/gsalt/gsalt/fileserver"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// Files finds reactor files on the master's file server: Resolve maps a
// salt:// URL (with an optional ?saltenv= query) to a local path, and
// CacheFile serves Jinja imports of reactor templates.
type Files interface {
	// Resolve returns the local path of url, or "" when the file server
	// has no such file.
	Resolve(url string) string
	render.FileSource
}

// RootsFiles serves reactor files from a fileserver.Roots (the master's
// file_roots), in the base saltenv unless the URL says otherwise.
type RootsFiles struct {
	Roots *fileserver.Roots
}

// Resolve implements Files.
func (f RootsFiles) Resolve(url string) string {
	p, _ := f.CacheFile(context.Background(), url, "base")
	return p
}

// CacheFile implements render.FileSource: the file's path in its root.
func (f RootsFiles) CacheFile(_ context.Context, src, saltenv string) (string, error) {
	if f.Roots == nil {
		return "", fmt.Errorf("%w: no file server", render.ErrNotFound)
	}
	rel, ok := strings.CutPrefix(src, "salt://")
	if !ok {
		return "", fmt.Errorf("%w: %s is not a salt:// URL", render.ErrNotFound, src)
	}
	if saltenv == "" {
		saltenv = "base"
	}
	found, ok := f.Roots.Find(rel, saltenv)
	if !ok {
		return "", fmt.Errorf("%w: %s", render.ErrNotFound, src)
	}
	return found.Path, nil
}

// Compiler renders reactor SLS files and compiles them into low chunks,
// as salt.utils.reactor.Reactor.reactions does. It is safe for concurrent
// use once built.
type Compiler struct {
	// Renderer renders the files; nil means render.Default().
	Renderer *render.Registry
	// Pipeline is the master's renderer option ("" means jinja|yaml); a
	// file's #! line overrides it.
	Pipeline string
	// Opts is what templates see as opts (the master's options).
	Opts *payload.Map
	// Grains returns what templates see as grains: Salt's reactor renders
	// with the master host's grains. Called once, on the first render;
	// nil means no grains.
	Grains func() *payload.Map
	// Salt runs salt['mod.fun'](...) in templates (execution modules on
	// the master); nil makes such calls a template error.
	Salt render.Caller
	// Files resolves salt:// reactor files and imports; nil means salt://
	// files are never found.
	Files Files
	// Log receives template log calls; nil means slog.Default().
	Log *slog.Logger

	grainsOnce sync.Once
	grains     *payload.Map
	regOnce    sync.Once
	reg        *render.Registry
	srcs       srcCache
}

// srcCache keeps the text of reactor files between events, keyed by path
// and checked against the file's size, times and inode on every use, so
// an edited file is read again at once (Salt reads the file for every
// event). It holds at most maxCachedSources files.
type srcCache struct {
	mu sync.Mutex
	m  map[string]cachedSrc
}

type cachedSrc struct {
	sig srcSig
	src []byte
}

// srcSig identifies a version of a file.
type srcSig struct {
	size, mtime, ctime int64
	ino, dev           uint64
}

// maxCachedSources bounds the reactor file cache.
const maxCachedSources = 1024

func statSrc(path string) (srcSig, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return srcSig{}, false
	}
	sig := srcSig{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		sig.ctime, sig.ino, sig.dev = st.Ctim.Nano(), uint64(st.Ino), uint64(st.Dev)
	}
	return sig, true
}

// read returns the file's text, from the cache while the file is
// unchanged. The returned bytes must not be modified.
func (c *srcCache) read(path string, limit int64) ([]byte, error) {
	sig, ok := statSrc(path)
	if !ok {
		return readBounded(path, limit)
	}
	c.mu.Lock()
	e, hit := c.m[path]
	c.mu.Unlock()
	if hit && e.sig == sig {
		return e.src, nil
	}
	b, err := readBounded(path, limit)
	if err != nil {
		return nil, err
	}
	// Cache only what did not change while it was read.
	if after, ok := statSrc(path); ok && after == sig {
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxCachedSources {
			c.m = map[string]cachedSrc{}
		}
		c.m[path] = cachedSrc{sig: sig, src: b}
		c.mu.Unlock()
	}
	return b, nil
}

func (c *Compiler) registry() *render.Registry {
	c.regOnce.Do(func() {
		c.reg = c.Renderer
		if c.reg == nil {
			c.reg = render.Default()
		}
	})
	return c.reg
}

func (c *Compiler) masterGrains() *payload.Map {
	c.grainsOnce.Do(func() {
		if c.Grains != nil {
			c.grains = c.Grains()
		}
		if c.grains == nil {
			c.grains = &payload.Map{}
		}
	})
	return c.grains
}

// Reactions renders the reactor files for an event and compiles them into
// ordered low chunks: each file's IDs are merged (a later file's ID
// replaces an earlier one), the result is checked like Salt's
// verify_high (any error drops every reaction of the event), compiled,
// ordered, and legacy types are renamed ("cmd" → "local"). problems lists
// what Salt logs as errors: missing files, files that fail to render or
// have the wrong shape, verification errors.
func (c *Compiler) Reactions(ctx context.Context, tag string, data *payload.Map, reactors []string) (chunks []*payload.Map, problems []error) {
	high := payload.NewMap()
	for _, ref := range reactors {
		react, errs := c.RenderReaction(ctx, ref, tag, data)
		problems = append(problems, errs...)
		for _, it := range react.Items() {
			high.SetKey(it.Key, it.Value)
		}
	}
	if high.Len() == 0 {
		return nil, problems
	}
	if errs := states.ReactorCompiler.VerifyHigh(high); len(errs) > 0 {
		problems = append(problems, fmt.Errorf("%w: unable to render reactions for event %s due to errors (%s) in one or more of the sls files (%s)",
			ErrInvalid, tag, strings.Join(errs, "; "), strings.Join(reactors, ", ")))
		return nil, problems
	}
	// Salt orders the compiled chunks a second time.
	chunks = states.OrderChunks(states.ReactorCompiler.CompileHigh(high))
	resolveAliases(chunks)
	return chunks, problems
}

// RenderReaction renders one reactor reference (a local path, which may
// be a glob, or a salt:// URL) like Reactor.render_reaction: every file
// it names is rendered with tag and data, its IDs get __sls__ (the
// file's path), and later files replace earlier IDs. Files are taken in
// sorted order (Python's glob order is the directory's).
func (c *Compiler) RenderReaction(ctx context.Context, ref, tag string, data *payload.Map) (*payload.Map, []error) {
	react := payload.NewMap()
	pattern := ref
	if strings.HasPrefix(ref, "salt://") {
		pattern = ""
		if c.Files != nil {
			pattern = c.Files.Resolve(ref)
		}
	}
	var matches []string
	if pattern != "" {
		matches, _ = filepath.Glob(pattern)
	}
	if len(matches) == 0 {
		return react, []error{fmt.Errorf("%w: can not render SLS %s for tag %s: file missing or not found", ErrNotFound, pattern, tag)}
	}
	var errs []error
	for _, fn := range matches {
		res, err := c.renderFile(ctx, fn, tag, data)
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to render %q: %w", fn, err))
			continue
		}
		for _, it := range res.Items() {
			react.SetKey(it.Key, it.Value)
		}
	}
	return react, errs
}

// renderFile renders one file into padded high data with __sls__ set.
func (c *Compiler) renderFile(ctx context.Context, path, tag string, data *payload.Map) (*payload.Map, error) {
	src, err := c.srcs.read(path, render.MaxTemplateSize)
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = &payload.Map{}
	}
	rc := &render.Context{
		Grains:  c.masterGrains(),
		Pillar:  &payload.Map{},
		Opts:    c.Opts,
		Saltenv: "base",
		Path:    path,
		Vars:    payload.NewMap("tag", tag, "data", data),
		Salt:    c.Salt,
		Log:     c.Log,
	}
	if c.Files != nil {
		rc.Files = c.Files
	}
	out, err := c.registry().Render(ctx, src, c.Pipeline, rc)
	if err != nil {
		return nil, err
	}
	if empty(out) {
		return payload.NewMap(), nil
	}
	high, ok := out.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("%w: the file renders to a %s, not a dict", errTemplateShape, pyTypeName(out))
	}
	if err := padFuncs(high); err != nil {
		return nil, err
	}
	for _, it := range high.Items() {
		body, ok := it.Value.(*payload.Map)
		if !ok {
			return nil, fmt.Errorf("%w: %s is a %s, not a dict", errTemplateShape, payload.KeyString(it.Key), pyTypeName(it.Value))
		}
		body.Set("__sls__", path)
	}
	return high, nil
}

// empty is Python's "not x" for rendered data (Salt's yaml renderer
// turns every false value into an empty dict).
func empty(v any) bool { return !payload.Truthy(v) }

// readBounded reads a file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrRender, path, limit)
	}
	return b, nil
}

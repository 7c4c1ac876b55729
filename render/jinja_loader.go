package render

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/nikolalohinski/gonja/v2/loaders"
)

// saltLoader is the gonja loader of one render: names resolve the way
// Salt's SaltCacheLoader resolves them (from the root of the fileserver
// environment, or relative to tpldir for "./" and "../" names) and files
// come from Context.Files.
type saltLoader struct {
	st      *renderState
	pending *pendingSource
}

// pendingSource is the text of the template being parsed right now.
type pendingSource struct {
	id, text string
}

var _ loaders.Loader = (*saltLoader)(nil)

// Read returns the text of a template.
func (l *saltLoader) Read(name string) (io.Reader, error) {
	if l.pending != nil && name == l.pending.id {
		return strings.NewReader(l.pending.text), nil
	}
	_, text, err := l.st.load(name)
	if err != nil {
		return nil, err
	}
	return strings.NewReader(text), nil
}

// Resolve returns the root-relative path of a template name.
func (l *saltLoader) Resolve(name string) (string, error) {
	if l.pending != nil && name == l.pending.id {
		return name, nil
	}
	p, _, err := l.st.resolve(name)
	return p, err
}

// Inherit returns the loader itself: Salt resolves names from the root
// (or from tpldir), not from the importing file's directory.
func (l *saltLoader) Inherit(string) (loaders.Loader, error) { return l, nil }

// resolve maps a template name to its path under the fileserver root.
func (st *renderState) resolve(name string) (p string, relative bool, err error) {
	name = strings.ReplaceAll(name, "\\", "/")
	if rest, ok := strings.CutPrefix(name, "salt://"); ok {
		name, _, _ = strings.Cut(rest, "?")
	}
	first, _, _ := strings.Cut(name, "/")
	if first == "." || first == ".." {
		base := st.tpldir
		if base == "" {
			return "", true, st.notFound(name, "relative path cannot be resolved without tpldir")
		}
		p, ok := joinSaltPath(base, name)
		if !ok {
			return "", true, st.notFound(name, "path ascends outside of salt://")
		}
		return p, true, nil
	}
	return strings.TrimLeft(name, "/"), false, nil
}

func (st *renderState) notFound(name, why string) error {
	err := fmt.Errorf("%w: %w: template %q not found: %s", ErrTemplate, ErrNotFound, name, why)
	if st.firstErr == nil {
		st.firstErr = err
	}
	return err
}

// load resolves and fetches a template, updating Salt's tpl* globals like
// SaltCacheLoader.get_source does.
func (st *renderState) load(name string) (string, string, error) {
	p, relative, err := st.resolve(name)
	if err != nil {
		return "", "", err
	}
	text, err := st.fetch(p, name)
	if err != nil {
		return "", "", err
	}
	tpldir := path.Dir(p)
	tplfile := p
	if relative {
		tpldir = st.tpldir
		tplfile = name
	}
	if tpldir == "" || tpldir == "." {
		tpldir = "."
	}
	st.tpldir = tpldir
	dot := tpldir
	if dot == "." {
		dot = ""
	}
	st.globals.Set("tplfile", tplfile)
	st.globals.Set("tpldir", tpldir)
	st.globals.Set("tpldot", strings.ReplaceAll(dot, "/", "."))
	return p, text, nil
}

// fetch returns the contents of a root-relative path through
// Context.Files, once per render.
func (st *renderState) fetch(p, name string) (string, error) {
	if text, ok := st.files[p]; ok {
		return text, nil
	}
	st.loads++
	if st.loads > MaxLoads {
		return "", fmt.Errorf("%w: more than %d template files loaded", ErrTemplate, MaxLoads)
	}
	if st.rc.Files == nil {
		return "", st.notFound(name, "no file source for salt:// imports")
	}
	saltenv := st.rc.Saltenv
	if saltenv == "" {
		saltenv = "base"
	}
	local, err := st.rc.Files.CacheFile(st.ctx, "salt://"+p, saltenv)
	if err != nil || local == "" {
		why := "not found on the fileserver"
		if err != nil {
			why = err.Error()
		}
		return "", st.notFound(name, why)
	}
	f, err := os.Open(local)
	if err != nil {
		return "", st.notFound(name, err.Error())
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := io.Copy(&b, io.LimitReader(f, MaxTemplateSize+1)); err != nil {
		return "", fmt.Errorf("%w: reading %s: %w", ErrTemplate, name, err)
	}
	if b.Len() > MaxTemplateSize {
		return "", fmt.Errorf("%w: %s is larger than %d bytes", ErrTemplate, name, MaxTemplateSize)
	}
	text := b.String()
	st.files[p] = text
	return text, nil
}

package render

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/gsalt/gsalt/render/jinja"
)

// saltLoader is the engine's loader for one render: names resolve the way
// Salt's SaltCacheLoader resolves them (from the root of the fileserver
// environment, or relative to tpldir for "./" and "../" names) and files
// come from Context.Files.
type saltLoader struct {
	st *renderState
}

// Load resolves and fetches a template, updating Salt's tpl* globals like
// SaltCacheLoader.get_source does.
func (l *saltLoader) Load(r *jinja.Runtime, name, parent string) (string, string, error) {
	st := l.st
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
	g := st.env.Globals
	g["tplfile"] = tplfile
	g["tpldir"] = tpldir
	g["tpldot"] = strings.ReplaceAll(dot, "/", ".")
	st.sources[p] = text
	return text, p, nil
}

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
	return fmt.Errorf("%w: %w: %w: template %q not found: %s", ErrTemplate, ErrNotFound, jinja.ErrTemplateNotFound, name, why)
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
	st.paths[p] = local
	return text, nil
}

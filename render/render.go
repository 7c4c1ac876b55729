// Package render turns Salt template files (SLS, pillar, reactor, managed
// files) into data or text with Salt's renderer pipelines: the default
// "jinja|yaml", a "#!" shebang choosing another pipeline ("#!yaml",
// "#!json", "#!jinja|yaml", ...), and "#!py" refused. Renderers form a
// registry: one file per renderer.
package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/gsalt/gsalt/wire/payload"
)

// Sentinel errors callers branch on.
var (
	// ErrRenderer: the pipeline names a renderer that does not exist or
	// that gsalt refuses (py, pyobjects, mako, ...).
	ErrRenderer = errors.New("render: renderer not available")
	// ErrTemplate: a template failed to parse or execute (Jinja syntax
	// error, undefined function, a raised error).
	ErrTemplate = errors.New("render: template error")
	// ErrData: the data renderer rejected its input (invalid YAML or
	// JSON, duplicate keys).
	ErrData = errors.New("render: invalid data")
	// ErrNotFound: an imported or included salt:// file does not exist.
	ErrNotFound = errors.New("render: file not found")
	// ErrLimit: a template went past one of gsalt's resource bounds (a
	// string, list, network or output too large: what Python reports as
	// MemoryError); it also wraps ErrTemplate.
	ErrLimit = errors.New("render: resource limit")
)

// ErrorText is err's text without the sentinel prefixes of this package:
// the message Salt's SaltRenderError carries.
func ErrorText(err error) string {
	s := err.Error()
	for _, sent := range []error{ErrTemplate, ErrData, ErrRenderer, ErrNotFound} {
		s = strings.ReplaceAll(s, sent.Error()+": ", "")
	}
	return s
}

// DefaultPipeline is Salt's default renderer ("renderer: jinja|yaml").
const DefaultPipeline = "jinja|yaml"

// FileSource fetches salt:// files for {% import %}, {% include %},
// import_yaml and friends. CacheFile returns the local path of a cached
// copy, or "" / an error when it does not exist. The minion's file client
// (modules/builtin.SaltFileClient) satisfies it.
type FileSource interface {
	CacheFile(ctx context.Context, src, saltenv string) (localPath string, err error)
}

// Caller runs execution functions for salt['mod.fun'](...) in templates.
// args are positional, kwargs keyword arguments (may be nil).
type Caller interface {
	CallFunction(ctx context.Context, fun string, args []any, kwargs *payload.Map) (any, error)
}

// FunctionChecker is a Caller that can tell whether an execution
// function exists: salt['no.such'] is then Jinja's undefined value, as
// Salt's loader makes it, instead of a callable failing when called.
type FunctionChecker interface {
	HasFunction(fun string) bool
}

// FunctionExplainer is a Caller that can say why a function is missing
// (a function of a custom Python module, which gsalt does not load):
// salt['mod.fun'] is then undefined with that message.
type FunctionExplainer interface {
	ExplainMissing(fun string) string
}

// RendererExplainer is a Caller that can say why a renderer is missing
// (a custom Python renderer synced to the minion, which gsalt does not
// load): the render error then carries that message.
type RendererExplainer interface {
	ExplainMissingRenderer(name string) string
}

// Context is what a template sees, Salt's renderer context.
type Context struct {
	// Grains, Pillar and Opts are exposed as grains, pillar and opts
	// (nil means an empty dict).
	Grains, Pillar, Opts *payload.Map
	// Saltenv is the environment of the file (saltenv; "base" if empty).
	Saltenv string
	// SLS is the dotted SLS name ("apache.config") or "" outside SLS.
	SLS string
	// Source is the salt:// URL of the file being rendered
	// ("salt://apache/config.sls"), used for tpldir, slspath, tplfile and
	// relative imports; "" for inline text.
	Source string
	// Path is the local path of the file being rendered (Salt's tplpath,
	// the cached copy's path there); "" uses Source without "salt://".
	Path string
	// Vars are extra variables (file.managed context/defaults, reactor
	// tag/data); they win over the standard names.
	Vars *payload.Map
	// Salt runs salt['mod.fun'](...); nil makes such calls a template error.
	Salt Caller
	// Files fetches salt:// imports; nil makes imports a template error.
	Files FileSource
	// Log receives template log calls; nil means slog.Default().
	Log *slog.Logger
	// Aggregates, when set, receives the maps and lists the yamlex
	// renderer made aggregates (for Salt's "aggregate" merge strategy).
	Aggregates *AggregateMarks
}

// Renderer is one renderer of a pipeline. Input is the previous stage's
// output: the file text (string) for the first stage. Text renderers
// (jinja) return a string, data renderers (yaml, json) return payload data
// (*payload.Map, []any, string, int64, float64, bool, nil).
type Renderer interface {
	Render(ctx context.Context, input any, rc *Context) (any, error)
}

// RendererFunc adapts a function to Renderer.
type RendererFunc func(ctx context.Context, input any, rc *Context) (any, error)

// Render calls f.
func (f RendererFunc) Render(ctx context.Context, input any, rc *Context) (any, error) {
	return f(ctx, input, rc)
}

// Registry holds renderers by name. It is safe for concurrent use.
type Registry struct {
	mu sync.RWMutex
	r  map[string]Renderer
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{r: map[string]Renderer{}} }

// Default returns a registry with gsalt's renderers: jinja, yaml (remembering
// the trees of recent documents, see memoYAML), json, yamlex, toml,
// and refusals for the Python-based ones.
func Default() *Registry {
	r := NewRegistry()
	r.Register("jinja", Jinja{})
	r.Register("yaml", newMemoYAML())
	r.Register("json", JSON{})
	r.Register("yamlex", YAMLEx{})
	r.Register("toml", TOML{})
	for _, name := range refused {
		r.Register(name, refusal(name))
	}
	return r
}

// Register adds or replaces a renderer.
func (r *Registry) Register(name string, rd Renderer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.r[name] = rd
}

// Lookup returns a renderer by name.
func (r *Registry) Lookup(name string) (Renderer, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	rd, ok := r.r[name]
	return rd, ok
}

// SplitShebang returns the pipeline named by a leading "#!" line of src
// ("" when there is none) and the rest of src. Like Salt, the shebang line
// is removed before rendering.
func SplitShebang(src []byte) (pipeline string, rest []byte) {
	if !bytes.HasPrefix(src, []byte("#!")) {
		return "", src
	}
	line, rest, _ := bytes.Cut(src, []byte("\n"))
	return strings.TrimSpace(string(line[2:])), rest
}

// parsePipeline splits "jinja|yaml" (also "jinja | yaml", and Salt's
// "jinja yaml" form) into renderer names.
func parsePipeline(p string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '|' || r == ' ' || r == '\t' }) {
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}

// Render renders src through its shebang pipeline or, without one,
// through pipeline ("" means DefaultPipeline), returning the last stage's
// output (data for yaml/json-terminated pipelines).
func (r *Registry) Render(ctx context.Context, src []byte, pipeline string, rc *Context) (any, error) {
	if rc == nil {
		rc = &Context{}
	}
	shebang, rest := SplitShebang(src)
	if shebang != "" {
		pipeline = shebang
		src = rest
	}
	if pipeline == "" {
		pipeline = DefaultPipeline
	}
	names := parsePipeline(pipeline)
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: empty renderer pipeline %q", ErrRenderer, pipeline)
	}
	ctx = EnsureAggregateMarks(ctx, rc)
	var data any = string(src)
	for _, name := range names {
		if isRefused(name) || !r.has(name) {
			msg := unsupportedRenderer(name, pipeline)
			if re, ok := rc.Salt.(RendererExplainer); ok && !isRefused(name) {
				if why := re.ExplainMissingRenderer(name); why != "" {
					msg += ": " + why
				}
			}
			return nil, fmt.Errorf("%w: %s: %s", ErrRenderer, pipelineOrigin(rc, shebang != ""), msg)
		}
		rd, ok := r.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("%w: %q (pipeline %q)", ErrRenderer, name, pipeline)
		}
		out, err := rd.Render(ctx, data, rc)
		if err != nil {
			return nil, err
		}
		data = out
	}
	return data, nil
}

// Text renders src with the text engine named by template ("jinja"),
// as file.managed's template= and cmd.run's template= do.
func (r *Registry) Text(ctx context.Context, template string, src []byte, rc *Context) (string, error) {
	rd, ok := r.Lookup(template)
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrRenderer, template)
	}
	out, err := rd.Render(EnsureAggregateMarks(ctx, rc), string(src), rc)
	if err != nil {
		return "", err
	}
	s, ok := out.(string)
	if !ok {
		return "", fmt.Errorf("%w: %q is not a text renderer", ErrRenderer, template)
	}
	return s, nil
}

// inputText returns a stage's input as text.
func inputText(name string, input any) (string, error) {
	switch v := input.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	default:
		return "", fmt.Errorf("%w: the %s renderer needs text, got %s", ErrRenderer, name, payload.TypeName(input))
	}
}

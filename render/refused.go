package render

import (
	"context"
	"fmt"
)

// refused are Salt renderers that run Python or other engines gsalt does
// not embed; a pipeline naming them fails with ErrRenderer.
var refused = []string{"py", "pyobjects", "pydsl", "mako", "genshi", "cheetah", "wempy", "stateconf", "gpg", "nacl", "aws_kms", "hjson", "dson", "yaml_jinja", "json5", "msgpack"}

// refusal is the renderer registered for a refused name.
func refusal(name string) Renderer {
	return RendererFunc(func(context.Context, any, *Context) (any, error) {
		return nil, fmt.Errorf("%w: the %q renderer is not supported by gsalt (Python renderers cannot run here)", ErrRenderer, name)
	})
}

func isRefused(name string) bool {
	for _, n := range refused {
		if n == name {
			return true
		}
	}
	return false
}

func (r *Registry) has(name string) bool {
	_, ok := r.Lookup(name)
	return ok
}

// pipelineOrigin names where a pipeline came from: the file's shebang
// (line 1) or the configured renderer option.
func pipelineOrigin(rc *Context, shebang bool) string {
	file := rc.Source
	if file == "" {
		file = rc.Path
	}
	if file == "" {
		file = "<template>"
	}
	if shebang {
		return file + ", line 1"
	}
	return file + " (the renderer option)"
}

// unsupportedRenderer says what gsalt cannot render.
func unsupportedRenderer(name, pipeline string) string {
	if isRefused(name) {
		return fmt.Sprintf("the %q renderer (pipeline %q) is not supported by gsalt (Python renderers cannot run here)", name, pipeline)
	}
	return fmt.Sprintf("unknown renderer %q (pipeline %q)", name, pipeline)
}

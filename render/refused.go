package render

import (
	"context"
	"fmt"
)

// refused are Salt renderers that run Python or other engines gsalt does
// not embed; a pipeline naming them fails with ErrRenderer.
var refused = []string{"py", "pyobjects", "pydsl", "mako", "genshi", "cheetah", "wempy", "stateconf", "gpg", "nacl", "aws_kms", "hjson", "toml", "dson", "yamlex", "yaml_jinja", "json5", "msgpack"}

// refusal is the renderer registered for a refused name.
func refusal(name string) Renderer {
	return RendererFunc(func(context.Context, any, *Context) (any, error) {
		return nil, fmt.Errorf("%w: the %q renderer is not supported by gsalt (Python renderers cannot run here)", ErrRenderer, name)
	})
}

package render

import (
	"context"
	"fmt"
	"strings"

	"github.com/nikolalohinski/gonja/v2"
	"github.com/nikolalohinski/gonja/v2/exec"

	"github.com/gsalt/gsalt/wire/payload"
)

// Jinja is Salt's jinja renderer on github.com/nikolalohinski/gonja/v2.
// Skeleton: plain templates with grains, pillar, opts, saltenv, sls.
type Jinja struct{}

// Render executes input as a Jinja template.
func (Jinja) Render(_ context.Context, input any, rc *Context) (any, error) {
	text, err := inputText("jinja", input)
	if err != nil {
		return nil, err
	}
	tpl, err := gonja.FromString(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTemplate, err)
	}
	vars := map[string]any{
		"grains":  goValue(rc.Grains),
		"pillar":  goValue(rc.Pillar),
		"opts":    goValue(rc.Opts),
		"saltenv": rc.Saltenv,
		"sls":     rc.SLS,
	}
	if rc.Vars != nil {
		rc.Vars.Range(func(k, v any) bool {
			vars[payload.KeyString(k)] = goValue(v)
			return true
		})
	}
	out, err := tpl.ExecuteToString(exec.NewContext(vars))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTemplate, err)
	}
	if strings.HasSuffix(text, "\n") && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out, nil
}

// goValue converts payload data to plain Go maps for gonja.
func goValue(v any) any {
	switch t := v.(type) {
	case *payload.Map:
		if t == nil {
			return map[string]any{}
		}
		m := make(map[string]any, t.Len())
		t.Range(func(k, v any) bool {
			m[payload.KeyString(k)] = goValue(v)
			return true
		})
		return m
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = goValue(e)
		}
		return out
	default:
		return v
	}
}

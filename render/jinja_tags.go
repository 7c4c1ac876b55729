package render

import (
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/render/jinja"
)

// importData is the parsed {% import_yaml EXPR as NAME [with context] %}.
type importData struct {
	kind        string
	template    jinja.Expr
	target      string
	withContext bool
}

// loadData is the parsed {% load_yaml as NAME %}...{% endload %}.
type loadBlock struct {
	kind   string
	target string
}

// installTags registers Salt's SerializerExtension tags: import_yaml,
// import_json, import_text, load_yaml, load_json, load_text, and the
// profile block.
func (st *renderState) installTags() {
	for _, kind := range []string{"yaml", "json", "text"} {
		kind := kind
		st.env.AddTag("import_"+kind, func(p *jinja.Parser, line int) (jinja.Node, error) {
			x, err := p.ParseExpression()
			if err != nil {
				return nil, err
			}
			if err := p.ExpectKeyword("as"); err != nil {
				return nil, err
			}
			name, err := p.ExpectName()
			if err != nil {
				return nil, err
			}
			return jinja.NewExtNode(line, "import_"+kind, &importData{kind, x, name, p.ParseWithContext(false)}, nil), nil
		}, func(r *jinja.Runtime, ctx any, body []jinja.Node) error {
			d := jinja.ExtData(ctx).(*importData)
			name, err := r.ExtEval(ctx, d.template)
			if err != nil {
				return err
			}
			m, err := r.ExtImport(ctx, name, d.withContext, 0)
			if err != nil {
				return err
			}
			v, err := loadDataText(d.kind, m.String())
			if err != nil {
				return err
			}
			r.ExtSet(ctx, d.target, v)
			return nil
		})
		st.env.AddTag("load_"+kind, func(p *jinja.Parser, line int) (jinja.Node, error) {
			if err := p.ExpectKeyword("as"); err != nil {
				return nil, err
			}
			name, err := p.ExpectName()
			if err != nil {
				return nil, err
			}
			if err := p.ExpectBlockEnd(); err != nil {
				return nil, err
			}
			body, _, err := p.ParseBody([]string{"endload"}, true)
			if err != nil {
				return nil, err
			}
			return jinja.NewExtNode(line, "load_"+kind, &loadBlock{kind, name}, body), nil
		}, func(r *jinja.Runtime, ctx any, body []jinja.Node) error {
			d := jinja.ExtData(ctx).(*loadBlock)
			text, err := r.ExtCapture(ctx, body)
			if err != nil {
				return err
			}
			v, err := loadDataText(d.kind, text)
			if err != nil {
				return err
			}
			r.ExtSet(ctx, d.target, v)
			return nil
		})
	}
	st.env.AddTag("profile", func(p *jinja.Parser, line int) (jinja.Node, error) {
		if err := p.ExpectKeyword("as"); err != nil {
			return nil, err
		}
		label, err := p.ParseExpression()
		if err != nil {
			return nil, err
		}
		if err := p.ExpectBlockEnd(); err != nil {
			return nil, err
		}
		body, _, err := p.ParseBody([]string{"endprofile"}, true)
		if err != nil {
			return nil, err
		}
		return jinja.NewExtNode(line, "profile", label, body), nil
	}, func(r *jinja.Runtime, ctx any, body []jinja.Node) error {
		label, err := r.ExtEval(ctx, jinja.ExtData(ctx).(jinja.Expr))
		if err != nil {
			return err
		}
		st.log.Debug("jinja profile block", "label", pyStr(label))
		text, err := r.ExtCapture(ctx, body)
		if err != nil {
			return err
		}
		return r.ExtWrite(text)
	})
}

// loadDataText decodes rendered text as Salt's load_yaml/load_json/load_text.
func loadDataText(kind, text string) (any, error) {
	switch kind {
	case "yaml":
		v, err := decodeYAMLText(text)
		if err != nil {
			return nil, loadYAMLError(text, err)
		}
		return jinja.Import(v), nil
	case "json":
		v, err := DecodeJSON([]byte(text))
		if err != nil || strings.TrimSpace(text) == "" {
			return nil, &jinja.Error{Kind: "TemplateRuntimeError", Msg: fmt.Sprintf("Unable to load json from %s", text)}
		}
		return jinja.Import(v), nil
	}
	return text, nil
}

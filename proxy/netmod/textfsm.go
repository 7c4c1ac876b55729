package netmod

import (
	"context"
	"encoding/csv"
	"fmt"
	"regexp"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/sirikothe/gotextfsm"
)

// TextFSM parsing of net.cli outputs (Salt's textfsm.extract and
// textfsm.index, run by napalm_network.cli with textfsm_parse=True),
// through gotextfsm: a template named by textfsm_template or
// textfsm_template_dict (salt:// or a local path), or the index file of
// a textfsm_path directory matched by command and platform grain.

var textfsmValueRe = regexp.MustCompile(`^Value\s+(?:[A-Za-z,]+\s+)?(\S+)\s+\(`)

// textfsmExtract is textfsm.extract: {result, comment, out} with out the
// rows as dicts keyed by the lower-cased value names, in template order.
func textfsmExtract(ctx context.Context, c *modules.Call, templatePath, raw, saltenv string) *payload.Map {
	ret := payload.NewMap("result", false, "comment", "", "out", nil)
	tpl, ok := readSource(ctx, c, templatePath, saltenv)
	if !ok {
		ret.Set("comment", fmt.Sprintf("Unable to read the TextFSM template from %s", templatePath))
		return ret
	}
	rows, err := textfsmParse(tpl, raw)
	if err != nil {
		ret.Set("comment", fmt.Sprintf("Unable to parse the TextFSM template from %s: %v. Please check the logs.", templatePath, err))
		return ret
	}
	if raw == "" {
		ret.Set("comment", "Please specify a valid input file or text.")
		return ret
	}
	ret.Set("out", rows)
	ret.Set("result", true)
	return ret
}

// textfsmParse runs template over raw.
func textfsmParse(template, raw string) ([]any, error) {
	fsm := gotextfsm.TextFSM{}
	if err := fsm.ParseString(template); err != nil {
		return nil, err
	}
	var header []string
	for l := range strings.SplitSeq(template, "\n") {
		if m := textfsmValueRe.FindStringSubmatch(strings.TrimRight(l, "\r")); m != nil {
			header = append(header, m[1])
		}
	}
	p := gotextfsm.ParserOutput{}
	if err := p.ParseTextString(raw, fsm, true); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(p.Dict))
	for _, rec := range p.Dict {
		m := &payload.Map{}
		for _, h := range header {
			switch v := rec[h].(type) {
			case []string:
				l := make([]any, len(v))
				for i, s := range v {
					l[i] = s
				}
				m.Set(strings.ToLower(h), l)
			case nil:
				m.Set(strings.ToLower(h), "")
			default:
				m.Set(strings.ToLower(h), fmt.Sprint(v))
			}
		}
		out = append(out, m)
	}
	return out, nil
}

var clitableOptRe = regexp.MustCompile(`\[\[(.+?)\]\]`)

// clitableCompletion is TextFSM's clitable completion: "sh[[ow]]" matches
// "sh", "sho" and "show".
func clitableCompletion(s string) string {
	return clitableOptRe.ReplaceAllStringFunc(s, func(m string) string {
		inner := clitableOptRe.FindStringSubmatch(m)[1]
		var b strings.Builder
		for _, r := range inner {
			b.WriteString("(" + regexp.QuoteMeta(string(r)))
		}
		return b.String() + strings.Repeat(")?", len([]rune(inner)))
	})
}

// textfsmIndex is textfsm.index: the template of the index file under
// path whose Command matches command and whose platform column matches
// platform.
func textfsmIndex(ctx context.Context, c *modules.Call, command, platform, platformColumn, output, path, indexFile, saltenv string) *payload.Map {
	ret := payload.NewMap("result", false, "comment", "", "out", nil)
	dir := strings.TrimSuffix(path, "/") + "/"
	idx, ok := readSource(ctx, c, dir+indexFile, saltenv)
	if !ok {
		ret.Set("comment", fmt.Sprintf("Unable to read the TextFSM index file from %s", dir+indexFile))
		return ret
	}
	var lines []string
	for l := range strings.SplitSeq(idx, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			lines = append(lines, l)
		}
	}
	r := csv.NewReader(strings.NewReader(strings.Join(lines, "\n")))
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil || len(recs) == 0 {
		ret.Set("comment", fmt.Sprintf("Unable to parse the TextFSM index file %s: %v", dir+indexFile, err))
		return ret
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[strings.TrimSpace(h)] = i
	}
	ti, tok := col["Template"]
	ci, cok := col["Command"]
	if !tok || !cok {
		ret.Set("comment", "The TextFSM index file has no Template or Command column")
		return ret
	}
	pi, pok := col[platformColumn]
	for _, rec := range recs[1:] {
		field := func(i int) string {
			if i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		cre, err := regexp.Compile("^(?:" + clitableCompletion(field(ci)) + ")$")
		if err != nil || !cre.MatchString(command) {
			continue
		}
		if pok {
			pre, err := regexp.Compile("^(?:" + field(pi) + ")$")
			if err != nil || !pre.MatchString(platform) {
				continue
			}
		}
		var rows []any
		for t := range strings.SplitSeq(field(ti), ":") {
			sub := textfsmExtract(ctx, c, dir+strings.TrimSpace(t), output, saltenv)
			if !sub.Bool("result") {
				return sub
			}
			l, _ := sub.Get("out")
			rows, _ = l.([]any)
		}
		ret.Set("out", rows)
		ret.Set("result", true)
		return ret
	}
	ret.Set("comment", fmt.Sprintf("No template found for %q on platform %q", command, platform))
	return ret
}

// textfsmOption is Salt's kwargs, then opts, then pillar lookup.
func textfsmOption(c *modules.Call, kwarg, opt string, def any) any {
	if v, _ := c.Args.Kwargs.Get(kwarg); v != nil && payload.Truthy(v) {
		return v
	}
	if c.Env != nil {
		if om, ok := c.Env.Opts.(*payload.Map); ok && om != nil {
			if v, ok := om.Get(opt); ok && payload.Truthy(v) {
				return v
			}
		}
		if c.Env.Pillar != nil {
			if v, ok := c.Env.Pillar.Get(opt); ok && payload.Truthy(v) {
				return v
			}
		}
	}
	return def
}

// textfsmProcess is the TextFSM part of napalm_network.cli: raw is the
// {out, result, comment} of the cli call.
func textfsmProcess(ctx context.Context, c *modules.Call, cmds []string, raw *payload.Map) *payload.Map {
	saltenv := "base"
	if s := c.Args.Kwargs.Str("saltenv"); s != "" {
		saltenv = s
	}
	tv, _ := c.Args.Kwargs.Get("textfsm_template")
	template := str(tv)
	path := str(textfsmOption(c, "textfsm_path", "textfsm_path", nil))
	tdict, _ := textfsmOption(c, "textfsm_template_dict", "napalm_cli_textfsm_template_dict", nil).(*payload.Map)
	indexFile := str(textfsmOption(c, "index_file", "textfsm_index_file", "index"))
	grain := str(textfsmOption(c, "platform_grain_name", "textfsm_platform_grain", "os"))
	column := str(textfsmOption(c, "platform_column_name", "textfsm_platform_column_name", "Platform"))
	platform := ""
	if c.Env != nil && c.Env.Grains != nil {
		var cur any = c.Env.Grains
		for k := range strings.SplitSeq(grain, ":") {
			m, _ := cur.(*payload.Map)
			if m == nil {
				cur = nil
				break
			}
			cur, _ = m.Get(k)
		}
		if cur != nil {
			platform = payload.Text(cur)
		}
	}
	comment := raw.Str("comment")
	outs := raw.Map("out")
	res := &payload.Map{}
	for _, cmd := range cmds {
		output := outs.Str(cmd)
		var processed any = output
		tpl := template
		if tdict != nil {
			if v, ok := tdict.Get(cmd); ok {
				tpl = str(v)
			}
		}
		switch {
		case path != "":
			r := textfsmIndex(ctx, c, cmd, platform, column, strings.TrimSpace(output), path, indexFile, saltenv)
			switch o, _ := r.Get("out"); {
			case !r.Bool("result"):
				comment += fmt.Sprintf("\nUnable to process the output from %s: %s.", cmd, r.Str("comment"))
			case payload.Truthy(o):
				processed = o
			default:
				comment += fmt.Sprintf("\nProcessing \"%s\" didn't fail, but didn't return anything either. Dumping raw.", cmd)
			}
		case tpl != "":
			r := textfsmExtract(ctx, c, tpl, output, saltenv)
			switch o, _ := r.Get("out"); {
			case !r.Bool("result"):
				comment += fmt.Sprintf("\nUnable to process the output from %s: %s", cmd, r.Str("comment"))
			case payload.Truthy(o):
				processed = o
			}
		default:
			comment += fmt.Sprintf("\nUnable to process the output from %s.", cmd)
		}
		res.Set(cmd, processed)
	}
	return payload.NewMap("comment", strings.TrimSpace(comment), "result", raw.Bool("result"), "out", res)
}

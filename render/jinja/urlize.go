package jinja

import (
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyre"
	"github.com/gsalt/gsalt/wire/payload"
)

// Jinja2's URL and e-mail patterns (jinja2.utils), run with Python's re
// semantics.
var (
	urlizeHTTP = mustPyre(`^(
        (https?://|www\.)(([\w%-]+\.)+)?([a-z]{2,63}|xn--[\w%]{2,59})
    |
        ([\w%-]{2,63}\.)+(com|net|int|edu|gov|org|info|mil)
    |
        (https?://)((([\d]{1,3})(\.[\d]{1,3}){3})|(\[([\da-f]{0,4}:){2}([\da-f]{0,4}:?){1,6}]))
    )(?::[\d]{1,5})?(?:[/?\#]\S*)?$`, pyre.IgnoreCase|pyre.Verbose)
	urlizeEmail  = mustPyre(`^\S+@\w[\w.-]*\.\w+$`, 0)
	urlizeLead   = mustPyre(`^([(<]|&lt;)+`, 0)
	urlizeTrail  = mustPyre(`([)>.,\n]|&gt;)+$`, 0)
	urlizeScheme = mustPyre(`^[a-zA-Z][a-zA-Z0-9+.-]*:(//)?$`, 0)
)

func mustPyre(p string, f pyre.Flags) *pyre.Regexp {
	re, err := pyre.Compile(p, f)
	if err != nil {
		panic(err)
	}
	return re
}

// filterUrlize is Jinja2's urlize(value, trim_url_limit=None,
// nofollow=False, target=None, rel=None, extra_schemes=None) with the
// default policies (rel "noopener").
func filterUrlize(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := Bind("do_urlize", args, kw, []string{"trim_url_limit", "nofollow", "target", "rel", "extra_schemes"}, nil, false, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	text, err := Str(v)
	if err != nil {
		return nil, err
	}
	relParts := map[string]bool{"noopener": true}
	if s, ok := a[3].(string); ok {
		for _, p := range strings.Fields(s) {
			relParts[p] = true
		}
	}
	if truthy(a[1]) {
		relParts["nofollow"] = true
	}
	var rels []string
	for p := range relParts {
		rels = append(rels, p)
	}
	sort.Strings(rels)
	relAttr := ` rel="` + htmlEscape(strings.Join(rels, " ")) + `"`
	targetAttr := ""
	if t, ok := a[2].(string); ok && t != "" {
		targetAttr = ` target="` + htmlEscape(t) + `"`
	}
	var schemes []string
	if a[4] != nil {
		items, err := Iterate(a[4])
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			s, _ := it.(string)
			if m, _ := urlizeScheme.Search(s); m == nil {
				return nil, &Error{Kind: "FilterArgumentError", Msg: pyStrRepr(s) + " is not a valid URI scheme prefix."}
			}
			schemes = append(schemes, s)
		}
	}
	limit := -1
	if n, ok := asInt(a[0]); ok && a[0] != nil {
		limit = int(n)
	}
	trim := func(x string) string {
		if limit >= 0 && len([]rune(x)) > limit {
			return string([]rune(x)[:limit]) + "..."
		}
		return x
	}
	words := pySplitKeep(htmlEscape(text))
	for i, word := range words {
		head, middle, tail := "", word, ""
		if m, _ := urlizeLead.MatchStart(middle); m != nil {
			g, _ := m.Group(0)
			head, middle = g, middle[len(g):]
		}
		for _, suf := range []string{")", ">", ".", ",", "\n", "&gt;"} {
			if strings.HasSuffix(middle, suf) {
				if m, _ := urlizeTrail.Search(middle); m != nil {
					g, _ := m.Group(0)
					tail, middle = g, middle[:len(middle)-len(g)]
				}
				break
			}
		}
		for _, pair := range [][2]string{{"(", ")"}, {"<", ">"}, {"&lt;", "&gt;"}} {
			startCount := strings.Count(middle, pair[0])
			if startCount <= strings.Count(middle, pair[1]) {
				continue
			}
			for k := 0; k < min(startCount, strings.Count(tail, pair[1])); k++ {
				end := strings.Index(tail, pair[1]) + len(pair[1])
				middle += tail[:end]
				tail = tail[end:]
			}
		}
		switch {
		case matches(urlizeHTTP, middle):
			if strings.HasPrefix(middle, "https://") || strings.HasPrefix(middle, "http://") {
				middle = `<a href="` + middle + `"` + relAttr + targetAttr + `>` + trim(middle) + `</a>`
			} else {
				middle = `<a href="https://` + middle + `"` + relAttr + targetAttr + `>` + trim(middle) + `</a>`
			}
		case strings.HasPrefix(middle, "mailto:") && matches(urlizeEmail, middle[7:]):
			middle = `<a href="` + middle + `">` + middle[7:] + `</a>`
		case strings.Contains(middle, "@") && !strings.HasPrefix(middle, "www.") && !strings.Contains(middle, ":") && matches(urlizeEmail, middle):
			middle = `<a href="mailto:` + middle + `">` + middle + `</a>`
		default:
			for _, s := range schemes {
				if middle != s && strings.HasPrefix(middle, s) {
					middle = `<a href="` + middle + `"` + relAttr + targetAttr + `>` + middle + `</a>`
				}
			}
		}
		words[i] = head + middle + tail
	}
	return strings.Join(words, ""), nil
}

func matches(re *pyre.Regexp, s string) bool {
	m, _ := re.MatchStart(s)
	return m != nil
}

// pySplitKeep is re.split(r"(\s+)", s): words and the whitespace runs
// between them.
func pySplitKeep(s string) []string {
	var out []string
	start := 0
	inSpace := false
	for i, c := range s {
		sp := isPySpace(c)
		if i == 0 {
			inSpace = sp
			if sp {
				out = append(out, "")
			}
			continue
		}
		if sp != inSpace {
			out = append(out, s[start:i])
			start = i
			inSpace = sp
		}
	}
	out = append(out, s[start:])
	if inSpace {
		out = append(out, "")
	}
	return out
}

package nats

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors of the subject and tag mapping.
var (
	// ErrSubject is matched by errors about an invalid NATS subject.
	ErrSubject = errors.New("invalid NATS subject")
	// ErrTagTemplate is matched by errors about a mapping's tag template.
	ErrTagTemplate = errors.New("invalid tag template")
	// ErrUnmappable is returned by SubjectFor for a tag that cannot be
	// mirrored (escaping off and a character NATS subjects cannot hold).
	ErrUnmappable = errors.New("tag has no NATS subject")
)

// MaxSubjectLen bounds a mirrored subject (NATS's control line is 4 KiB).
const MaxSubjectLen = 3500

// emptyToken stands for an empty tag segment ("a//b", a leading or
// trailing "/"): a lone "%" never comes out of percent-escaping, which
// always has two hex digits.
const emptyToken = "%"

// mustEscape reports whether byte c cannot appear in a subject token as is:
// ASCII control characters and space, DEL, the wildcards "*" and ">", the
// token separator "." is NOT escaped (see TagSubject), and "%" (the escape
// character itself).
func mustEscape(c byte) bool {
	return c <= ' ' || c == 0x7f || c == '*' || c == '>' || c == '%'
}

// TagSubject maps an event tag to the NATS subject its mirror is published
// on: prefix, ".", then the tag with "/" as ".". With escape, each byte a
// subject cannot hold (ASCII control characters, space, DEL, "*", ">")
// and "%" itself becomes %XX (upper-case hex), and an empty token (from
// "//", a leading or trailing "/" or ".") becomes a lone "%"; without
// escape such a tag returns ErrUnmappable. Dots inside a tag segment (a
// minion id like web1.example.com) are kept, so they split tokens: match
// them with ">". A subject longer than MaxSubjectLen is ErrUnmappable.
func TagSubject(prefix, tag string, escape bool) (string, error) {
	var b strings.Builder
	b.Grow(len(prefix) + 1 + len(tag) + 8)
	if prefix != "" {
		b.WriteString(prefix)
		b.WriteByte('.')
	}
	start := true // at the start of a token
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		if c == '/' {
			c = '.'
		}
		if c == '.' {
			if start {
				if !escape {
					return "", fmt.Errorf("%w: %q has an empty segment", ErrUnmappable, tag)
				}
				b.WriteString(emptyToken)
			}
			b.WriteByte('.')
			start = true
			continue
		}
		start = false
		if mustEscape(c) {
			if !escape {
				return "", fmt.Errorf("%w: %q holds %q", ErrUnmappable, tag, c)
			}
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	if start {
		if !escape {
			return "", fmt.Errorf("%w: %q has an empty segment", ErrUnmappable, tag)
		}
		b.WriteString(emptyToken)
	}
	if b.Len() > MaxSubjectLen {
		return "", fmt.Errorf("%w: subject of %d bytes (over %d)", ErrUnmappable, b.Len(), MaxSubjectLen)
	}
	return b.String(), nil
}

// TailTag maps the tokens after <prefix>.fire. to an event tag: tokens
// joined with "/", each token unescaped (%XX to its byte, a lone "%" to an
// empty segment), so TailTag of TagSubject's tokens gives the tag back
// when it had no "." of its own. A "%" not followed by two hex digits is
// kept as is.
func TailTag(tokens []string) string {
	parts := make([]string, len(tokens))
	for i, tok := range tokens {
		parts[i] = unescapeToken(tok)
	}
	return strings.Join(parts, "/")
}

func unescapeToken(tok string) string {
	if tok == emptyToken {
		return ""
	}
	if !strings.Contains(tok, "%") {
		return tok
	}
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		if tok[i] == '%' && i+2 < len(tok) {
			if v, err := strconv.ParseUint(tok[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(tok[i])
	}
	return b.String()
}

// validSubject checks a subject (wildcards allowed when pattern): no empty
// tokens, no whitespace, "*" and ">" only as whole tokens, ">" last.
func validSubject(s string, pattern bool) error {
	if s == "" {
		return fmt.Errorf("%w: empty", ErrSubject)
	}
	toks := strings.Split(s, ".")
	for i, t := range toks {
		if t == "" {
			return fmt.Errorf("%w: %q has an empty token", ErrSubject, s)
		}
		if strings.ContainsAny(t, " \t\r\n\f\v") {
			return fmt.Errorf("%w: %q holds white space", ErrSubject, s)
		}
		switch {
		case t == "*" || t == ">":
			if !pattern {
				return fmt.Errorf("%w: %q holds a wildcard", ErrSubject, s)
			}
			if t == ">" && i != len(toks)-1 {
				return fmt.Errorf("%w: %q: \">\" must be the last token", ErrSubject, s)
			}
		case strings.ContainsAny(t, "*>"):
			return fmt.Errorf("%w: %q: \"*\" and \">\" must be whole tokens", ErrSubject, s)
		}
	}
	return nil
}

// tmplPart is a literal (ref < 0) or a reference: 0 the whole subject,
// N > 0 the Nth wildcard.
type tmplPart struct {
	lit string
	ref int
}

// compile checks the subject pattern and parses the tag template: "{N}"
// is the Nth wildcard of the subject (1-based; a ">" capture is the rest
// of the subject with "." as "/"), "{0}" and "{subject}" the whole
// subject with "." as "/", "{{" and "}}" literal braces.
func (m *Mapping) compile() error {
	if err := validSubject(m.Subject, true); err != nil {
		return err
	}
	m.pat = strings.Split(m.Subject, ".")
	wild := 0
	for _, t := range m.pat {
		if t == "*" || t == ">" {
			wild++
		}
	}
	if m.Tag == "" {
		return fmt.Errorf("%w: tag is required", ErrTagTemplate)
	}
	m.tmpl = nil
	var lit strings.Builder
	s := m.Tag
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '{' && i+1 < len(s) && s[i+1] == '{':
			lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			lit.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return fmt.Errorf("%w: %q: unclosed {", ErrTagTemplate, s)
			}
			name := s[i+1 : i+end]
			ref := 0
			if name != "subject" {
				n, err := strconv.Atoi(name)
				if err != nil || n < 0 {
					return fmt.Errorf("%w: %q: {%s} is neither {N} nor {subject}", ErrTagTemplate, s, name)
				}
				if n > wild {
					return fmt.Errorf("%w: %q: {%d} but %q has %d wildcard(s)", ErrTagTemplate, s, n, m.Subject, wild)
				}
				ref = n
			}
			if lit.Len() > 0 {
				m.tmpl = append(m.tmpl, tmplPart{lit: lit.String(), ref: -1})
				lit.Reset()
			}
			m.tmpl = append(m.tmpl, tmplPart{ref: ref})
			i += end
		case c == '}':
			return fmt.Errorf("%w: %q: lone }", ErrTagTemplate, s)
		default:
			lit.WriteByte(c)
		}
	}
	if lit.Len() > 0 {
		m.tmpl = append(m.tmpl, tmplPart{lit: lit.String(), ref: -1})
	}
	return nil
}

// match returns the wildcard captures of subject, or ok false when the
// subject does not match the pattern.
func (m *Mapping) match(subject string) (captures []string, ok bool) {
	toks := strings.Split(subject, ".")
	for i, p := range m.pat {
		switch {
		case p == ">":
			if i >= len(toks) {
				return nil, false
			}
			return append(captures, strings.Join(toks[i:], "/")), true
		case i >= len(toks):
			return nil, false
		case p == "*":
			captures = append(captures, toks[i])
		case p != toks[i]:
			return nil, false
		}
	}
	if len(toks) != len(m.pat) {
		return nil, false
	}
	return captures, true
}

// TagFor returns the event tag for a message on subject, or ok false when
// the subject does not match. For the fire subscription it is the
// unescaped tail (see TailTag); otherwise the tag template filled with the
// captures (inserted as they are, not unescaped).
func (m *Mapping) TagFor(subject string) (string, bool) {
	caps, ok := m.match(subject)
	if !ok {
		return "", false
	}
	if m.fire {
		n := len(m.pat) - 1 // tokens before ">"
		return TailTag(strings.Split(subject, ".")[n:]), true
	}
	var b strings.Builder
	for _, p := range m.tmpl {
		switch {
		case p.ref < 0:
			b.WriteString(p.lit)
		case p.ref == 0:
			b.WriteString(strings.ReplaceAll(subject, ".", "/"))
		default:
			b.WriteString(caps[p.ref-1])
		}
	}
	return b.String(), true
}

// NewMapping compiles a subject→tag mapping (see Mapping).
func NewMapping(subject, tag string) (Mapping, error) {
	m := Mapping{Subject: subject, Tag: tag}
	err := m.compile()
	return m, err
}

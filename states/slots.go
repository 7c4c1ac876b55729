package states

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// errIndex is Python's IndexError from a slot whose text after ")" has no
// "." (Salt's __eval_slot fails the same way).
var errIndex = errors.New("list index out of range")

// errKeyEmpty is Python's KeyError: ” from parse_function, which treats
// an empty quoted argument (”) as an opening bracket and fails on the
// closing one.
var errKeyEmpty = errors.New("''")

// slotPrefix marks a value computed at run time by an execution function
// ("__slot__:salt:mod.fun(args).key ~ appended text").
const slotPrefix = "__slot__:"

// shlexWordChars are Python shlex's wordchars in posix mode.
const shlexWordChars = "abcdfeghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_" +
	"ßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞ"

// shlexTokens splits s like shlex.shlex(s, posix=True) with
// escapedquotes "\"'": words, quoted strings (quotes removed), and single
// punctuation characters; "#" starts a comment.
func shlexTokens(s string) []string {
	var toks []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			toks = append(toks, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == ' ' || r == '\t' || r == '\r' || r == '\n':
			flush()
			i += size
		case r == '#':
			flush()
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case r == '\'' || r == '"':
			inWord = true
			i += size
			for i < len(s) {
				c, sz := utf8.DecodeRuneInString(s[i:])
				if c == r {
					i += sz
					break
				}
				if c == '\\' && i+sz < len(s) {
					n, nsz := utf8.DecodeRuneInString(s[i+sz:])
					if n == r || n == '\\' {
						cur.WriteRune(n)
						i += sz + nsz
						continue
					}
				}
				cur.WriteRune(c)
				i += sz
			}
		case r == '\\':
			inWord = true
			i += size
			if i < len(s) {
				n, nsz := utf8.DecodeRuneInString(s[i:])
				cur.WriteRune(n)
				i += nsz
			}
		case strings.ContainsRune(shlexWordChars, r):
			inWord = true
			cur.WriteRune(r)
			i += size
		default:
			flush()
			toks = append(toks, string(r))
			i += size
		}
	}
	flush()
	return toks
}

// parseFunction is salt.utils.args.parse_function: "mod.fun(a, k=v)" into
// the name, positional and keyword arguments (all strings); ok is false
// for malformed text.
func parseFunction(s string) (fun string, args []any, kwargs *payload.Map, ok bool, err error) {
	toks := shlexTokens(s)
	var word []string
	i := 0
	found := false
	for ; i < len(toks); i++ {
		if toks[i] == "(" {
			found = true
			i++
			break
		}
		word = append(word, toks[i])
	}
	if len(word) == 0 || !found {
		return "", nil, nil, false, nil
	}
	fun = strings.Join(word, "")
	word = nil
	kwargs = &payload.Map{}
	var brackets []string
	key := ""
	hasKey := false
	closing := map[string]string{"[": "]", "{": "}", "(": ")"}
	for ; i < len(toks); i++ {
		tok := toks[i]
		switch {
		case tok == "" || tok == "[" || tok == "{" || tok == "(":
			word = append(word, tok)
			brackets = append(brackets, tok)
		case (tok == "," || tok == ")") && len(brackets) == 0:
			if hasKey {
				kwargs.Set(key, strings.Join(word, ""))
			} else if len(word) > 0 {
				args = append(args, strings.Join(word, ""))
			}
			if tok == ")" {
				return fun, args, kwargs, true, nil
			}
			key, hasKey, word = "", false, nil
		case tok == "]" || tok == "}" || tok == ")":
			if len(brackets) > 0 && brackets[len(brackets)-1] == "" {
				return "", nil, nil, false, errKeyEmpty
			}
			if len(brackets) == 0 || closing[brackets[len(brackets)-1]] != tok {
				return "", nil, nil, false, nil
			}
			brackets = brackets[:len(brackets)-1]
			word = append(word, tok)
		case tok == "=" && len(brackets) == 0:
			key, hasKey, word = strings.Join(word, ""), true, nil
		default:
			word = append(word, tok)
		}
	}
	return "", nil, nil, false, nil
}

// evalSlot is State.__eval_slot: run the slot's function and return its
// (traversed, appended) result, or the slot text when it is malformed.
func (s *stateRun) evalSlot(slot string) (any, error) {
	parts := strings.SplitN(slot, ":", 3)
	if len(parts) != 3 || parts[1] != "salt" {
		s.log.Warn("Malformed slot", "slot", slot)
		return slot, nil
	}
	fun, args, kwargs, ok, err := parseFunction(parts[2])
	if err != nil {
		return nil, err
	}
	if ok && s.env != nil && s.env.Registry != nil {
		_, ok = s.env.Registry.Lookup(fun)
	}
	if !ok {
		s.log.Warn("Malformed slot", "slot", slot)
		return slot, nil
	}
	ret, _, err := s.execRaw(fun, args, kwargs)
	if err != nil {
		return nil, err
	}
	text := strings.SplitN(parts[2], "~", 2)
	if i := strings.LastIndexByte(text[0], ')'); i >= 0 {
		if get := text[0][i+1:]; get != "" {
			if _, rest, found := strings.Cut(get, "."); found {
				ret, _ = target.Traverse(ret, strings.TrimSpace(rest), ".")
			} else {
				return nil, errIndex
			}
		}
	}
	if len(text) == 2 {
		if str, isStr := ret.(string); isStr {
			ret = str + strings.TrimSpace(text[1])
		} else {
			s.log.Error("Ignoring slot append, slot result is not a string")
		}
	}
	return ret, nil
}

// isSlot reports whether v is a slot string.
func isSlot(v any) (string, bool) {
	str, ok := v.(string)
	return str, ok && strings.HasPrefix(str, slotPrefix)
}

// formatSlots is State.format_slots over a call's keyword values: slot
// strings, first-level dict values and list items (and dict values inside
// lists) are replaced by their results. Values are copied, never changed
// in place.
func (s *stateRun) formatSlots(kw *payload.Map) error {
	for _, it := range kw.Items() {
		switch v := it.Value.(type) {
		case string:
			if _, ok := isSlot(v); ok {
				r, err := s.evalSlot(v)
				if err != nil {
					return err
				}
				kw.SetKey(it.Key, r)
			}
		case *payload.Map:
			var cp *payload.Map
			for _, e := range v.Items() {
				if str, ok := isSlot(e.Value); ok {
					r, err := s.evalSlot(str)
					if err != nil {
						return err
					}
					if cp == nil {
						cp = v.Clone()
					}
					cp.SetKey(e.Key, r)
				}
			}
			if cp != nil {
				kw.SetKey(it.Key, cp)
			}
		case []any:
			var cp []any
			for idx, e := range v {
				var nv any
				changed := false
				switch ev := e.(type) {
				case string:
					if _, ok := isSlot(ev); ok {
						r, err := s.evalSlot(ev)
						if err != nil {
							return err
						}
						nv, changed = r, true
					}
				case *payload.Map:
					var mc *payload.Map
					for _, me := range ev.Items() {
						if str, ok := isSlot(me.Value); ok {
							r, err := s.evalSlot(str)
							if err != nil {
								return err
							}
							if mc == nil {
								mc = ev.Clone()
							}
							mc.SetKey(me.Key, r)
						}
					}
					if mc != nil {
						nv, changed = mc, true
					}
				}
				if changed {
					if cp == nil {
						cp = append([]any(nil), v...)
					}
					cp[idx] = nv
				}
			}
			if cp != nil {
				kw.SetKey(it.Key, cp)
			}
		}
	}
	return nil
}

package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's ini module (salt/modules/ini_manage.py, loaded as
// "ini"): an ini file read into ordered sections of options, comments
// and unknown lines kept in place (as Salt's _Section/_Ini classes keep
// them, quirks included: an option added where a commented-out line of
// the same option was takes that line's place, an indented line
// continues the option above it), and written back whole.

// maxIniFile bounds the ini file read into memory.
const maxIniFile = 64 << 20

// Salt's INI_REGX, COM_REGX and INDENTED_REGX, with Python's re
// semantics.
var (
	// (searched, as re.split does: the translation for re.match without
	// its leading anchor)
	iniSectionRe  = regexp.MustCompile(strings.TrimPrefix(mustTranslatePCRE(`(?m)^\s*\[(.+?)\]\s*$`), "^"))
	iniCommentRe  = regexp.MustCompile(mustTranslatePCRE(`^\s*(#|;)\s*(.*)`))
	iniIndentedRe = regexp.MustCompile(mustTranslatePCRE(`^(\s+)(.*)`))
)

// iniSection is Salt's _Section: an ordered mapping of option names to
// their text (a string) or to a subsection (*iniSection); comment and
// unknown lines are entries named "#comment<n>" and "#unknown<n>".
type iniSection struct {
	name     string
	sep, com string
	optRe    *regexp.Regexp
	keys     []string
	vals     map[string]any
}

func newIniSection(name, sep, com string) *iniSection {
	// (\s*)(.+?)\s*(\<sep>)\s*(.*)\s* matched at the start of a line
	optRe := regexp.MustCompile(mustTranslatePCRE(`^(\s*)(.+?)\s*(` + regexp.QuoteMeta(sep) + `)\s*(.*)\s*`))
	return &iniSection{name: name, sep: sep, com: com, optRe: optRe, vals: map[string]any{}}
}

func (s *iniSection) get(k string) (any, bool) { v, ok := s.vals[k]; return v, ok }

// set sets k, appended when new, in place otherwise (OrderedDict's
// __setitem__).
func (s *iniSection) set(k string, v any) {
	if _, ok := s.vals[k]; !ok {
		s.keys = append(s.keys, k)
	}
	s.vals[k] = v
}

func (s *iniSection) pop(k string) (any, bool) {
	v, ok := s.vals[k]
	if !ok {
		return nil, false
	}
	delete(s.vals, k)
	for i, key := range s.keys {
		if key == k {
			s.keys = append(s.keys[:i:i], s.keys[i+1:]...)
			break
		}
	}
	return v, true
}

// refresh is _Section.refresh: the lines of one section's text.
func (s *iniSection) refresh(text string) error {
	commentN, unknownN := 1, 1
	indent := ""
	text = strings.Trim(text, "\n")
	if text == "" {
		return nil
	}
	s.keys, s.vals = nil, map[string]any{}
	for _, line := range strings.Split(text, "\n") {
		if m := iniCommentRe.FindStringSubmatch(line); m != nil {
			name := fmt.Sprintf("#comment%d", commentN)
			s.com = m[1]
			commentN++
			if _, err := s.update([]iniItem{{name, line}}); err != nil {
				return err
			}
			continue
		}
		if m := iniIndentedRe.FindStringSubmatch(line); m != nil {
			if strings.ReplaceAll(m[1], "\t", "    ") > indent {
				if len(s.keys) > 0 {
					prev := s.keys[len(s.keys)-1]
					v, _ := s.get(prev)
					// a continuation of a subsection cannot happen while
					// parsing (subsections come only from updates)
					str, _ := v.(string)
					if _, err := s.update([]iniItem{{prev, str + "\n" + line}}); err != nil {
						return err
					}
				}
				continue
			}
		}
		if m := s.optRe.FindStringSubmatch(line); m != nil {
			indent = strings.ReplaceAll(m[1], "\t", "    ")
			s.sep = m[3]
			if _, err := s.update([]iniItem{{m[2], m[4]}}); err != nil {
				return err
			}
			continue
		}
		if _, err := s.update([]iniItem{{fmt.Sprintf("#unknown%d", unknownN), line}}); err != nil {
			return err
		}
		unknownN++
	}
	return nil
}

// uncommentIfCommented is _Section._uncomment_if_commented: a new option
// takes the place of the first comment line that holds it commented out
// ("#key = value"), or goes last.
func (s *iniSection) uncommentIfCommented(key string) {
	for i, k := range s.keys {
		if !strings.Contains(k, "#comment") {
			continue
		}
		v, _ := s.vals[k].(string)
		if m := s.optRe.FindStringSubmatch(strings.TrimLeft(v, "#")); m != nil && m[2] == key {
			delete(s.vals, k)
			s.keys[i] = key
			s.vals[key] = nil
			return
		}
	}
	s.set(key, nil)
}

// iniItem is one key and value of an update, in order.
type iniItem struct {
	key string
	val any
}

// iniItems are the items of a payload map (or of a section) in order.
func iniItems(v any) ([]iniItem, error) {
	switch m := v.(type) {
	case *payload.Map:
		var out []iniItem
		for _, it := range m.Items() {
			out = append(out, iniItem{payload.KeyString(it.Key), it.Value})
		}
		return out, nil
	case *iniSection:
		out := make([]iniItem, len(m.keys))
		for i, k := range m.keys {
			out[i] = iniItem{k, m.vals[k]}
		}
		return out, nil
	}
	return nil, &modules.PyException{Class: "AttributeError", Message: fmt.Sprintf("'%s' object has no attribute 'items'", payload.TypeName(v))}
}

// update is _Section.update: values become their str(), maps become
// subsections; it returns the changes ({key: {before, after}}, or the
// subsection's own changes for an existing subsection).
func (s *iniSection) update(items []iniItem) (*payload.Map, error) {
	changes := &payload.Map{}
	for _, it := range items {
		var value, plain any
		switch v := it.val.(type) {
		case *payload.Map, *iniSection:
			sect := newIniSection(it.key, s.sep, s.com)
			sub, err := iniItems(v)
			if err != nil {
				return nil, err
			}
			if _, err := sect.update(sub); err != nil {
				return nil, err
			}
			value, plain = sect, sect.asDict()
		default:
			str := pyfmt.Str(v)
			value, plain = str, str
		}
		cur, exists := s.get(it.key)
		if !exists {
			changes.Set(it.key, payload.NewMap("before", nil, "after", plain))
			if _, isSect := value.(*iniSection); !isSect {
				s.uncommentIfCommented(it.key)
			}
			s.set(it.key, value)
			continue
		}
		if curSect, ok := cur.(*iniSection); ok {
			sub, err := iniItems(value)
			if err != nil {
				return nil, err
			}
			subChanges, err := curSect.update(sub)
			if err != nil {
				return nil, err
			}
			if subChanges.Len() > 0 {
				changes.Set(it.key, subChanges)
			}
			continue
		}
		if curStr, ok := cur.(string); !ok || !sameIniValue(curStr, value) {
			changes.Set(it.key, payload.NewMap("before", cur, "after", plain))
			s.set(it.key, value)
		}
	}
	return changes, nil
}

// sameIniValue is curr_value == value for a current string.
func sameIniValue(cur string, v any) bool {
	s, ok := v.(string)
	return ok && s == cur
}

// asDict is dict(section): its entries, subsections as their dicts.
func (s *iniSection) asDict() *payload.Map {
	m := &payload.Map{}
	for _, k := range s.keys {
		v := s.vals[k]
		if sub, ok := v.(*iniSection); ok {
			v = sub.asDict()
		}
		m.Set(k, v)
	}
	return m
}

// genIni is _Section.gen_ini: the section's header, its comments and
// options, then its subsections.
func (s *iniSection) genIni(out []string) []string {
	out = append(out, "\n["+s.name+"]\n")
	var subs []*iniSection
	for _, k := range s.keys {
		v := s.vals[k]
		switch {
		case iniCommentRe.MatchString(k):
			out = append(out, pyfmt.Str(v)+"\n")
		default:
			if sub, ok := v.(*iniSection); ok {
				subs = append(subs, sub)
				continue
			}
			sep := s.sep
			if sep != " " {
				sep = " " + sep + " "
			}
			out = append(out, k+sep+pyfmt.Str(v)+"\n")
		}
	}
	for _, sub := range subs {
		out = sub.genIni(out)
	}
	return out
}

// iniFile is Salt's _Ini: the file's top-level options with its sections
// as subsections.
type iniFile struct {
	*iniSection
	path string
}

// readIni is _Ini.get_ini_file: a missing file is empty.
func readIni(path, sep string) (*iniFile, error) {
	f := &iniFile{iniSection: newIniSection(path, sep, "#"), path: path}
	b, err := readBounded(path, maxIniFile)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: Unable to open file '%s'. Exception: %s", modules.ErrExecution, path, cmdPyOSError(err))
	}
	text := strings.Join(py.SplitLines(string(b), false), "\n")
	if text == "" {
		return f, nil
	}
	// INI_REGX.split: the text before the first section, then each
	// section's name and text
	locs := iniSectionRe.FindAllStringSubmatchIndex(text, -1)
	parts := []string{}
	last := 0
	for _, l := range locs {
		parts = append(parts, text[last:l[0]], text[l[2]:l[3]])
		last = l[1]
	}
	parts = append(parts, text[last:])
	if err := f.refresh(parts[0]); err != nil {
		return nil, err
	}
	for i := 1; i+1 < len(parts); i += 2 {
		sect := newIniSection(parts[i], f.sep, "#")
		if err := sect.refresh(parts[i+1]); err != nil {
			return nil, err
		}
		if _, err := f.update([]iniItem{{parts[i], sect}}); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// flush is _Ini.flush: the file rewritten, without the _Ini's own header
// and with the first line's leading newlines dropped.
func (f *iniFile) flush() error {
	lines := f.genIni(nil)[1:]
	if len(lines) > 0 {
		lines[0] = strings.TrimLeft(lines[0], "\n")
	}
	if err := os.WriteFile(f.path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		return fmt.Errorf("%w: Unable to write file '%s'. Exception: %s", modules.ErrExecution, f.path, cmdPyOSError(err))
	}
	return nil
}

// iniPlain is ini_odict2dict: the entries whose names do not start with
// "#", subsections likewise.
func iniPlain(v any) any {
	s, ok := v.(*iniSection)
	if !ok {
		return v
	}
	m := &payload.Map{}
	for _, k := range s.keys {
		if strings.HasPrefix(k, "#") {
			continue
		}
		m.Set(k, iniPlain(s.vals[k]))
	}
	return m
}

// iniTopPlain is the section's non-comment entries, subsections as they
// are (dict(section) without "#" keys, as get_section and remove_section
// return them).
func iniTopPlain(s *iniSection) *payload.Map {
	m := &payload.Map{}
	for _, k := range s.keys {
		if strings.HasPrefix(k, "#") {
			continue
		}
		v := s.vals[k]
		if sub, ok := v.(*iniSection); ok {
			v = sub.asDict()
		}
		m.Set(k, v)
	}
	return m
}

// iniSectionOf is inifile.get(section, {}) for the calls that use it as a
// dict: nil for a missing section, an AttributeError for an option.
func iniSectionOf(f *iniFile, section string) (*iniSection, error) {
	v, ok := f.get(section)
	if !ok {
		return nil, nil
	}
	s, isSect := v.(*iniSection)
	if !isSect {
		return nil, &modules.PyException{Class: "AttributeError", Message: "'str' object has no attribute 'items'"}
	}
	return s, nil
}

func iniManageFunctions() []modules.Function {
	sep := opt("separator", "=")
	return []modules.Function{
		{Name: "ini.set_option", Spec: modules.Spec{Params: []modules.Param{req("file_name"), opt("sections", nil), sep}},
			Doc: "Edit an ini file, replacing one or more sections. Returns a dictionary\ncontaining the changes made.\n\nCLI Example:\n\n    salt '*' ini.set_option /path/to/ini '{section_foo: {key: value}}'",
			Fn: iniCall(func(c *modules.Call, f *iniFile) (any, error) {
				var items []iniItem
				if v := c.Args.Get("sections"); payload.Truthy(v) {
					var err error
					if items, err = iniItems(v); err != nil {
						return nil, err
					}
				}
				changes, err := f.update(items)
				if err != nil {
					return nil, err
				}
				if err := f.flush(); err != nil {
					return nil, err
				}
				return changes, nil
			})},
		{Name: "ini.get_option", Spec: modules.Spec{Params: []modules.Param{req("file_name"), req("section"), req("option"), sep}},
			Doc: "Get value of a key from a section in an ini file. Returns ``None`` if\nno matching key was found.\n\nCLI Example:\n\n    salt '*' ini.get_option /path/to/ini section_name option_name",
			Fn: iniCall(func(c *modules.Call, f *iniFile) (any, error) {
				option := c.Args.Str("option")
				if section := c.Args.Get("section"); payload.Truthy(section) {
					v, _ := f.get(payload.Text(section))
					s, ok := v.(*iniSection)
					if !ok {
						return nil, nil
					}
					v, _ = s.get(option)
					return iniPlain(v), nil
				}
				v, _ := f.get(option)
				if s, ok := v.(*iniSection); ok {
					return s.asDict(), nil
				}
				return v, nil
			})},
		{Name: "ini.remove_option", Spec: modules.Spec{Params: []modules.Param{req("file_name"), req("section"), req("option"), sep}},
			Doc: "Remove a key/value pair from a section in an ini file. Returns the value of\nthe removed key, or ``None`` if nothing was removed.\n\nCLI Example:\n\n    salt '*' ini.remove_option /path/to/ini section_name option_name",
			Fn: iniCall(func(c *modules.Call, f *iniFile) (any, error) {
				option := c.Args.Str("option")
				var v any
				cur, _ := f.get(payload.Text(c.Args.Get("section")))
				if s, ok := cur.(*iniSection); ok && c.Args.Get("section") != nil {
					v, _ = s.pop(option)
				} else {
					v, _ = f.pop(option)
				}
				if err := f.flush(); err != nil {
					return nil, err
				}
				if s, ok := v.(*iniSection); ok {
					return s.asDict(), nil
				}
				return v, nil
			})},
		{Name: "ini.get_section", Spec: modules.Spec{Params: []modules.Param{req("file_name"), req("section"), sep}},
			Doc: "Retrieve a section from an ini file. Returns the section as a dictionary. If\nthe section is not found, an empty dictionary is returned.\n\nCLI Example:\n\n    salt '*' ini.get_section /path/to/ini section_name",
			Fn: iniCall(func(c *modules.Call, f *iniFile) (any, error) {
				s, err := iniSectionOf(f, c.Args.Str("section"))
				if err != nil || s == nil {
					return &payload.Map{}, err
				}
				return iniTopPlain(s), nil
			})},
		{Name: "ini.remove_section", Spec: modules.Spec{Params: []modules.Param{req("file_name"), req("section"), sep}},
			Doc: "Remove a section in an ini file. Returns the removed section as dictionary,\nor ``None`` if nothing was removed.\n\nCLI Example:\n\n    salt '*' ini.remove_section /path/to/ini section_name",
			Fn: iniCall(func(c *modules.Call, f *iniFile) (any, error) {
				v, ok := f.pop(c.Args.Str("section"))
				if !ok {
					return nil, nil
				}
				if err := f.flush(); err != nil {
					return nil, err
				}
				s, isSect := v.(*iniSection)
				if !isSect {
					return nil, &modules.PyException{Class: "AttributeError", Message: "'str' object has no attribute 'items'"}
				}
				return iniTopPlain(s), nil
			})},
		{Name: "ini.get_ini", Spec: modules.Spec{Params: []modules.Param{req("file_name"), sep}},
			Doc: "Retrieve whole structure from an ini file and return it as dictionary.\n\nCLI Example:\n\n    salt '*' ini.get_ini /path/to/ini",
			Fn: iniCall(func(c *modules.Call, f *iniFile) (any, error) {
				return iniPlain(f.iniSection), nil
			})},
	}
}

// iniCall is an ini function reading its file_name with its separator
// first.
func iniCall(fn func(c *modules.Call, f *iniFile) (any, error)) modules.Func {
	return func(_ context.Context, c *modules.Call) (any, error) {
		f, err := readIni(c.Args.Str("file_name"), c.Args.Str("separator"))
		if err != nil {
			return nil, err
		}
		return fn(c, f)
	}
}

package builtin

// This file is Salt's file.keyvalue state function (salt/states/file.py):
// KEY<sep>VALUE lines of a file set, optionally uncommented, appended or
// prepended.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// fileKeyvalueMax bounds the file read.
const fileKeyvalueMax = 64 << 20

func fileKeyvalueStates() []states.Function {
	return []states.Function{
		{Name: "file.keyvalue", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("key", nil), sbOpt("value", nil), sbOpt("key_values", nil),
			sbOpt("separator", "="), sbOpt("append_if_not_found", false), sbOpt("prepend_if_not_found", false), sbOpt("search_only", false),
			sbOpt("show_changes", true), sbOpt("ignore_if_missing", false), sbOpt("count", int64(1)), sbOpt("uncomment", nil),
			sbOpt("key_ignore_case", false), sbOpt("value_ignore_case", false)}}, Fn: fileKeyvalueState},
	}
}

// filePyTypeNameOf is type(v).__name__ for the values YAML gives.
func filePyTypeNameOf(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64, int, uint64:
		return "int"
	case float64:
		return "float"
	case []any:
		return "list"
	case *payload.Map:
		return "dict"
	case string:
		return "str"
	}
	return filePyTypeName(v)
}

func fileKeyvalueState(_ context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := fileExpandUser(a.Str("name"))
	ret := &states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	if name == "" {
		return fileError(ret, "Must provide name to file.keyvalue")
	}
	kv := &payload.Map{}
	key, value, keyValues := a.Get("key"), a.Get("value"), a.Get("key_values")
	if key != nil && value != nil {
		if _, ok := keyValues.(*payload.Map); ok {
			return fileError(ret, "file.keyvalue can not combine key_values with key and value")
		}
		kv.Set(pyfmt.Str(key), value)
	} else if m, ok := keyValues.(*payload.Map); !ok || m.Len() == 0 {
		msg := "is not a dictionary"
		if !payload.Truthy(keyValues) {
			msg = "is empty"
		}
		return fileError(ret, "file.keyvalue key and value not supplied and key_values "+msg)
	} else {
		kv = m
	}
	sep := a.Str("separator")
	count, _ := a.Int("count")
	keyCase, valueCase := a.Bool("key_ignore_case"), a.Bool("value_ignore_case")
	uncomment := a.Get("uncomment")
	b, err := readBoundedFile(name, fileKeyvalueMax)
	if err != nil {
		ret.Comment = fmt.Sprintf("unable to open %s", name)
		ret.Result = states.False
		if a.Bool("ignore_if_missing") {
			ret.Result = states.True
		}
		return *ret, nil
	}
	// text mode: universal newlines
	text := strings.ReplaceAll(strings.ReplaceAll(string(b), "\r\n", "\n"), "\r", "\n")
	lines := py.SplitLines(text, true)
	keys := make([]string, 0, kv.Len())
	left := map[string]int64{}
	for _, it := range kv.Items() {
		k := payload.KeyString(it.Key)
		keys = append(keys, k)
		left[k] = count
	}
	lstrip := func(s string) string {
		if uncomment == nil {
			return strings.TrimLeftFunc(s, unicode.IsSpace)
		}
		return strings.TrimLeft(s, pyfmt.Str(uncomment))
	}
	var diff, content []string
	changes := 0
	for _, line := range lines {
		testLine := lstrip(line)
		uncommented := len(line) > len(testLine)
		if keyCase {
			testLine = strings.ToLower(testLine)
		}
		for _, k := range keys {
			v, _ := kv.Get(k)
			testKey := k
			if keyCase {
				testKey = strings.ToLower(k)
			}
			if !strings.HasPrefix(testLine, testKey) {
				continue
			}
			working := line
			if uncommented {
				working = lstrip(line)
			}
			lineKey, lineValue, found := strings.Cut(working, sep)
			if !found {
				continue
			}
			match := lineKey == testKey
			if keyCase {
				match = strings.ToLower(lineKey) == testKey
			}
			if !match {
				continue
			}
			lv := strings.TrimFunc(lineValue, unicode.IsSpace)
			tv := strings.TrimFunc(pyfmt.Str(v), unicode.IsSpace)
			if valueCase {
				lv, tv = strings.ToLower(lv), strings.ToLower(tv)
			}
			valuesMatch := lv == tv
			needs := false
			if uncommented {
				if left[k] > 0 {
					needs = true
				} else if !valuesMatch {
					valuesMatch = true
				}
			} else if left[k] == 0 {
				needs = true
			}
			if !valuesMatch || needs {
				diff = append(diff, "- "+line)
				line = ""
				if left[k] != 0 {
					line = lineKey + sep + pyfmt.Str(v) + "\n"
					if _, isStr := v.(string); !isStr {
						diff = append(diff, fmt.Sprintf("+ %s (from %s type)\n", strings.TrimRightFunc(line, unicode.IsSpace), filePyTypeNameOf(v)))
					} else {
						diff = append(diff, "+ "+line)
					}
				}
				changes++
			}
			if left[k] > 0 {
				left[k]--
			}
		}
		content = append(content, line)
	}
	if a.Bool("append_if_not_found") {
		var tmp []string
		for _, k := range keys {
			if left[k] > 0 {
				v, _ := kv.Get(k)
				line := k + sep + pyfmt.Str(v) + "\n"
				tmp = append(tmp, "+ "+line)
				content = append(content, line)
				changes++
			}
		}
		if len(tmp) > 0 {
			diff = append(diff, "- <EOF>\n")
			diff = append(diff, tmp...)
			diff = append(diff, "+ <EOF>\n")
		}
	} else if a.Bool("prepend_if_not_found") {
		did := false
		for _, k := range keys {
			if left[k] > 0 {
				v, _ := kv.Get(k)
				line := k + sep + pyfmt.Str(v) + "\n"
				if !did {
					diff = append([]string{"  <SOF>\n"}, diff...)
					did = true
				}
				diff = append(diff[:1], append([]string{"+ " + line}, diff[1:]...)...)
				content = append([]string{line}, content...)
				changes++
			}
		}
	}
	if changes == 0 {
		ret.Result = states.True
		return *ret, nil
	}
	show := a.Bool("show_changes")
	if c.Test {
		ret.Comment = fmt.Sprintf("File %s is set to be changed (%d lines)", name, changes)
		if show {
			ret.Changes.Set("diff", strings.Join(diff, ""))
			ret.Comment += "\nPredicted diff:\n\r\t\t" + strings.Join(diff, "\r\t\t")
			ret.Result = states.None
		}
		return *ret, nil
	}
	ret.Comment = fmt.Sprintf("Changed %d lines", changes)
	if show {
		ret.Changes.Set("diff", strings.Join(diff, ""))
	}
	if err := os.WriteFile(name, []byte(strings.Join(content, "")), 0o644); err != nil {
		ret.Comment = fmt.Sprintf("%s not writable", name)
		ret.Result = states.False
		return *ret, nil
	}
	ret.Result = states.True
	return *ret, nil
}

// readBoundedFile reads a file of at most max bytes.
func readBoundedFile(p string, max int64) ([]byte, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, max)
	}
	return os.ReadFile(p)
}

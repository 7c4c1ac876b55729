package minion

import (
	"strings"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// YamlifyArg is salt.utils.args.yamlify_arg: it YAML-loads a command-line
// argument, keeping the string when loading would lose it (empty or
// document markers, digits with underscores, control whitespace, a comment
// that loads as a string or None, a mapping not written in braces, a list
// not written in brackets, "|" and "!", unsupported types, errors).
func YamlifyArg(arg string) any {
	trimmed := strings.TrimSpace(arg)
	if trimmed == "" || trimmed == "---" || trimmed == "..." {
		return arg
	}
	if strings.Contains(arg, "_") && strings.Trim(trimmed, "0123456789_") == "" {
		return arg
	}
	if strings.ContainsAny(arg, "\t\r\n") {
		return arg
	}
	if strings.Contains(arg, "#") {
		v, err := config.DecodeYAMLPayload([]byte(arg))
		if err != nil {
			return arg
		}
		switch v.(type) {
		case string, nil:
			return arg
		}
		return v
	}
	if arg == "None" {
		return nil
	}
	v, err := config.DecodeYAMLPayload([]byte(arg))
	if err != nil {
		return arg
	}
	switch x := v.(type) {
	case *payload.Map:
		if !strings.HasPrefix(arg, "{") {
			return arg
		}
		return x
	case []any:
		if !strings.HasPrefix(arg, "[") {
			return arg
		}
		return x
	case nil:
		if strings.HasPrefix(trimmed, "#") || arg == "!" {
			return arg
		}
		return nil
	case string:
		if x == "" && (arg == "|" || arg == "!") {
			return arg
		}
		return x
	case int64, float64, bool, uint64:
		return x
	}
	return arg
}

// ParseInput is salt.utils.args.parse_input with condition_input: each
// "name=value" word becomes a keyword argument (value YAML-loaded), every
// other word a YAML-loaded positional argument; the keyword arguments are
// appended as one map marked "__kwarg__": true, the way a publish carries
// them.
func ParseInput(words []string) []any {
	args := []any{}
	kwargs := payload.NewMap("__kwarg__", true)
	for _, w := range words {
		if name, val, ok := modules.ParseKwarg(w); ok {
			kwargs.Set(name, YamlifyArg(val))
			continue
		}
		if isJIDWord(w) {
			// condition_input keeps jid-looking numbers as strings.
			args = append(args, w)
			continue
		}
		args = append(args, YamlifyArg(w))
	}
	if kwargs.Len() > 1 {
		args = append(args, kwargs)
	}
	return args
}

// isJIDWord reports whether w is a 20-digit number (salt.utils.jid.is_jid
// of an int argument).
func isJIDWord(w string) bool {
	return len(w) == 20 && strings.Trim(w, "0123456789") == ""
}

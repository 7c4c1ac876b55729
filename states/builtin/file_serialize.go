package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is file.serialize of Salt's file state module: a data set
// written as JSON or YAML through the file.managed machinery.

func fileSerializeStates() []states.Function {
	return []states.Function{
		{Name: "file.serialize", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("dataset", nil), sbOpt("dataset_pillar", nil),
			sbOpt("user", nil), sbOpt("group", nil), sbOpt("mode", nil), sbOpt("backup", ""), sbOpt("makedirs", false), sbOpt("show_changes", true),
			sbOpt("create", true), sbOpt("merge_if_exists", false), sbOpt("encoding", nil), sbOpt("encoding_errors", "strict"),
			sbOpt("serializer", nil), sbOpt("serializer_opts", nil), sbOpt("deserializer_opts", nil)}, Kwargs: true},
			Fn: fileSerializeState},
	}
}

func fileSerializeState(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := expandHome(a.Str("name"))
	ret := &states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	if name == "" {
		return fileError(ret, "Must provide name to file.serialize")
	}
	if !payload.Truthy(a.Get("create")) && !fileExists(name) {
		ret.Comment = fmt.Sprintf("File %s is not present and is not set for creation", name)
		return *ret, nil
	}
	kw := a.CleanKwargs()
	formatter, _ := kw.Get("formatter")
	serializer := a.Get("serializer")
	if payload.Truthy(serializer) && payload.Truthy(formatter) {
		return fileError(ret, "Only one of serializer and formatter are allowed")
	}
	ser := "yaml"
	switch {
	case payload.Truthy(serializer):
		ser = pyfmt.Str(serializer)
	case payload.Truthy(formatter):
		ser = pyfmt.Str(formatter)
	}
	ser = strings.ToLower(ser)
	dataset := a.Get("dataset")
	if payload.Truthy(dataset) && payload.Truthy(a.Get("dataset_pillar")) {
		return fileError(ret, "Only one of 'dataset' and 'dataset_pillar' is permitted")
	}
	if dp := a.Get("dataset_pillar"); payload.Truthy(dp) {
		v, err := sbExec(ctx, c, "pillar.get", []any{dp}, nil)
		if err != nil {
			return *ret, err
		}
		dataset = v
	}
	if dataset == nil {
		return fileError(ret, "Neither 'dataset' nor 'dataset_pillar' was defined")
	}
	if ser != "json" && ser != "yaml" && ser != "toml" {
		return states.Ret{Name: name, Result: states.False, Changes: &payload.Map{},
			Comment: fmt.Sprintf("The %s serializer could not be found. It either does not exist or its prerequisites are not installed.", ser)}, nil
	}
	opts := map[string]*payload.Map{
		"yaml": payload.NewMap("default_flow_style", false),
		"json": payload.NewMap("indent", int64(2), "separators", []any{",", ": "}, "sort_keys", true),
		"toml": payload.NewMap(),
	}
	if payload.Truthy(a.Get("encoding")) {
		opts["yaml"].Set("allow_unicode", true)
		opts["json"].Set("ensure_ascii", false)
	}
	if so := a.Get("serializer_opts"); payload.Truthy(so) {
		for _, it := range mbuiltin.RepackDictlist(so).Items() {
			opts[ser].SetKey(it.Key, it.Value)
		}
	}
	// the merge's recursive diff replaces the file diff in the changes
	// (salt.utils.dictdiffer.recursive_diff), whatever else happened
	var existing, merged any
	withDiff := func(r states.Ret) states.Ret {
		em, ok1 := existing.(*payload.Map)
		mm, ok2 := merged.(*payload.Map)
		if ok1 && ok2 {
			if r.Changes == nil {
				r.Changes = &payload.Map{}
			}
			r.Changes.Set("diff", recursiveDiff(mm, em))
		}
		return r
	}
	if payload.Truthy(a.Get("merge_if_exists")) {
		var done bool
		var err error
		existing, merged, done, err = serializeMerge(ctx, ret, name, ser, dataset, mbuiltin.RepackDictlist(a.Get("deserializer_opts")))
		if err != nil || done {
			return *ret, err
		}
		if merged != nil {
			dataset = merged
		}
	} else if payload.Truthy(a.Get("deserializer_opts")) {
		ret.Warnings = append(ret.Warnings, "The 'deserializer_opts' option is ignored unless merge_if_exists is set to True.")
	}
	text, err := mbuiltin.Serialize(ser, dataset, opts[ser])
	if err != nil {
		return *ret, err
	}
	contents := []byte(text + "\n")
	mode, _ := fileNormalizeMode(a.Get("mode"))
	r := fileNewRun(ctx, c)
	if c.Test {
		m := fileManagedDefaults(name)
		changes, comment, err := r.checkManagedChanges(name, m, false, a.Get("user"), a.Get("group"), mode, &contents)
		if err != nil {
			return *ret, err
		}
		if comment != nil {
			ret.Result, ret.Comment = states.False, *comment
			return withDiff(*ret), nil
		}
		if changes != nil && changes.Len() > 0 {
			ret.Changes = changes
			ret.Result = states.None
			ret.Comment = fmt.Sprintf("Dataset will be serialized and stored into %s", name)
			if !payload.Truthy(a.Get("show_changes")) {
				ret.Changes.Set("diff", "<show_changes=False>")
			}
		} else {
			ret.Comment = fmt.Sprintf("The file %s is in the correct state", name)
		}
		return withDiff(*ret), nil
	}
	out, err := r.manageFile(name, "", ret, fileManageOpts{user: a.Get("user"), group: a.Get("group"), mode: mode,
		backup: fileBackupArg(a.Get("backup")), makedirs: payload.Truthy(a.Get("makedirs")), showChanges: payload.Truthy(a.Get("show_changes")),
		follow: true, contents: &contents, encoding: serializeOptStr(a.Get("encoding"))})
	if err != nil {
		return *ret, err
	}
	return withDiff(*out), nil
}

// serializeOptStr is an optional text argument ("" for None).
func serializeOptStr(v any) string {
	if v == nil {
		return ""
	}
	return pyfmt.Str(v)
}

// serializeMerge is file.serialize's merge_if_exists: an existing regular
// file is read with the serializer's deserializer (python3-toml's
// toml.loads for toml) and the dataset merged into it
// (salt.utils.dictupdate.merge_recurse); done when the state is decided
// here (the file cannot be read as the format, or the merge changes
// nothing); merged is nil when there was nothing to merge with. The
// deserializer_opts reach the format's reader as keyword arguments, as
// Salt passes them to json.load, yaml.load and toml.load on the open file
// (serializeDeserializerOpts).
func serializeMerge(ctx context.Context, ret *states.Ret, name, ser string, dataset any, dopts *payload.Map) (existing, merged any, done bool, err error) {
	st, err := os.Stat(name)
	if err != nil || !st.Mode().IsRegular() {
		return nil, nil, false, nil
	}
	text, err := os.ReadFile(name)
	if err != nil {
		return nil, nil, true, err
	}
	failed := func(msg string) (any, any, bool, error) {
		ret.Result, ret.Comment = states.False, "Failed to deserialize existing data: "+msg
		return nil, nil, true, nil
	}
	strict, msg := serializeDeserializerOpts(ser, dopts)
	if msg != "" {
		return failed(msg)
	}
	if !strict {
		text = jsonEscapeControls(text)
	}
	existing, err = mbuiltin.Deserialize(ctx, ser, string(text))
	if err == nil && ser == "json" {
		if msg := jsonHookError(existing, dopts); msg != "" {
			return failed(msg)
		}
	}
	if err != nil {
		msg := err.Error()
		var pe *modules.PyException
		if errors.As(err, &pe) {
			msg = pe.Message
		}
		return failed(strings.TrimPrefix(msg, "salt.serializers.DeserializationError: "))
	}
	if existing == nil {
		return nil, nil, false, nil
	}
	merged, err = mbuiltin.MergeRecurse(existing, dataset)
	if err != nil {
		return nil, nil, true, err
	}
	if py.Equal(existing, merged) {
		ret.Result, ret.Comment = states.True, fmt.Sprintf("The file %s is in the correct state", name)
		return nil, nil, true, nil
	}
	return existing, merged, false, nil
}

// recursiveDiff is salt.utils.dictdiffer.recursive_diff(past,
// current).diffs (keys gone from current left out): for each key of
// current that past lacks or holds a different value under, {"new",
// "old"} ("<_null_>" for a missing old value), nested dicts diffed key by
// key.
func recursiveDiff(current, past *payload.Map) *payload.Map {
	out := &payload.Map{}
	for _, it := range current.Items() {
		old, ok := past.GetKey(it.Key)
		switch {
		case !ok:
			out.SetKey(it.Key, payload.NewMap("new", it.Value, "old", "<_null_>"))
		case !py.Equal(it.Value, old):
			cm, ok1 := it.Value.(*payload.Map)
			pm, ok2 := old.(*payload.Map)
			if ok1 && ok2 {
				if sub := recursiveDiff(cm, pm); sub.Len() > 0 {
					out.SetKey(it.Key, sub)
				}
				continue
			}
			out.SetKey(it.Key, payload.NewMap("new", it.Value, "old", old))
		}
	}
	return out
}

// pyKwargsError is CPython's TypeError for calling fn with the params
// filled positionally and kwargs: the first keyword naming a filled
// parameter or none of the known ones.
func pyKwargsError(fn string, filled, known []string, kwargs *payload.Map) string {
	for _, it := range kwargs.Items() {
		k := pyfmt.Str(it.Key)
		switch {
		case slices.Contains(filled, k):
			return fmt.Sprintf("%s() got multiple values for argument '%s'", fn, k)
		case !slices.Contains(known, k):
			return fmt.Sprintf("%s() got an unexpected keyword argument '%s'", fn, k)
		}
	}
	return ""
}

// notCallable is CPython's TypeError for calling a value that is no
// function (every value deserializer_opts can hold).
func notCallable(v any) string {
	return fmt.Sprintf("'%s' object is not callable", pyfmt.TypeName(v))
}

// jsonHooks are json.loads's keyword arguments that take a function.
var jsonHooks = []string{"object_hook", "parse_float", "parse_int", "parse_constant", "object_pairs_hook"}

// serializeDeserializerOpts is what Salt 3006's deserializers do with
// deserializer_opts before they read the existing file (an open file
// object, so the options always reach the library): json.load(fp,
// **opts) builds JSONDecoder(**kw) (or calls cls), yaml.load(stream,
// Loader=..., **opts) and toml.load(f, **opts) bind them as keyword
// arguments. msg is the TypeError text when they fail; strict is
// JSONDecoder's strict (raw control characters refused in strings).
func serializeDeserializerOpts(ser string, opts *payload.Map) (strict bool, msg string) {
	strict = true
	if opts.Len() == 0 {
		return strict, ""
	}
	switch ser {
	case "yaml":
		// options.setdefault("Loader", Loader): a Loader of the opts is called
		if msg := pyKwargsError("load", []string{"stream"}, []string{"stream", "Loader"}, opts); msg != "" {
			return strict, msg
		}
		if l, ok := opts.Get("Loader"); ok {
			return strict, notCallable(l)
		}
	case "toml":
		if msg := pyKwargsError("load", []string{"f"}, []string{"f", "_dict", "decoder"}, opts); msg != "" {
			return strict, msg
		}
		if d, _ := opts.Get("decoder"); d != nil {
			// decoder.get_empty_table() raises AttributeError, which
			// toml.load turns into this TypeError
			return strict, "You can only load a file descriptor, filename or list"
		}
		if d, ok := opts.Get("_dict"); ok {
			return strict, notCallable(d)
		}
	case "json":
		if opts.Has("fp") {
			return strict, "load() got multiple values for argument 'fp'"
		}
		if opts.Has("s") {
			return strict, "loads() got multiple values for argument 's'"
		}
		// json.loads hands JSONDecoder (or cls) the extra keywords first,
		// then the hooks that are not None
		kw := &payload.Map{}
		for _, it := range opts.Items() {
			k := pyfmt.Str(it.Key)
			if k != "cls" && !slices.Contains(jsonHooks, k) {
				kw.SetKey(k, it.Value)
			}
		}
		for _, h := range jsonHooks {
			if v, _ := opts.Get(h); v != nil {
				kw.Set(h, v)
			}
		}
		if c, _ := opts.Get("cls"); c != nil {
			return strict, notCallable(c)
		}
		if msg := pyKwargsError("JSONDecoder.__init__", nil, append([]string{"strict"}, jsonHooks...), kw); msg != "" {
			return strict, msg
		}
		if v, ok := opts.Get("strict"); ok {
			strict = payload.Truthy(v)
		}
	}
	return strict, ""
}

// jsonHookError is the TypeError of the first json.loads hook of opts
// (values, none of them a function) that the decoder calls on v, in the
// order Python's scanner calls them: parse_int/parse_float at each number
// (JSONDecoder keeps a false one as the default), object_pairs_hook (or
// else object_hook) as each object closes.
func jsonHookError(v any, opts *payload.Map) string {
	hook := func(k string) any {
		x, _ := opts.Get(k)
		return x
	}
	var walk func(v any) string
	walk = func(v any) string {
		switch x := v.(type) {
		case *payload.Map:
			for _, it := range x.Items() {
				if m := walk(it.Value); m != "" {
					return m
				}
			}
			if h := hook("object_pairs_hook"); h != nil {
				return notCallable(h)
			}
			if h := hook("object_hook"); h != nil {
				return notCallable(h)
			}
		case []any:
			for _, e := range x {
				if m := walk(e); m != "" {
					return m
				}
			}
		case float64:
			if h := hook("parse_float"); payload.Truthy(h) {
				return notCallable(h)
			}
		case int64, uint64:
			if h := hook("parse_int"); payload.Truthy(h) {
				return notCallable(h)
			}
		}
		return ""
	}
	return walk(v)
}

// jsonEscapeControls writes raw control characters inside JSON strings as
// \u escapes: the document JSONDecoder(strict=False) accepts, in a form
// the strict decoder reads the same.
func jsonEscapeControls(src []byte) []byte {
	out := make([]byte, 0, len(src))
	in, esc := false, false
	for _, c := range src {
		switch {
		case !in:
			in = c == '"'
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			in = false
		case c < 0x20:
			out = append(out, fmt.Sprintf("\\u%04x", c)...)
			continue
		}
		out = append(out, c)
	}
	return out
}

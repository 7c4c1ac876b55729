package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
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

// repackDictlist is salt.utils.data.repack_dictlist on a list of
// one-key dicts (or a dict).
func repackDictlist(v any) *payload.Map {
	out := &payload.Map{}
	switch x := v.(type) {
	case *payload.Map:
		for _, it := range x.Items() {
			out.SetKey(it.Key, it.Value)
		}
	case []any:
		for _, e := range x {
			if m, ok := e.(*payload.Map); ok {
				for _, it := range m.Items() {
					out.SetKey(it.Key, it.Value)
				}
			}
		}
	}
	return out
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
		for _, it := range repackDictlist(so).Items() {
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
		existing, merged, done, err = serializeMerge(ctx, ret, name, ser, dataset)
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
// nothing); merged is nil when there was nothing to merge with. gsalt's
// deserializers take no deserializer_opts.
func serializeMerge(ctx context.Context, ret *states.Ret, name, ser string, dataset any) (existing, merged any, done bool, err error) {
	st, err := os.Stat(name)
	if err != nil || !st.Mode().IsRegular() {
		return nil, nil, false, nil
	}
	text, err := os.ReadFile(name)
	if err != nil {
		return nil, nil, true, err
	}
	existing, err = mbuiltin.Deserialize(ctx, ser, string(text))
	if err != nil {
		msg := err.Error()
		var pe *modules.PyException
		if errors.As(err, &pe) {
			msg = pe.Message
		}
		ret.Result, ret.Comment = states.False, "Failed to deserialize existing data: "+strings.TrimPrefix(msg, "salt.serializers.DeserializationError: ")
		return nil, nil, true, nil
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

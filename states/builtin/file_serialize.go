package builtin

import (
	"context"
	"fmt"
	"strings"

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
	if payload.Truthy(a.Get("merge_if_exists")) {
		// Salt deserializes the file, merges and reports a dictdiffer
		// diff; gsalt does not have that diff yet and says so.
		return fileError(ret, "merge_if_exists is not supported by gsalt's file.serialize")
	}
	if payload.Truthy(a.Get("deserializer_opts")) {
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
			return *ret, nil
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
		return *ret, nil
	}
	out, err := r.manageFile(name, "", ret, fileManageOpts{user: a.Get("user"), group: a.Get("group"), mode: mode,
		backup: fileBackupArg(a.Get("backup")), makedirs: payload.Truthy(a.Get("makedirs")), showChanges: payload.Truthy(a.Get("show_changes")),
		follow: true, contents: &contents, encoding: serializeOptStr(a.Get("encoding"))})
	if err != nil {
		return *ret, err
	}
	return *out, nil
}

// serializeOptStr is an optional text argument ("" for None).
func serializeOptStr(v any) string {
	if v == nil {
		return ""
	}
	return pyfmt.Str(v)
}

package builtin

// This file is Salt's file.accumulated state function (salt/states/file.py)
// and the accumulator lookups of file.managed (the "accumulator" template
// variable) and file.blockreplace (accumulated lines appended to content).

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func fileAccumulatedStates() []states.Function {
	return []states.Function{
		{Name: "file.accumulated", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("filename"), sbReq("text")}, Kwargs: true},
			Fn: fileAccumulatedState},
	}
}

// fileAccumulatedState is file.accumulated: text stored for the file
// state(s) this one is a require_in/watch_in of.
func fileAccumulatedState(_ context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := fileNewRet(name)
	if name == "" {
		return fileError(ret, "Must provide name to file.accumulated")
	}
	text := c.Args.Get("text")
	if text == nil {
		ret.Result = states.False
		ret.Comment = "No text supplied for accumulator"
		return *ret, nil
	}
	var deps []any
	for _, k := range []string{"require_in", "watch_in"} {
		if c.Low == nil {
			break
		}
		if v, ok := c.Low.Get(k); ok {
			if l, ok := v.([]any); ok {
				deps = append(deps, l...)
			}
		}
	}
	hasFile := false
	for _, d := range deps {
		switch x := d.(type) {
		case *payload.Map:
			hasFile = hasFile || x.Has("file")
		case string:
			hasFile = hasFile || containsSubstr(x, "file")
		}
	}
	if !hasFile {
		ret.Result = states.False
		sls := "None"
		if c.Low != nil {
			if v, ok := c.Low.Get("__sls__"); ok && v != nil {
				sls = pyfmt.Str(v)
			}
		}
		ret.Comment = fmt.Sprintf("Orphaned accumulator %s in %s:%s", name, sls, c.ID)
		return *ret, nil
	}
	var chunks []any
	switch x := text.(type) {
	case []any:
		chunks = x
	default:
		chunks = []any{x}
	}
	var ids []any
	for _, d := range deps {
		switch x := d.(type) {
		case *payload.Map:
			for _, it := range x.Items() {
				ids = append(ids, it.Value)
			}
		case string:
			for _, r := range x {
				ids = append(ids, string(r))
			}
		}
	}
	filename := pyfmt.Str(c.Args.Get("filename"))
	if c.Accum == nil {
		c.Accum = &states.Accumulators{}
	}
	if c.Accum.Add(filename, name, chunks, ids) {
		ret.Comment = fmt.Sprintf("Accumulator %s for file %s was charged by text", name, filename)
	}
	return *ret, nil
}

func containsSubstr(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// fileAccumContext is file.managed's context with "accumulator" set to
// the accumulators charged for name, when there are any.
func fileAccumContext(c *states.Call, name string, context any) any {
	data, _ := c.Accum.Get(name)
	if data == nil {
		return context
	}
	ctx, ok := context.(*payload.Map)
	if ok && ctx.Len() > 0 {
		ctx = ctx.Clone()
	} else {
		ctx = &payload.Map{}
	}
	ctx.Set("accumulator", data)
	return ctx
}

// fileAccumContent is file.blockreplace's content with the lines of the
// accumulators charged for name (the ones this state is required by, or
// all of them) appended.
func fileAccumContent(c *states.Call, name, content string) string {
	data, deps := c.Accum.Get(name)
	if data == nil {
		return content
	}
	var use []string
	for _, it := range deps.Items() {
		acc := payload.KeyString(it.Key)
		ids, _ := it.Value.([]any)
		for _, id := range ids {
			if pyfmt.Str(id) == c.ID && data.Has(acc) {
				use = append(use, acc)
				break
			}
		}
	}
	if len(use) == 0 {
		use = data.Keys()
	}
	for _, acc := range use {
		lines, _ := data.Get(acc)
		l, _ := lines.([]any)
		for _, line := range l {
			if content == "" {
				content = pyfmt.Str(line)
			} else {
				content += "\n" + pyfmt.Str(line)
			}
		}
	}
	return content
}

package builtin

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's file.prepend state (salt/states/file.py prepend):
// text put at the top of a file unless it is already in it (or, with
// header, unless the file already starts with it).

func filePrependStates() []states.Function {
	p := func(name string, def any) modules.Param { return modules.Param{Name: name, Default: def} }
	return []states.Function{
		{Name: "file.prepend", Fn: filePrependState, Spec: modules.Spec{Params: []modules.Param{
			{Name: "name", Required: true}, p("text", nil), p("makedirs", false), p("source", nil),
			p("source_hash", nil), p("template", "jinja"), p("sources", nil), p("source_hashes", nil),
			p("defaults", nil), p("context", nil), p("header", nil)}}},
	}
}

// filePrependState is file.prepend.
func filePrependState(ctx context.Context, c *states.Call) (states.Ret, error) {
	r := fileNewRun(ctx, c)
	a := c.Args
	name := fileExpandUser(a.Str("name"))
	ret := fileNewRet(name)
	ret.Result = states.False
	if name == "" {
		return fileError(ret, "Must provide name to file.prepend")
	}
	text, early, err := r.textPrologue(ctx, c, ret, name)
	if early != nil || err != nil {
		return derefRet(early), err
	}
	chunks := fileStrList(text)
	raw, err := os.ReadFile(name)
	if err != nil {
		return states.Ret{}, err
	}
	slines := py.SplitLines(fileDecodeText(raw), true)
	header := payload.Truthy(a.Get("header"))
	count := 0
	var testLines []string
	var preface []any
	for _, chunk := range chunks {
		if !header {
			expr, err := fileWhitespaceRegex(chunk)
			if err != nil {
				return states.Ret{}, err
			}
			re, err := filePyRegexp(expr, filePyReM)
			if err != nil {
				return states.Ret{}, fmt.Errorf("%w: %s", modules.ErrExecution, err)
			}
			if re.Match(raw) {
				continue
			}
		}
		for _, line := range py.SplitLines(chunk, false) {
			if r.test {
				ret.Comment = fmt.Sprintf("File %s is set to be updated", name)
				ret.Result = states.None
				testLines = append(testLines, line+"\n")
			} else {
				preface = append(preface, line)
			}
			count++
		}
	}
	diffOf := func(nlines []string) string {
		if !fileIsTextFile(name) {
			return "Replace binary file"
		}
		return strings.Join(fileUnifiedDiff(slines, nlines, "", "", "\n"), "")
	}
	if r.test {
		nlines := append(append([]string{}, testLines...), slines...)
		if !fileSameLines(slines, nlines) {
			ret.Changes.Set("diff", diffOf(nlines))
			ret.Result = states.None
		} else {
			ret.Comment = fmt.Sprintf("File %s is in correct state", name)
			ret.Result = states.True
		}
		return *ret, nil
	}
	write := true
	if header {
		// The file's first len(preface) lines, without line ends,
		// against the preface.
		var head []string
		for _, l := range slines[:min(len(preface), len(slines))] {
			head = append(head, py.SplitLines(l, false)...)
		}
		same := len(head) == len(preface)
		for i := 0; same && i < len(head); i++ {
			same = head[i] == preface[i]
		}
		if same {
			write, count = false, 0
		}
	}
	if write {
		if _, err := sbExec(ctx, c, "file.prepend", append([]any{name}, preface...), nil); err != nil {
			return states.Ret{}, err
		}
	}
	after, err := os.ReadFile(name)
	if err != nil {
		return states.Ret{}, err
	}
	if nlines := py.SplitLines(fileDecodeText(after), true); !fileSameLines(slines, nlines) {
		ret.Changes.Set("diff", diffOf(nlines))
	}
	if count > 0 {
		ret.Comment = fmt.Sprintf("Prepended %d lines", count)
	} else {
		ret.Comment = fmt.Sprintf("File %s is in correct state", name)
	}
	ret.Result = states.True
	return *ret, nil
}

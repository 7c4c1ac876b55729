package output

// This file is Salt 3006's "highstate" outputter (salt/output/highstate.py):
// the per-state blocks, the terse one-liners, the "Summary for <minion>"
// table, the "Data failed to compile:" block, nested orchestration results
// and state_compress_ids. Where Salt's outputter raises an error that
// try_printout catches (KeyError, AttributeError, TypeError), the nested
// outputter is used instead, on the data as Salt's outputter left it (it
// edits the return in place: durations gain " ms", comments become str).
// Where Python would raise something try_printout does not catch (an
// IndexError on a state tag with too few "_|-" parts, a ValueError from a
// bad state_tabular format), Salt's CLI dies with a traceback; gsalt logs a
// warning and prints nested instead.

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// HighstateOptions are the state_* settings of Salt's opts that the
// highstate outputter reads. The zero value is not Salt's default; use
// DefaultHighstateOptions.
type HighstateOptions struct {
	// Output is state_output: full, terse, mixed, changes or filter,
	// optionally with an "_id" suffix (the state ID is shown as the name).
	// "" behaves as full.
	Output string
	// Verbose is state_verbose: false hides states that succeeded without
	// changes.
	Verbose bool
	// OutputDiff is state_output_diff: true hides states that succeeded
	// without changes (whatever Verbose says).
	OutputDiff bool
	// Profile is state_output_profile: Started/Duration lines and the
	// "Total run time" line.
	Profile bool
	// Pct is state_output_pct: "Success %" and "Failure %" summary lines.
	Pct bool
	// CompressIDs is state_compress_ids: states of one ID with several
	// names are folded into one line per result.
	CompressIDs bool
	// Tabular is state_tabular: True (aligned terse lines).
	Tabular bool
	// TabularFormat is state_tabular given as a string: a Python
	// str.format template for terse lines with the positional fields
	// colour, name, state module, function, result word, colour reset and
	// the state return. It wins over Tabular when not empty.
	TabularFormat string
	// Exclude is state_output_exclude (filter mode): a list of result
	// words ("True", "False", "None") whose states are not shown, or a
	// comma-separated string. nil means an empty list.
	Exclude any
	// Terse is state_output_terse (filter mode): like Exclude, for states
	// shown as terse lines.
	Terse any
	// Args is opts["arg"], the command's arguments as the CLI parsed them.
	// The last map in it with a "__kwarg__" key supplies "exclude" and
	// "terse", which win over Exclude and Terse.
	Args []any
}

// DefaultHighstateOptions returns Salt 3006's defaults: state_output full,
// state_verbose True, state_output_profile True, everything else off.
func DefaultHighstateOptions() HighstateOptions {
	return HighstateOptions{Output: "full", Verbose: true, Profile: true}
}

// HighstateOptionsFrom reads the state_* settings (and "arg") from Salt
// opts through get (config.Opts.Get fits); keys get returns nothing for
// keep Salt's defaults. Booleans follow Python truthiness; state_tabular is
// Tabular when exactly True and TabularFormat when a string.
func HighstateOptionsFrom(get func(key string) (any, bool)) HighstateOptions {
	ho := DefaultHighstateOptions()
	flag := func(key string, dst *bool) {
		if v, ok := get(key); ok {
			*dst = payload.Truthy(normalize(v))
		}
	}
	if v, ok := get("state_output"); ok {
		ho.Output = PyStr(v)
	}
	flag("state_verbose", &ho.Verbose)
	flag("state_output_diff", &ho.OutputDiff)
	flag("state_output_profile", &ho.Profile)
	flag("state_output_pct", &ho.Pct)
	flag("state_compress_ids", &ho.CompressIDs)
	if v, ok := get("state_tabular"); ok {
		switch x := v.(type) {
		case bool:
			ho.Tabular = x
		case string:
			ho.TabularFormat = x
		}
	}
	if v, ok := get("state_output_exclude"); ok {
		ho.Exclude = v
	}
	if v, ok := get("state_output_terse"); ok {
		ho.Terse = v
	}
	if v, ok := get("arg"); ok {
		if l, isList := normalize(v).([]any); isList {
			ho.Args = l
		}
	}
	return ho
}

// Highstate renders state returns (minion ID → state tag → result) the way
// Salt prints them with --out highstate: like Format("highstate", ...),
// falling back to nested where Salt does, trailing whitespace removed.
func Highstate(data any, o Options) string {
	text, _ := Format("highstate", data, o)
	return text
}

// StateRetcode is the exit code Salt's state module derives from a state
// run's return (salt.modules.state._set_retcode without onfail requisite
// handling): 1 for a list of compile errors, 2 when any state failed or the
// return is not a non-empty dict of state results, else 0.
func StateRetcode(ret any) int {
	ret = normalize(ret)
	if _, ok := ret.([]any); ok {
		return 1
	}
	if !checkStateResult(ret, false, 0) {
		return 2
	}
	return 0
}

// checkStateResult is salt.utils.state.check_result with no highstate.
func checkStateResult(running any, recurse bool, depth int) bool {
	m, ok := normalize(running).(*payload.Map)
	if !ok || m.Len() == 0 || depth > maxReprDepth {
		return false
	}
	for _, it := range m.Items() {
		v := normalize(it.Value)
		var typeOK bool
		if k, _ := it.Key.(string); k == "__extend__" {
			_, typeOK = v.([]any)
		} else {
			_, typeOK = v.(*payload.Map)
		}
		if !recurse && !typeOK {
			return false
		}
		if sm, isMap := v.(*payload.Map); isMap {
			result, has := sm.Get("result")
			if !has {
				if !checkStateResult(sm, true, depth+1) {
					return false
				}
			} else if b, isBool := normalize(result).(bool); isBool && !b {
				return false
			}
		}
	}
	return true
}

// highstateMaxDepth bounds orchestration recursion (Python would hit its
// recursion limit long before).
const highstateMaxDepth = 200

// hsError is a Python exception raised by the highstate outputter. Caught
// ones (KeyError, AttributeError, TypeError) make try_printout fall back to
// nested; the others crash Salt's CLI.
type hsError struct {
	caught bool
	msg    string
}

func (e *hsError) Error() string { return "highstate: " + e.msg }

// Unwrap makes a caught error match ErrFallback.
func (e *hsError) Unwrap() error {
	if e.caught {
		return ErrFallback
	}
	return nil
}

func hsCaught(format string, args ...any) error {
	return &hsError{caught: true, msg: fmt.Sprintf(format, args...)}
}

func hsCrash(format string, args ...any) error {
	return &hsError{msg: fmt.Sprintf(format, args...)}
}

// hsFormatter is str.format on state return values.
var hsFormatter = py.Formatter{Str: PyStr, Repr: PyRepr, Normalize: normalize}

// hsPyError turns an exception raised by str.format into the outputter's:
// KeyError, AttributeError and TypeError are caught by try_printout (as is
// what gsalt does not implement), the others crash the CLI.
func hsPyError(err error) error {
	var e *py.Exception
	if !errors.As(err, &e) {
		return err
	}
	switch e.Type {
	case "KeyError", "AttributeError", "TypeError", "NotImplementedError":
		return hsCaught("%s", e.Msg)
	}
	return hsCrash("%s", e.Msg)
}

type hsRenderer struct {
	o     Options
	ho    HighstateOptions
	c     Colors
	strip bool
}

// highstateOutput is try_printout with the highstate outputter.
func highstateOutput(data any, o Options) string {
	ho := DefaultHighstateOptions()
	if o.Highstate != nil {
		ho = *o.Highstate
	}
	h := &hsRenderer{o: o, ho: ho, c: NewColors(o.Color), strip: !o.KeepColors}
	owned := hsClone(data, 0)
	text, err := h.output(owned, 1, 0)
	if err != nil {
		if errors.Is(err, ErrFallback) {
			o.logger().Debug("highstate outputter failed, falling back to nested", "error", err)
		} else {
			o.logger().Warn("Salt's highstate outputter raises on this data; showing nested", "error", err)
		}
		return Nested(owned, o)
	}
	return text
}

// hsClone copies maps and lists (normalized) so the outputter can edit
// them in place as Salt's does.
func hsClone(v any, depth int) any {
	v = normalize(v)
	if depth > maxReprDepth {
		return v
	}
	switch x := v.(type) {
	case *payload.Map:
		c := payload.NewMap()
		for _, it := range x.Items() {
			c.SetKey(normalize(it.Key), hsClone(it.Value, depth+1))
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = hsClone(e, depth+1)
		}
		return c
	}
	return v
}

// strKey returns the value of a map under a str key (Python's d[key]).
func strKey(m *payload.Map, key string) (any, bool) {
	for _, it := range m.Items() {
		if k, ok := it.Key.(string); ok && k == key {
			return it.Value, true
		}
	}
	return nil, false
}

func hasKey(m *payload.Map, key string) bool {
	_, ok := strKey(m, key)
	return ok
}

func isPyInt(v any) bool {
	switch v.(type) {
	case bool, int64, uint64, *big.Int:
		return true
	}
	return false
}

// output is highstate.output().
func (h *hsRenderer) output(data any, level, depth int) (string, error) {
	if depth > highstateMaxDepth {
		return "", hsCrash("maximum recursion depth exceeded")
	}
	if m, ok := data.(*payload.Map); ok {
		if v, has := strKey(m, "return"); has {
			data = v
		}
	}
	if m, ok := data.(*payload.Map); ok {
		if v, has := strKey(m, "data"); has {
			data = v
		}
	}
	if m, ok := data.(*payload.Map); ok && m.Len() == 1 {
		if inner, isMap := m.Items()[0].Value.(*payload.Map); isMap && hasKey(inner, "jid") && hasKey(inner, "fun") {
			r, has := strKey(inner, "return")
			if !has {
				r = payload.NewMap()
			}
			rm, isMap := r.(*payload.Map)
			if !isMap {
				return "", hsCaught("'%s' object has no attribute 'get'", pyTypeWord(r))
			}
			if d, has := strKey(rm, "data"); has {
				data = d
			}
		}
	}
	switch x := data.(type) {
	case string:
		return x, nil
	case nil:
		return "None", nil
	case *payload.Map:
		return h.outputMap(x, level, depth)
	}
	if isPyInt(data) {
		return "", hsCaught("'int' object has no attribute 'rstrip'")
	}
	return "", hsCaught("'%s' object has no attribute 'keys'", pyTypeWord(data))
}

func (h *hsRenderer) outputMap(data *payload.Map, level, depth int) (string, error) {
	masters := 0
	hasRetcode := false
	for _, it := range data.Items() {
		k, ok := it.Key.(string)
		if !ok {
			return "", hsCaught("%s key has no endswith", pyTypeWord(it.Key))
		}
		if strings.HasSuffix(k, "_master") {
			masters++
		}
		if k == "retcode" {
			hasRetcode = true
		}
	}
	if hasRetcode && masters == 1 {
		data.Delete("retcode")
	}
	if h.ho.CompressIDs {
		data = h.compressIDs(data)
	}
	parts := make([]string, 0, data.Len())
	for _, it := range data.Items() {
		s, _, err := h.formatHost(it.Key, it.Value, level, depth)
		if err != nil {
			return "", err
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		h.o.logger().Error("Data passed to highstate outputter is not a valid highstate return: " + PyStr(data))
		return "", nil
	}
	return strings.Join(parts, "\n"), nil
}

// pyTypeWord is type(v).__name__.
func pyTypeWord(v any) string {
	n := pyTypeName(normalize(v))
	n = strings.TrimPrefix(n, "<class '")
	n = strings.TrimSuffix(n, "'>")
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		n = n[i+1:]
	}
	return n
}

// hashKey is the identity of a value as a Python dict key (1, 1.0 and True
// are one key); ok is false for unhashable values.
func hashKey(v any) (string, bool) {
	switch x := normalize(v).(type) {
	case nil:
		return "n", true
	case bool:
		if x {
			return "i1", true
		}
		return "i0", true
	case int64:
		return "i" + strconv.FormatInt(x, 10), true
	case uint64:
		return "i" + strconv.FormatUint(x, 10), true
	case *big.Int:
		return "i" + x.String(), true
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			bf := new(big.Float).SetFloat64(x)
			bi, _ := bf.Int(nil)
			return "i" + bi.String(), true
		}
		if math.IsNaN(x) {
			return "", true // caller treats NaN as a fresh key
		}
		return "f" + strconv.FormatFloat(x, 'g', -1, 64), true
	case string:
		return "s" + x, true
	case []byte:
		return "b" + string(x), true
	case time.Time:
		return "t" + x.String(), true
	case *payload.Map, []any:
		return "", false
	}
	return "x" + PyRepr(v), true
}

// counter is the rcounts dict: insertion-ordered counts by hash key.
type counter struct {
	keys []string
	n    map[string]int64
	nan  int
}

func (c *counter) add(key string, n int64) {
	if c.n == nil {
		c.n = map[string]int64{}
	}
	if _, ok := c.n[key]; !ok {
		c.keys = append(c.keys, key)
	}
	c.n[key] += n
}

func (c *counter) get(key string) int64 { return c.n[key] }

func (c *counter) has(key string) bool {
	_, ok := c.n[key]
	return ok
}

func (c *counter) sum() int64 {
	var s int64
	for _, k := range c.keys {
		s += c.n[k]
	}
	return s
}

const (
	keyTrue     = "i1"
	keyFalse    = "i0"
	keyNone     = "n"
	keyWarnings = "swarnings"
)

// formatHost is highstate._format_host.
func (h *hsRenderer) formatHost(host, data any, level, depth int) (string, bool, error) {
	c := h.c
	hcolor := c.Green
	var hstrs []string
	nchanges := 0
	switch x := data.(type) {
	case string:
		nchanges = 1
		for _, line := range py.SplitLines(x, false) {
			hstrs = append(hstrs, hcolor+"    "+line+c.Endc)
		}
		hcolor = c.Cyan
	case []any:
		hcolor = c.LightRed
		hstrs = append(hstrs, "    "+hcolor+"Data failed to compile:"+c.Endc)
		for _, e := range x {
			if h.strip {
				var err error
				if e, err = pyDecode(e, 0); err != nil {
					return "", false, err
				}
			}
			s := PyStr(e)
			if es, ok := e.(string); ok && h.strip {
				s = strings.ReplaceAll(es, "\x1b", "?")
			}
			hstrs = append(hstrs, hcolor+"----------\n    "+s+c.Endc)
		}
	case *payload.Map:
		dhost, err := pyDecode(host, 0)
		if err != nil {
			return "", false, err
		}
		hstrs, hcolor, nchanges, err = h.formatStates(dhost, x, level, depth)
		if err != nil {
			return "", false, err
		}
	default:
		if isPyInt(data) {
			nchanges = 1
			hstrs = append(hstrs, hcolor+"    "+PyStr(data)+c.Endc)
			hcolor = c.Cyan
		}
	}
	host, err := pyDecode(host, 0)
	if err != nil {
		return "", false, err
	}
	hs := PyStr(host)
	if s, ok := host.(string); ok && h.strip {
		hs = strings.ReplaceAll(s, "\x1b", "?")
	}
	hstrs = append([]string{hcolor + hs + ":" + c.Endc}, hstrs...)
	return strings.Join(hstrs, "\n"), nchanges > 0, nil
}

// pyDecode is salt.utils.data.decode: bytes become str, and bytes that are
// not UTF-8 raise UnicodeDecodeError (which escapes try_printout).
func pyDecode(v any, depth int) (any, error) {
	if depth > maxReprDepth {
		return v, nil
	}
	switch x := v.(type) {
	case []byte:
		if !utf8.Valid(x) {
			return nil, hsCrash("'utf-8' codec can't decode bytes")
		}
		return string(x), nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			d, err := pyDecode(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = d
		}
		return out, nil
	case *payload.Map:
		out := payload.NewMap()
		for _, it := range x.Items() {
			k, err := pyDecode(it.Key, depth+1)
			if err != nil {
				return nil, err
			}
			val, err := pyDecode(it.Value, depth+1)
			if err != nil {
				return nil, err
			}
			out.SetKey(k, val)
		}
		return out, nil
	}
	return v, nil
}

type stateEntry struct {
	tag     any
	ret     *payload.Map
	sortKey any
}

// sortStates orders the states by __run_num__ (default 0) like Python's
// sorted(); ok is false where Python's comparison raises TypeError.
func sortStates(entries []stateEntry) bool {
	if len(entries) < 2 {
		return true
	}
	cls := classOf(normalize(entries[0].sortKey))
	for _, e := range entries[1:] {
		if classOf(normalize(e.sortKey)) != cls {
			return false
		}
	}
	if cls == classNone || cls == classOther {
		return false
	}
	failed := false
	sort.SliceStable(entries, func(i, j int) bool {
		l, ok := pyLess(normalize(entries[i].sortKey), normalize(entries[j].sortKey))
		if !ok {
			failed = true
		}
		return l
	})
	return !failed
}

// formatStates is the dict branch of _format_host.
func (h *hsRenderer) formatStates(host any, data *payload.Map, level, depth int) (hstrs []string, hcolor string, nchanges int, err error) {
	c := h.c
	hcolor = c.Green
	var entries []stateEntry
	for _, it := range data.Items() {
		info, isMap := it.Value.(*payload.Map)
		if !isMap {
			continue
		}
		if k, _ := it.Key.(string); k != "changes" && info.Len() > 0 && !hasKey(info, "__run_num__") {
			hstrs = append([]string{
				"The State execution failed to record the order in which all states were executed. The state return missing data is:",
				PPrint(info, 1),
			}, hstrs...)
		}
		if hasKey(info, "result") {
			var rn any = int64(0)
			if v, ok := strKey(info, "__run_num__"); ok {
				rn = v
			}
			entries = append(entries, stateEntry{tag: it.Key, ret: info, sortKey: rn})
		}
	}
	if !sortStates(entries) {
		return nil, "", 0, hsCaught("'<' not supported between __run_num__ values")
	}
	var rcounts counter
	var rdurations, pdurations []float64
	for _, e := range entries {
		ret := e.ret
		result, _ := strKey(ret, "result")
		rkey, hashable := hashKey(result)
		if !hashable {
			return nil, "", 0, hsCaught("unhashable type: '%s'", pyTypeWord(result))
		}
		if rkey == "" { // NaN: its own key
			rcounts.nan++
			rkey = "nan" + strconv.Itoa(rcounts.nan)
		}
		rcounts.add(rkey, 0)
		compressed := int64(1)
		if tag, ok := e.tag.(string); ok && h.ho.CompressIDs && strings.Contains(tag, "_|-state_compressed_") {
			parts := strings.Split(tag, "_|-")
			if len(parts) != 4 {
				return nil, "", 0, hsCrash("too many values to unpack (expected 4)")
			}
			if n, ok := compressedCount(parts[1]); ok {
				compressed = n
			}
		}
		rcounts.add(rkey, compressed)

		dur, has := strKey(ret, "duration")
		if !has {
			dur = int64(0)
		}
		f, ok, err := durationFloat(dur)
		if err != nil {
			return nil, "", 0, err
		}
		if !ok {
			h.o.logger().Error("Cannot parse a float from duration " + PyStr(dur))
		} else if hasKey(ret, "__parallel__") {
			pdurations = append(pdurations, f)
		} else {
			rdurations = append(rdurations, f)
		}

		tcolor := c.Green
		var schanged bool
		var ctext string
		name, _ := strKey(ret, "name")
		changes, hasChanges := strKey(ret, "changes")
		if ns, _ := name.(string); ns == "state.orch" || ns == "state.orchestrate" || ns == "state.sls" {
			if !hasChanges {
				return nil, "", 0, hsCaught("KeyError: 'changes'")
			}
			nested, err := h.output(changes, level+1, depth+1)
			if err != nil {
				return nil, "", 0, err
			}
			pad := strings.Repeat(" ", 14*level)
			ctext = pad + strings.ReplaceAll("\n"+nested, "\n", "\n"+pad)
			schanged = true
			nchanges++
		} else {
			if !hasChanges {
				return nil, "", 0, hsCaught("KeyError: 'changes'")
			}
			schanged, ctext, err = h.formatChanges(changes, depth)
			if err != nil {
				return nil, "", 0, err
			}
			if schanged && compressed > 1 {
				cm, isMap := changes.(*payload.Map)
				if !isMap {
					return nil, "", 0, hsCaught("'%s' object has no attribute 'get'", pyTypeWord(changes))
				}
				n := 0
				if cc, ok := strKey(cm, "compressed changes"); ok {
					l, ok := pyLen(cc)
					if !ok {
						return nil, "", 0, hsCaught("object of type '%s' has no len()", pyTypeWord(cc))
					}
					n = l
				}
				if n == 0 {
					n = 1
				}
				nchanges += n
			} else if schanged {
				nchanges++
			}
		}

		if h.ho.OutputDiff && payload.Truthy(result) && !schanged {
			continue
		}
		if !h.ho.Verbose && payload.Truthy(result) && !schanged {
			continue
		}
		if schanged {
			tcolor = c.Cyan
		}
		if b, ok := result.(bool); ok && !b {
			hcolor, tcolor = c.Red, c.Red
		}
		if result == nil {
			hcolor, tcolor = c.LightYellow, c.LightYellow
		}

		mode := strings.ToLower(h.ho.Output)
		tag, ok := e.tag.(string)
		if !ok {
			return nil, "", 0, hsCaught("'%s' object has no attribute 'split'", pyTypeWord(e.tag))
		}
		comps := strings.Split(tag, "_|-")
		if strings.HasSuffix(mode, "_id") {
			if len(comps) < 3 {
				return nil, "", 0, hsCrash("list assignment index out of range")
			}
			comps[2] = comps[1]
		}

		terse := false
		switch {
		case strings.HasPrefix(mode, "filter"):
			exclude, terseList := h.ho.Exclude, h.ho.Terse
			for _, a := range h.ho.Args {
				if am, isMap := normalize(a).(*payload.Map); isMap && hasKey(am, "__kwarg__") {
					exclude, terseList = h.ho.Exclude, h.ho.Terse
					if v, ok := strKey(am, "exclude"); ok {
						exclude = v
					}
					if v, ok := strKey(am, "terse"); ok {
						terseList = v
					}
				}
			}
			rs := PyStr(result)
			in, err := pyContains(splitIfStr(terseList), rs)
			if err != nil {
				return nil, "", 0, err
			}
			if in {
				terse = true
				break
			}
			in, err = pyContains(splitIfStr(exclude), rs)
			if err != nil {
				return nil, "", 0, err
			}
			if in {
				continue
			}
		case strings.HasPrefix(mode, "terse"),
			strings.HasPrefix(mode, "mixed") && !isFalse(result),
			strings.HasPrefix(mode, "changes") && payload.Truthy(result) && !schanged:
			terse = true
		}
		if terse {
			msg, err := h.formatTerse(tcolor, comps, ret)
			if err != nil {
				return nil, "", 0, err
			}
			hstrs = append(hstrs, msg)
			continue
		}

		lines, err := h.fullState(tcolor, comps, ret, result)
		if err != nil {
			return nil, "", 0, err
		}
		hstrs = append(hstrs, lines...)
		hstrs = append(hstrs, tcolor+"     Changes:   "+ctext+c.Endc)

		if w, ok := strKey(ret, "warnings"); ok {
			rcounts.add(keyWarnings, 1)
			text, err := pyJoin("\n", w)
			if err != nil {
				return nil, "", 0, err
			}
			filled := strings.TrimLeftFunc(py.Fill(text, 80, strings.Repeat(" ", 14), strings.Repeat(" ", 14)), py.IsSpace)
			hstrs = append(hstrs, "   "+c.LightRed+" Warnings: "+filled+c.Endc)
		}
	}
	hstrs = append(hstrs, h.summary(host, &rcounts, nchanges, rdurations, pdurations)...)
	return hstrs, hcolor, nchanges, nil
}

func isFalse(v any) bool {
	b, ok := v.(bool)
	return ok && !b
}

// compressedCount reads the "(N)" at the end of a compressed state ID.
func compressedCount(id string) (int64, bool) {
	id = strings.TrimSuffix(id, "\n")
	if !strings.HasSuffix(id, ")") {
		return 0, false
	}
	open := strings.LastIndexByte(id, '(')
	if open < 0 {
		return 0, false
	}
	digits := id[open+1 : len(id)-1]
	if digits == "" {
		return 0, false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil
}

// pyLen is len(v).
func pyLen(v any) (int, bool) {
	switch x := v.(type) {
	case string:
		return utf8.RuneCountInString(x), true
	case []byte:
		return len(x), true
	case []any:
		return len(x), true
	case *payload.Map:
		return x.Len(), true
	}
	return 0, false
}

// splitIfStr is the filter mode's str(x).split(",") of a string setting.
func splitIfStr(v any) any {
	if s, ok := v.(string); ok {
		parts := strings.Split(s, ",")
		out := make([]any, len(parts))
		for i, p := range parts {
			out[i] = p
		}
		return out
	}
	if v == nil {
		return []any{}
	}
	return normalize(v)
}

// pyContains is Python's `needle in container` for a str needle.
func pyContains(container any, needle string) (bool, error) {
	switch x := container.(type) {
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && s == needle {
				return true, nil
			}
		}
		return false, nil
	case *payload.Map:
		_, ok := strKey(x, needle)
		return ok, nil
	case string:
		return strings.Contains(x, needle), nil
	}
	return false, hsCaught("argument of type '%s' is not iterable", pyTypeWord(container))
}

// pyJoin is sep.join(v).
func pyJoin(sep string, v any) (string, error) {
	var parts []string
	switch x := v.(type) {
	case string:
		for _, r := range x {
			parts = append(parts, string(r))
		}
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return "", hsCaught("sequence item: expected str instance, %s found", pyTypeWord(e))
			}
			parts = append(parts, s)
		}
	case *payload.Map:
		for _, it := range x.Items() {
			s, ok := it.Key.(string)
			if !ok {
				return "", hsCaught("sequence item: expected str instance, %s found", pyTypeWord(it.Key))
			}
			parts = append(parts, s)
		}
	default:
		return "", hsCaught("can only join an iterable")
	}
	return strings.Join(parts, sep), nil
}

// durationFloat is float(duration) with the outputter's " ms" retry: ok
// false means Salt logs "Cannot parse a float"; err is a Python TypeError.
func durationFloat(v any) (float64, bool, error) {
	switch x := v.(type) {
	case bool, int64, uint64, *big.Int, float64:
		return asFloat(x), true, nil
	case string:
		if f, ok := pyParseFloat(x); ok {
			return f, true, nil
		}
		head, _, _ := strings.Cut(x, " ms")
		f, ok := pyParseFloat(head)
		return f, ok, nil
	case []byte:
		if f, ok := pyParseFloat(string(x)); ok {
			return f, true, nil
		}
		return 0, false, hsCaught("a bytes-like object is required, not 'str'")
	}
	return 0, false, hsCaught("float() argument must be a string or a real number, not '%s'", pyTypeWord(v))
}

// pyParseFloat is Python's float(str).
func pyParseFloat(s string) (float64, bool) {
	s = strings.TrimFunc(s, py.IsSpace)
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	switch strings.ToLower(body) {
	case "inf", "infinity":
		if strings.HasPrefix(s, "-") {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	var b strings.Builder
	digits, prevDigit, seenDot, seenExp, expDigits := 0, false, false, false, 0
	for i := 0; i < len(body); i++ {
		ch := body[i]
		switch {
		case ch >= '0' && ch <= '9':
			if seenExp {
				expDigits++
			} else {
				digits++
			}
			prevDigit = true
			b.WriteByte(ch)
		case ch == '_':
			if !prevDigit || i+1 >= len(body) || body[i+1] < '0' || body[i+1] > '9' {
				return 0, false
			}
			prevDigit = false
		case ch == '.':
			if seenDot || seenExp {
				return 0, false
			}
			seenDot, prevDigit = true, false
			b.WriteByte(ch)
		case ch == 'e' || ch == 'E':
			if seenExp || digits == 0 {
				return 0, false
			}
			seenExp, prevDigit = true, false
			b.WriteByte('e')
			if i+1 < len(body) && (body[i+1] == '+' || body[i+1] == '-') {
				i++
				b.WriteByte(body[i])
			}
		default:
			return 0, false
		}
	}
	if digits == 0 || (seenExp && expDigits == 0) {
		return 0, false
	}
	str := b.String()
	if strings.HasPrefix(s, "-") {
		str = "-" + str
	}
	f, err := strconv.ParseFloat(str, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// formatChanges is highstate._format_changes.
func (h *hsRenderer) formatChanges(changes any, depth int) (bool, string, error) {
	if !payload.Truthy(changes) {
		return false, "", nil
	}
	cm, ok := changes.(*payload.Map)
	if !ok {
		return true, "Invalid Changes data: " + PyStr(changes), nil
	}
	ret, hasRet := strKey(cm, "ret")
	out, _ := strKey(cm, "out")
	if outS, _ := out.(string); hasRet && ret != nil && outS == "highstate" {
		rm, isMap := ret.(*payload.Map)
		if !isMap {
			return false, "", hsCaught("'%s' object has no attribute 'items'", pyTypeWord(ret))
		}
		var b strings.Builder
		changed := false
		for _, it := range rm.Items() {
			s, ch, err := h.formatHost(it.Key, it.Value, 1, depth+1)
			if err != nil {
				return false, "", err
			}
			lines := py.SplitLines(s, false)
			for i := range lines {
				lines[i] = "              " + lines[i]
			}
			b.WriteString("\n" + strings.Join(lines, "\n"))
			changed = changed || ch
		}
		return changed, b.String(), nil
	}
	no := h.o
	no.NestedIndent, no.Retcode = 14, 0
	return true, "\n" + strings.TrimRightFunc(Nested(cm, no), py.IsSpace), nil
}

// fullState renders the full block of one state (without the Changes
// line), editing ret as Salt does.
func (h *hsRenderer) fullState(tcolor string, comps []string, ret *payload.Map, result any) ([]string, error) {
	c := h.c
	if len(comps) < 3 {
		return nil, hsCrash("list index out of range")
	}
	profile := h.ho.Profile && hasKey(ret, "start_time")
	withName := comps[1] != comps[2]
	if len(comps) < 4 {
		return nil, hsCrash("list index out of range")
	}
	raw, ok := strKey(ret, "comment")
	if !ok {
		return nil, hsCaught("KeyError: 'comment'")
	}
	if _, isStr := raw.(string); !isStr {
		raw = PyStr(raw)
		ret.Set("comment", raw)
	}
	comment := strings.TrimFunc(raw.(string), py.IsSpace)
	comment = strings.ReplaceAll(comment, "\n", "\n"+strings.Repeat(" ", 14))
	if d, ok := strKey(ret, "data"); ok {
		switch x := d.(type) {
		case []any:
			for _, item := range x {
				comment += " " + PyStr(item)
			}
		case *payload.Map:
			for _, it := range x.Items() {
				comment += "\n\t\t" + PyStr(it.Key) + ": " + PyStr(it.Value)
			}
		default:
			comment += " " + PyStr(x)
		}
	}
	if !hasKey(ret, "start_time") {
		ret.Set("start_time", "")
	}
	if !hasKey(ret, "duration") {
		ret.Set("duration", "")
	}
	if d, _ := strKey(ret, "duration"); d != "" {
		ret.Set("duration", PyStr(d)+" ms")
	}
	lines := []string{
		tcolor + "----------" + c.Endc,
		"    " + tcolor + "      ID: " + comps[1] + c.Endc,
		"    " + tcolor + "Function: " + comps[0] + "." + comps[3] + c.Endc,
	}
	if withName {
		lines = append(lines, "    "+tcolor+"    Name: "+comps[2]+c.Endc)
	}
	lines = append(lines,
		"    "+tcolor+"  Result: "+PyStr(result)+c.Endc,
		"    "+tcolor+" Comment: "+comment+c.Endc,
	)
	if profile {
		st, _ := strKey(ret, "start_time")
		du, _ := strKey(ret, "duration")
		lines = append(lines,
			"    "+tcolor+" Started: "+PyStr(st)+c.Endc,
			"    "+tcolor+"Duration: "+PyStr(du)+c.Endc,
		)
	}
	return lines, nil
}

// formatTerse is highstate._format_terse: the template is built (warnings
// included) and then run through Python's str.format.
func (h *hsRenderer) formatTerse(tcolor string, comps []string, ret *payload.Map) (string, error) {
	c := h.c
	if len(comps) < 3 {
		return "", hsCrash("list index out of range")
	}
	changes, _ := strKey(ret, "changes")
	result, _ := strKey(ret, "result")
	word := "Clean"
	if payload.Truthy(changes) {
		word = "Changed"
	}
	if isFalse(result) {
		word = "Failed"
	} else if result == nil {
		word = "Differs"
	}
	profile := h.ho.Profile && hasKey(ret, "start_time")
	var tmpl string
	switch {
	case h.ho.TabularFormat != "":
		tmpl = h.ho.TabularFormat
	case h.ho.Tabular:
		if w, ok := strKey(ret, "warnings"); ok {
			text, err := pyJoin("\n", w)
			if err != nil {
				return "", err
			}
			tmpl += c.LightRed + "Warnings:\n" + text + c.Endc + "\n"
		}
		tmpl += "{0}"
		if profile {
			tmpl += "{6[start_time]!s} [{6[duration]!s:>7} ms] "
		}
		tmpl += "{2:>10}.{3:<10} {4:7}   Name: {1}{5}"
	default:
		if w, ok := strKey(ret, "warnings"); ok {
			text, err := pyJoin("\n", w)
			if err != nil {
				return "", err
			}
			tmpl += c.LightRed + "Warnings:\n" + text + c.Endc
		}
		tmpl += " {0} Name: {1} - Function: {2}.{3} - Result: {4}"
		if profile {
			tmpl += " - Started: {6[start_time]!s} - Duration: {6[duration]!s} ms"
		}
		tmpl += "{5}"
	}
	out, err := hsFormatter.Format(tmpl, tcolor, comps[2], comps[0], comps[len(comps)-1], word, c.Endc, ret)
	return out, hsPyError(err)
}

// summary is the "Summary for" table.
func (h *hsRenderer) summary(host any, rc *counter, nchanges int, rdur, pdur []float64) []string {
	c := h.c
	countMax := 0
	for _, k := range rc.keys {
		if l := len(strconv.FormatInt(rc.n[k], 10)); l > countMax {
			countMax = l
		}
	}
	lineMax := 9 + countMax + 2
	dashes := strings.Repeat("-", lineMax)
	counts := func(label, count string) string {
		return label + ": " + padLeft(count, lineMax-(utf8.RuneCountInString(label)+2))
	}
	var out []string
	out = append(out, c.Cyan+"\nSummary for "+PyStr(host)+"\n"+dashes+c.Endc)
	var stats []string
	if rc.has(keyNone) && rc.get(keyNone) > 0 {
		stats = append(stats, c.LightYellow+"unchanged="+strconv.FormatInt(rc.get(keyNone), 10)+c.Endc)
	}
	if nchanges > 0 {
		stats = append(stats, c.Green+"changed="+strconv.Itoa(nchanges)+c.Endc)
	}
	changestats := ""
	if len(stats) > 0 {
		changestats = " (" + strings.Join(stats, ", ") + ")"
	}
	succeeded := rc.get(keyTrue) + rc.get(keyNone)
	out = append(out, c.Green+counts("Succeeded", strconv.FormatInt(succeeded, 10))+c.Endc+changestats)
	failed := rc.get(keyFalse)
	fcolor := c.Cyan
	if failed != 0 {
		fcolor = c.Red
	}
	out = append(out, fcolor+counts("Failed", strconv.FormatInt(failed, 10))+c.Endc)
	total := rc.sum() - rc.get(keyWarnings)
	if h.ho.Pct && total != 0 {
		out = append(out, c.Green+counts("Success %", PyFloatRepr(pyRound(float64(succeeded)/float64(total)*100, 2)))+c.Endc)
		out = append(out, fcolor+counts("Failure %", PyFloatRepr(pyRound(float64(failed)/float64(total)*100, 2)))+c.Endc)
	}
	if w := rc.get(keyWarnings); w != 0 {
		out = append(out, c.LightRed+counts("Warnings", strconv.FormatInt(w, 10))+c.Endc)
	}
	out = append(out, c.Cyan+dashes+"\nTotal states run: "+padLeft(strconv.FormatInt(total, 10), lineMax-7)+c.Endc)
	if h.ho.Profile {
		sum := 0.0
		for _, d := range rdur {
			sum += d
		}
		if len(pdur) > 0 {
			mx := pdur[0]
			for _, d := range pdur[1:] {
				if d > mx {
					mx = d
				}
			}
			sum += mx
		}
		unit := "ms"
		if sum > 999 {
			sum /= 1000
			unit = "s"
		}
		out = append(out, c.Cyan+"Total run time: "+padLeft(pyFixed(sum, 3), lineMax-5)+" "+unit+c.Endc)
	}
	return out
}

// padLeft is str.rjust / a right-aligned format field.
func padLeft(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return strings.Repeat(" ", width-n) + s
	}
	return s
}

// pyFixed is "{:.Nf}".format(f).
func pyFixed(f float64, prec int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', prec, 64)
}

// pyRound is round(f, n) for a float.
func pyRound(f float64, n int) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'f', n, 64), 64)
	if err != nil {
		return f
	}
	return r
}

// compressIDs is highstate._compress_ids: on any error the data is
// returned as it is (with the edits made so far, as in Salt).
func (h *hsRenderer) compressIDs(data *payload.Map) *payload.Map {
	out, err := compressIDs(data)
	if err != nil {
		h.o.logger().Warn("Unable to compress state output by ID! Returning output normally.", "error", err)
		return data
	}
	return out
}

func compressIDs(data *payload.Map) (*payload.Map, error) {
	compressed := payload.NewMap()
	for _, hit := range data.Items() {
		hostOut := payload.NewMap()
		compressed.SetKey(hit.Key, hostOut)
		hostdata, ok := hit.Value.(*payload.Map)
		if !ok {
			return nil, errors.New("host data is not a dict")
		}
		type idInfo struct {
			id   string
			info *payload.Map
		}
		ids := make([]idInfo, 0, hostdata.Len())
		count := map[string]int{}
		for _, it := range hostdata.Items() {
			tag, ok := it.Key.(string)
			if !ok {
				return nil, errors.New("state tag is not a str")
			}
			info, ok := it.Value.(*payload.Map)
			if !ok {
				return nil, errors.New("state return is not a dict")
			}
			var parts []string
			for _, k := range []string{"__id__", "__sls__", "result"} {
				v, ok := strKey(info, k)
				if !ok {
					return nil, fmt.Errorf("KeyError: %q", k)
				}
				parts = append(parts, PyStr(v))
			}
			id := strings.Join(append([]string{strings.Split(tag, "_|-")[0]}, parts...), "_")
			ids = append(ids, idInfo{id, info})
			count[id]++
		}
		present := map[string]*payload.Map{} // the states in hostOut by tag
		for i, it := range hostdata.Items() {
			tag := it.Key.(string)
			id, info := ids[i].id, ids[i].info
			if count[id] == 1 {
				present[tag] = info
				hostOut.SetKey(tag, info)
				continue
			}
			comps := strings.Split(tag, "_|-")
			if len(comps) < 3 {
				return nil, errors.New("list assignment index out of range")
			}
			sid, _ := strKey(info, "__id__")
			sls, _ := strKey(info, "__sls__")
			res, _ := strKey(info, "result")
			comps[2] = strings.Join([]string{"state_compressed", PyStr(sls), PyStr(sid), PyStr(res)}, "_")
			comps[1] = fmt.Sprintf("%s (%d)", PyStr(sid), count[id])
			tag = strings.Join(comps, "_|-")
			first, seen := present[tag]
			if !seen {
				present[tag] = info
				hostOut.SetKey(tag, info)
				continue
			}
			if err := mergeCompressed(first, info); err != nil {
				return nil, err
			}
		}
	}
	return compressed, nil
}

// mergeCompressed folds info into the first state of its group.
func mergeCompressed(first, info *payload.Map) error {
	get := func(m *payload.Map, k string) (any, error) {
		v, ok := strKey(m, k)
		if !ok {
			return nil, fmt.Errorf("KeyError: %q", k)
		}
		return v, nil
	}
	a, err := get(info, "__run_num__")
	if err != nil {
		return err
	}
	b, err := get(first, "__run_num__")
	if err != nil {
		return err
	}
	less, ok := pyLess(b, a)
	if !ok {
		return errors.New("'<' not supported between __run_num__ values")
	}
	if less {
		first.Set("__run_num__", b)
	} else {
		first.Set("__run_num__", a)
	}
	da, err := get(info, "duration")
	if err != nil {
		return err
	}
	db, err := get(first, "duration")
	if err != nil {
		return err
	}
	sum, err := pySum(da, db)
	if err != nil {
		return err
	}
	if f, isFloat := sum.(float64); isFloat {
		sum = pyRound(f, 3)
	}
	first.Set("duration", sum)
	sa, err := get(info, "start_time")
	if err != nil {
		return err
	}
	sb, err := get(first, "start_time")
	if err != nil {
		return err
	}
	less, ok = pyLess(normalize(sb), normalize(sa))
	if !ok {
		return errors.New("'<' not supported between start_time values")
	}
	if less {
		first.Set("start_time", sb)
	} else {
		first.Set("start_time", sa)
	}
	fch, _ := strKey(first, "changes")
	ich, _ := strKey(info, "changes")
	switch {
	case payload.Truthy(fch) && payload.Truthy(ich):
		fm, ok := fch.(*payload.Map)
		if !ok {
			return errors.New("changes is not a dict")
		}
		if cc, _ := strKey(fm, "compressed changes"); !payload.Truthy(cc) {
			name, err := get(first, "name")
			if err != nil {
				return err
			}
			if _, hashable := hashKey(name); !hashable {
				return errors.New("unhashable name")
			}
			fm = payload.NewMap("compressed changes", payload.NewMap().SetKey(name, fch))
			first.Set("changes", fm)
		}
		cc, _ := strKey(fm, "compressed changes")
		ccm, ok := cc.(*payload.Map)
		if !ok {
			return errors.New("compressed changes is not a dict")
		}
		name, err := get(info, "name")
		if err != nil {
			return err
		}
		if _, hashable := hashKey(name); !hashable {
			return errors.New("unhashable name")
		}
		ccm.SetKey(name, ich)
	case payload.Truthy(ich):
		name, err := get(info, "name")
		if err != nil {
			return err
		}
		if _, hashable := hashKey(name); !hashable {
			return errors.New("unhashable name")
		}
		first.Set("changes", payload.NewMap("compressed changes", payload.NewMap().SetKey(name, ich)))
	}
	return nil
}

// pySum is sum([a, b]) (0 + a + b) for numbers.
func pySum(a, b any) (any, error) {
	a, b = normalize(a), normalize(b)
	if classOf(a) != classNum || classOf(b) != classNum {
		return nil, errors.New("unsupported operand type for +")
	}
	ai, aInt := asBig(a)
	bi, bInt := asBig(b)
	if aInt && bInt {
		s := new(big.Int).Add(ai, bi)
		if s.IsInt64() {
			return s.Int64(), nil
		}
		if s.IsUint64() {
			return s.Uint64(), nil
		}
		return s, nil
	}
	return 0 + asFloat(a) + asFloat(b), nil
}

package output

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/payload"
)

const goldenFile = "testdata/outputters.golden.json"

func m(kv ...any) *payload.Map { return payload.NewMap(kv...) }

// outputCases are the values every outputter variant renders.
func outputCases() []struct {
	name string
	data any
} {
	long := strings.Repeat("word ", 40)
	noSpace := strings.Repeat("x", 200)
	type c = struct {
		name string
		data any
	}
	yamlWords := []any{"yes", "No", "on", "OFF", "y", "123", "1.5", "1e3", "1.5e+3", "~", "null", "Null", "", " lead", "trail ", "a: b", "a:b", "- x", "-x", "#c", "x #c", "x#c", "@at", "`bt", "0755", "0x1F", "0b101", "1_000", "1:30", "2020-01-01", "2020-01-01 10:00:00", "=", "<<", "---", "...", "--", "é", "a\tb", "?x", "? x", ":x", "[x", "x]", "{x", "x,y", "'q'", "\"dq\"", "!tag", "&a", "*a", "|", ">", "%p", ".inf", "-.Inf", ".NaN", "+1", "-1", "0", "00", "09", "3.", ".5", "true\n"}
	return []c{
		{"true", m("m1", true)},
		{"virt_query_runner", m("hv1", m("freecpu", int64(2), "freemem", int64(1024), "node_info", m("cpus", int64(2)), "vm_info", m("vm1", m("cpu", int64(1), "mem", int64(262144), "state", "running"))))},
		{"virt_query_data", virtQueryData()},
		{"two_minions", m("m2", false, "m1", nil)},
		{"multiline", m("m1", "line1\nline2\r\nline3\n\nend\n")},
		{"splitlines_breaks", m("m1", "a\vb\fc\x1cd\u0085e\u2028f\rg")},
		{"empty_string", m("m1", "")},
		{"nested_dict", m("m1", m("b", int64(1), "a", []any{int64(1), 2.5, nil, "x\ny"}, "c", m(), "d", []any{}))},
		{"list_mix", m("m1", []any{[]any{int64(1), int64(2)}, m("k", "v", "j", []any{"w"}), []any{}, m(), "s", []any{[]any{"deep"}}})},
		{"floats", m("m1", []any{0.1, 1e16, 1e15, 1e-5, 1e-4, math.Copysign(0, -1), 1.0, 123456789.125, 1.7976931348623157e308, 5e-324, math.NaN(), math.Inf(1), math.Inf(-1), 100.0, 1e22})},
		{"ints", m("m1", []any{int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64), uint64(math.MaxUint64)})},
		{"unicode", m("m1", m("u", "héllo wörld ☃ 😀", "tab", "tab\there", "esc", "\x1b[31mred\x1b[0m", "nbsp", "a\u00a0b", "bom", "\ufeffx", "ls", "a\u2028b", "ctl", "\x01\x7f"))},
		{"quotes", m("m1", []any{"it's", `say "hi"`, `both ' and "`, `back\slash`})},
		{"bytes", m("m1", []byte{0xff, 0x00, 'a', '\'', '\n'}, "m2", []byte{0xfe, 'x', '\n', 'y'})},
		{"mixed_keys", m("m1", payload.NewMap().SetKey(int64(1), "a").SetKey("b", int64(2)).SetKey(nil, "n"))},
		{"int_keys", m("m1", payload.NewMap().SetKey(int64(2), "b").SetKey(int64(10), "a").SetKey(int64(-1), "c").SetKey(1.5, "f"))},
		{"none_key", m("m1", payload.NewMap().SetKey(nil, int64(1)))},
		{"bool_keys", m("m1", payload.NewMap().SetKey(true, int64(1)).SetKey(false, int64(0)))},
		{"long_words", m("m1", long, "m2", m("key", long))},
		{"long_nospace", m("m1", noSpace)},
		{"long_quoted", m("m1", "'"+long+"'", "m2", "a\t"+long)},
		{"long_keys", m("m1", m(strings.Repeat("k", 120), int64(1), strings.Repeat("k", 127), int64(2), strings.Repeat("k", 128), int64(3), strings.Repeat("k", 129), int64(4), strings.Repeat("é", 70), int64(5)))},
		{"multiline_key", m("m1", m("a\nb", int64(1), "", int64(2), "x y", int64(3)))},
		{"yaml_words", m("m1", yamlWords)},
		{"yaml_word_keys", m("m1", m("yes", int64(1), "123", int64(2), "null", int64(3), "a: b", int64(4)))},
		{"yaml_multiline_forms", m("m1", []any{"a \nb", "a\n b", "\nlead", "trail\n", "trail\n\n", "x\n\n\ny", "a\rb"})},
		{"top_string", "Authentication error occurred."},
		{"top_multiline_string", "first\nsecond"},
		{"top_list", []any{"a", int64(1), m("k", "v")}},
		{"top_int", int64(42)},
		{"top_none", nil},
		{"top_empty_map", m()},
		{"datetime", m("m1", time.Date(2020, 1, 2, 3, 4, 5, 6000, time.UTC), "m2", time.Date(2021, 5, 6, 0, 0, 0, 0, time.UTC))},
		{"ext", m("m1", payload.Ext{Type: 5, Data: []byte{1, 2}})},
		{"empty_collections", m("m1", m(), "m2", []any{}, "m3", []any{m(), []any{}})},
		{"no_return_text", m("ghost", "Minion did not return. [No response]\nThe minions may not have all finished running and any remaining minions will return upon completion. To look up the return data for this job later, run the following command:\n\nsalt-run jobs.lookup_jid 20240101010101123456")},
		{"grains_like", m("m1", m("os", "Debian", "ipv4", []any{"127.0.0.1", "192.0.2.2", "10.11.12.13", "172.16.0.1", "198.51.100.77", "203.0.113.254"}, "num_cpus", int64(2), "mem_total", int64(3931), "saltversioninfo", []any{int64(3006), int64(0)}, "gpus", []any{}, "ip_interfaces", m("lo", []any{"127.0.0.1", "::1"}, "eth0", []any{"192.0.2.2", "fd00::2", "fe80::1:2:3:4"}), "pythonpath", []any{"/usr/lib/python311.zip", "/usr/lib/python3.11", "/usr/lib/python3.11/lib-dynload", "/usr/local/lib/python3.11/dist-packages"}))},
		{"deep", m("a", m("b", m("c", m("d", []any{[]any{[]any{"e"}}}))))},
		{"long_flow", m("m1", []any{long, strings.Repeat("ab ", 50), m(strings.Repeat("key", 30), strings.Repeat("v", 90)), []any{strings.Repeat("z", 85), "q"}}, "m2", strings.Repeat("a  b ", 30), "m3", "\t"+strings.Repeat("é ü  ", 30)+"\x01")},
		{"long_spaces", m("m1", strings.Repeat("a", 78)+"  "+strings.Repeat("b", 10)+" c", "m2", "x"+strings.Repeat(" ", 100)+"y", "m3", strings.Repeat("it's ", 30)+"\nnext line "+strings.Repeat("w", 90))},
		{"pprint_wide", m("m1", []any{strings.Repeat("alpha ", 20), m("k", strings.Repeat("beta ", 30), "j", []any{int64(1), int64(2), strings.Repeat("g", 70)}), "short", strings.Repeat("line\n", 5) + strings.Repeat("x ", 50)}, "m2", strings.Repeat("y", 100))},
		{"emoji_key", m("m1", m("😀", "😀 smile", strings.Repeat("😀", 40), int64(1)))},
		{"multi_fun", m("m1", m("test.ping", true, "test.echo", "hi\nthere", "cmd.run", "total 0\ndrwxr-xr-x 2 root root 40 Jan  1 00:00 x"))},
	}
}

type variant struct {
	id      string
	out     string
	color   bool
	retcode int
	indent  *int
	pretty  bool
}

func ip(i int) *int { return &i }

// virtQueryData has both places Salt's virt_query outputter reads: the
// guests under data["data"][hyper]["vm_info"] and their details under
// data[hyper]["vm_info"].
func virtQueryData() *payload.Map {
	vm := m("cpu", int64(2), "mem", int64(524288), "state", "shutdown",
		"graphics", m("type", "vnc", "port", "5900"),
		"disks", m("vda", m("disk size", int64(1073741824), "file", "/srv/vm1.qcow2", "file format", "qcow2")),
		"nics", m("52:54:00:aa:bb:cc", m("type", "bridge", "source", m("bridge", "br0"))))
	return m("data", m("hv1", m("vm_info", m("vm1", m()))), "hv1", m("vm_info", m("vm1", vm)))
}

func variants() []variant {
	return []variant{
		{id: "nested", out: "nested"},
		{id: "nested_color", out: "nested", color: true},
		{id: "nested_color_rc1", out: "nested", color: true, retcode: 1},
		{id: "json", out: "json"},
		{id: "json_i2", out: "json", indent: ip(2)},
		{id: "json_i0", out: "json", indent: ip(0)},
		{id: "json_neg", out: "json", indent: ip(-1)},
		{id: "json_pretty", out: "json", pretty: true},
		{id: "yaml", out: "yaml"},
		{id: "yaml_i4", out: "yaml", indent: ip(4)},
		{id: "yaml_neg", out: "yaml", indent: ip(-1)},
		{id: "txt", out: "txt"},
		{id: "raw", out: "raw"},
		{id: "pprint", out: "pprint"},
		{id: "pprint_i4", out: "pprint", indent: ip(4)},
		{id: "newline_values_only", out: "newline_values_only"},
		{id: "no_return_color", out: "no_return", color: true},
		{id: "virt_query", out: "virt_query"},
	}
}

func (v variant) options() Options {
	return Options{Color: v.color, Retcode: v.retcode, Indent: v.indent, IndentPretty: v.pretty}
}

type goldenEntry struct {
	Present bool   `json:"present"`
	Text    string `json:"text"`
}

// pyOutputters runs Salt's try_printout on every case × variant.
const pyOutputters = `
import copy, json, sys
import salt.config, salt.output, salt.payload
req = json.load(sys.stdin)
base = copy.deepcopy(salt.config.DEFAULT_MASTER_OPTS)
base.pop("output", None)
res = {}
for c in req["cases"]:
    for v in req["variants"]:
        data = salt.payload.loads(bytes.fromhex(c["hex"]), encoding="utf-8")
        opts = dict(base)
        opts["color"] = v["color"]
        if v["indent"] is not None:
            opts["output_indent"] = v["indent"]
        kw = {}
        if v["retcode"]:
            kw["_retcode"] = v["retcode"]
        text = salt.output.try_printout(data, v["out"], opts, **kw)
        res[c["name"] + "/" + v["id"]] = {"present": text is not None, "text": text or ""}
json.dump(res, sys.stdout)
`

func saltOutputs(t *testing.T, src string) map[string]goldenEntry {
	t.Helper()
	type pyCase struct {
		Name string `json:"name"`
		Hex  string `json:"hex"`
	}
	type pyVariant struct {
		ID      string `json:"id"`
		Out     string `json:"out"`
		Color   bool   `json:"color"`
		Retcode int    `json:"retcode"`
		Indent  any    `json:"indent"`
	}
	var req struct {
		Cases    []pyCase    `json:"cases"`
		Variants []pyVariant `json:"variants"`
	}
	for _, c := range outputCases() {
		b, err := payload.MarshalBin(c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		req.Cases = append(req.Cases, pyCase{c.name, hex.EncodeToString(b)})
	}
	for _, v := range variants() {
		pv := pyVariant{ID: v.id, Out: v.out, Color: v.color, Retcode: v.retcode}
		if v.indent != nil {
			pv.Indent = *v.indent
		}
		if v.pretty {
			pv.Indent = "pretty"
		}
		req.Variants = append(req.Variants, pv)
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := saltpeer.PythonCommand(ctx, src, pyOutputters)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("running Salt's outputters: %v\n%s", err, stderr.String())
	}
	res := map[string]goldenEntry{}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestOutputtersGolden compares every outputter with the text Salt's own
// outputters printed for the same values (stored in testdata; with
// GSALT_SALT_SRC set the real Salt is run as well, and -update rewrites the
// file).
func TestOutputtersGolden(t *testing.T) {
	want := map[string]goldenEntry{}
	if src := saltpeer.Src(); src != "" {
		want = saltOutputs(t, src)
		if testutil.Update() {
			b, err := json.MarshalIndent(want, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(goldenFile), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(goldenFile, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	} else {
		b, err := os.ReadFile(goldenFile)
		if err != nil {
			t.Fatalf("%v (regenerate with GSALT_SALT_SRC=... go test -run Golden -update)", err)
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	for _, c := range outputCases() {
		for _, v := range variants() {
			key := c.name + "/" + v.id
			keys = append(keys, key)
			w, ok := want[key]
			if !ok {
				t.Errorf("%s: no golden entry (run with -update)", key)
				continue
			}
			got, present := Format(v.out, c.data, v.options())
			if present != w.Present || got != w.Text {
				t.Errorf("%s:\n got: %q (present %v)\nwant: %q (present %v)", key, got, present, w.Text, w.Present)
			}
		}
	}
	sort.Strings(keys)
	if len(keys) != len(want) {
		t.Errorf("golden file has %d entries, the tables %d (run with -update)", len(want), len(keys))
	}
}

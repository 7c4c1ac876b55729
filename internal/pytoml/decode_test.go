package pytoml

import (
	"encoding/json"
	"errors"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/wire/payload"
)

// loadsCases are TOML documents, valid and not, each read by toml.loads of
// python3-toml 0.10.2 into testdata/loads_golden.json.
var loadsCases = []struct{ name, doc string }{
	{"empty", ""},
	{"blank lines and comments", "\n# c\n   \n# d"},
	{"scalars", "s = \"x\"\ni = 42\nf = 3.5\nt = true\nb = false\n"},
	{"key order", "z = 1\na = 2\nm = 3\n"},
	{"negative and plus", "a = -17\nb = +17\nc = -0.5\nd = +1.5\ne = -0\nf = -0.0\n"},
	{"underscores", "a = 1_000\nb = 5_349_221\nc = 1_2_3_4_5\nd = 9_224_617.445_991\n"},
	{"underscores no space", "a=1_000\n"},
	{"hex oct bin", "h = 0xDEADBEEF\no = 0o755\nb = 0b11010110\nhh = 0xdead_beef\n"},
	{"big int", "n = 123456789012345678901234567890\nm = -9223372036854775809\n"},
	{"exponents", "a = 5e+22\nb = 1e06\nc = -2E-2\nd = 6.626e-34\ne = 1e500\n"},
	{"inf nan", "a = inf\nb = -inf\nc = nan\nd = +inf\n"},
	{"float missing digits", "a = 1.\n"},
	{"float no leading digit", "a = .5\n"},
	{"float bad", "a = 1.2.3\n"},
	{"leading zero", "a = 012\n"},
	{"leading zero float", "a = 01.5\n"},
	{"double underscore", "a = 1__0\n"},
	{"trailing underscore", "a = 10_\n"},
	{"bare word", "a = hello\n"},
	{"uppercase bool", "a = True\n"},
	{"uppercase bool in array", "a = [TRUE]\n"},
	{"basic string escapes", `s = "tab\tnl\nquote\"back\\slash\bform\fcr\rnul\0"` + "\n"},
	{"unicode escapes", `s = "\u00e9\U0001F600\u0041"` + "\n"},
	{"escaped unicode escape", `s = "\\u0041"` + "\n"},
	{"bad escape", `s = "\e"` + "\n"},
	{"bad unicode escape", `s = "\u12G4"` + "\n"},
	{"surrogate escape", `s = "\ud800"` + "\n"},
	{"escape past range", `s = "\UFFFFFFFF"` + "\n"},
	{"literal string", `s = 'C:\Users\nodejs\templates'` + "\n"},
	{"literal with double quote", `s = 'Tom "Dubs" Preston'` + "\n"},
	{"multiline basic", "s = \"\"\"\nRoses are red\nViolets are blue\"\"\"\n"},
	{"multiline basic same line", "s = \"\"\"one line\"\"\"\n"},
	{"multiline backslash", "s = \"\"\"\nThe quick brown \\\n\n  fox jumps over \\\n    the lazy dog.\"\"\"\n"},
	{"multiline literal", "s = '''\nThe first newline is\ntrimmed in raw strings.\n   All other whitespace\n   is preserved.\n'''\n"},
	{"multiline unterminated", "s = \"\"\"abc\n"},
	{"multiline then key", "s = \"\"\"a\nb\"\"\"\nt = 1\n"},
	{"empty strings", "a = \"\"\nb = ''\n"},
	{"string with hash", "s = \"a # not a comment\" # a comment\n"},
	{"string with equals", "s = \"a = b\"\nt = 'c = d'\n"},
	{"unterminated string", "s = \"abc\n"},
	{"unterminated at eof", "s = \"abc"},
	{"tokens after string", "s = \"abc\" x\n"},
	{"tables", "[a]\nx = 1\n[b]\ny = 2\n[a.c]\nz = 3\n"},
	{"dotted table", "[dog.\"tater.man\"]\ntype = \"pug\"\n"},
	{"table with spaces", "[ a . b ]\nx = 1\n"},
	{"quoted table single", "[ 'j' . \"ʞ\" . 'l' ]\nx = 1\n"},
	{"implicit then explicit", "[x.y.z.w]\na = 1\n[x]\nb = 2\n"},
	{"duplicate table", "[a]\nb = 1\n[a]\nc = 2\n"},
	{"table redefines key", "[a]\nb = 1\n[a.b]\nc = 2\n"},
	{"empty table name", "[]\n"},
	{"table empty part", "[a..b]\n"},
	{"bracket alone", "[\nx = 1\n"},
	{"table not alone", "[a] x = 1\n"},
	{"invalid group name", "[a b]\n"},
	{"array of tables", "[[products]]\nname = \"Hammer\"\nsku = 738594937\n\n[[products]]\n\n[[products]]\nname = \"Nail\"\ncolor = \"gray\"\n"},
	{"nested array of tables", "[[fruit]]\nname = \"apple\"\n[fruit.physical]\ncolor = \"red\"\n[[fruit.variety]]\nname = \"red delicious\"\n[[fruit.variety]]\nname = \"granny smith\"\n[[fruit]]\nname = \"banana\"\n[[fruit.variety]]\nname = \"plantain\"\n"},
	{"array of tables over table", "[a]\nx = 1\n[[a]]\n"},
	{"implicit table as array", "[a.b]\n[[a]]\n"},
	{"table over array value", "a = [1, 2]\n[a]\n"},
	{"table under string value", "a = \"xyz\"\n[a.b]\n"},
	{"table under int value", "a = 1\n[a.b]\n"},
	{"table under empty array", "a = []\n[a.b]\n"},
	{"arrays", "a = [ 1, 2, 3 ]\nb = [ \"red\", \"yellow\", \"green\" ]\nc = [ [ 1, 2 ], [3, 4, 5] ]\nd = [ \"all\", 'strings', \"\"\"are the same\"\"\", '''type''']\ne = []\n"},
	{"mixed array", "a = [1, \"x\"]\n"},
	{"int float array", "a = [1, 2.0]\n"},
	{"nested mixed arrays", "a = [ [ 1, 2 ], [\"a\", \"b\", \"c\"] ]\n"},
	{"multiline array", "a = [\n  1,\n  2, # two\n  3,\n]\n"},
	{"array strings with commas", "a = [\"a,b\", 'c,d', \"e\"]\n"},
	{"array trailing comma", "a = [1,2,]\n"},
	{"inline tables", "name = { first = \"Tom\", last = \"Preston-Werner\" }\npoint = { x = 1, y = 2 }\nanimal = { type.name = \"pug\" }\n"},
	{"inline table nested", "a = { b = { c = 1 }, d = [1, 2] }\n"},
	{"inline table empty", "a = {}\n"},
	{"array of inline tables", "points = [ { x = 1, y = 2, z = 3 },\n           { x = 7, y = 8, z = 9 },\n           { x = 2, y = 4, z = 8 } ]\n"},
	{"inline table comma in string", "a = { b = \"x,y\", c = 1 }\n"},
	{"inline table bad", "a = { b }\n"},
	{"inline table bare value", "a = { b = nope }\n"},
	{"inline line break", "a = { b = 1,\n c = 2 }\n"},
	{"line starting with brace", "{ a = 1 }\n"},
	{"dotted keys", "name = \"Orange\"\nphysical.color = \"orange\"\nphysical.shape = \"round\"\nsite.\"google.com\" = true\n"},
	{"dotted key spaces", "a . b . c = 1\n"},
	{"quoted keys", "\"127.0.0.1\" = \"value\"\n\"character encoding\" = \"value\"\n'key2' = \"value\"\n'quoted \"value\"' = \"value\"\n"},
	{"bare key chars", "bare_key = 1\nbare-key = 2\n1234 = 3\n"},
	{"unicode bare key", "ключ = 1\n"},
	{"duplicate key", "a = 1\na = 2\n"},
	{"dotted over int", "a = 1\na.b = 2\n"},
	{"dotted over string", "a = \"xyz\"\na.b.c = 1\n"},
	{"dotted over list", "a = [1]\na.b.c = 1\n"},
	{"empty key", "= 1\n"},
	{"key without value eol", "a\nb = 1\n"},
	{"key without value eof", "a"},
	{"key invalid char", "a!b = 1\n"},
	{"empty value", "a =\n"},
	{"offset datetimes", "a = 1979-05-27T07:32:00Z\nb = 1979-05-27T00:32:00-07:00\nc = 1979-05-27T00:32:00.999999-07:00\nd = 1979-05-27T07:32:00.5+05:30\n"},
	{"local datetime", "a = 1979-05-27T07:32:00\nb = 1979-05-27T00:32:00.999999\nc = 1979-05-27T00:32:00.123\n"},
	{"local date", "a = 1979-05-27\n"},
	{"local time", "a = 07:32:00\nb = 00:32:00.999999\nc = 00:32:00.123\n"},
	{"bad date", "a = 1979-13-27\n"},
	{"bad time", "a = 25:00:00\n"},
	{"datetime space", "a = 1979-05-27 07:32:00Z\n"},
	{"date array", "a = [1979-05-27, 1979-05-27T07:32:00]\n"},
	{"crlf", "a = 1\r\nb = \"x\"\r\n[t]\r\nc = 2\r\n"},
	{"cr at end", "a = 1\r"},
	{"comment at eof", "a = 1 # end"},
	{"tabs", "\ta\t=\t1\n"},
	{"value with equals after", "a = 1 = 2\n"},
	{"salt style pillar", "[nginx]\nworkers = 4\nsites = [\"a.example.com\", \"b.example.com\"]\n[nginx.ssl]\nenabled = true\nprotocols = [\"TLSv1.2\", \"TLSv1.3\"]\n"},
	{"telegraf config", "[global_tags]\n  dc = \"us-east-1\"\n[agent]\n  interval = \"10s\"\n  round_interval = true\n  metric_batch_size = 1000\n[[outputs.influxdb]]\n  urls = [\"http://127.0.0.1:8086\"]\n  database = \"telegraf\"\n[[inputs.cpu]]\n  percpu = true\n  totalcpu = true\n"},
	{"no newline at end", "a = 1"},
	{"garbage line ignored", "just words\na = 1\n"},
}

// tagged is the generator's tagged form of a decoded value.
func tagged(v any) any {
	switch t := v.(type) {
	case *payload.Map:
		items := []any{}
		for _, it := range t.Items() {
			items = append(items, []any{it.Key, tagged(it.Value)})
		}
		return map[string]any{"$dict": items}
	case []any:
		out := []any{}
		for _, e := range t {
			out = append(out, tagged(e))
		}
		return out
	case bool, string:
		return t
	case int64:
		return map[string]any{"$int": big.NewInt(t).String()}
	case *big.Int:
		return map[string]any{"$int": t.String()}
	case float64:
		return map[string]any{"$float": pyfmt.FloatRepr(t)}
	case Date:
		return map[string]any{"$date": []any{t.Year, t.Month, t.Day}}
	case TimeOfDay:
		return map[string]any{"$time": []any{t.Hour, t.Minute, t.Second, t.Microsecond}}
	case time.Time:
		var tz any
		if t.Location() != time.UTC {
			tz = t.Location().String()[len("UTC"):]
		}
		return map[string]any{"$datetime": []any{t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond() / 1000}, "tz": tz}
	}
	return map[string]any{"$go": pyfmt.Repr(v)}
}

// loadsResult is one case's result in the golden file's form.
func loadsResult(name, doc string) map[string]any {
	v, err := Loads(doc)
	if err != nil {
		var pe *py.Exception
		if !errors.As(err, &pe) || !errors.Is(err, ErrDecode) {
			return map[string]any{"name": name, "error": map[string]any{"type": "?", "msg": err.Error()}}
		}
		return map[string]any{"name": name, "error": map[string]any{"type": pe.Type, "msg": pe.Msg}}
	}
	var dumped any
	if text, err := Dumps(v); err != nil {
		var pe *py.Exception
		errors.As(err, &pe)
		dumped = map[string]any{"error": map[string]any{"type": pe.Type, "msg": pe.Msg}}
	} else {
		dumped = text
	}
	return map[string]any{"name": name, "value": tagged(v), "dumped": dumped}
}

func canon(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(back)
	return string(b)
}

// runLoadsPython runs testdata/loads.py on the cases and returns its output.
func runLoadsPython(t *testing.T, src string, cases any) []byte {
	t.Helper()
	return saltpeer.RunScript(t, src, filepath.Join("testdata", "loads.py"), cases)
}

// TestLoadsGolden compares Loads with python3-toml 0.10.2's toml.loads (as
// Salt 3006's toml serializer calls it) on every case: the value with its
// types and order, or the exception's class and text.
func TestLoadsGolden(t *testing.T) {
	raw := saltpeer.Golden(t, filepath.Join("testdata", "loads_golden.json"), func(src string) []byte {
		var cases []map[string]string
		for _, c := range loadsCases {
			cases = append(cases, map[string]string{"name": c.name, "doc": c.doc})
		}
		return runLoadsPython(t, src, cases)
	})
	var want []map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(loadsCases) {
		t.Fatalf("golden has %d cases, the test %d: run with -update", len(want), len(loadsCases))
	}
	for i, c := range loadsCases {
		t.Run(c.name, func(t *testing.T) {
			if want[i]["name"] != c.name {
				t.Fatalf("golden case %d is %v: run with -update", i, want[i]["name"])
			}
			got, exp := canon(t, loadsResult(c.name, c.doc)), canon(t, want[i])
			if got != exp {
				t.Errorf("doc %q\n got %s\nwant %s", c.doc, got, exp)
			}
		})
	}
}

// mutate makes a variant of doc: characters from a TOML-ish alphabet
// inserted, deleted, replaced or lines swapped, driven by r.
func mutate(r *rand.Rand, doc string) string {
	alphabet := []rune("\"'[]{}=.,#\\\n \t_-+:0123456789eExobuUTZ:truefalseinfnanabc\r")
	s := []rune(doc)
	for n := 1 + r.IntN(12); n > 0; n-- {
		i := 0
		if len(s) > 0 {
			i = int(r.IntN(len(s)))
		}
		c := alphabet[r.IntN(len(alphabet))]
		switch r.IntN(3) {
		case 0:
			s = append(s[:i], append([]rune{c}, s[i:]...)...)
		case 1:
			if len(s) > 0 {
				s = append(s[:i], s[i+1:]...)
			}
		default:
			if len(s) > 0 {
				s[i] = c
			}
		}
	}
	return string(s)
}

// TestLoadsDifferential compares Loads with python3-toml on
// GSALT_TOML_DIFF mutated case documents (gated: it runs Salt's Python).
func TestLoadsDifferential(t *testing.T) {
	n := 0
	if v := os.Getenv("GSALT_TOML_DIFF"); v != "" {
		n = int(pyInt(v, 10).Int64())
	}
	if n == 0 {
		t.Skip("GSALT_TOML_DIFF=N runs N mutated documents against python3-toml")
	}
	src := saltpeer.Require(t)
	r := rand.New(rand.NewPCG(uint64(n), 1))
	var cases []map[string]string
	for i := 0; i < n; i++ {
		c := loadsCases[r.IntN(len(loadsCases))]
		cases = append(cases, map[string]string{"name": c.name, "doc": mutate(r, c.doc)})
	}
	var want []map[string]any
	if err := json.Unmarshal(runLoadsPython(t, src, cases), &want); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, c := range cases {
		if got, exp := canon(t, loadsResult(c["name"], c["doc"])), canon(t, want[i]); got != exp {
			if bad++; bad <= 15 {
				t.Errorf("doc %q\n got %s\nwant %s", c["doc"], got, exp)
			}
		}
	}
	t.Logf("%d of %d documents differ", bad, n)
}

// FuzzLoads parses, dumps and parses again: no input may panic, every
// error is a Python exception wrapped with ErrDecode, and parsing is
// deterministic.
func FuzzLoads(f *testing.F) {
	for _, c := range loadsCases {
		f.Add(c.doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		v, err := Loads(doc)
		if err != nil {
			var pe *py.Exception
			if !errors.Is(err, ErrDecode) || !errors.As(err, &pe) {
				t.Fatalf("Loads(%q): %v is not a wrapped Python exception", doc, err)
			}
			return
		}
		again, _ := Loads(doc)
		if a, b := pyfmt.Repr(v), pyfmt.Repr(again); a != b {
			t.Fatalf("Loads(%q) not deterministic: %s vs %s", doc, a, b)
		}
		text, err := Dumps(v)
		if err != nil {
			return
		}
		if _, err := Loads(text); err != nil && !errors.Is(err, ErrDecode) {
			t.Fatalf("Loads(Dumps(Loads(%q))) = %v", doc, err)
		}
	})
}

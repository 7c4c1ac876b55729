package builtin_test

import (
	"github.com/gsalt/gsalt/modules/salttest"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// formulaTree is a small state tree like a formula's.
var formulaTree = map[string]string{
	"top.sls":                 "base:\n  '*':\n    - nginx\n",
	"nginx/init.sls":          "nginx: {pkg.installed: []}\n",
	"nginx/map.jinja":         "{% set nginx = {'pkg': 'nginx'} %}\n",
	"nginx/defaults.yaml":     "nginx:\n  pkg: nginx\n  service:\n    name: nginx\n    enabled: true\n  list: [1, 2]\n",
	"nginx/files/conf/a.conf": "a\n",
	"nginx/sub/deep/x.sls":    "{}\n",
	"core/defaults.json":      "{\"users\": {\"root\": {\"shell\": \"/bin/bash\"}}, \"n\": [1, 2]}",
	"empty/defaults.yaml":     "",
	"tmpl/map.sls":            "#!jinja|yaml\n{% set x = salt['slsutil.boolstr'](True, 'yes', 'no') %}\nval: {{ x }}\nname: {{ name | default('none') }}\nenv: {{ saltenv }}\n",
	"tmpl/plain.txt":          "#!jinja\nHello {{ who }}\n",
	"tmpl/data.json":          "#!json\n{\"a\": [1, 2]}",
}

func m(kv ...any) *payload.Map { return payload.NewMap(kv...) }

// TestSlsutilGolden compares slsutil, defaults and cp.list_master_dirs with
// Salt 3006's (testdata/golden/slsutil.json).
func TestSlsutilGolden(t *testing.T) {
	deep := func() *payload.Map {
		return m("a", m("b", int64(1), "l", []any{int64(1), int64(2)}), "c", "x")
	}
	upd := func() *payload.Map {
		return m("a", m("d", int64(2), "l", []any{int64(2), int64(3)}), "e", nil)
	}
	runSuite(t, salttest.Suite{
		Name: "slsutil",
		Srv:  formulaTree,
		Calls: []salttest.Call{
			{Name: "update", Fun: "slsutil.update", Args: []any{deep(), upd()}},
			{Name: "update merge_lists", Fun: "slsutil.update", Args: []any{deep(), upd()}, Kwargs: []any{"merge_lists", true}},
			{Name: "update not recursive", Fun: "slsutil.update", Args: []any{deep(), upd()}, Kwargs: []any{"recursive_update", false}},
			{Name: "update non dict", Fun: "slsutil.update", Args: []any{"x", upd()}},
			{Name: "merge smart", Fun: "slsutil.merge", Args: []any{deep(), upd()}},
			{Name: "merge recurse lists", Fun: "slsutil.merge", Args: []any{deep(), upd()}, Kwargs: []any{"strategy", "recurse", "merge_lists", true}},
			{Name: "merge overwrite", Fun: "slsutil.merge", Args: []any{deep(), upd()}, Kwargs: []any{"strategy", "overwrite"}},
			{Name: "merge list", Fun: "slsutil.merge", Args: []any{deep(), upd()}, Kwargs: []any{"strategy", "list"}},
			{Name: "merge aggregate", Fun: "slsutil.merge", Args: []any{deep(), upd()}, Kwargs: []any{"strategy", "aggregate"}},
			{Name: "merge none", Fun: "slsutil.merge", Args: []any{deep(), upd()}, Kwargs: []any{"strategy", "none"}},
			{Name: "merge unknown", Fun: "slsutil.merge", Args: []any{deep(), upd()}, Kwargs: []any{"strategy", "bogus"}},
			{Name: "merge smart yamlex", Fun: "slsutil.merge", Args: []any{deep(), upd()}, Kwargs: []any{"renderer", "jinja|yamlex"}},
			{Name: "merge_all", Fun: "slsutil.merge_all", Args: []any{[]any{m("a", int64(1), "n", m("x", int64(1))), m("b", int64(2), "n", m("y", int64(2))), m("a", int64(3))}}},
			{Name: "merge_all empty", Fun: "slsutil.merge_all", Args: []any{[]any{}}},
			{Name: "merge_all lists", Fun: "slsutil.merge_all", Args: []any{[]any{m("l", []any{int64(1)}), m("l", []any{int64(1), int64(2)})}}, Kwargs: []any{"merge_lists", true}},
			{Name: "boolstr true", Fun: "slsutil.boolstr", Args: []any{true}},
			{Name: "boolstr false", Fun: "slsutil.boolstr", Args: []any{false, "yes", "no"}},
			{Name: "boolstr string", Fun: "slsutil.boolstr", Args: []any{"false", "yes", "no"}},
			{Name: "boolstr empty list", Fun: "slsutil.boolstr", Args: []any{[]any{}, "on", "off"}},
			{Name: "banner default", Fun: "slsutil.banner"},
			{Name: "banner javadoc", Fun: "slsutil.banner", Kwargs: []any{"commentchar", " *", "borderchar", "*", "blockstart", "/**", "blockend", " */"}},
			{Name: "banner custom", Fun: "slsutil.banner", Kwargs: []any{"title", "Copyright 2019 VMware, Inc.", "text", "This file may not be copied or distributed without permission of VMware, Inc.", "width", int64(60)}},
			{Name: "banner odd width newline", Fun: "slsutil.banner", Kwargs: []any{"width", int64(41), "commentchar", "//", "newline", true, "title", "abc"}},
			{Name: "banner long word", Fun: "slsutil.banner", Kwargs: []any{"width", int64(20), "text", "supercalifragilisticexpialidocious is long, well-known and self-evident"}},
			{Name: "banner too small", Fun: "slsutil.banner", Kwargs: []any{"width", int64(3)}},
			{Name: "serialize json", Fun: "slsutil.serialize", Args: []any{"json", m("b", int64(1), "a", []any{"x", 1.5, nil, true}, "ü", "é")}},
			{Name: "serialize json indent sorted", Fun: "slsutil.serialize", Args: []any{"json", m("b", int64(1), "a", m("z", int64(1), "y", int64(2)))}, Kwargs: []any{"indent", int64(2), "sort_keys", true}},
			{Name: "serialize yaml", Fun: "slsutil.serialize", Args: []any{"yaml", m("b", int64(1), "a", []any{"x", int64(2)}, "n", m("k", "v", "deep", m("x", []any{int64(1), m("y", int64(2))})))}},
			{Name: "serialize yaml scalar", Fun: "slsutil.serialize", Args: []any{"yaml", "hello"}},
			{Name: "serialize yaml block", Fun: "slsutil.serialize", Args: []any{"yaml", m("a", []any{int64(1), int64(2)})}, Kwargs: []any{"default_flow_style", false}},
			{Name: "serialize unknown", Fun: "slsutil.serialize", Args: []any{"nope", m()}},
			// the toml serializer is python3-toml 0.10.2's toml.dumps (Salt's
			// serializers/tomlmod.py), quirks included
			{Name: "serialize toml", Fun: "slsutil.serialize", Args: []any{"toml", m("title", "x", "n", int64(3), "f", 2.5, "big", 1.5e300, "small", 1e-5, "t", true, "none", nil,
				"l", []any{int64(1), "two", []any{int64(3)}, nil, false}, "empty", []any{}, "db", m("host", "h", "ports", []any{int64(1), int64(2)}, "sub", m("k", "v"), "emptysub", m()),
				"only", m("deeper", m("x", int64(1))))}},
			{Name: "serialize toml tables", Fun: "slsutil.serialize", Args: []any{"toml", m("agent", m("interval", "10s"),
				"outputs", m("influxdb", []any{m("urls", []any{"http://localhost:8086"}, "database", "telegraf", "tags", m("a", "b"), "nested", []any{m("x", int64(1))})}),
				"inputs", m("cpu", []any{m("percpu", true)}, "disk", []any{m(), m("mount_points", []any{"/"})}))}},
			{Name: "serialize toml keys", Fun: "slsutil.serialize", Args: []any{"toml", m("plain_key-1", int64(1), "dotted.key", int64(2), "with space", int64(3), "ünï", int64(4), "nl\n", int64(5), "q'\"", m("a", int64(1)))}},
			{Name: "serialize toml strings", Fun: "slsutil.serialize", Args: []any{"toml", m("a", "it's", "b", `say "hi"`, "c", `both ' and "`, "d", `back\slash`, "e", "tab\tnl\ncr\r", "f", "é\u2028\U0001F600", "g", "a\x01b", "h", "x\\\x01y\x02z", "i", "a\x7f", "j", "")}},
			{Name: "serialize toml leading control", Fun: "slsutil.serialize", Args: []any{"toml", m("k", "\x01")}},
			{Name: "serialize toml not a dict", Fun: "slsutil.serialize", Args: []any{"toml", int64(3)}},
			{Name: "serialize toml list top", Fun: "slsutil.serialize", Args: []any{"toml", []any{"a"}}},
			{Name: "serialize toml empty", Fun: "slsutil.serialize", Args: []any{"toml", m()}},
			{Name: "serialize toml bad table item", Fun: "slsutil.serialize", Args: []any{"toml", m("l", []any{m("a", int64(1)), int64(2)})}},
			{Name: "serialize toml kwarg", Fun: "slsutil.serialize", Args: []any{"toml", m("a", int64(1))}, Kwargs: []any{"indent", int64(2)}},
			{Name: "deserialize json", Fun: "slsutil.deserialize", Args: []any{"json", `{"b": 1, "a": [1.5, null, true, "x"]}`}},
			{Name: "deserialize yaml", Fun: "slsutil.deserialize", Args: []any{"yaml", "b: 1\na: [x, 2]\nc: {d: e}\n"}},
			{Name: "deserialize toml", Fun: "slsutil.deserialize", Args: []any{"toml", "title = \"x\"\n[owner]\nname = \"Tom\"\nn = [1, 2]\nf = 1.5\n[[servers]]\nip = \"10.0.0.1\"\n[[servers]]\nip = \"10.0.0.2\"\n"}},
			{Name: "deserialize toml empty", Fun: "slsutil.deserialize", Args: []any{"toml", ""}},
			{Name: "deserialize toml duplicate", Fun: "slsutil.deserialize", Args: []any{"toml", "a = 1\na = 2\n"}},
			{Name: "deserialize toml bad value", Fun: "slsutil.deserialize", Args: []any{"toml", "a = nope\n"}},
			{Name: "deserialize toml unterminated", Fun: "slsutil.deserialize", Args: []any{"toml", "a = \"x"}},
			{Name: "deserialize toml type error", Fun: "slsutil.deserialize", Args: []any{"toml", "a = \"xyz\"\na.b.c = 1\n"}},
			{Name: "deserialize unknown", Fun: "slsutil.deserialize", Args: []any{"nope", "x"}},
			{Name: "file_exists yes", Fun: "slsutil.file_exists", Args: []any{"nginx/map.jinja"}},
			{Name: "file_exists dir", Fun: "slsutil.file_exists", Args: []any{"nginx"}},
			{Name: "file_exists other env", Fun: "slsutil.file_exists", Args: []any{"nginx/map.jinja", "prod"}},
			{Name: "dir_exists yes", Fun: "slsutil.dir_exists", Args: []any{"nginx/files/conf"}},
			{Name: "dir_exists file", Fun: "slsutil.dir_exists", Args: []any{"top.sls"}},
			{Name: "path_exists", Fun: "slsutil.path_exists", Args: []any{"nginx/sub"}},
			{Name: "findup here", Fun: "slsutil.findup", Args: []any{"nginx/sub/deep", "x.sls"}},
			{Name: "findup parent", Fun: "slsutil.findup", Args: []any{"nginx/sub/deep", "map.jinja"}},
			{Name: "findup list", Fun: "slsutil.findup", Args: []any{"nginx/files/conf", []any{"nope.jinja", "defaults.yaml"}}},
			{Name: "findup root", Fun: "slsutil.findup", Args: []any{"nginx/sub", "top.sls"}},
			{Name: "findup empty start", Fun: "slsutil.findup", Args: []any{"", "top.sls"}},
			{Name: "findup dir name", Fun: "slsutil.findup", Args: []any{"nginx/sub/deep", "files"}},
			{Name: "findup unnormalized", Fun: "slsutil.findup", Args: []any{"nginx/./sub//deep/", "map.jinja"}},
			{Name: "findup missing", Fun: "slsutil.findup", Args: []any{"nginx/sub", "nope"}},
			{Name: "findup bad start", Fun: "slsutil.findup", Args: []any{"nope/x", "top.sls"}},
			{Name: "findup bad filenames", Fun: "slsutil.findup", Args: []any{"nginx", int64(3)}},
			{Name: "renderer string", Fun: "slsutil.renderer", Kwargs: []any{"string", "a: {{ 1 + 2 }}\nb: [x, y]\n"}},
			{Name: "renderer string vars", Fun: "slsutil.renderer", Kwargs: []any{"string", "Hello, {{ name }}.", "default_renderer", "jinja", "name", "world"}},
			{Name: "renderer salt path", Fun: "slsutil.renderer", Args: []any{"salt://tmpl/map.sls"}},
			{Name: "renderer salt path vars", Fun: "slsutil.renderer", Args: []any{"salt://tmpl/map.sls"}, Kwargs: []any{"name", "x"}},
			{Name: "renderer shebang jinja", Fun: "slsutil.renderer", Args: []any{"salt://tmpl/plain.txt"}, Kwargs: []any{"who", "you"}},
			{Name: "renderer json", Fun: "slsutil.renderer", Args: []any{"salt://tmpl/data.json"}},
			{Name: "renderer local path", Fun: "slsutil.renderer", Args: []any{"{dir}/f.sls"}, Files: map[string]string{"f.sls": "x: {{ 2 * 3 }}\n"}},
			{Name: "renderer nothing", Fun: "slsutil.renderer"},
			{Name: "cp.list_master_dirs", Fun: "cp.list_master_dirs", Sorted: true},
			{Name: "cp.list_master_dirs prefix", Fun: "cp.list_master_dirs", Kwargs: []any{"prefix", "nginx/"}, Sorted: true},
			{Name: "cp.list_master", Fun: "cp.list_master", Sorted: true},
			{Name: "defaults.merge", Fun: "defaults.merge", Args: []any{deep(), upd()}},
			{Name: "defaults.merge lists copy", Fun: "defaults.merge", Args: []any{deep(), upd()}, Kwargs: []any{"merge_lists", true, "in_place", false}},
			{Name: "defaults.merge none src", Fun: "defaults.merge", Args: []any{deep(), nil}},
			{Name: "defaults.merge none dest", Fun: "defaults.merge", Args: []any{nil, upd()}},
			{Name: "defaults.merge none dest copy", Fun: "defaults.merge", Args: []any{nil, upd()}, Kwargs: []any{"in_place", false}},
			{Name: "defaults.deepcopy", Fun: "defaults.deepcopy", Args: []any{deep()}},
			{Name: "defaults.update", Fun: "defaults.update", Args: []any{
				m("host01", m("index", "foo", "extra", []any{"prod"}), "host02", m("index", "foo2", "enabled", false)),
				m("enabled", true, "extra", []any{"test", "stage"})}},
			{Name: "defaults.update no lists", Fun: "defaults.update", Args: []any{m("h", m("extra", []any{"prod"})), m("extra", []any{"test"})}, Kwargs: []any{"merge_lists", false, "in_place", false}},
			{Name: "defaults.update none", Fun: "defaults.update", Args: []any{nil, m()}},
			{Name: "defaults.get yaml", Fun: "defaults.get", Args: []any{"nginx:service:name"}},
			{Name: "defaults.get whole", Fun: "defaults.get", Args: []any{"nginx"}},
			{Name: "defaults.get index", Fun: "defaults.get", Args: []any{"nginx:list:1"}},
			{Name: "defaults.get json", Fun: "defaults.get", Args: []any{"core:users:root:shell"}},
			{Name: "defaults.get missing key", Fun: "defaults.get", Args: []any{"core:users:nobody", "dflt"}},
			{Name: "defaults.get missing formula", Fun: "defaults.get", Args: []any{"nope:x"}},
			{Name: "defaults.get empty file", Fun: "defaults.get", Args: []any{"empty"}},
		},
	})
}

// TestMatchGolden compares the match module and pillar.filter_by with
// Salt 3006's on fixed grains and pillar (testdata/golden/match.json).
func TestMatchGolden(t *testing.T) {
	grains := m("id", "web01.example.com", "os", "Debian", "os_family", "Debian", "osrelease", "12",
		"roles", []any{"web", "cache"}, "ipv4", []any{"10.1.2.3", "127.0.0.1"}, "num", int64(5),
		"nested", m("a", m("b", "c")))
	pillar := m("role", "db-primary", "roles", []any{"x", "dbserver"}, "app", m("tier", "front", "port", int64(80)), "flag", true)
	lookup := func() *payload.Map {
		return m("web*", m("pkg", "nginx", "opts", m("a", int64(1))), "db*", m("pkg", "pg"), "default", m("pkg", "none"))
	}
	runSuite(t, salttest.Suite{
		Name:   "match",
		Grains: grains, Pillar: pillar,
		Opts: []any{"id", "web01.example.com"},
		Calls: []salttest.Call{
			{Name: "glob", Fun: "match.glob", Args: []any{"web*"}},
			{Name: "glob no", Fun: "match.glob", Args: []any{"db*"}},
			{Name: "glob minion_id", Fun: "match.glob", Args: []any{"db*", "db1"}},
			{Name: "glob int minion_id", Fun: "match.glob", Args: []any{"1*", int64(12)}},
			{Name: "pcre", Fun: "match.pcre", Args: []any{`web\d+\..*`}},
			{Name: "pcre bad", Fun: "match.pcre", Args: []any{`web(`}},
			{Name: "list", Fun: "match.list", Args: []any{"a,web01.example.com"}},
			{Name: "list no", Fun: "match.list", Args: []any{"a,b"}},
			{Name: "grain", Fun: "match.grain", Args: []any{"os:Debian"}},
			{Name: "grain glob", Fun: "match.grain", Args: []any{"os:Deb*"}},
			{Name: "grain list", Fun: "match.grain", Args: []any{"roles:web"}},
			{Name: "grain nested", Fun: "match.grain", Args: []any{"nested:a:b:c"}},
			{Name: "grain delimiter", Fun: "match.grain", Args: []any{"nested|a|b|c"}, Kwargs: []any{"delimiter", "|"}},
			{Name: "grain int", Fun: "match.grain", Args: []any{"num:5"}},
			{Name: "grain no", Fun: "match.grain", Args: []any{"os:RedHat"}},
			{Name: "grain_pcre", Fun: "match.grain_pcre", Args: []any{"os:Deb.*"}},
			{Name: "pillar", Fun: "match.pillar", Args: []any{"role:db-*"}},
			{Name: "pillar list", Fun: "match.pillar", Args: []any{"roles:dbserver"}},
			{Name: "pillar bool", Fun: "match.pillar", Args: []any{"flag:True"}},
			{Name: "pillar_pcre", Fun: "match.pillar_pcre", Args: []any{"app:tier:fr.nt"}},
			{Name: "ipcidr", Fun: "match.ipcidr", Args: []any{"10.1.0.0/16"}},
			{Name: "ipcidr single", Fun: "match.ipcidr", Args: []any{"10.1.2.3"}},
			{Name: "ipcidr no", Fun: "match.ipcidr", Args: []any{"192.168.0.0/16"}},
			{Name: "ipcidr bad", Fun: "match.ipcidr", Args: []any{"nonsense"}},
			{Name: "compound", Fun: "match.compound", Args: []any{"G@os:Debian and web*"}},
			{Name: "compound not", Fun: "match.compound", Args: []any{"G@os:Debian and not I@role:db*"}},
			{Name: "compound list or", Fun: "match.compound", Args: []any{"L@a,b or E@web.*"}},
			{Name: "compound minion_id", Fun: "match.compound", Args: []any{"db* and G@os:Debian", "db7"}},
			{Name: "compound bad", Fun: "match.compound", Args: []any{"G@os:Debian and ("}},
			{Name: "filter_by compound", Fun: "match.filter_by", Args: []any{lookup()}},
			{Name: "filter_by minion_id", Fun: "match.filter_by", Args: []any{lookup()}, Kwargs: []any{"minion_id", "db9"}},
			{Name: "filter_by default", Fun: "match.filter_by", Args: []any{lookup()}, Kwargs: []any{"minion_id", "mail1"}},
			{Name: "filter_by custom default", Fun: "match.filter_by", Args: []any{lookup()}, Kwargs: []any{"minion_id", "mail1", "default", "db*"}},
			{Name: "filter_by no default", Fun: "match.filter_by", Args: []any{m("x*", int64(1))}},
			{Name: "filter_by merge", Fun: "match.filter_by", Args: []any{lookup()}, Kwargs: []any{"merge", m("opts", m("b", int64(2)), "extra", true)}},
			{Name: "filter_by merge none value", Fun: "match.filter_by", Args: []any{m("web*", nil)}, Kwargs: []any{"merge", m("x", int64(1))}},
			{Name: "filter_by merge not dict", Fun: "match.filter_by", Args: []any{lookup()}, Kwargs: []any{"merge", []any{int64(1)}}},
			{Name: "filter_by grain type", Fun: "match.filter_by", Args: []any{m("os:RedHat", "rh", "os:Debian", "deb")}, Kwargs: []any{"tgt_type", "grain"}},
			{Name: "filter_by pillar type", Fun: "match.filter_by", Args: []any{m("role:web*", "w", "role:db*", "d")}, Kwargs: []any{"tgt_type", "pillar"}},
			{Name: "filter_by glob type", Fun: "match.filter_by", Args: []any{m("db*", int64(1), "web*", int64(2))}, Kwargs: []any{"tgt_type", "glob"}},
			{Name: "filter_by list type", Fun: "match.filter_by", Args: []any{m("a", int64(1))}, Kwargs: []any{"tgt_type", "list"}},
			{Name: "filter_by list_ type", Fun: "match.filter_by", Args: []any{m("a,web01.example.com", int64(1))}, Kwargs: []any{"tgt_type", "list_"}},
			{Name: "search_by", Fun: "match.search_by", Args: []any{m("web", []any{"G@os_family:Debian and not nodeX"}, "db", []any{"L@node2,node3"}, "both", []any{"web*", "*.com"})}},
			{Name: "search_by none", Fun: "match.search_by", Args: []any{m("db", []any{"L@node2,node3"})}},
			{Name: "search_by minion_id", Fun: "match.search_by", Args: []any{m("db", []any{"node*"}, "web", []any{"web*"})}, Kwargs: []any{"minion_id", "node3"}},
			{Name: "ifelse", Fun: "match.ifelse", Args: []any{"db*", "DB", "web*", "WEB", "other"}},
			{Name: "ifelse default", Fun: "match.ifelse", Args: []any{"db*", "DB", "other"}},
			{Name: "ifelse bools", Fun: "match.ifelse", Args: []any{false, "no", true, "yes", "other"}},
			{Name: "ifelse one", Fun: "match.ifelse", Args: []any{"only"}},
			{Name: "ifelse even", Fun: "match.ifelse", Args: []any{"a", "b"}},
			{Name: "ifelse minion_id", Fun: "match.ifelse", Args: []any{"db*", "DB", "web*", "WEB", "other"}, Kwargs: []any{"minion_id", "db2"}},
			{Name: "pillar.filter_by", Fun: "pillar.filter_by", Args: []any{m("web*", "w", "db*", "d", "default", "x"), "role"}},
			{Name: "pillar.filter_by list", Fun: "pillar.filter_by", Args: []any{m("db*", "d", "default", "x"), "roles"}},
			{Name: "pillar.filter_by missing", Fun: "pillar.filter_by", Args: []any{m("db*", "d", "default", "x"), "nope"}},
			{Name: "pillar.filter_by base merge", Fun: "pillar.filter_by",
				Args: []any{m("base", m("a", int64(1), "b", int64(1)), "front", m("b", int64(2))), "app:tier"}, Kwargs: []any{"base", "base", "merge", m("c", int64(3))}},
			{Name: "grains.filter_by", Fun: "grains.filter_by", Args: []any{m("Debian", m("pkg", "apache2"), "RedHat", m("pkg", "httpd"))}},
			{Name: "grains.filter_by grain", Fun: "grains.filter_by", Args: []any{m("web", "W", "cache", "C"), "roles"}},
			{Name: "grains.filter_by default", Fun: "grains.filter_by", Args: []any{m("RedHat", int64(1), "default", int64(0)), "os"}},
			{Name: "test.conf_test", Fun: "test.conf_test"},
			{Name: "test.arg_type", Fun: "test.arg_type", Args: []any{int64(1), "x", 1.5, nil, true, []any{}, m()}, Kwargs: []any{"k", "v"}},
			{Name: "test.arg_repr", Fun: "test.arg_repr", Args: []any{int64(1), "x", 1.5, nil, true}},
			{Name: "test.arg_repr one", Fun: "test.arg_repr", Args: []any{"x"}},
			{Name: "test.cross_test", Fun: "test.cross_test", Args: []any{"test.echo", []any{"hi"}}},
			{Name: "test.try ok", Fun: "test.try", Args: []any{"test.echo"}, Kwargs: []any{"text", "x"}},
			{Name: "test.try fails", Fun: "test.try", Args: []any{"test.exception"}},
			{Name: "test.tty", Fun: "test.tty", Args: []any{"a"}},
			{Name: "test.assertion true", Fun: "test.assertion", Args: []any{true}},
			{Name: "test.raise_exception none", Fun: "test.raise_exception", Args: []any{"NoSuchThing"}},
			{Name: "test.raise_exception salt", Fun: "test.raise_exception", Args: []any{"salt.exceptions.CommandExecutionError", "went wrong"}},
		},
	})
}

// yamlexMergeTree renders yamlex files with slsutil.renderer inside one
// Jinja template and merges them with slsutil.merge, merge_all and
// update, so that the values carry the yamlex renderer's !aggregate
// marks (Salt's AggregatedMap and AggregatedSequence) into the merge.
var yamlexMergeTree = map[string]string{
	"agg/a.yamlex":   "foo: !aggregate\n  a: 1\n  l: !aggregate [x]\n  plain: [p]\n  sub: !aggregate {k1: 1}\nbar:\n  p: 1\n  sub: {k1: 1}\nlst: !aggregate [1]\n",
	"agg/b.yamlex":   "foo: !aggregate\n  b: 2\n  l: !aggregate [y, x]\n  plain: [q]\n  sub: !aggregate {k2: 2}\nbar:\n  q: 2\n  sub: {k2: 2}\nlst: !aggregate [2]\n",
	"agg/c.yamlex":   "foo: !aggregate\n  c: 3\n  l: !aggregate [z]\n  sub: !aggregate {k3: 3}\nbar:\n  sub: {k3: 3}\n",
	"agg/plain.yaml": "foo:\n  d: 4\n  l: [w]\n  sub: {k4: 4}\n",
	"agg/main.sls": "#!jinja|yaml\n" +
		"{%- set a = salt['slsutil.renderer']('salt://agg/a.yamlex', default_renderer='yamlex') %}\n" +
		"{%- set b = salt['slsutil.renderer']('salt://agg/b.yamlex', default_renderer='yamlex') %}\n" +
		"{%- set c = salt['slsutil.renderer']('salt://agg/c.yamlex', default_renderer='yamlex') %}\n" +
		"{%- set p = salt['slsutil.renderer']('salt://agg/plain.yaml', default_renderer='yaml') %}\n" +
		"{%- set ab = salt['slsutil.merge'](a, b, strategy='aggregate') %}\n" +
		"aggregate: {{ ab | json }}\n" +
		"smart_yamlex: {{ salt['slsutil.merge'](a, b, renderer='yamlex') | json }}\n" +
		"smart_yaml: {{ salt['slsutil.merge'](a, b) | json }}\n" +
		"chained: {{ salt['slsutil.merge'](ab, c, strategy='aggregate') | json }}\n" +
		"nested: {{ salt['slsutil.merge']({'top': ab}, {'top': c}, strategy='aggregate') | json }}\n" +
		"with_plain: {{ salt['slsutil.merge'](a, p, strategy='aggregate') | json }}\n" +
		"plain_first: {{ salt['slsutil.merge'](p, a, strategy='aggregate') | json }}\n" +
		"all: {{ salt['slsutil.merge_all']([a, b, c], strategy='aggregate') | json }}\n" +
		"all_smart: {{ salt['slsutil.merge_all']([a, b, c], renderer='yamlex') | json }}\n" +
		"all_recurse: {{ salt['slsutil.merge_all']([a, b, c]) | json }}\n" +
		"update: {{ salt['slsutil.update'](a, b, merge_lists=True) | json }}\n",
}

// TestSlsutilYamlexMergeGolden compares with Salt 3006
// (testdata/golden/slsutil_yamlex.json) slsutil.merge, merge_all and
// update of yamlex data whose !aggregate marks Salt keeps through the
// merge (aggregation.aggregate looks at the values' classes below the top
// level, and its results keep them).
func TestSlsutilYamlexMergeGolden(t *testing.T) {
	runSuite(t, salttest.Suite{
		Name: "slsutil_yamlex",
		Srv:  yamlexMergeTree,
		Calls: []salttest.Call{
			{Name: "merges", Fun: "slsutil.renderer", Args: []any{"salt://agg/main.sls"}},
			{Name: "yamlex alone", Fun: "slsutil.renderer", Args: []any{"salt://agg/a.yamlex"}, Kwargs: []any{"default_renderer", "yamlex"}},
		},
	})
}

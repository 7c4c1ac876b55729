package builtin_test

import (
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
	runSuite(t, sSuite{
		name: "slsutil",
		srv:  formulaTree,
		calls: []sCall{
			{name: "update", fun: "slsutil.update", args: []any{deep(), upd()}},
			{name: "update merge_lists", fun: "slsutil.update", args: []any{deep(), upd()}, kwargs: []any{"merge_lists", true}},
			{name: "update not recursive", fun: "slsutil.update", args: []any{deep(), upd()}, kwargs: []any{"recursive_update", false}},
			{name: "update non dict", fun: "slsutil.update", args: []any{"x", upd()}},
			{name: "merge smart", fun: "slsutil.merge", args: []any{deep(), upd()}},
			{name: "merge recurse lists", fun: "slsutil.merge", args: []any{deep(), upd()}, kwargs: []any{"strategy", "recurse", "merge_lists", true}},
			{name: "merge overwrite", fun: "slsutil.merge", args: []any{deep(), upd()}, kwargs: []any{"strategy", "overwrite"}},
			{name: "merge list", fun: "slsutil.merge", args: []any{deep(), upd()}, kwargs: []any{"strategy", "list"}},
			{name: "merge aggregate", fun: "slsutil.merge", args: []any{deep(), upd()}, kwargs: []any{"strategy", "aggregate"}},
			{name: "merge none", fun: "slsutil.merge", args: []any{deep(), upd()}, kwargs: []any{"strategy", "none"}},
			{name: "merge unknown", fun: "slsutil.merge", args: []any{deep(), upd()}, kwargs: []any{"strategy", "bogus"}},
			{name: "merge smart yamlex", fun: "slsutil.merge", args: []any{deep(), upd()}, kwargs: []any{"renderer", "jinja|yamlex"}},
			{name: "merge_all", fun: "slsutil.merge_all", args: []any{[]any{m("a", int64(1), "n", m("x", int64(1))), m("b", int64(2), "n", m("y", int64(2))), m("a", int64(3))}}},
			{name: "merge_all empty", fun: "slsutil.merge_all", args: []any{[]any{}}},
			{name: "merge_all lists", fun: "slsutil.merge_all", args: []any{[]any{m("l", []any{int64(1)}), m("l", []any{int64(1), int64(2)})}}, kwargs: []any{"merge_lists", true}},
			{name: "boolstr true", fun: "slsutil.boolstr", args: []any{true}},
			{name: "boolstr false", fun: "slsutil.boolstr", args: []any{false, "yes", "no"}},
			{name: "boolstr string", fun: "slsutil.boolstr", args: []any{"false", "yes", "no"}},
			{name: "boolstr empty list", fun: "slsutil.boolstr", args: []any{[]any{}, "on", "off"}},
			{name: "banner default", fun: "slsutil.banner"},
			{name: "banner javadoc", fun: "slsutil.banner", kwargs: []any{"commentchar", " *", "borderchar", "*", "blockstart", "/**", "blockend", " */"}},
			{name: "banner custom", fun: "slsutil.banner", kwargs: []any{"title", "Copyright 2019 VMware, Inc.", "text", "This file may not be copied or distributed without permission of VMware, Inc.", "width", int64(60)}},
			{name: "banner odd width newline", fun: "slsutil.banner", kwargs: []any{"width", int64(41), "commentchar", "//", "newline", true, "title", "abc"}},
			{name: "banner long word", fun: "slsutil.banner", kwargs: []any{"width", int64(20), "text", "supercalifragilisticexpialidocious is long, well-known and self-evident"}},
			{name: "banner too small", fun: "slsutil.banner", kwargs: []any{"width", int64(3)}},
			{name: "serialize json", fun: "slsutil.serialize", args: []any{"json", m("b", int64(1), "a", []any{"x", 1.5, nil, true}, "ü", "é")}},
			{name: "serialize json indent sorted", fun: "slsutil.serialize", args: []any{"json", m("b", int64(1), "a", m("z", int64(1), "y", int64(2)))}, kwargs: []any{"indent", int64(2), "sort_keys", true}},
			{name: "serialize yaml", fun: "slsutil.serialize", args: []any{"yaml", m("b", int64(1), "a", []any{"x", int64(2)}, "n", m("k", "v", "deep", m("x", []any{int64(1), m("y", int64(2))})))}},
			{name: "serialize yaml scalar", fun: "slsutil.serialize", args: []any{"yaml", "hello"}},
			{name: "serialize yaml block", fun: "slsutil.serialize", args: []any{"yaml", m("a", []any{int64(1), int64(2)})}, kwargs: []any{"default_flow_style", false}},
			{name: "serialize unknown", fun: "slsutil.serialize", args: []any{"nope", m()}},
			{name: "deserialize json", fun: "slsutil.deserialize", args: []any{"json", `{"b": 1, "a": [1.5, null, true, "x"]}`}},
			{name: "deserialize yaml", fun: "slsutil.deserialize", args: []any{"yaml", "b: 1\na: [x, 2]\nc: {d: e}\n"}},
			{name: "deserialize unknown", fun: "slsutil.deserialize", args: []any{"nope", "x"}},
			{name: "file_exists yes", fun: "slsutil.file_exists", args: []any{"nginx/map.jinja"}},
			{name: "file_exists dir", fun: "slsutil.file_exists", args: []any{"nginx"}},
			{name: "file_exists other env", fun: "slsutil.file_exists", args: []any{"nginx/map.jinja", "prod"}},
			{name: "dir_exists yes", fun: "slsutil.dir_exists", args: []any{"nginx/files/conf"}},
			{name: "dir_exists file", fun: "slsutil.dir_exists", args: []any{"top.sls"}},
			{name: "path_exists", fun: "slsutil.path_exists", args: []any{"nginx/sub"}},
			{name: "findup here", fun: "slsutil.findup", args: []any{"nginx/sub/deep", "x.sls"}},
			{name: "findup parent", fun: "slsutil.findup", args: []any{"nginx/sub/deep", "map.jinja"}},
			{name: "findup list", fun: "slsutil.findup", args: []any{"nginx/files/conf", []any{"nope.jinja", "defaults.yaml"}}},
			{name: "findup root", fun: "slsutil.findup", args: []any{"nginx/sub", "top.sls"}},
			{name: "findup empty start", fun: "slsutil.findup", args: []any{"", "top.sls"}},
			{name: "findup dir name", fun: "slsutil.findup", args: []any{"nginx/sub/deep", "files"}},
			{name: "findup unnormalized", fun: "slsutil.findup", args: []any{"nginx/./sub//deep/", "map.jinja"}},
			{name: "findup missing", fun: "slsutil.findup", args: []any{"nginx/sub", "nope"}},
			{name: "findup bad start", fun: "slsutil.findup", args: []any{"nope/x", "top.sls"}},
			{name: "findup bad filenames", fun: "slsutil.findup", args: []any{"nginx", int64(3)}},
			{name: "renderer string", fun: "slsutil.renderer", kwargs: []any{"string", "a: {{ 1 + 2 }}\nb: [x, y]\n"}},
			{name: "renderer string vars", fun: "slsutil.renderer", kwargs: []any{"string", "Hello, {{ name }}.", "default_renderer", "jinja", "name", "world"}},
			{name: "renderer salt path", fun: "slsutil.renderer", args: []any{"salt://tmpl/map.sls"}},
			{name: "renderer salt path vars", fun: "slsutil.renderer", args: []any{"salt://tmpl/map.sls"}, kwargs: []any{"name", "x"}},
			{name: "renderer shebang jinja", fun: "slsutil.renderer", args: []any{"salt://tmpl/plain.txt"}, kwargs: []any{"who", "you"}},
			{name: "renderer json", fun: "slsutil.renderer", args: []any{"salt://tmpl/data.json"}},
			{name: "renderer local path", fun: "slsutil.renderer", args: []any{"{dir}/f.sls"}, files: map[string]string{"f.sls": "x: {{ 2 * 3 }}\n"}},
			{name: "renderer nothing", fun: "slsutil.renderer"},
			{name: "cp.list_master_dirs", fun: "cp.list_master_dirs", sorted: true},
			{name: "cp.list_master_dirs prefix", fun: "cp.list_master_dirs", kwargs: []any{"prefix", "nginx/"}, sorted: true},
			{name: "cp.list_master", fun: "cp.list_master", sorted: true},
			{name: "defaults.merge", fun: "defaults.merge", args: []any{deep(), upd()}},
			{name: "defaults.merge lists copy", fun: "defaults.merge", args: []any{deep(), upd()}, kwargs: []any{"merge_lists", true, "in_place", false}},
			{name: "defaults.merge none src", fun: "defaults.merge", args: []any{deep(), nil}},
			{name: "defaults.merge none dest", fun: "defaults.merge", args: []any{nil, upd()}},
			{name: "defaults.merge none dest copy", fun: "defaults.merge", args: []any{nil, upd()}, kwargs: []any{"in_place", false}},
			{name: "defaults.deepcopy", fun: "defaults.deepcopy", args: []any{deep()}},
			{name: "defaults.update", fun: "defaults.update", args: []any{
				m("host01", m("index", "foo", "extra", []any{"prod"}), "host02", m("index", "foo2", "enabled", false)),
				m("enabled", true, "extra", []any{"test", "stage"})}},
			{name: "defaults.update no lists", fun: "defaults.update", args: []any{m("h", m("extra", []any{"prod"})), m("extra", []any{"test"})}, kwargs: []any{"merge_lists", false, "in_place", false}},
			{name: "defaults.update none", fun: "defaults.update", args: []any{nil, m()}},
			{name: "defaults.get yaml", fun: "defaults.get", args: []any{"nginx:service:name"}},
			{name: "defaults.get whole", fun: "defaults.get", args: []any{"nginx"}},
			{name: "defaults.get index", fun: "defaults.get", args: []any{"nginx:list:1"}},
			{name: "defaults.get json", fun: "defaults.get", args: []any{"core:users:root:shell"}},
			{name: "defaults.get missing key", fun: "defaults.get", args: []any{"core:users:nobody", "dflt"}},
			{name: "defaults.get missing formula", fun: "defaults.get", args: []any{"nope:x"}},
			{name: "defaults.get empty file", fun: "defaults.get", args: []any{"empty"}},
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
	runSuite(t, sSuite{
		name:   "match",
		grains: grains, pillar: pillar,
		opts: []any{"id", "web01.example.com"},
		calls: []sCall{
			{name: "glob", fun: "match.glob", args: []any{"web*"}},
			{name: "glob no", fun: "match.glob", args: []any{"db*"}},
			{name: "glob minion_id", fun: "match.glob", args: []any{"db*", "db1"}},
			{name: "glob int minion_id", fun: "match.glob", args: []any{"1*", int64(12)}},
			{name: "pcre", fun: "match.pcre", args: []any{`web\d+\..*`}},
			{name: "pcre bad", fun: "match.pcre", args: []any{`web(`}},
			{name: "list", fun: "match.list", args: []any{"a,web01.example.com"}},
			{name: "list no", fun: "match.list", args: []any{"a,b"}},
			{name: "grain", fun: "match.grain", args: []any{"os:Debian"}},
			{name: "grain glob", fun: "match.grain", args: []any{"os:Deb*"}},
			{name: "grain list", fun: "match.grain", args: []any{"roles:web"}},
			{name: "grain nested", fun: "match.grain", args: []any{"nested:a:b:c"}},
			{name: "grain delimiter", fun: "match.grain", args: []any{"nested|a|b|c"}, kwargs: []any{"delimiter", "|"}},
			{name: "grain int", fun: "match.grain", args: []any{"num:5"}},
			{name: "grain no", fun: "match.grain", args: []any{"os:RedHat"}},
			{name: "grain_pcre", fun: "match.grain_pcre", args: []any{"os:Deb.*"}},
			{name: "pillar", fun: "match.pillar", args: []any{"role:db-*"}},
			{name: "pillar list", fun: "match.pillar", args: []any{"roles:dbserver"}},
			{name: "pillar bool", fun: "match.pillar", args: []any{"flag:True"}},
			{name: "pillar_pcre", fun: "match.pillar_pcre", args: []any{"app:tier:fr.nt"}},
			{name: "ipcidr", fun: "match.ipcidr", args: []any{"10.1.0.0/16"}},
			{name: "ipcidr single", fun: "match.ipcidr", args: []any{"10.1.2.3"}},
			{name: "ipcidr no", fun: "match.ipcidr", args: []any{"192.168.0.0/16"}},
			{name: "ipcidr bad", fun: "match.ipcidr", args: []any{"nonsense"}},
			{name: "compound", fun: "match.compound", args: []any{"G@os:Debian and web*"}},
			{name: "compound not", fun: "match.compound", args: []any{"G@os:Debian and not I@role:db*"}},
			{name: "compound list or", fun: "match.compound", args: []any{"L@a,b or E@web.*"}},
			{name: "compound minion_id", fun: "match.compound", args: []any{"db* and G@os:Debian", "db7"}},
			{name: "compound bad", fun: "match.compound", args: []any{"G@os:Debian and ("}},
			{name: "filter_by compound", fun: "match.filter_by", args: []any{lookup()}},
			{name: "filter_by minion_id", fun: "match.filter_by", args: []any{lookup()}, kwargs: []any{"minion_id", "db9"}},
			{name: "filter_by default", fun: "match.filter_by", args: []any{lookup()}, kwargs: []any{"minion_id", "mail1"}},
			{name: "filter_by custom default", fun: "match.filter_by", args: []any{lookup()}, kwargs: []any{"minion_id", "mail1", "default", "db*"}},
			{name: "filter_by no default", fun: "match.filter_by", args: []any{m("x*", int64(1))}},
			{name: "filter_by merge", fun: "match.filter_by", args: []any{lookup()}, kwargs: []any{"merge", m("opts", m("b", int64(2)), "extra", true)}},
			{name: "filter_by merge none value", fun: "match.filter_by", args: []any{m("web*", nil)}, kwargs: []any{"merge", m("x", int64(1))}},
			{name: "filter_by merge not dict", fun: "match.filter_by", args: []any{lookup()}, kwargs: []any{"merge", []any{int64(1)}}},
			{name: "filter_by grain type", fun: "match.filter_by", args: []any{m("os:RedHat", "rh", "os:Debian", "deb")}, kwargs: []any{"tgt_type", "grain"}},
			{name: "filter_by pillar type", fun: "match.filter_by", args: []any{m("role:web*", "w", "role:db*", "d")}, kwargs: []any{"tgt_type", "pillar"}},
			{name: "filter_by glob type", fun: "match.filter_by", args: []any{m("db*", int64(1), "web*", int64(2))}, kwargs: []any{"tgt_type", "glob"}},
			{name: "filter_by list type", fun: "match.filter_by", args: []any{m("a", int64(1))}, kwargs: []any{"tgt_type", "list"}},
			{name: "filter_by list_ type", fun: "match.filter_by", args: []any{m("a,web01.example.com", int64(1))}, kwargs: []any{"tgt_type", "list_"}},
			{name: "search_by", fun: "match.search_by", args: []any{m("web", []any{"G@os_family:Debian and not nodeX"}, "db", []any{"L@node2,node3"}, "both", []any{"web*", "*.com"})}},
			{name: "search_by none", fun: "match.search_by", args: []any{m("db", []any{"L@node2,node3"})}},
			{name: "search_by minion_id", fun: "match.search_by", args: []any{m("db", []any{"node*"}, "web", []any{"web*"})}, kwargs: []any{"minion_id", "node3"}},
			{name: "ifelse", fun: "match.ifelse", args: []any{"db*", "DB", "web*", "WEB", "other"}},
			{name: "ifelse default", fun: "match.ifelse", args: []any{"db*", "DB", "other"}},
			{name: "ifelse bools", fun: "match.ifelse", args: []any{false, "no", true, "yes", "other"}},
			{name: "ifelse one", fun: "match.ifelse", args: []any{"only"}},
			{name: "ifelse even", fun: "match.ifelse", args: []any{"a", "b"}},
			{name: "ifelse minion_id", fun: "match.ifelse", args: []any{"db*", "DB", "web*", "WEB", "other"}, kwargs: []any{"minion_id", "db2"}},
			{name: "pillar.filter_by", fun: "pillar.filter_by", args: []any{m("web*", "w", "db*", "d", "default", "x"), "role"}},
			{name: "pillar.filter_by list", fun: "pillar.filter_by", args: []any{m("db*", "d", "default", "x"), "roles"}},
			{name: "pillar.filter_by missing", fun: "pillar.filter_by", args: []any{m("db*", "d", "default", "x"), "nope"}},
			{name: "pillar.filter_by base merge", fun: "pillar.filter_by",
				args: []any{m("base", m("a", int64(1), "b", int64(1)), "front", m("b", int64(2))), "app:tier"}, kwargs: []any{"base", "base", "merge", m("c", int64(3))}},
			{name: "grains.filter_by", fun: "grains.filter_by", args: []any{m("Debian", m("pkg", "apache2"), "RedHat", m("pkg", "httpd"))}},
			{name: "grains.filter_by grain", fun: "grains.filter_by", args: []any{m("web", "W", "cache", "C"), "roles"}},
			{name: "grains.filter_by default", fun: "grains.filter_by", args: []any{m("RedHat", int64(1), "default", int64(0)), "os"}},
			{name: "test.conf_test", fun: "test.conf_test"},
			{name: "test.arg_type", fun: "test.arg_type", args: []any{int64(1), "x", 1.5, nil, true, []any{}, m()}, kwargs: []any{"k", "v"}},
			{name: "test.arg_repr", fun: "test.arg_repr", args: []any{int64(1), "x", 1.5, nil, true}},
			{name: "test.arg_repr one", fun: "test.arg_repr", args: []any{"x"}},
			{name: "test.cross_test", fun: "test.cross_test", args: []any{"test.echo", []any{"hi"}}},
			{name: "test.try ok", fun: "test.try", args: []any{"test.echo"}, kwargs: []any{"text", "x"}},
			{name: "test.try fails", fun: "test.try", args: []any{"test.exception"}},
			{name: "test.tty", fun: "test.tty", args: []any{"a"}},
			{name: "test.assertion true", fun: "test.assertion", args: []any{true}},
			{name: "test.raise_exception none", fun: "test.raise_exception", args: []any{"NoSuchThing"}},
			{name: "test.raise_exception salt", fun: "test.raise_exception", args: []any{"salt.exceptions.CommandExecutionError", "went wrong"}},
		},
	})
}

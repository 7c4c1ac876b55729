# Writes ext_cases.json (the table of ext_pillar configurations that
# gen_extpillar.py compiles with real Salt and TestExtPillarGolden with
# gsalt). @DIR@ is the absolute path of testdata/ext.
import json

J = "/bin/sh @DIR@/bin/json.sh %s"
J2 = "/bin/sh @DIR@/bin/json2.sh %s"
Y = "/bin/sh @DIR@/bin/yaml.sh %s"
YX = "/bin/sh @DIR@/bin/yamlex.sh %s"
T = "@DIR@/tree"
cases = []


def case(name, ep, minion="web1", **kw):
    c = {"name": name, "minion": minion, "ext_pillar": ep}
    c.update(kw)
    cases.append(c)


case("cmd_json", [{"cmd_json": J}])
case("cmd_json_db1", [{"cmd_json": J}], minion="db1")
case("cmd_json_bad_output", [{"cmd_json": "/bin/sh @DIR@/bin/json.sh bad"}])
case("cmd_json_list_output", [{"cmd_json": "/bin/sh @DIR@/bin/json.sh list"}], exception=True)
case("cmd_json_stderr_merged", [{"cmd_json": "/bin/sh @DIR@/bin/json.sh noisy"}])
case("cmd_json_missing_binary", [{"cmd_json": "/nonexistent/binary %s"}])
case("cmd_json_no_shell", [{"cmd_json": "echo '{\"a\": 1}' | cat"}])
case("cmd_json_quoted_args", [{"cmd_json": "/bin/sh -c 'echo \"{\\\"q\\\": \\\"$0\\\"}\"' %s"}])
case("cmd_yaml", [{"cmd_yaml": Y}])
case("cmd_yaml_shell", [{"cmd_yaml": "echo 'a: 1' && echo 'b: %s'"}])
case("cmd_yaml_bad", [{"cmd_yaml": "/bin/sh @DIR@/bin/yaml.sh bad"}])
case("cmd_yamlex", [{"cmd_yamlex": YX}])
YXA = "/bin/sh @DIR@/bin/yamlex_agg.sh %s"
case("cmd_yamlex_aggregate", [{"cmd_yamlex": YXA}])
case("cmd_yamlex_aggregate_strategy", [{"cmd_json": J}, {"cmd_yamlex": YXA}], opts={"pillar_source_merging_strategy": "aggregate"})
case("cmd_yamlex_aggregate_roots", [{"cmd_yamlex": YXA}], roots=True)
YXA2 = "/bin/sh @DIR@/bin/yamlex_agg2.sh %s"
case("cmd_yamlex_two_aggregate", [{"cmd_yamlex": YXA}, {"cmd_yamlex": YXA2}], opts={"pillar_source_merging_strategy": "aggregate"})
case("cmd_yamlex_two_recurse", [{"cmd_yamlex": YXA}, {"cmd_yamlex": YXA2}])
case("cmd_yamlex_bad_int", [{"cmd_yamlex": "/bin/sh @DIR@/bin/yamlex_bad.sh %s"}])
case("cmd_yamlex_scalar", [{"cmd_yamlex": "/bin/sh @DIR@/bin/yamlex_list.sh"}], exception=True)
case("two_sources_recurse", [{"cmd_json": J}, {"cmd_json": J2}])
case("two_sources_merge_lists", [{"cmd_json": J}, {"cmd_json": J2}], opts={"pillar_merge_lists": True})
case("two_sources_overwrite", [{"cmd_json": J}, {"cmd_json": J2}], opts={"pillar_source_merging_strategy": "overwrite"})
case("two_sources_aggregate", [{"cmd_json": J}, {"cmd_json": J2}], opts={"pillar_source_merging_strategy": "aggregate"})
case("two_sources_list", [{"cmd_json": J}, {"cmd_json": J2}], opts={"pillar_source_merging_strategy": "list"})
case("two_sources_none", [{"cmd_json": J}, {"cmd_json": J2}], opts={"pillar_source_merging_strategy": "none"})
case("one_entry_two_keys", [{"cmd_json": J, "cmd_yaml": Y}])
case("with_roots", [{"cmd_json": J}], roots=True)
case("with_roots_ext_first", [{"cmd_json": J}], roots=True, opts={"ext_pillar_first": True})
case("with_roots_override", [{"cmd_json": J}], roots=True, override={"nested": {"a": "cli"}, "cli": True})
case("ext_first_override", [{"cmd_json": J}], roots=True, opts={"ext_pillar_first": True}, override={"source": "cli"})
case("exclude", [{"cmd_json": J}, {"cmd_yaml": Y}], opts={"exclude_ext_pillar": ["cmd_json"]})
case("unknown_interface", [{"nosuchmodule": "x"}, {"cmd_yamlex": YX}])
case("unexpected_kwarg", [{"cmd_json": {"cmd": J}}])
case("missing_arg", [{"csv": {}}])
case("too_many_positional", [{"cmd_json": [J, "extra"]}])
case("too_many_positional_csv", [{"csv": ["a", "b", "c", "d", "e", "f", "g", "h"]}])
case("positional_list", [{"csv": ["@DIR@/csv/hosts.csv", "id", "ns"]}])
case("malformed_not_list", "bad")
case("malformed_entry", [{"cmd_json": J}, "notadict"])
case("csv", [{"csv": "@DIR@/csv/hosts.csv"}])
case("csv_db1", [{"csv": "@DIR@/csv/hosts.csv"}], minion="db1")
case("csv_namespace", [{"csv": {"path": "@DIR@/csv/hosts.csv", "namespace": "inventory"}}])
case("csv_nomatch", [{"csv": "@DIR@/csv/hosts.csv"}], minion="other")
case("csv_fieldnames_rest", [{"csv": {"path": "@DIR@/csv/noheader.csv", "fieldnames": ["id", "role", "env"], "restkey": "more", "restval": "dflt"}}])
case("csv_fieldnames_rest_db1", [{"csv": {"path": "@DIR@/csv/noheader.csv", "fieldnames": ["id", "role", "env"], "restkey": "more", "restval": "dflt"}}], minion="db1")
case("csv_idkey", [{"csv": {"path": "@DIR@/csv/ids.csv", "idkey": "host"}}], minion="db1")
case("csv_bad_idkey", [{"csv": {"path": "@DIR@/csv/hosts.csv", "idkey": "nope"}}])
case("csv_missing_file", [{"csv": "@DIR@/csv/missing.csv"}])
case("nodegroups", [{"nodegroups": {}}])
case("nodegroups_name", [{"nodegroups": {"pillar_name": "groups"}}], minion="db1")
case("nodegroups_none", [{"nodegroups": None}])
case("nodegroups_unaccepted", [{"nodegroups": {}}], minion="web2")
case("file_tree", [{"file_tree": {"root_dir": T}}], unordered=True)
case("file_tree_db1", [{"file_tree": {"root_dir": T}}], minion="db1", unordered=True)
case("file_tree_unaccepted", [{"file_tree": {"root_dir": T}}], minion="web2", unordered=True)
case("file_tree_keep_newline", [{"file_tree": {"root_dir": T, "keep_newline": True}}], unordered=True)
case("file_tree_keep_newline_globs", [{"file_tree": {"root_dir": T, "keep_newline": ["apache/*", "./motd", "*double"]}}], unordered=True)
case("file_tree_keep_newline_bad", [{"file_tree": {"root_dir": T, "keep_newline": "yes"}}], unordered=True)
case("file_tree_follow_links", [{"file_tree": {"root_dir": T, "follow_dir_links": True}}], unordered=True)
case("file_tree_template", [{"file_tree": {"root_dir": T, "template": True, "render_default": "jinja|yaml"}}], unordered=True, minion="db1")
case("file_tree_template_no_default", [{"file_tree": {"root_dir": "@DIR@/tpltree", "template": True}}], minion="tpl", unordered=True)
case("file_tree_template_whitelist", [{"file_tree": {"root_dir": "@DIR@/tpltree", "template": True, "render_default": "jinja|yaml", "renderer_whitelist": ["yaml", "json"]}}], minion="tpl", unordered=True)
case("file_tree_template_blacklist", [{"file_tree": {"root_dir": "@DIR@/tpltree", "template": True, "render_default": "jinja", "renderer_blacklist": ["json"]}}], minion="tpl", unordered=True)
case("file_tree_template_render_error", [{"file_tree": {"root_dir": "@DIR@/badtree", "template": True, "render_default": "yaml"}}, {"cmd_yamlex": YX}])
case("file_tree_relative", [{"file_tree": {"root_dir": "reltree/tree"}}], pillarenv="base", unordered=True)
case("file_tree_relative_no_pillarenv", [{"file_tree": {"root_dir": "reltree/tree"}}], unordered=True)
case("file_tree_missing_root", [{"file_tree": {"root_dir": "@DIR@/nonexistent"}}])
case("file_tree_no_root", [{"file_tree": {}}])
case("on_demand_refused", [{"cmd_yamlex": YX}], ext={"cmd_json": J})
case("on_demand_allowed", [{"cmd_yamlex": YX}], ext={"cmd_json": J}, opts={"on_demand_ext_pillar": ["cmd_json"]})
case("on_demand_not_dict", [], ext=["cmd_json"], opts={"on_demand_ext_pillar": ["cmd_json"]})
case("virtkey_no_authorization", [], ext={"virtkey": ["vm1", "PUBKEY"]})
case("virtkey_configured_bad_args", [{"virtkey": "vm1"}])

S = "@DIR@/stack"
case("stack_str", [{"stack": S + "/stack.cfg"}])
case("stack_str_db1", [{"stack": S + "/stack.cfg"}], minion="db1")
case("stack_str_other", [{"stack": S + "/stack.cfg"}], minion="other")
case("stack_with_roots", [{"stack": S + "/stack.cfg"}], roots=True)
case("stack_list", [{"stack": [S + "/stack.cfg", S + "/overwrite.cfg", S + "/missing.cfg", S + "/scalar.cfg"]}])
case("stack_list_reversed", [{"stack": [S + "/overwrite.cfg", S + "/stack.cfg"]}], minion="db1")
case("stack_dict_grains", [{"stack": {"grains:role": {"app": S + "/stack.cfg", "db": [S + "/overwrite.cfg", S + "/stack.cfg"]}}}])
case("stack_dict_grains_db1", [{"stack": {"grains:role": {"app": S + "/stack.cfg", "db": [S + "/overwrite.cfg", S + "/stack.cfg"]}}}], minion="db1")
case("stack_dict_grains_nomatch", [{"stack": {"grains:role": {"app": S + "/stack.cfg"}}}], minion="other")
case("stack_dict_env", [{"stack": {"opts:pillarenv": {"__env__": S + "/__env__.cfg"}}}], pillarenv="base")
case("stack_dict_env_saltenv", [{"stack": {"opts:id": {"web1": S + "/__env__.cfg"}}}], opts={"id": "web1", "saltenv": "base"})
case("stack_dict_pillar", [{"stack": {"pillar:nested:a": {0: S + "/stack.cfg"}}}], roots=True)
case("stack_dict_pillar_source", [{"stack": {"pillar:source": {"pillar_roots": [S + "/overwrite.cfg", S + "/stack.cfg"], "other": S + "/badrender.cfg"}}}], roots=True, minion="db1")
case("stack_then_cmd", [{"stack": S + "/stack.cfg"}, {"cmd_json": J}])
case("stack_bad_strategy", [{"stack": S + "/badstrategy.cfg"}, {"cmd_yamlex": YX}])
case("stack_bad_list_strategy", [{"stack": S + "/badlist.cfg"}])
case("stack_render_error", [{"stack": S + "/badrender.cfg"}])
case("stack_unknown_traverse", [{"stack": {"foo:bar": {"x": "y"}}}])
case("stack_no_colon", [{"stack": {"foo": {"x": "y"}}}])
case("stack_missing_cfg", [{"stack": S + "/nonexistent.cfg"}])
case("stack_none", [{"stack": None}])

# sqlite3 (salt/pillar/sql_base.py): positional and keyword queries,
# depth, as_list, with_lists, ignore_null, a failing query, a database
# that cannot be opened
DB = {"sqlite3": {"database": "@DIR@/sqlite/pillar.db"}}
KV = "SELECT k, v FROM kv WHERE minion_id = ? ORDER BY rowid"
APPS = "SELECT app, env, setting, value FROM apps WHERE minion_id = ? ORDER BY rowid"
USERS = "SELECT name, uid, shell FROM users WHERE minion_id = ? ORDER BY rowid"
case("sqlite3_positional", [{"sqlite3": [KV]}], opts=DB)
case("sqlite3_positional_db1", [{"sqlite3": [KV]}], minion="db1", opts=DB)
case("sqlite3_nested", [{"sqlite3": [APPS]}], opts=DB)
case("sqlite3_depth_list", [{"sqlite3": [[APPS, 2]]}], opts=DB)
case("sqlite3_depth_1", [{"sqlite3": {"apps": {"query": APPS, "depth": 1}}}], opts=DB)
case("sqlite3_users_depth_1", [{"sqlite3": {"users": {"query": USERS, "depth": 1}}}], opts=DB)
case("sqlite3_as_list", [{"sqlite3": {"kv": {"query": KV, "as_list": True}, "apps": {"query": APPS, "as_list": True}}}], opts=DB)
case("sqlite3_as_list_depth", [{"sqlite3": {"apps": {"query": APPS, "depth": 2, "as_list": True}}}], opts=DB)
case("sqlite3_with_lists", [{"sqlite3": {"apps": {"query": APPS, "with_lists": "1,3"}}}], opts=DB)
case("sqlite3_with_lists_2", [{"sqlite3": {"apps": {"query": APPS, "with_lists": [2]}}}], opts=DB)
case("sqlite3_with_lists_users", [{"sqlite3": {"users": {"query": USERS, "depth": 1, "with_lists": "1"}}}], opts=DB)
case("sqlite3_ignore_null", [{"sqlite3": {"kv": {"query": KV, "ignore_null": True}, "users": {"query": USERS, "depth": 1, "ignore_null": True}}}], opts=DB)
case("sqlite3_mixed", [{"sqlite3": {"users": USERS, "kv": [KV, 0]}}], opts=DB)
case("sqlite3_empty_root", [{"sqlite3": {"nothing": "SELECT k, v FROM kv WHERE minion_id = ? AND 0"}}], opts=DB)
case("sqlite3_skipped_queries", [{"sqlite3": {"a": "", "b": [], "c": {"depth": 1}, "d": KV}}], opts=DB)
case("sqlite3_bad_query_keeps_earlier", [{"sqlite3": {"a": KV, "b": "SELECT nope FROM nowhere WHERE x = ?", "c": USERS}}], opts=DB)
case("sqlite3_then_cmd", [{"sqlite3": [KV]}, {"cmd_json": J}], opts=DB)
case("sqlite3_cannot_open", [{"sqlite3": [KV]}], opts={"sqlite3": {"database": "@DIR@/sqlite/nodir/pillar.db"}})

spec = {
    "minions": {
        "web1": {"id": "web1", "role": "app", "os": "Debian"},
        "web2": {"id": "web2", "role": "app", "os": "Debian"},
        "db1": {"id": "db1", "role": "db", "os": "CentOS"},
        "other": {"id": "other", "role": "none", "os": "Debian"},
        "tpl": {"id": "tpl", "role": "tpl", "os": "Debian"},
    },
    "accepted": ["web1", "db1", "other", "tpl"],
    # alphabetical: gsalt's configuration loader does not keep key order
    "nodegroups": {"appgroup": "G@role:db", "dbgroup": "L@db1", "unknowngroup": "nomatch*", "webgroup": "web*"},
    "cases": cases,
}
with open("ext_cases.json", "w") as f:
    json.dump(spec, f, indent=1)
    f.write("\n")

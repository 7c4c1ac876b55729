# Writes ext_pg_cases.json: the postgres ext_pillar cases (Salt's
# salt/pillar/postgres.py over sql_base) that TestPostgresExtPillarGolden
# compiles against a throwaway PostgreSQL cluster, with Salt 3006 (psycopg2)
# under -update and with gsalt. @PGPORT@ is the cluster's TCP port.
import json

cases = []


def case(name, ep, minion="web1", **kw):
    c = {"name": name, "minion": minion, "ext_pillar": ep,
         "opts": {"postgres": {"host": "127.0.0.1", "port": "@PGPORT@", "user": "salt", "pass": "salt", "db": "salt"}}}
    c.update(kw)
    cases.append(c)


KV = "SELECT k, v FROM kv WHERE minion_id = %s ORDER BY n"
APPS = "SELECT app, env, setting, value FROM apps WHERE minion_id = %s ORDER BY n"
USERS = "SELECT name, uid, admin, quota FROM users WHERE minion_id = %s ORDER BY n"
DOCS = "SELECT doc FROM docs WHERE minion_id = %s ORDER BY n"
case("pg_positional", [{"postgres": [KV]}])
case("pg_positional_db1", [{"postgres": [KV]}], minion="db1")
case("pg_nested", [{"postgres": [APPS]}])
case("pg_depth_list", [{"postgres": [[APPS, 2]]}])
case("pg_users_depth_1", [{"postgres": {"users": {"query": USERS, "depth": 1}}}])
case("pg_as_list", [{"postgres": {"kv": {"query": KV, "as_list": True}, "apps": {"query": APPS, "as_list": True}}}])
case("pg_with_lists", [{"postgres": {"apps": {"query": APPS, "with_lists": "1,3"}}}])
case("pg_with_lists_users", [{"postgres": {"users": {"query": USERS, "depth": 1, "with_lists": "1"}}}])
case("pg_ignore_null", [{"postgres": {"users": {"query": USERS, "depth": 1, "ignore_null": True}}}])
case("pg_as_json", [{"postgres": {"docs": {"query": DOCS, "as_json": True}}}])
case("pg_as_json_as_list", [{"postgres": [{"query": DOCS, "as_json": True, "as_list": True}]}])
case("pg_percent_literal", [{"postgres": {"like": "SELECT k, v FROM kv WHERE minion_id = %s AND k LIKE 'r%%' ORDER BY n"}}])
case("pg_no_placeholder", [{"postgres": {"all": "SELECT k, v FROM kv ORDER BY n"}}])
case("pg_bad_query_keeps_earlier", [{"postgres": {"a": KV, "b": "SELECT nope FROM nowhere WHERE x = %s", "c": USERS}}])
case("pg_quote_in_id", [{"postgres": ["SELECT 'id', %s"]}], minion="quote")
case("pg_then_sqlite_style_empty", [{"postgres": {"nothing": "SELECT k, v FROM kv WHERE minion_id = %s AND false"}}])

spec = {
    "minions": {
        "web1": {"id": "web1", "role": "app", "os": "Debian"},
        "db1": {"id": "db1", "role": "db", "os": "CentOS"},
        "quote": {"id": "o'brien", "role": "none", "os": "Debian"},
    },
    "accepted": ["web1", "db1"],
    "nodegroups": {},
    "cases": cases,
}
with open("ext_pg_cases.json", "w") as f:
    json.dump(spec, f, indent=1)
    f.write("\n")

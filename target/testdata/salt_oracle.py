"""Cross-check oracle for gsalt's target package (test helper).

Reads one JSON case per line on stdin and writes one JSON result per line:
{"r": <bool or list>} or {"err": "<exception>"}. Values use a tagged JSON
encoding for types JSON lacks: {"$f": "1.5"} float, {"$b": "<hex>"} bytes,
{"$d": [[k, v], ...]} dict with arbitrary keys.
"""
import json
import logging
import os
import shutil
import sys
import tempfile

logging.disable(logging.CRITICAL)

import fnmatch  # noqa: E402
import re  # noqa: E402

import salt.matchers.compound_match as compound_match  # noqa: E402
import salt.matchers.glob_match as glob_match  # noqa: E402
import salt.matchers.grain_match as grain_match  # noqa: E402
import salt.matchers.grain_pcre_match as grain_pcre_match  # noqa: E402
import salt.matchers.ipcidr_match as ipcidr_match  # noqa: E402
import salt.matchers.list_match as list_match  # noqa: E402
import salt.matchers.nodegroup_match as nodegroup_match  # noqa: E402
import salt.matchers.pcre_match as pcre_match  # noqa: E402
import salt.matchers.pillar_exact_match as pillar_exact_match  # noqa: E402
import salt.matchers.pillar_match as pillar_match  # noqa: E402
import salt.matchers.pillar_pcre_match as pillar_pcre_match  # noqa: E402
import salt.utils.data  # noqa: E402
import salt.utils.minions  # noqa: E402

MATCHERS = {
    "glob_match.match": glob_match.match,
    "pcre_match.match": pcre_match.match,
    "list_match.match": list_match.match,
    "grain_match.match": grain_match.match,
    "grain_pcre_match.match": grain_pcre_match.match,
    "pillar_match.match": pillar_match.match,
    "pillar_pcre_match.match": pillar_pcre_match.match,
    "pillar_exact_match.match": pillar_exact_match.match,
    "ipcidr_match.match": ipcidr_match.match,
    "compound_match.match": compound_match.match,
    "nodegroup_match.match": nodegroup_match.match,
}
compound_match.__context__ = {"matchers": MATCHERS}
nodegroup_match.__context__ = {"matchers": MATCHERS}


def hook(obj):
    if len(obj) == 1:
        (k, v), = obj.items()
        if k == "$f":
            return float(v)
        if k == "$b":
            return bytes.fromhex(v)
        if k == "$d":
            return {tuple(x) if isinstance(x, list) else x: y for x, y in v}
    return obj


class FakeCache:
    def __init__(self, data):
        self.data = data

    def list(self, bank):
        return list(self.data)

    def fetch(self, bank, key):
        return self.data.get(bank.split("/", 1)[1])


def check(case, tmp):
    pki = os.path.join(tmp, "pki")
    shutil.rmtree(pki, ignore_errors=True)
    os.makedirs(os.path.join(pki, "minions"))
    for mid in case["accepted"]:
        with open(os.path.join(pki, "minions", mid), "w") as fh:
            fh.write("k")
    ck = salt.utils.minions.CkMinions.__new__(salt.utils.minions.CkMinions)
    cache = case.get("cache")
    ck.opts = {
        "pki_dir": pki,
        "key_cache": False,
        "minion_data_cache": cache is not None,
        "nodegroups": case.get("nodegroups") or {},
    }
    ck.acc = "minions"
    ck.cache = FakeCache(cache or {})
    res = ck.check_minions(case["tgt"], case["type"], case.get("delim", ":"), case["greedy"])
    return [list(res["minions"]), list(res.get("missing", []))]


def run(case, tmp):
    op = case["op"]
    if op == "fnmatch":
        return fnmatch.fnmatch(case["name"], case["pat"])
    if op == "pcre":
        return bool(re.match(case["pat"], case["s"]))
    if op == "subdict":
        return bool(
            salt.utils.data.subdict_match(
                case["data"],
                case["expr"],
                delimiter=case["delim"],
                regex_match=case.get("regex", False),
                exact_match=case.get("exact", False),
            )
        )
    if op == "match":
        opts = {
            "id": case["id"],
            "grains": case.get("grains"),
            "pillar": case.get("pillar"),
            "nodegroups": case.get("nodegroups") or {},
        }
        typ = case["type"]
        fn = MATCHERS[typ + "_match.match"]
        for mod in (compound_match, nodegroup_match, glob_match):
            mod.__opts__ = opts
        if typ == "nodegroup":
            return bool(fn(case["tgt"], opts["nodegroups"], opts=opts))
        if typ in ("grain", "grain_pcre", "pillar"):
            return bool(fn(case["tgt"], delimiter=case.get("delim", ":"), opts=opts))
        return bool(fn(case["tgt"], opts=opts))
    if op == "nodegroup_comp":
        r = salt.utils.minions.nodegroup_comp(case["name"], case["nodegroups"])
        return list(r) if not isinstance(r, str) else r
    if op == "check":
        return check(case, tmp)
    raise ValueError("unknown op " + op)


def main():
    tmp = tempfile.mkdtemp(prefix="gsalt-oracle-")
    try:
        for line in sys.stdin:
            case = json.loads(line, object_hook=hook)
            try:
                out = {"r": run(case, tmp)}
            except Exception as exc:  # pylint: disable=broad-except
                out = {"err": type(exc).__name__ + ": " + str(exc)}
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Writes golden.json: Salt 3006's own salt.utils.stringutils answers for
the cases in cases.json. Run by `go test ./internal/stringutils -update`
with GSALT_SALT_SRC set (Salt on PYTHONPATH)."""
import json
import sys

import salt.utils.stringutils as su


def call(fn, *args):
    try:
        v = fn(*args)
        if isinstance(v, int) and not isinstance(v, bool):
            return {"int": str(v)}
        return {"value": v}
    except Exception as exc:  # pylint: disable=broad-except
        return {"error": type(exc).__name__, "msg": str(exc)}


cases = json.load(open(sys.argv[1]))
out = {
    "expr_match": [su.expr_match(line, expr) for line, expr in cases["expr_match"]],
    "human_to_bytes": [
        call(su.human_to_bytes, size, unit, metric)
        for size, unit, metric in cases["human_to_bytes"]
    ],
}
with open(sys.argv[2], "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")

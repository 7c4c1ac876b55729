"""Golden generator for pytoml.Loads: toml.loads of python3-toml 0.10.2,
the library Salt 3006's toml serializer and renderer call
(salt/serializers/tomlmod.py).

Reads [{"name", "doc"}] as JSON on stdin and prints, per case, either
{"value": tagged, "dumped": toml.dumps(value)} or {"error": {"type",
"msg"}} where tagged keeps what JSON loses: dict order, int vs float,
dates and times ("dumped" is {"error": ...} when toml.dumps raises).
"""
import datetime
import json
import sys

import salt.serializers.tomlmod as tomlmod

toml = tomlmod.toml


def tag(v):
    if isinstance(v, dict):
        return {"$dict": [[k, tag(x)] for k, x in v.items()]}
    if isinstance(v, list):
        return [tag(x) for x in v]
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return {"$int": str(v)}
    if isinstance(v, float):
        return {"$float": repr(v)}
    if isinstance(v, str):
        return v
    if isinstance(v, datetime.datetime):
        tz = v.tzinfo._raw_offset if v.tzinfo is not None else None
        return {"$datetime": [v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond], "tz": tz}
    if isinstance(v, datetime.date):
        return {"$date": [v.year, v.month, v.day]}
    if isinstance(v, datetime.time):
        return {"$time": [v.hour, v.minute, v.second, v.microsecond]}
    raise TypeError("untagged %r" % (v,))


def main():
    out = []
    for case in json.load(sys.stdin):
        try:
            value = toml.loads(case["doc"])
        except Exception as exc:  # every escape toml.loads has is recorded
            out.append({"name": case["name"], "error": {"type": type(exc).__name__, "msg": str(exc)}})
            continue
        try:
            dumped = toml.dumps(value)
        except Exception as exc:  # and every one of toml.dumps
            dumped = {"error": {"type": type(exc).__name__, "msg": str(exc)}}
        out.append({"name": case["name"], "value": tag(value), "dumped": dumped})
    json.dump(out, sys.stdout, indent=1, ensure_ascii=True)


main()

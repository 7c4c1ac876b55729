#!/usr/bin/python3
"""Writes golden.json: what CPython answers for the cases in cases.json.

Run by `go test ./internal/py -update` with /usr/bin/python3. Values are
JSON with tags for what JSON lacks: {"$": "bytes", "v": hex},
{"$": "dt", "v": isoformat}, {"$": "float", "v": repr},
{"$": "int", "v": decimal text}, {"$": "dict", "v": [[key, value], ...]}.
"""
import datetime
import fnmatch
import json
import random
import sys
import textwrap


def dec(v):
    if isinstance(v, list):
        return [dec(x) for x in v]
    if isinstance(v, dict):
        tag = v["$"]
        if tag == "bytes":
            return bytes.fromhex(v["v"])
        if tag == "dt":
            return datetime.datetime.fromisoformat(v["v"])
        if tag == "float":
            return float(v["v"])
        if tag == "int":
            return int(v["v"])
        if tag == "dict":
            return {dec(k): dec(x) for k, x in v["v"]}
        raise ValueError(tag)
    return v


def enc(v):
    if isinstance(v, bytes):
        return {"$": "bytes", "v": v.hex()}
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int):
        return {"$": "int", "v": str(v)}
    if isinstance(v, list):
        return [enc(x) for x in v]
    raise TypeError(type(v))


def exc(e):
    return {"error": type(e).__name__, "msg": str(e)}


def main(path_in, path_out):
    with open(path_in, encoding="utf-8") as f:
        cases = json.load(f)
    out = {}
    res = []
    for name, pat in cases["fnmatch"]:
        try:
            res.append(fnmatch.fnmatchcase(name, pat))
        except Exception as e:  # re.error for a bad range
            res.append(exc(e))
    out["fnmatch"] = res
    out["splitlines"] = [[s.splitlines(), s.splitlines(True)] for s in cases["splitlines"]]
    out["splitlines_bytes"] = [
        [enc(b.splitlines()), enc(b.splitlines(True))]
        for b in (bytes.fromhex(h) for h in cases["splitlines_bytes"])
    ]
    out["equal"] = [dec(a) == dec(b) for a, b in cases["equal"]]
    res = []
    for v in cases["iter"]:
        try:
            res.append(enc(list(dec(v))))
        except TypeError as e:
            res.append(exc(e))
    out["iter"] = res
    res = []
    for tmpl, args in cases["format"]:
        try:
            res.append(tmpl.format(*dec(args)))
        except Exception as e:
            res.append(exc(e))
    out["format"] = res
    out["fill"] = [
        textwrap.fill(text, width, initial_indent=ini, subsequent_indent=sub)
        for text, width, ini, sub in cases["fill"]
    ]
    res = []
    for seed, n, k in cases["random"]:
        try:
            res.append(random.Random(hash(dec(seed))).sample(range(n), k))
        except Exception as e:
            res.append(exc(e))
    out["random"] = res
    res = []
    for seed, k in cases["getrandbits"]:
        r = random.Random(hash(dec(seed)))
        res.append([str(r.getrandbits(k)) for _ in range(3)])
    out["getrandbits"] = res
    out["hash"] = [hash(dec(v)) for v in cases["hash"]]
    with open(path_out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

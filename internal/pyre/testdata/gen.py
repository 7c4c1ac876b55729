#!/usr/bin/python3
"""Writes golden.json: Python's re results for cases.json.
Run by `go test ./internal/pyre -update`."""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
FLAGS = {"I": re.I, "M": re.M, "S": re.S, "X": re.X}


def run(c):
    flags = 0
    for f in c.get("flags", []):
        flags |= FLAGS[f]
    op = c["op"]
    if op == "escape":
        return {"out": re.escape(c["s"])}
    try:
        rx = re.compile(c["pat"], flags)
    except re.error:
        return {"error": "pattern"}
    if op == "compile":
        return {"out": "ok"}
    try:
        if op == "search":
            m = rx.search(c["s"])
            return {"groups": None if m is None else list(m.groups())}
        if op == "match":
            m = rx.match(c["s"])
            return {"groups": None if m is None else list(m.groups())}
        if op == "split":
            return {"groups": rx.split(c["s"])}
        if op == "sub":
            return {"out": rx.sub(c["repl"], c["s"], c.get("count", 0))}
    except re.error:
        return {"error": "pattern"}
    raise ValueError(op)


def main():
    with open(os.path.join(HERE, "cases.json")) as f:
        cases = json.load(f)
    out = [run(c) for c in cases]
    with open(os.path.join(HERE, "golden.json"), "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


main()

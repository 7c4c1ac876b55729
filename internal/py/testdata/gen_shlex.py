"""Writes shlex_golden.json: what CPython's shlex.split and shlex.quote
answer for the inputs of shlex_cases.json (split errors as their
ValueError text)."""
import json
import shlex
import sys

with open(sys.argv[1]) as f:
    cases = json.load(f)
out = {"split": [], "quote": []}
for s in cases["split"]:
    try:
        out["split"].append({"words": shlex.split(s)})
    except ValueError as exc:
        out["split"].append({"error": str(exc)})
for s in cases["quote"]:
    out["quote"].append(shlex.quote(s))
with open(sys.argv[2], "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")

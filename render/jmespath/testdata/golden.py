"""Write golden.json: Python's jmespath (python3-jmespath, what Salt's
json_query calls) on JSON data whose objects keep their key order.

Usage: golden.py CASES.json GOLDEN.json   (plain python3)

CASES.json is a list of {"expr": ..., "data": <JSON>}; GOLDEN.json gets, per
case, {"repr": repr(result)} or {"error": [class, str(exc)]}.
"""
import json
import sys

import jmespath

with open(sys.argv[1], encoding="utf-8") as f:
    cases = json.load(f)
out = []
for c in cases:
    try:
        out.append({"repr": repr(jmespath.search(c["expr"], c["data"]))})
    except Exception as e:  # the class and text are the result
        out.append({"error": [type(e).__name__, str(e)]})
with open(sys.argv[2], "w", encoding="utf-8") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")

"""Run JMESPath's compliance suite (jmespath.test's tests/*.json) through
Python's jmespath, the library Salt's json_query calls, and print one JSON
line per case: the file, the given index, the case index, and repr() of the
result or the exception's class and str().

Usage: compliance.py TESTS_DIR   (plain python3 with python3-jmespath)
"""
import json
import os
import sys

import jmespath


def main(root):
    for name in sorted(os.listdir(root)):
        if not name.endswith(".json") or name == "benchmarks.json":
            continue
        with open(os.path.join(root, name), encoding="utf-8") as f:
            suites = json.load(f)
        for gi, suite in enumerate(suites):
            for ci, case in enumerate(suite["cases"]):
                if "expression" not in case:
                    continue
                out = {"file": name, "given": gi, "case": ci}
                try:
                    out["repr"] = repr(jmespath.search(case["expression"], suite["given"]))
                except Exception as e:  # the class and text are the result
                    out["error"] = [type(e).__name__, str(e)]
                print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])

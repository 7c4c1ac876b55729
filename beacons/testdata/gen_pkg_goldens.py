"""Generate pkg_goldens.json: Salt 3006's pkg beacon (salt/beacons/pkg.py)
run step by step with a stand-in __salt__ whose pkg.version and
pkg.latest_version answer from each step's tables, recording the events,
the calls made (with their keyword arguments) and validate()'s verdicts.

Usage (from this directory):

    PYTHONPATH=$GSALT_SALT_SRC:/work/shared/peer/pyshim /usr/bin/python3 gen_pkg_goldens.py [--out DIR]
"""
import json
import os
import sys

import salt.beacons.pkg as pkgbeacon

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = [
    {
        "name": "lifecycle",
        "config": [{"pkgs": ["zsh", "apache2", "vim"]}, {"refresh": True}],
        "steps": [
            {"installed": {"zsh": "5.9-4", "apache2": "2.4.57-2"}, "latest": {"apache2": "2.4.58-1"}},
            {"installed": {"zsh": "5.9-4", "apache2": "2.4.57-2"}, "latest": {"apache2": "2.4.58-1"}},
            {"installed": {"zsh": "5.9-4", "apache2": "2.4.58-1"}, "latest": {"zsh": "5.9-5"}},
            {"installed": {"apache2": "2.4.58-1", "vim": "9.0-1"}, "latest": {}},
            {"installed": {"zsh": "5.9-5", "apache2": "2.4.58-1", "vim": "9.0-1"}, "latest": {"vim": "9.1-1"}},
        ],
    },
    {
        "name": "several lists and a duplicate",
        "config": [{"pkgs": ["a"]}, {"pkgs": ["b", "a"]}],
        "steps": [
            {"installed": {}, "latest": {}},
            {"installed": {"a": "1"}, "latest": {"b": "2"}},
            {"installed": {"a": "1", "b": "2"}, "latest": {"a": "3"}},
        ],
    },
    {
        "name": "pkgs as a string",
        "config": [{"pkgs": ["x"]}, {"pkgs": "yz"}],
        "steps": [
            {"installed": {"x": "1"}, "latest": {}},
            {"installed": {"y": "1"}, "latest": {"y": "2"}},
        ],
    },
]

VALIDATE = [
    [{"pkgs": ["a"]}],
    {"pkgs": ["a"]},
    [{"pkgs": "a"}],
    [{"refresh": True}],
    [{"pkgs": "a"}, {"pkgs": ["b"]}],
    [],
]


def main():
    out = HERE
    if "--out" in sys.argv:
        out = sys.argv[sys.argv.index("--out") + 1]
    cases = []
    for case in CASES:
        pkgbeacon.__context__ = {}
        events, calls = [], []
        for step in case["steps"]:
            def version(name, st=step, **kw):
                calls.append(["pkg.version", name, kw])
                return st["installed"].get(name, "")

            def latest(name, st=step, **kw):
                calls.append(["pkg.latest_version", name, kw])
                return st["latest"].get(name, "")

            pkgbeacon.__salt__ = {"pkg.version": version, "pkg.latest_version": latest}
            events.append(pkgbeacon.beacon(json.loads(json.dumps(case["config"]))))
        cases.append(dict(case, events=events, calls=calls))
    validate = [{"config": c, "result": list(pkgbeacon.validate(c))} for c in VALIDATE]
    with open(os.path.join(out, "pkg_goldens.json"), "w") as f:
        json.dump({"cases": cases, "validate": validate}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

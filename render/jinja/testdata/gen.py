#!/usr/bin/python3
"""Writes golden.json: each case of cases.txt rendered by Python's Jinja2
(3.1, configured as Salt 3006 configures it: StrictUndefined, the do and
loopcontrols extensions). Run by `go test ./render/jinja -run TestGolden -update`."""
import json
import os
import sys
import traceback

import jinja2

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_cases(text):
    cases, templates, cur = [], {}, None
    for line in text.split("\n"):
        if line.startswith("### ") or line.startswith("@@@ "):
            if cur is not None:
                cur[2].append("")
            head = line[4:]
            name, _, opts = head.partition("|")
            cur = [line[:3], name.strip(), [], opts.split()]
            (cases if line.startswith("###") else templates.setdefault("_list", [])).append(cur)
            continue
        if cur is not None:
            cur[2].append(line)
    out, tmpls = [], {}
    for kind, name, lines, opts in cases:
        out.append({"name": name, "src": "\n".join(lines).rstrip("\n"), "opts": opts})
    for kind, name, lines, opts in templates.get("_list", []):
        tmpls[name] = "\n".join(lines).rstrip("\n")
    return out, tmpls


def main():
    with open(os.path.join(HERE, "cases.txt")) as f:
        cases, tmpls = parse_cases(f.read())
    with open(os.path.join(HERE, "vars.json")) as f:
        variables = json.load(f)
    golden = {}
    for c in cases:
        opts = c["opts"]
        env = jinja2.Environment(
            undefined=jinja2.Undefined if "lenient" in opts else jinja2.StrictUndefined,
            extensions=["jinja2.ext.do", "jinja2.ext.loopcontrols"],
            trim_blocks="trim" in opts,
            lstrip_blocks="lstrip" in opts,
            keep_trailing_newline="keepnl" in opts,
            loader=jinja2.FunctionLoader(lambda n: (tmpls[n], n, lambda: True) if n in tmpls else None),
        )
        src = c["src"] + ("\n" if "nl" in opts else "")
        try:
            out = {"out": env.from_string(src).render(**variables)}
        except jinja2.TemplateSyntaxError as e:
            out = {"error": type(e).__name__, "msg": e.message, "line": e.lineno}
        except Exception as e:  # noqa: BLE001 - the golden records every exception
            out = {"error": type(e).__name__, "msg": str(e)}
            # the line of the innermost template frame, as Salt reports it
            frames = [f for f in traceback.extract_tb(e.__traceback__)
                      if f.filename in tmpls or f.filename == "<template>"]
            if frames:
                out["line"] = frames[-1].lineno
                out["file"] = "" if frames[-1].filename == "<template>" else frames[-1].filename
        golden[c["name"]] = out
    with open(os.path.join(HERE, "golden.json"), "w") as f:
        json.dump(golden, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    sys.exit(main())

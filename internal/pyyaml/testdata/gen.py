"""Regenerates dump.json, the expectations of pyyaml's tests, from PyYAML.

Run with a Python that has PyYAML built with libyaml (Debian's python3-yaml):
    /usr/bin/python3 internal/pyyaml/testdata/gen.py > internal/pyyaml/testdata/dump.json

Values are written in a tagged form the Go test decodes: a JSON string,
bool, null or list is itself; {"int": "123"}, {"float": "nan"},
{"bytes": "<base64>"}, {"datetime": "2024-01-02T03:04:05.000006"} and
{"map": [[key, value], ...]} (keys in this order) stand for the rest.
"""
import base64
import datetime
import json
import sys

import yaml

LONG = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt"


def tagged(v):
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int):
        return {"int": str(v)}
    if isinstance(v, float):
        return {"float": repr(v)}
    if isinstance(v, bytes):
        return {"bytes": base64.b64encode(v).decode()}
    if isinstance(v, datetime.datetime):
        return {"datetime": v.isoformat()}
    if isinstance(v, list):
        return [tagged(e) for e in v]
    if isinstance(v, dict):
        return {"map": [[tagged(k), tagged(x)] for k, x in v.items()]}
    raise TypeError(v)


VALUES = [
    {"b": 1, "a": [1, 2.5, None, True], "c": {}, "d": []},
    {"s": "yes", "n": "123", "f": "1.5", "nul": "~", "e": "", "t": "2024-01-02", "m": "<<", "eq": "="},
    {"k": ["- a", ": b", "#c", "a #b", "a: b", "?", "---x", "...", "it's", 'say "hi"', " lead", "trail ", "a\tb"]},
    {"multi": "line one\nline two\n", "crlf": "a\r\nb", "ubreak": "a\u2028b", "nel": "a\x85b"},
    {"uni": "caf\u00e9 \u00a0x", "emoji": "\U0001F600", "bom": "\ufeffx", "ctl": "a\x01b\x7f", "esc": "\x1b[0m"},
    {"long": LONG + " " + LONG, "longq": "'" + LONG + " " + LONG, "longdq": "\x01" + LONG + " " + LONG},
    {"esc": "\x01" * 30 + "x" * 60 + "\x02\x03 y"},
    {"floats": [0.1, 1e16, 1e-05, float("nan"), float("inf"), float("-inf"), -0.0, 3.0, 1e22]},
    {"ints": [0, -5, 9223372036854775807, 18446744073709551615, 123456789012345678901234567890]},
    {"bin": b"\x00\x01binary\xff" * 8, "dt": datetime.datetime(2024, 1, 2, 3, 4, 5, 6)},
    {"k" * 122: 1, "j" * 128: 2, "i" * 129: 3},
    {"\u00e9" * 70: 1},
    {"x": [[1, [2, []]], {"y": {"z": [3]}}]},
    [{"a": 1, "b": [1, 2]}, [], "x", [["nested"]]],
    {10: "a", 2: "b", 3.5: "c"},
    {"mixed": {1: "a", "b": 2}},
    {"dtflow": [datetime.datetime(2024, 1, 2, 3, 4, 5)]},
]


def cases():
    out = []
    for i, v in enumerate(VALUES):
        for flow in (False, True, None):
            for flavor, dumper in (("pyyaml", yaml.SafeDumper), ("libyaml", yaml.CSafeDumper)):
                for indent in (None, 4):
                    if indent is not None and (flow is not False or i % 3):
                        continue
                    try:
                        want = yaml.dump(v, Dumper=dumper, default_flow_style=flow, allow_unicode=True, indent=indent)
                    except Exception as e:  # noqa: BLE001
                        want = "ERROR " + str(e)
                    out.append({"value": tagged(v), "flow": flow, "flavor": flavor, "indent": indent or 0, "want": want})
    return out


def quoted():
    out = []
    for s in ["plain", "it's", 'a "q" \\ b', "tab\there", "nl\nx\n", "caf\u00e9 \u2028 \x85 \ufeff \U0001F600 \x01",
              "\n\n", "a\n  b", "x\n ", LONG * 3]:
        for kind in ("double", "single"):
            st = __import__("io").StringIO()
            em = yaml.emitter.Emitter(st, width=sys.maxsize)
            (em.write_double_quoted if kind == "double" else em.write_single_quoted)(s)
            out.append({"kind": kind, "in": s, "want": st.getvalue()})
    return out


json.dump({"dump": cases(), "quoted": quoted()}, sys.stdout, indent=1, ensure_ascii=True)
sys.stdout.write("\n")

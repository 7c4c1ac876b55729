#!/usr/bin/python3
"""Writes golden.json: salt.utils.jid's is_jid and jid_to_time for every
text in cases.json, plus gen_jid's format for fixed datetimes.

Run by `go test ./internal/jid -update` with GSALT_SALT_SRC on PYTHONPATH.
"""
import datetime
import json
import sys

import salt.utils.jid as jid


def main(path_in, path_out):
    with open(path_in, encoding="utf-8") as f:
        cases = json.load(f)
    out = {"is_jid": [], "jid_to_time": [], "gen_jid": []}
    for s in cases["texts"]:
        out["is_jid"].append(jid.is_jid(s))
        try:
            out["jid_to_time"].append(jid.jid_to_time(s))
        except Exception as e:  # ValueError, IndexError
            out["jid_to_time"].append({"error": type(e).__name__, "msg": str(e)})
    for iso in cases["times"]:
        when = datetime.datetime.fromisoformat(iso)
        jid._utc_now = lambda: when  # pylint: disable=cell-var-from-loop
        out["gen_jid"].append(jid.gen_jid({}))
    with open(path_out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

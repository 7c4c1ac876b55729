"""Writes acl_golden.json: the answers of Salt 3006's own CkMinions
auth_check / spec_check / fill_auth_list for the cases in acl_cases.json.

Run by `go test ./master/eauth -run TestACLGolden -update` with
GSALT_SALT_SRC set; targeting is a plain glob over the case universe."""
import fnmatch
import json
import sys

import salt.utils.minions


class Ck(salt.utils.minions.CkMinions):
    def __init__(self, opts, universe):
        self.opts = opts
        self.universe = universe

    def check_minions(self, expr, tgt_type="glob", delimiter=":", greedy=True):
        return {"minions": [m for m in self.universe if fnmatch.fnmatch(m, expr)], "missing": []}


def main(src, dst):
    with open(src) as f:
        cases = json.load(f)
    out = {"auth": [], "spec": [], "fill": []}
    for c in cases["auth"]:
        ck = Ck({}, cases["universe"])
        got = ck.auth_check(c["auth_list"], c["funs"] if len(c["funs"]) > 1 else c["funs"][0],
                            c["args"] if len(c["funs"]) > 1 else c["args"][0], "ignored", "glob",
                            minions=c["minions"], whitelist=c.get("whitelist"))
        out["auth"].append({"name": c["name"], "result": bool(got)})
    for c in cases["spec"]:
        ck = Ck({}, cases["universe"])
        got = ck.spec_check(c["auth_list"], c["fun"], c["low"], c["form"])
        if isinstance(got, dict):
            out["spec"].append({"name": c["name"], "result": False, "error": got["error"]["message"]})
        else:
            out["spec"].append({"name": c["name"], "result": bool(got)})
    for c in cases["fill"]:
        ck = Ck({"permissive_acl": c["permissive"]}, cases["universe"])
        got = ck.fill_auth_list(c["provider"], c["user"], c["groups"])
        out["fill"].append({"name": c["name"], "result": got})
    with open(dst, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

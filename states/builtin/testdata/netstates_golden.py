"""Writes testdata/netstates/golden.json: the returns of Salt's own
netntp/netsnmp/netusers/probes/netconfig managed state functions (and the
schedule state functions) for the scenarios of
testdata/netstates/scenarios.json, run with a fake __salt__ that answers
from each scenario's responses and records the calls.

Run by TestNetStatesGolden with -update and GSALT_SALT_SRC set:
    /usr/bin/python3 netstates_golden.py DIR
"""
import copy
import importlib
import json
import sys


class FakeSalt(dict):
    def __init__(self, responses, calls):
        super().__init__()
        self.responses = responses
        self.calls = calls

    def __contains__(self, key):
        return key in self.responses or key == "config.merge"

    def __getitem__(self, fun):
        def call(*args, **kwargs):
            if fun == "config.merge":
                # no such option set: the value given (not recorded)
                return args[1] if len(args) > 1 else kwargs.get("default")
            self.calls.append([fun, list(args), kwargs])
            if fun not in self.responses:
                raise KeyError(fun)
            r = copy.deepcopy(self.responses[fun])
            if fun == "net.config_control":
                return tuple(r)
            return r

        return call


def normalize(state, ret, calls):
    # netntp builds its lists from Python sets: sort them (gsalt sorts).
    if state == "netntp":
        for part in ret.get("changes", {}).values():
            for k in ("added", "removed"):
                if k in part:
                    part[k] = sorted(part[k])
        for c in calls:
            if c[0].startswith("ntp.set_") or c[0].startswith("ntp.delete_"):
                c[1] = sorted(c[1])


def main(d):
    with open(d + "/scenarios.json") as f:
        scenarios = json.load(f)
    out = {}
    for sc in scenarios:
        mod = importlib.import_module("salt.states." + sc["state"])
        importlib.reload(mod)
        calls = []
        mod.__salt__ = FakeSalt(sc["responses"], calls)
        mod.__opts__ = {"test": sc.get("test", False)}
        if sc["state"] == "netntp":
            mod.HAS_NETADDR = False
        entry = {}
        try:
            fun = getattr(mod, sc.get("fun", "managed"))
            ret = fun(sc["name"], **copy.deepcopy(sc["kwargs"]))
            ret = json.loads(json.dumps(ret))
            normalize(sc["state"], ret, calls)
            entry["ret"] = ret
        except Exception as e:  # pylint: disable=broad-except
            entry["exception"] = str(e)
        entry["calls"] = json.loads(json.dumps(calls))
        out[sc["name"]] = entry
    with open(d + "/golden.json", "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])

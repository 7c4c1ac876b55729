"""Golden generator for the mine's function calls (TestMineCallGolden).

Runs Salt 3006's mine module in local mode (file_client: local, so the
data goes to the minion's datastore) through the loader: reads
{"root": dir, "steps": [{"name", "opts", "fun", "args", "kwargs"}]} on
stdin and prints, per step, the function's return and the mine cache
(data.get('mine_cache')) after it. mine.update and mine.send call their
function through salt.utils.functools.call_function.
"""
import json
import logging
import os
import sys

logging.disable(logging.CRITICAL)

import salt.config
import salt.loader


def plain(v):
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def main():
    req = json.load(sys.stdin)
    root = req["root"]
    conf = os.path.join(root, "minion")
    with open(conf, "w") as f:
        f.write("id: golden\nfile_client: local\nroot_dir: %s\nlog_level: error\nenable_fqdns_grains: False\n" % root)
    out = []
    for step in req["steps"]:
        opts = salt.config.minion_config(conf)
        opts["grains"] = {}
        opts["pillar"] = {}
        opts.update(step.get("opts") or {})
        os.makedirs(opts["cachedir"], exist_ok=True)  # as a running minion has it
        funcs = salt.loader.minion_mods(opts, utils=salt.loader.utils(opts))
        try:
            ret = {"return": plain(funcs[step["fun"]](*step.get("args", []), **step.get("kwargs", {})))}
        except Exception as exc:  # the class and text, as the golden compares them
            ret = {"error": "%s: %s" % (type(exc).__name__, exc)}
        ret["name"] = step["name"]
        ret["cache"] = plain(funcs["data.get"]("mine_cache"))
        out.append(ret)
    json.dump(out, sys.stdout, indent=1)


main()

"""Run Salt 3006's pkg.mod_aggregate on the cases given on stdin.

Used by TestPkgModAggregateGolden (states/builtin/pkg_aggregate_test.go)
with -update-golden: reads {"conf": minion config, "cases": [{"name",
"chunks", "running"}]} where the first chunk is the low chunk being run
(as in Salt's State._mod_aggregate, which passes every chunk, the running
one included, after setting its __agg__), and prints [{"name", "low",
"chunks"}] after the call.
"""
import json
import sys

import salt.config
import salt.loader


def main():
    req = json.load(sys.stdin)
    opts = salt.config.minion_config(req["conf"])
    opts["file_client"] = "local"
    opts["grains"] = {"kernel": "Linux", "os": "Debian", "os_family": "Debian", "osmajorrelease": 12, "id": "golden"}
    opts["pillar"] = {}
    utils = salt.loader.utils(opts)
    funcs = salt.loader.minion_mods(opts, utils=utils)
    states = salt.loader.states(opts, funcs, utils, {})
    out = []
    for case in req["cases"]:
        chunks = case["chunks"]
        low = chunks[0]
        low["__agg__"] = True
        low = states["pkg.mod_aggregate"](low, chunks, case["running"])
        out.append({"name": case["name"], "low": low, "chunks": chunks[1:]})
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

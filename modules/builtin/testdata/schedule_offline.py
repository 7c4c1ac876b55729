# Calls Salt 3006's schedule execution module with offline=True (and
# build_schedule_item) for the steps in the JSON file named by argv[1],
# in a minion config dir argv[2]; prints [{"ret": ..., "file": ...}, ...]:
# each step's return and the _schedule.conf text after it (null when
# absent). Used by modules/builtin/schedule_test.go -update; not
# part of gsalt.
import json
import os
import sys

import salt.config
import salt.loader

steps = json.load(open(sys.argv[1]))
confdir = sys.argv[2]
opts = salt.config.minion_config(os.path.join(confdir, "minion"))
opts["file_client"] = "local"
opts["grains"] = {}
utils = salt.loader.utils(opts)
mods = salt.loader.minion_mods(opts, utils=utils)
conf = os.path.join(confdir, "minion.d", "_schedule.conf")
out = []
for st in steps:
    try:
        ret = mods[st["fun"]](*st.get("args", []), **st.get("kwargs", {}))
    except Exception as exc:  # noqa: BLE001
        ret = "EXCEPTION " + type(exc).__name__
    text = open(conf).read() if os.path.exists(conf) else None
    out.append({"ret": ret, "file": text})
print(json.dumps(out))

# Runs the steps of states_steps.json (argv[1]) through Salt 3006's virt
# state module on libvirt's test:///default driver and prints each state
# return. Used by virt/states_test.go -update; not part of gsalt.
import json
import sys

import libvirt
import salt.config
import salt.loader

steps = json.load(open(sys.argv[1]))
opts = salt.config.minion_config(None)
opts["file_client"] = "local"
opts["virt"] = {"connection": {"uri": "test:///default"}}
opts["grains"] = {"fqdn": "golden.example"}
utils = salt.loader.utils(opts)
mods = salt.loader.minion_mods(opts, utils=utils)
keep = libvirt.open("test:///default")
out = []
for st in steps:
    sts = salt.loader.states(dict(opts, test=st.get("test", False)), mods, utils, {})
    kw = {k: v for k, v in st.items() if k not in ("fun", "test")}
    try:
        out.append({"ret": sts[st["fun"]](**kw)})
    except Exception as exc:  # noqa: BLE001
        out.append({"error": "EXCEPTION {}: {}".format(type(exc).__name__, exc)})
print(json.dumps(out, indent=1))

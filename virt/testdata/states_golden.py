# Runs the steps of states_steps.json (argv[1]) through Salt 3006's virt
# state module on libvirt's test:///default driver and prints each state
# return. With argv[2..5] (libvirt URI, virt:images, file_roots, cachedir)
# it runs against that libvirt instead (the domain states on a private
# QEMU libvirtd). Used by virt/states_test.go -update; not part of gsalt.
import json
import sys

import libvirt
import salt.config
import salt.loader

steps = json.load(open(sys.argv[1]))
opts = salt.config.minion_config(None)
opts["file_client"] = "local"
uri = sys.argv[2] if len(sys.argv) > 2 else "test:///default"
opts["virt"] = {"connection": {"uri": uri}}
if len(sys.argv) > 5:
    opts["virt"]["images"] = sys.argv[3]
    opts["file_roots"] = {"base": [sys.argv[4]]}
    opts["cachedir"] = sys.argv[5]
opts["grains"] = {"fqdn": "golden.example"}
utils = salt.loader.utils(opts)
mods = salt.loader.minion_mods(opts, utils=utils)
keep = libvirt.open(uri)
out = []
for st in steps:
    sts = salt.loader.states(dict(opts, test=st.get("test", False)), mods, utils, {})
    kw = {k: v for k, v in st.items() if k not in ("fun", "test")}
    try:
        out.append({"ret": sts[st["fun"]](**kw)})
    except Exception as exc:  # noqa: BLE001
        out.append({"error": "EXCEPTION {}: {}".format(type(exc).__name__, exc)})
print(json.dumps(out, indent=1))

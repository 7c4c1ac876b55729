# Runs the steps of golden_steps.json (argv[1]) through Salt 3006's own
# virt execution module on libvirt's test:///default driver and prints one
# JSON return per step: {"ret": ...} or {"error": "<text Salt's minion
# shows>"}. Used by virt/golden_test.go -update; not part of gsalt.
import json
import sys
import traceback

import salt.config
import salt.exceptions
import salt.loader

steps = json.load(open(sys.argv[1]))
opts = salt.config.minion_config(None)
opts["file_client"] = "local"
opts["virt"] = {"connection": {"uri": "test:///default"}}
opts["grains"] = {"fqdn": "golden.example"}
utils = salt.loader.utils(opts)
mods = salt.loader.minion_mods(opts, utils=utils)
# test:///default keeps its state only while a connection is open: hold one
# for the whole run so the steps see each other's changes.
import libvirt  # noqa: E402

keep = libvirt.open("test:///default")


def plain(v):
    if isinstance(v, bytes):
        return {"__bytes__": v.decode("utf-8", "replace")}
    if isinstance(v, float):
        return {"__float__": v}
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


out = []
for st in steps:
    try:
        ret = mods[st["fun"]](*st.get("args", []), **st.get("kwargs", {}))
        out.append({"ret": plain(ret)})
    except salt.exceptions.CommandExecutionError as exc:
        out.append({"error": "ERROR: " + str(exc)})
    except salt.exceptions.SaltInvocationError as exc:
        out.append({"error": "ERROR executing '{}': {}".format(st["fun"], exc)})
    except Exception as exc:  # noqa: BLE001
        out.append({"error": "EXCEPTION {}: {}".format(type(exc).__name__, exc)})
print(json.dumps(out, indent=1))

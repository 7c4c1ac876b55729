# Runs the steps of update_steps.json (argv[1]) through Salt 3006's virt
# execution module against the libvirt at argv[2], with virt:images argv[3],
# file_roots argv[4] and cachedir argv[5], and prints one JSON return per
# step: {"ret": ...} or {"error": ...}. Used by virt/update_golden_test.go
# -update; not part of gsalt.
import json
import sys

import salt.config
import salt.exceptions
import salt.loader

steps = json.load(open(sys.argv[1]))
opts = salt.config.minion_config(None)
opts["file_client"] = "local"
opts["file_roots"] = {"base": [sys.argv[4]]}
opts["cachedir"] = sys.argv[5]
opts["virt"] = {"connection": {"uri": sys.argv[2]}, "images": sys.argv[3]}
opts["grains"] = {"fqdn": "golden.example"}
utils = salt.loader.utils(opts)
mods = salt.loader.minion_mods(opts, utils=utils)


def plain(v):
    if isinstance(v, bytes):
        return {"__bytes__": v.decode("utf-8", "replace")}
    if isinstance(v, float):
        return {"__float__": v}
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
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

# Runs the steps of update_steps.json (argv[1]) through Salt 3006's virt
# execution module against the libvirt at argv[2], with virt:images argv[3],
# file_roots argv[4] and cachedir argv[5], and prints one JSON return per
# step: {"ret": ...} or {"error": ...}. Used by virt/update_golden_test.go
# and virt/pool_auth_test.go -update; not part of gsalt.
# Two pseudo steps: "__secrets__" lists the daemon's libvirt secrets (virsh
# secret-dumpxml and the stored value), "__pool_xml__" renders the pool and
# secret definitions Salt's pool_define would send libvirt.
import json
import os
import subprocess
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


def secrets():
    sock = sys.argv[2].split("socket=", 1)[1]
    etc = os.path.join(os.path.dirname(os.path.dirname(sock)), "etc", "secrets")
    virsh = ["virsh", "-q", "-c", sys.argv[2]]
    res = []
    for line in subprocess.run(virsh + ["secret-list"], capture_output=True, text=True, check=True).stdout.splitlines():
        uuid = line.split()[0]
        xml = subprocess.run(virsh + ["secret-dumpxml", uuid], capture_output=True, text=True, check=True).stdout
        with open(os.path.join(etc, uuid + ".base64")) as f:
            value = f.read().strip()
        res.append({"xml": xml.replace(uuid, "UUID"), "value": value})
    return sorted(res, key=lambda r: r["xml"])


def pool_xml(name, ptype, **kw):
    virt = mods["virt.pool_define"].__globals__
    auth = dict(kw.pop("source_auth"))
    auth["type"] = {"rbd": "ceph", "iscsi": "chap"}[ptype]
    auth["secret"] = {"type": "usage", "value": "pool_" + name}
    return {
        "pool": virt["_gen_pool_xml"](name, ptype, source_auth=auth, **kw),
        "secret": virt["_gen_secret_xml"](auth["type"], "pool_" + name, "Passphrase for {} pool created by Salt".format(name)),
    }


out = []
for st in steps:
    if st["fun"] == "__secrets__":
        out.append({"ret": secrets()})
        continue
    if st["fun"] == "__pool_xml__":
        out.append({"ret": pool_xml(*st["args"], **st.get("kwargs", {}))})
        continue
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

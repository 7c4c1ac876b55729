# Runs Salt 3006's virt.init (start=False, seed=False) for each case of
# init_cases.json (argv[1]) against the libvirt at argv[2], with virt:images
# argv[3] and file_roots argv[4]; prints for each case the domain XML
# libvirt keeps (virt.get_xml) and virt.get_disks, then purges the guest.
# Used by virt/init_golden_test.go -update; not part of gsalt.
import json
import sys

import salt.config
import salt.exceptions
import salt.loader

cases = json.load(open(sys.argv[1]))
opts = salt.config.minion_config(None)
opts["file_client"] = "local"
opts["file_roots"] = {"base": [sys.argv[4]]}
opts["cachedir"] = sys.argv[5]
opts["virt"] = {"connection": {"uri": sys.argv[2]}, "images": sys.argv[3]}
opts["grains"] = {"fqdn": "golden.example"}
utils = salt.loader.utils(opts)
mods = salt.loader.minion_mods(opts, utils=utils)
out = []
for case in cases:
    kw = dict(case)
    kw.update({"start": False, "seed": False})
    try:
        ret = mods["virt.init"](**kw)
        xml = mods["virt.get_xml"](case["name"])
        disks = mods["virt.get_disks"](case["name"])
        mods["virt.purge"](case["name"])
        out.append({"ret": ret, "xml": xml, "disks": disks})
    except salt.exceptions.SaltException as exc:
        out.append({"error": str(exc)})
    except Exception as exc:  # noqa: BLE001
        out.append({"error": "EXCEPTION {}: {}".format(type(exc).__name__, exc)})
print(json.dumps(out, indent=1))

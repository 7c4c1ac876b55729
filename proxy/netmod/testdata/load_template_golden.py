"""Writes the rendered configuration Salt 3006's net.load_template loads
for each case of load_template_cases.json (test=True, debug=True): Salt's
own napalm_network module and file module (templates rendered through
file.apply_template_on_contents and file.get_managed, as on a proxy), with
a stand-in NAPALM driver that records the candidate; NAPALM itself is not
needed.

Run by TestLoadTemplateGolden with -update and GSALT_SALT_SRC set:
    /usr/bin/python3 load_template_golden.py CASES ROOTS OUT
"""
import json
import os
import sys
import tempfile

import salt.config
import salt.loader
import salt.utils.napalm


class Driver:
    def __init__(self):
        self.candidate = None

    def load_merge_candidate(self, filename=None, config=None):
        self.candidate = config

    def load_replace_candidate(self, filename=None, config=None):
        self.candidate = config

    def compare_config(self):
        return "+" + (self.candidate or "")

    def discard_config(self):
        self.candidate = None

    def commit_config(self, message="", revert_in=None):
        pass


def main():
    cases_file, roots, out_file = sys.argv[1:4]
    cases = json.load(open(cases_file))
    root = tempfile.mkdtemp()
    conf = os.path.join(root, "proxy")
    with open(conf, "w") as f:
        f.write(
            "id: dev1\nfile_client: local\nroot_dir: {}\nlog_level: error\n"
            "file_roots:\n  base:\n    - {}\n".format(root, roots)
        )
    opts = salt.config.proxy_config(conf)
    opts["proxy"] = {"proxytype": "napalm", "driver": "ios"}
    opts["grains"] = {"id": "dev1"}
    opts["pillar"] = {"ntp": "10.0.0.7"}
    funcs = salt.loader.minion_mods(opts)
    salt.utils.napalm.is_proxy = lambda _opts: True
    import salt.modules.napalm_network as net

    driver = Driver()
    device = {"DRIVER": driver, "UP": True, "HOSTNAME": "dev1", "USERNAME": "admin",
              "DRIVER_NAME": "ios", "TIMEOUT": 60, "OPTIONAL_ARGS": {}}
    net.__salt__ = funcs
    net.__opts__ = opts
    net.__grains__ = opts["grains"]
    net.__pillar__ = opts["pillar"]
    net.__context__ = {}
    net.__proxy__ = {"napalm.get_device": lambda: device}
    out = {}
    for case in cases:
        kwargs = dict(case.get("kwargs") or {})
        kwargs.update(test=True, debug=True)
        ret = net.load_template(*case.get("args", []), **kwargs)
        out[case["name"]] = {
            "result": ret.get("result"),
            "comment": ret.get("comment"),
            "loaded_config": ret.get("loaded_config"),
        }
    with open(out_file, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


main()

"""Prints golden.json: Salt 3006's state system (salt.state.State, its
beacon state module, salt.modules.beacons and a real salt.beacons.Beacon
behind a stand-in event bus, as beacons/testdata/gen_goldens.py does)
applying the SLS steps of steps.json (read from stdin) in sequence, plainly or with
test=True. For each step it keeps the running dict in run order (without
start_time, duration and __run_num__; an exception comment reduced to its
last line), the beacons listed afterwards and beacons.conf. Paths under
the temporary directory are written as $DIR.

Run by TestBeaconStatesGolden with -update and GSALT_SALT_SRC set:
    /usr/bin/python3 gen.py < steps.json > golden.json
"""
import collections
import json
import os
import shutil
import sys
import tempfile

import salt.beacons
import salt.config
import salt.loader
import salt.payload
import salt.state
import salt.utils.event

# The beacon modules gsalt has, as in beacons/testdata/gen_goldens.py.
AVAILABLE = ["diskusage", "inotify", "load", "network_info", "pkg", "service", "status"]
EXC = "An exception occurred in this state: "


class Bus:
    def __init__(self):
        self.events = collections.deque()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def fire_event(self, data, tag):
        # through msgpack, as the minion's event bus carries it (an SLS's
        # OrderedDicts arrive as plain dicts)
        self.events.append((tag, salt.payload.loads(salt.payload.dumps(data))))
        return True

    def get_event(self, tag=None, wait=None, **kw):
        for i, (t, d) in enumerate(self.events):
            if t == tag:
                del self.events[i]
                return d
        return None


def main():
    steps = json.load(sys.stdin)
    tmp = os.path.realpath(tempfile.mkdtemp())
    try:
        conf = os.path.join(tmp, "conf")
        os.makedirs(os.path.join(conf, "minion.d"))
        opts = salt.config.minion_config(None)
        opts.update({"id": "golden", "file_client": "local", "conf_file": os.path.join(conf, "minion"),
                     "cachedir": os.path.join(tmp, "cache"), "pki_dir": os.path.join(tmp, "pki"),
                     "sock_dir": os.path.join(tmp, "sock"), "file_roots": {"base": [conf]},
                     "pillar_roots": {"base": [conf]}, "beacons": {}})
        bus = Bus()
        salt.utils.event.get_event = lambda *a, **kw: bus
        opts["grains"] = salt.loader.grains(opts)
        st = salt.state.State(opts, pillar_override={})
        b = salt.beacons.Beacon(st.opts, st.functions)

        def manage(data, tag):
            func, name = data.get("func"), data.get("name")
            if func == "list_available":
                bus.fire_event({"complete": True, "beacons": AVAILABLE},
                               "/salt/minion/minion_beacons_list_available_complete")
                return True
            funcs = {
                "add": ("add_beacon", {"name": name, "beacon_data": data.get("beacon_data")}),
                "modify": ("modify_beacon", {"name": name, "beacon_data": data.get("beacon_data")}),
                "delete": ("delete_beacon", {"name": name}),
                "enable_beacon": ("enable_beacon", {"name": name}),
                "disable_beacon": ("disable_beacon", {"name": name}),
                "list": ("list_beacons", {"include_opts": data.get("include_opts"),
                                          "include_pillar": data.get("include_pillar")}),
                "validate_beacon": ("validate_beacon", {"name": name, "beacon_data": data.get("beacon_data")}),
            }
            alias, params = funcs[func]
            getattr(b, alias)(**params)
            return True

        st.functions["event.fire"] = manage

        def set_test(flag):
            # State.call reads test from each state module's __opts__.
            st.opts["test"] = flag
            for fun in ("beacon.present", "file.managed", "service.running", "pkg.installed"):
                if fun in st.states:
                    sys.modules[st.states[fun].__module__].__opts__["test"] = flag

        work = os.path.join(tmp, "work")
        os.makedirs(work)
        out = []
        for step in steps:
            set_test(bool(step.get("test")))
            ret = st.call_template_str(step["sls"].replace("$DIR", work))
            set_test(False)
            rets = []
            for tag, r in sorted(ret.items(), key=lambda kv: kv[1]["__run_num__"]):
                r = {k: v for k, v in r.items() if k not in ("start_time", "duration", "__run_num__")}
                if isinstance(r.get("comment"), str) and r["comment"].startswith(EXC):
                    r["comment"] = EXC + r["comment"].strip().splitlines()[-1]
                rets.append([tag, r])
            saved = None
            path = os.path.join(conf, "minion.d", "beacons.conf")
            if os.path.exists(path):
                with open(path) as f:
                    saved = f.read()
            entry = {"sls": step["sls"], "test": bool(step.get("test")), "ret": rets,
                     "beacons": st.functions["beacons.list"](return_yaml=False), "saved": saved}
            out.append(json.loads(json.dumps(entry).replace(work, "$DIR").replace(conf, "$CONF")))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


main()

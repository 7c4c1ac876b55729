"""Generate the beacon goldens from real Salt 3006 code, in-process.

Usage (from this directory; needs python3-pyinotify for the inotify part):

    PYTHONPATH=$GSALT_SALT_SRC:/work/shared/peer/pyshim TZ=UTC \
        /usr/bin/python3 gen_goldens.py

(--out DIR writes elsewhere, --no-inotify skips the inotify scenario.)
It writes goldens.json (beacon data and Beacon.process events) and
module_calls.json (returns of salt.modules.beacons functions talking to a
real salt.beacons.Beacon through a stand-in event bus). Inputs are the fake
/proc tree in proc/ and the scenarios below; the Go tests replay the same
inputs. Paths under a temporary directory are written as $DIR.
"""

import collections
import copy
import datetime as real_datetime
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROC = os.path.join(HERE, "proc")

import psutil

import salt.beacons
import salt.beacons.diskusage
import salt.beacons.inotify
import salt.beacons.load
import salt.beacons.network_info
import salt.beacons.service
import salt.beacons.status
import salt.config
import salt.modules.beacons
import salt.modules.status
import salt.utils.event
import salt.utils.files
import salt.utils.yaml

psutil.PROCFS_PATH = PROC

# ---------------------------------------------------------------- load
LOAD_CASES = [
    {
        "name": "thresholds",
        "config": [{"averages": {"1m": [0.0, 2.0], "5m": [0.0, 1.5], "15m": [0.1, 1.0]}}],
        "loads": [[0.5, 0.5, 0.5], [2.5, 0.5, 0.5], [0.5, 0.5, 0.05], [1.0, 1.0, 0.5]],
    },
    {
        "name": "onchangeonly",
        "config": [
            {"averages": {"1m": [0.5, 2.0], "5m": [0.0, 1.5], "15m": [0.1, 1.0]}},
            {"onchangeonly": True},
        ],
        "loads": [[3.0, 0.5, 0.5], [3.5, 0.5, 0.5], [1.0, 0.5, 0.5], [2.5, 0.5, 0.5], [0.25, 0.5, 0.5]],
    },
    {
        "name": "no_emitatstartup",
        "config": [
            {"averages": {"1m": [0.5, 2.0], "5m": [0.0, 1.5], "15m": [0.1, 1.0]}},
            {"onchangeonly": True},
            {"emitatstartup": False},
        ],
        "loads": [[3.0, 0.5, 0.5], [3.5, 0.5, 0.5], [1.0, 0.5, 0.5], [2.5, 0.5, 0.5]],
    },
]


def gen_load():
    out = []
    for case in LOAD_CASES:
        salt.beacons.load.LAST_STATUS.clear()
        steps = []
        for avg in case["loads"]:
            salt.beacons.load.os.getloadavg = lambda avg=avg: tuple(avg)
            steps.append(salt.beacons.load.beacon(copy.deepcopy(case["config"])))
        out.append({"name": case["name"], "config": case["config"], "loads": case["loads"], "events": steps})
    return out


# ------------------------------------------------------------- service
SERVICE_CASES = [
    {
        "name": "plain",
        "config": [{"services": {"nginx": {}, "salt-master": {"uncleanshutdown": "$EXISTS"}, "mysql": {"uncleanshutdown": "/nonexistent/pid"}}}],
        "steps": [{"time": 1000.0, "status": {"nginx": True, "salt-master": False, "mysql": False}}],
    },
    {
        "name": "onchangeonly",
        "config": [{"services": {"nginx": {"onchangeonly": True}, "cron": {"onchangeonly": True, "emitatstartup": False}}}],
        "steps": [
            {"time": 1000.0, "status": {"nginx": True, "cron": True}},
            {"time": 1001.0, "status": {"nginx": True, "cron": True}},
            {"time": 1002.0, "status": {"nginx": False, "cron": False}},
            {"time": 1003.0, "status": {"nginx": False, "cron": True}},
        ],
    },
    {
        "name": "delay",
        "config": [{"services": {"nginx": {"onchangeonly": True, "delay": 2}}}],
        "steps": [
            {"time": 1000.0, "status": {"nginx": True}},
            {"time": 1002.0, "status": {"nginx": True}},
            {"time": 1003.0, "status": {"nginx": True}},
            {"time": 1004.0, "status": {"nginx": False}},
            {"time": 1005.0, "status": {"nginx": False}},
            {"time": 1007.4, "status": {"nginx": False}},
        ],
    },
]


def gen_service():
    exists = os.path.join(PROC, "loadavg")
    out = []
    for case in SERVICE_CASES:
        salt.beacons.service.LAST_STATUS.clear()
        cfg_json = json.dumps(case["config"]).replace("$EXISTS", exists)
        steps = []
        for step in case["steps"]:
            salt.beacons.service.__salt__ = {"service.status": lambda name, st=step["status"]: st[name]}
            salt.beacons.service.time.time = lambda t=step["time"]: t
            res = salt.beacons.service.beacon(json.loads(cfg_json))
            steps.append(res)
        out.append({"name": case["name"], "config": case["config"], "steps": case["steps"], "events": steps})
    salt.beacons.service.time.time = time.time
    return out


# ----------------------------------------------------------- diskusage
STATVFS = {
    "/": (4096, 1000000, 400000, 350000),
    "/boot": (1024, 500000, 100000, 75000),
    "/home": (4096, 2000000, 1900000, 1800000),
    "/mnt/my disk": (4096, 1000, 1, 0),
    "/proc": (4096, 0, 0, 0),
}
DISK_CASES = [
    {"name": "static", "config": [{"/": "63%"}, {"/boot": 50}, {"/home": "99%"}]},
    {"name": "regex", "config": [{"^/(boot|home)": "1%"}, {"/mnt/.*": "90%"}]},
    {"name": "all", "config": [{".*": 0}]},
]


def gen_diskusage():
    class St:
        def __init__(self, t):
            self.f_frsize, self.f_blocks, self.f_bfree, self.f_bavail = t

    real = os.statvfs

    def fake(path):
        if path in STATVFS:
            return St(STATVFS[path])
        raise OSError(2, "No such file or directory", path)

    os.statvfs = fake
    try:
        out = []
        for case in DISK_CASES:
            out.append({"name": case["name"], "config": case["config"],
                        "events": salt.beacons.diskusage.beacon(copy.deepcopy(case["config"]))})
    finally:
        os.statvfs = real
    return {"statvfs": {k: list(v) for k, v in STATVFS.items()}, "cases": out}


# -------------------------------------------------------- network_info
NET_CASES = [
    {"name": "equal", "config": [{"interfaces": {"eth0": {"type": "equal", "bytes_sent": 2000, "errin": 5}}}]},
    {"name": "greater", "config": [{"interfaces": {"eth0": {"type": "greater", "bytes_recv": 1000}, "lo": {"type": "greater", "packets_sent": 100000}}}]},
    {"name": "default_equal", "config": [{"interfaces": {"lo": {"dropout": 0}, "missing0": {"errin": 0}}}]},
    {"name": "less_is_equal", "config": [{"interfaces": {"eth0": {"type": "less", "bytes_recv": 999999999, "dropin": "1"}}}]},
]


def gen_network_info():
    out = []
    for case in NET_CASES:
        out.append({"name": case["name"], "config": case["config"],
                    "events": salt.beacons.network_info.beacon(copy.deepcopy(case["config"]))})
    return out


# -------------------------------------------------------------- status
NOW = real_datetime.datetime(2026, 3, 4, 5, 6, 7, 123456)
STATUS_CASES = [
    {"name": "default", "config": []},
    {"name": "picked", "config": [{"loadavg": ["1-min", "15-min"]}, {"meminfo": ["MemTotal", "Nope"]}, {"time": ["0"]}]},
    {"name": "scalar_items", "config": [{"cpustats": "all", "vmstats": ["nr_free_pages"]}]},
]


def gen_status():
    class FakeDatetime(real_datetime.datetime):
        @classmethod
        def utcnow(cls):
            return NOW

        @classmethod
        def today(cls):
            return NOW

    class FakeModule:
        datetime = FakeDatetime

    salt.beacons.status.datetime = FakeModule
    salt.modules.status.datetime = FakeModule
    real_fopen = salt.utils.files.fopen

    def fopen(path, *a, **kw):
        if isinstance(path, str) and path.startswith("/proc/"):
            path = os.path.join(PROC, path[len("/proc/"):])
        return real_fopen(path, *a, **kw)

    salt.utils.files.fopen = fopen
    avgs = open(os.path.join(PROC, "loadavg")).read().split()[:3]
    salt.modules.status.os.getloadavg = lambda: tuple(float(x) for x in avgs)
    st = salt.modules.status
    st.__grains__ = {"kernel": "Linux"}
    funcs = {"status.loadavg": st.loadavg, "status.cpustats": st.cpustats, "status.meminfo": st.meminfo,
             "status.vmstats": st.vmstats, "status.time": st.time_}
    salt.beacons.status.__salt__ = funcs
    out = []
    try:
        for case in STATUS_CASES:
            out.append({"name": case["name"], "config": case["config"],
                        "events": salt.beacons.status.beacon(copy.deepcopy(case["config"]))})
    finally:
        salt.utils.files.fopen = real_fopen
        os.getloadavg = os.getloadavg
    return {"now": NOW.isoformat(), "cases": out}


# ------------------------------------------------------------- inotify
# Each step: operations, then one beacon run. Paths are relative to $DIR.
INOTIFY_CONFIG = {
    "files": {
        "$DIR/w": {"mask": ["create", "modify", "delete", "delete_self", "moved_from", "moved_to", "attrib"],
                   "recurse": True, "auto_add": True,
                   "exclude": ["$DIR/w/skip", "$DIR/w/*.tmp", {"$DIR/w/re[0-9]+$": {"regex": True}}]},
        "$DIR/w/watched.txt": {"mask": ["modify", "delete_self"]},
        "$DIR/plain": {"mask": ["create", "delete"]},
        "$DIR/later": {"mask": ["create"]},
        "$DIR/w/mv.txt": {"mask": ["move_self"]},
        "$DIR/solo.txt": {"mask": ["move_self", "attrib"]},
    }
}
INOTIFY_SETUP = [["mkdir", "w"], ["mkdir", "w/old"], ["write", "w/watched.txt", ""], ["mkdir", "plain"],
                 ["write", "w/mv.txt", ""], ["write", "solo.txt", ""]]
INOTIFY_STEPS = [
    [["write", "w/a.txt", "x"], ["mkdir", "w/sub"]],
    [["write", "w/sub/b.txt", "y"], ["append", "w/watched.txt", "z"]],
    [["write", "w/skip", "s"], ["write", "w/x.tmp", "t"], ["write", "w/re42", "r"], ["write", "w/re4x", "r"]],
    [["rename", "w/a.txt", "w/sub/c.txt"], ["chmod", "w/old", 0o700]],
    [["write", "plain/p", "1"], ["mkdir", "plain/d"], ["remove", "plain/p"]],
    [["remove", "w/sub/b.txt"], ["rmtree", "w/sub"], ["remove", "w/watched.txt"]],
    [["mkdir", "later"]],
    [["write", "later/new", "n"]],
    [["rename", "w/mv.txt", "w/mv2.txt"], ["chmod", "solo.txt", 0o600]],
]


def do_ops(base, ops):
    for op in ops:
        kind, rel = op[0], op[1]
        p = os.path.join(base, rel)
        if kind == "mkdir":
            os.mkdir(p)
        elif kind == "write":
            with open(p, "w") as f:
                f.write(op[2])
        elif kind == "append":
            with open(p, "a") as f:
                f.write(op[2])
        elif kind == "rename":
            os.rename(p, os.path.join(base, op[2]))
        elif kind == "chmod":
            os.chmod(p, op[2])
        elif kind == "remove":
            os.remove(p)
        elif kind == "rmtree":
            shutil.rmtree(p)


def gen_inotify():
    base = tempfile.mkdtemp()
    try:
        cfg = json.loads(json.dumps([INOTIFY_CONFIG]).replace("$DIR", base))
        salt.beacons.inotify.__context__ = {}
        do_ops(base, INOTIFY_SETUP)
        first = salt.beacons.inotify.beacon(copy.deepcopy(cfg))
        steps = []
        for ops in INOTIFY_STEPS:
            do_ops(base, ops)
            time.sleep(0.2)
            res = salt.beacons.inotify.beacon(copy.deepcopy(cfg))
            steps.append(json.loads(json.dumps(res).replace(base, "$DIR")))
        salt.beacons.inotify.close(cfg)
        return {"config": [INOTIFY_CONFIG], "setup": INOTIFY_SETUP, "steps": INOTIFY_STEPS,
                "first": first, "events": steps}
    finally:
        shutil.rmtree(base, ignore_errors=True)


# ------------------------------------------------------------- process
PROCESS_CONFIG = {
    "service": [{"services": {"up": {}, "down": {}}}],
    "svc_alias": [{"beacon_module": "service"}, {"services": {"up": {"onchangeonly": True}}}],
    "load": [{"averages": {"1m": [0.0, 0.1], "5m": [0.0, 0.1], "15m": [0.0, 0.1]}}, {"interval": 3}],
    "off": [{"enabled": False}, {"services": {"up": {}}}, {"beacon_module": "service"}],
    "nomodule": [{"x": 1}],
    "status": [{"nosuchfunc": ["all"]}],
    "diskusage": {"/": "1%"},
    "network_info": [{"interfaces": {"eth0": ["bad"]}}],
    "svc_state": [{"beacon_module": "service"}, {"disable_during_state_run": True}, {"services": {"up": {}}}],
}


def gen_process():
    opts = copy.deepcopy(salt.config.DEFAULT_MINION_OPTS)
    opts["id"] = "golden"
    opts["grains"] = {}
    opts["pillar"] = {}
    opts["loop_interval"] = 1
    funcs = {"service.status": lambda name, sig=None: name == "up"}
    salt.beacons.load.os.getloadavg = lambda: (0.5, 0.25, 0.125)
    salt.beacons.load.LAST_STATUS.clear()
    salt.beacons.service.LAST_STATUS.clear()
    b = salt.beacons.Beacon(opts, funcs)
    real_running = salt.utils.minion.running
    loops = []
    state_running = [False, False, True, False, False]
    # config.merge hands Beacon.process the live configuration each loop.
    live = copy.deepcopy(PROCESS_CONFIG)
    for running in state_running:
        salt.utils.minion.running = lambda o, r=running: [{"fun": "state.apply"}] if r else [{"fun": "test.ping"}]
        loops.append(b.process(live, {}) or [])
    salt.utils.minion.running = real_running
    disabled = b.process({"enabled": False, "service": [{"services": {"up": {}}}]}, {})
    return {"id": "golden", "config": PROCESS_CONFIG, "loadavg": [0.5, 0.25, 0.125],
            "state_running": state_running, "loops": loops, "all_disabled": disabled}


# ------------------------------------------------------ module calls
class Bus:
    """Stands in for the minion event bus between salt.modules.beacons and
    the minion's manage_beacons handler."""

    def __init__(self):
        self.events = collections.deque()
        self.beacons = None

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def fire_event(self, data, tag):
        self.events.append((tag, copy.deepcopy(data)))
        return True

    def get_event(self, tag=None, wait=None, **kw):
        for i, (t, d) in enumerate(self.events):
            if t == tag:
                del self.events[i]
                return d
        return None


MODULE_CALLS = [
    ["list", [], {}],
    ["list", [], {"return_yaml": False}],
    ["list", [], {"return_yaml": False, "include_pillar": False}],
    ["add", ["load", [{"averages": {"1m": [0.0, 2.0], "5m": [0.0, 1.5], "15m": [0.1, 1.0]}}]], {}],
    ["add", ["load", [{"averages": {"1m": [0.0, 2.0]}}]], {}],
    ["add", ["badload", [{"beacon_module": "load"}, {"averages": {"1m": [1], "5m": [0, 1], "15m": [0, 1]}}]], {}],
    ["add", ["nosuch", [{"x": 1}]], {}],
    ["add", ["watch_etc", [{"beacon_module": "inotify"}, {"files": {"/etc/hosts": {"mask": ["modify"]}}}]], {"test": True}],
    ["add", ["watch_etc", [{"beacon_module": "inotify"}, {"files": {"/etc/hosts": {"mask": ["modify"]}}}]], {}],
    ["add", ["pillar_svc", [{"services": {"x": {}}}]], {}],
    ["modify", ["load", [{"averages": {"1m": [0.0, 3.0], "5m": [0.0, 1.5], "15m": [0.1, 1.0]}}, {"onchangeonly": True}]], {}],
    ["modify", ["load", [{"averages": {"1m": [0.0, 3.0], "5m": [0.0, 1.5], "15m": [0.1, 1.0]}}, {"onchangeonly": True}]], {}],
    ["modify", ["load", [{"averages": {"1m": [0.0], "5m": [0, 1], "15m": [0, 1]}}]], {}],
    ["modify", ["nosuch", [{"x": 1}]], {}],
    ["modify", ["pillar_svc", [{"services": {"y": {}}}]], {}],
    ["modify", ["load", [{"averages": {}}]], {"test": True}],
    ["list", [], {}],
    ["disable_beacon", ["load"], {}],
    ["disable_beacon", ["load"], {"test": True}],
    ["list", [], {"return_yaml": False}],
    ["enable_beacon", ["load"], {}],
    ["enable_beacon", ["pillar_svc"], {}],
    ["enable_beacon", ["nosuch"], {}],
    ["enable_beacon", [""], {}],
    ["disable_beacon", ["pillar_svc"], {}],
    ["disable", [], {}],
    ["disable", [], {"test": True}],
    ["list", [], {"return_yaml": False}],
    ["enable", [], {}],
    ["enable", [], {"test": True}],
    ["delete", ["watch_etc"], {}],
    ["delete", ["watch_etc"], {}],
    ["delete", ["pillar_svc"], {}],
    ["delete", ["x"], {"test": True}],
    ["save", [], {}],
    ["reset", [], {"test": True}],
    ["reset", [], {}],
    ["list", [], {}],
    ["save", [], {}],
]


def gen_module_calls():
    conf = tempfile.mkdtemp()
    try:
        os.makedirs(os.path.join(conf, "minion.d"))
        opts = copy.deepcopy(salt.config.DEFAULT_MINION_OPTS)
        opts["id"] = "golden"
        opts["grains"] = {}
        opts["conf_file"] = os.path.join(conf, "minion")
        opts["pillar"] = {"beacons": {"pillar_svc": [{"beacon_module": "service"}, {"services": {"sshd": {}}}]}}
        opts["beacons"] = {"service": [{"services": {"salt-minion": {}}}]}
        bus = Bus()
        salt.utils.event.get_event = lambda *a, **kw: bus
        b = salt.beacons.Beacon(opts, {})
        # Only the modules gsalt has, so list_available and add agree.
        keep = {"inotify", "service", "diskusage", "load", "status", "network_info", "pkg"}
        avail = sorted(keep)

        def manage(data, tag):
            func = data.get("func")
            name = data.get("name")
            beacon_data = data.get("beacon_data")
            include_pillar = data.get("include_pillar")
            include_opts = data.get("include_opts")
            if func == "list_available":
                bus.fire_event({"complete": True, "beacons": avail},
                               "/salt/minion/minion_beacons_list_available_complete")
                return True
            funcs = {
                "add": ("add_beacon", {"name": name, "beacon_data": beacon_data}),
                "modify": ("modify_beacon", {"name": name, "beacon_data": beacon_data}),
                "delete": ("delete_beacon", {"name": name}),
                "enable": ("enable_beacons", {}),
                "disable": ("disable_beacons", {}),
                "enable_beacon": ("enable_beacon", {"name": name}),
                "disable_beacon": ("disable_beacon", {"name": name}),
                "list": ("list_beacons", {"include_opts": include_opts, "include_pillar": include_pillar}),
                "validate_beacon": ("validate_beacon", {"name": name, "beacon_data": beacon_data}),
                "reset": ("reset", {}),
            }
            alias, params = funcs[func]
            getattr(b, alias)(**params)
            return True

        mod = salt.modules.beacons
        mod.__opts__ = opts
        mod.__salt__ = {"event.fire": manage}
        calls = []
        for fun, args, kwargs in MODULE_CALLS:
            ret = getattr(mod, "list_" if fun == "list" else fun)(*copy.deepcopy(args), **copy.deepcopy(kwargs))
            entry = {"fun": "beacons." + fun, "args": args, "kwargs": kwargs, "return": ret}
            if fun == "save":
                with open(os.path.join(conf, "minion.d", "beacons.conf")) as f:
                    entry["file"] = f.read()
            calls.append(json.loads(json.dumps(entry).replace(conf, "$CONF")))
        return {"opts_beacons": {"service": [{"services": {"salt-minion": {}}}]},
                "pillar": {"beacons": {"pillar_svc": [{"beacon_module": "service"}, {"services": {"sshd": {}}}]}},
                "available": avail, "calls": calls}
    finally:
        shutil.rmtree(conf, ignore_errors=True)


def main():
    out = HERE
    if "--out" in sys.argv:
        out = sys.argv[sys.argv.index("--out") + 1]
    goldens = {
        "load": gen_load(),
        "service": gen_service(),
        "diskusage": gen_diskusage(),
        "network_info": gen_network_info(),
        "status": gen_status(),
        "process": gen_process(),
    }
    if "--no-inotify" not in sys.argv:
        goldens["inotify"] = gen_inotify()
    with open(os.path.join(out, "goldens.json"), "w") as f:
        json.dump(goldens, f, indent=1)
        f.write("\n")
    with open(os.path.join(out, "module_calls.json"), "w") as f:
        json.dump(gen_module_calls(), f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

# Runs Salt 3006's own scheduler (salt.utils.schedule.Schedule.eval) over
# the scenarios of eval_scenarios.json, the way Salt's unit tests drive it:
# a fake clock stepping one second (no evaluation at the scenario's "skip"
# offsets), jobs recorded instead of started.
# Prints {"scenario name": [[offset, name, fun], ...]} as JSON.
# Used by schedule/interop_test.go (GSALT_SALT_SRC); not part of gsalt.
#
# The clock is pinned: Salt hands "when", "range", "after" and
# "skip_during_range" times to dateutil.parser.parse, which fills a missing
# date from the machine's today; here it is the scenario's own day, so the
# result does not depend on the date the test runs (the test also runs
# this with TZ=UTC). A missing dateutil or croniter makes Salt ignore those
# jobs; the script then exits 3 naming the package, and the test skips.
import copy
import datetime
import json
import os
import sys
import tempfile
from unittest.mock import MagicMock, patch

for mod, pkg in (("dateutil.parser", "python3-dateutil"), ("croniter", "python3-croniter")):
    try:
        __import__(mod)
    except ImportError:
        print(pkg)
        sys.exit(3)

import dateutil.parser  # noqa: E402

import salt.config  # noqa: E402
import salt.utils.schedule  # noqa: E402


class PinnedParser:
    """dateutil.parser with the default date set to the scenario's day."""

    def __init__(self, day):
        self.day = day

    def parse(self, text, *args, **kwargs):
        kwargs.setdefault("default", self.day)
        return dateutil.parser.parse(text, *args, **kwargs)

scenarios = json.load(open(sys.argv[1]))
out = {}
for sc in scenarios:
    root = tempfile.mkdtemp()
    opts = salt.config.minion_config(None)
    opts.update(conf_dir=root, root_dir=root, sock_dir=root + "/s", pki_dir=root + "/p", cachedir=root + "/c")
    opts["schedule"] = copy.deepcopy(sc["schedule"])
    opts["pillar"] = copy.deepcopy(sc.get("pillar") or {})
    opts["loop_interval"] = 1
    start = datetime.datetime.strptime(sc.get("start") or "2026-11-22T10:00:00", "%Y-%m-%dT%H:%M:%S")
    runs = []
    now = [start]
    functions = {f: (lambda *a, **k: True) for f in ("test.ping", "test.echo", "test.arg", "test.retcode")}
    with patch("salt.utils.schedule.clean_proc_dir", MagicMock(return_value=None)):
        s = salt.utils.schedule.Schedule(opts, functions, returners={}, new_instance=True)
    s.opts["loop_interval"] = 1
    running = sc.get("running") or {}

    def fake_running(_opts):
        return [{"schedule": n, "pid": os.getpid()} for n, c in running.items() for _ in range(c)]

    def fake_run(func, data, jid=None):
        runs.append([int((now[0] - start).total_seconds()), data["name"], func])

    day = start.replace(hour=0, minute=0, second=0, microsecond=0)
    with patch("salt.utils.minion.running", fake_running), patch.object(s, "_run_job", fake_run), patch(
        "salt.utils.schedule.dateutil_parser", PinnedParser(day)
    ):
        for i in range(sc["steps"] + 1):
            if i in (sc.get("skip") or []):
                continue
            now[0] = start + datetime.timedelta(seconds=i)
            s.eval(now=now[0])
    out[sc["name"]] = runs
print(json.dumps(out))

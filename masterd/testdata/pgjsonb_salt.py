"""Write one job through real Salt's pgjsonb returner (salt/returners/pgjsonb.py).

Used by masterd's TestPgjsonbRowsLikeSalt: the inputs gsalt-master handled
(the publish load, each _return load, the forwarded events) are read from a
msgpack file and handed to Salt the way salt-master does: the publish load
to pgjsonb.save_load (ClearFuncs._prep_pub), each return through
salt.utils.job.store_job (master_job_cache: pgjsonb), the events to
pgjsonb.event_return (EventReturn.flush_events).

usage: pgjsonb_salt.py INPUT.msgpack HOST PORT USER DB MASTER_ID
       pgjsonb_salt.py read HOST PORT USER DB JID...
The read form prints (JSON) what Salt's jobs runners (jobs.lookup_jid,
jobs.list_jobs) read from the database with master_job_cache: pgjsonb.
"""
import json
import sys

import salt.config
import salt.loader
import salt.payload
import salt.utils.job


class _MMinion:
    def __init__(self, returners):
        self.returners = returners


def _opts(host, port, user, db, master_id):
    opts = salt.config.master_config(None)
    opts.update(
        {
            "id": master_id,
            "master_job_cache": "pgjsonb",
            "returner.pgjsonb.host": host,
            "returner.pgjsonb.port": int(port),
            "returner.pgjsonb.user": user,
            "returner.pgjsonb.pass": "x",
            "returner.pgjsonb.db": db,
        }
    )
    return opts


def read(host, port, user, db, jids):
    opts = _opts(host, port, user, db, "reader_master")
    runners = salt.loader.runner(opts)
    out = {
        "lookup": {jid: runners["jobs.lookup_jid"](jid) for jid in jids},
        "list": runners["jobs.list_jobs"](),
    }
    print(json.dumps(out))


def main():
    if sys.argv[1] == "read":
        read(*sys.argv[2:6], sys.argv[6:])
        return
    path, host, port, user, db, master_id = sys.argv[1:7]
    with open(path, "rb") as f:
        inp = salt.payload.loads(f.read())
    opts = _opts(host, port, user, db, master_id)
    rets = salt.loader.returners(opts, {})
    if "pgjsonb.returner" not in rets:
        sys.exit("pgjsonb returner not loaded: " + str(rets.missing_fun_string("pgjsonb.returner")))
    rets["pgjsonb.save_load"](inp["jid"], inp["clear"], inp["minions"])
    for load in inp["returns"]:
        salt.utils.job.store_job(opts, load, event=None, mminion=_MMinion(rets))
    if inp["events"]:
        rets["pgjsonb.event_return"](inp["events"])


if __name__ == "__main__":
    main()

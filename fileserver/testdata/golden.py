# Generates fileserver/testdata/golden.json with real Salt 3006: run by
# `GSALT_SALT_SRC=/path/to/salt go test ./fileserver -run TestGolden -update`,
# which builds the test tree, writes the requests and runs
#
#   python3 golden.py BASE REQUESTS.json OUT.json
#
# with PYTHONPATH set to the Salt tree. For every scenario a master
# configuration (its options, file_roots under BASE) is loaded with
# salt.config.master_config and every load is answered by
# salt.fileserver.Fileserver through the method AESFuncs maps the command
# to. Answers are normalised so they do not depend on BASE or on the
# machine: BASE becomes @BASE@, bytes become {"$bytes": text}, gzipped
# chunks {"$gunzip": text}, os.stat lists {"$stat": [mode, size]}, an
# exception {"$error": true} (the master answers "" then), and _file_envs
# lists are sorted (Salt returns a set's order). Each case starts with the
# configured fileserver_backend (see below).
import copy
import gzip
import json
import os
import sys

import salt.config
import salt.fileserver

BASE, REQS, OUT = sys.argv[1:4]

METHODS = {
    "_serve_file": "serve_file",
    "_file_find": "_find_file",
    "_file_hash": "file_hash",
    "_file_hash_and_stat": "file_hash_and_stat",
    "_file_list": "file_list",
    "_file_list_emptydirs": "file_list_emptydirs",
    "_dir_list": "dir_list",
    "_symlink_list": "symlink_list",
    "_file_envs": "file_envs",
}


def subst(v):
    if isinstance(v, str):
        return v.replace("@BASE@", BASE)
    if isinstance(v, list):
        return [subst(x) for x in v]
    if isinstance(v, dict):
        return {subst(k): subst(x) for k, x in v.items()}
    return v


def norm(v):
    if isinstance(v, (bytes, bytearray)):
        return {"$bytes": bytes(v).decode("utf-8")}
    if isinstance(v, str):
        return v.replace(BASE, "@BASE@")
    if isinstance(v, (list, tuple)):
        if len(v) == 10 and all(type(x) is int for x in v):
            return {"$stat": [v[0], v[6]]}
        return [norm(x) for x in v]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k == "data" and "gzip" in v and isinstance(x, (bytes, bytearray)):
                out[k] = {"$gunzip": gzip.decompress(x).decode("utf-8")}
            else:
                out[norm(k)] = norm(x)
        return out
    return v


def main():
    with open(REQS, encoding="utf-8") as fp:
        reqs = json.load(fp)
    out = []
    for sc in reqs:
        conf = os.path.join(BASE, "conf-" + sc["name"])
        os.makedirs(conf, exist_ok=True)
        opts = subst(sc["opts"])
        opts["cachedir"] = os.path.join(BASE, "cache-" + sc["name"])
        opts["root_dir"] = BASE
        opts["pki_dir"] = os.path.join(BASE, "pki")
        opts["sock_dir"] = os.path.join(BASE, "sock")
        opts["log_level"] = "quiet"
        path = os.path.join(conf, "master")
        with open(path, "w", encoding="utf-8") as fp:
            json.dump(opts, fp)
        master_opts = salt.config.master_config(path)
        fs = salt.fileserver.Fileserver(master_opts)
        backends = list(master_opts["fileserver_backend"])
        cases = []
        for case in sc["cases"]:
            # Fileserver.backends() removes a "-backend" from the master's
            # own fileserver_backend list for good: undo that so every case
            # sees the configured backends.
            fs.opts["fileserver_backend"] = list(backends)
            load = subst(copy.deepcopy(case["load"]))
            load["cmd"] = case["cmd"]
            res = {"name": case["name"], "cmd": case["cmd"], "load": case["load"]}
            try:
                got = getattr(fs, METHODS[case["cmd"]])(load)
            except Exception as exc:  # the master's run_func answers ""
                res["want"] = {"$error": True}
                res["exc"] = type(exc).__name__
            else:
                if case["cmd"] == "_file_envs" and isinstance(got, list):
                    got = sorted(got)
                res["want"] = norm(got)
            cases.append(res)
        out.append({"name": sc["name"], "opts": sc["opts"], "cases": cases})
    with open(OUT, "w", encoding="utf-8") as fp:
        json.dump(out, fp, indent=1, ensure_ascii=False, sort_keys=True)
        fp.write("\n")


main()

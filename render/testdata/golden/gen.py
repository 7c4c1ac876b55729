"""Regenerate the *.golden.json files of this folder with real Salt 3006.

Run by `go test ./render/ -run TestGolden -update` when GSALT_SALT_SRC is
set (see golden_test.go); usage: python3 gen.py GOLDEN_DIR.

Every srv/**/g_*.sls and srv/**/init.sls file is rendered with
slsutil.renderer (default pipeline jinja|yaml, sls set from the path) in a
masterless minion whose config holds grains.json as grains and pillar/ as
pillar_roots; the result (or {"__error__": message}) is written as
<path with / replaced by __>.golden.json. pillar.items goes to
pillar.golden.json and the tplpath prefix to meta.golden.json.
"""
import glob
import json
import os
import sys
import tempfile

golden = os.path.abspath(sys.argv[1])
tmp = tempfile.mkdtemp(prefix="gsalt-golden-")
with open(os.path.join(golden, "grains.json")) as f:
    grains = json.load(f)
with open(os.path.join(tmp, "minion"), "w") as f:
    f.write(
        json.dumps(
            {
                "id": "golden",
                "file_client": "local",
                "root_dir": os.path.join(tmp, "root"),
                "file_roots": {"base": [os.path.join(golden, "srv")]},
                "pillar_roots": {"base": [os.path.join(golden, "pillar")]},
                "enable_fqdns_grains": False,
                "ipv6": False,
                "log_level": "error",
                "grains": grains,
            }
        )
    )

import salt.client  # noqa: E402
import salt.config  # noqa: E402

opts = salt.config.minion_config(os.path.join(tmp, "minion"))
caller = salt.client.Caller(mopts=opts)


def dump(name, data):
    with open(os.path.join(golden, name), "w") as f:
        f.write(json.dumps(data, indent=1, ensure_ascii=False, default=repr) + "\n")


srv = os.path.join(golden, "srv")
files = sorted(
    set(glob.glob(os.path.join(srv, "**", "g_*.sls"), recursive=True))
    | set(glob.glob(os.path.join(srv, "**", "init.sls"), recursive=True))
)
for path in files:
    rel = os.path.relpath(path, srv)
    sls = rel[: -len(".sls")].replace("/", ".")
    if sls.endswith(".init"):
        sls = sls[: -len(".init")]
    try:
        data = caller.cmd("slsutil.renderer", "salt://" + rel, sls=sls)
    except Exception as exc:  # pylint: disable=broad-except
        data = {"__error__": str(exc)}
    dump(rel.replace("/", "__") + ".golden.json", data)

dump("pillar.golden.json", caller.cmd("pillar.items"))
dump(
    "meta.golden.json",
    {"tplpath_prefix": os.path.join(opts["cachedir"], "files", "base") + "/"},
)

import shutil  # noqa: E402

shutil.rmtree(tmp, ignore_errors=True)

# Regenerates ext_golden.json from ext_cases.json with real Salt 3006's
# pillar compiler (salt.pillar.Pillar, master options, its own ext_pillar
# modules), in process. Run by
# `GSALT_SALT_SRC=/path/to/salt go test ./pillar -run TestExtPillarGolden -update`.
import base64, copy, json, logging, os, sys, tempfile

logging.disable(logging.CRITICAL)

import salt.cache
import salt.config
import salt.pillar

here = os.path.abspath(sys.argv[1])
extdir = os.path.join(here, "ext")
cases_file = sys.argv[2] if len(sys.argv) > 2 else "ext_cases.json"
golden_file = sys.argv[3] if len(sys.argv) > 3 else "ext_golden.json"
spec = json.load(open(os.path.join(here, cases_file)))
# @NAME@ placeholders besides @DIR@ come from GSALT_EXT_NAME variables
extvars = {"@%s@" % k[len("GSALT_EXT_"):]: v for k, v in os.environ.items() if k.startswith("GSALT_EXT_")}
tmp = tempfile.mkdtemp()
conf = os.path.join(tmp, "master")
with open(conf, "w") as f:
    f.write("root_dir: %s\nlog_level: critical\n" % tmp)
base_opts = salt.config.master_config(conf)
pki = os.path.join(tmp, "pki")
os.makedirs(os.path.join(pki, "minions"))
base_opts["pki_dir"] = pki
cache = salt.cache.factory(base_opts)
for m in spec["accepted"]:
    with open(os.path.join(pki, "minions", m), "w") as f:
        f.write("KEY")
    # the minion data cache a master keeps from the minions' requests
    cache.store("minions/" + m, "data", {"grains": spec["minions"][m], "pillar": {}})


def subst(v):
    if isinstance(v, str):
        v = v.replace("@DIR@", extdir)
        for k, x in extvars.items():
            v = v.replace(k, x)
        return v
    if isinstance(v, list):
        return [subst(x) for x in v]
    if isinstance(v, dict):
        return {subst(k): subst(x) for k, x in v.items()}
    return v


def plain(v):
    if isinstance(v, bytes):
        return {"__bytes__": base64.b64encode(v).decode()}
    if isinstance(v, str):
        for k, x in extvars.items():
            if x.startswith("/"):  # a path: back to its placeholder
                v = v.replace(x, k)
        return v.replace(tmp, "@TMP@").replace(extdir, "@DIR@")
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {("null" if k is None else plain(k)): plain(x) for k, x in v.items()}
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


funcs = None
out = {}
for case in spec["cases"]:
    opts = copy.deepcopy(base_opts)
    opts["pki_dir"] = pki
    opts["pillar_roots"] = {"base": [os.path.join(extdir, "roots") if case.get("roots") else extdir]}
    opts["nodegroups"] = copy.deepcopy(spec["nodegroups"])
    opts["ext_pillar"] = subst(case["ext_pillar"])
    opts.update(subst(case.get("opts", {})))
    grains = copy.deepcopy(spec["minions"][case["minion"]])
    try:
        p = salt.pillar.Pillar(
            opts, grains, grains["id"], case.get("saltenv"),
            ext=subst(case.get("ext")),
            functions=funcs,
            pillar_override=case.get("override"),
            pillarenv=case.get("pillarenv"),
        )
        funcs = p.functions
        res = {"pillar": plain(p.compile_pillar())}
    except Exception as exc:  # Salt raises: the master answers no pillar
        res = {"exception": type(exc).__name__}
    out[case["name"]] = res
with open(os.path.join(here, golden_file), "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")

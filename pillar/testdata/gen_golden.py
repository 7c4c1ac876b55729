# Regenerates golden.json from cases.json with real Salt 3006's pillar
# compiler (salt.pillar.Pillar with master options), in process.
# Run by `GSALT_SALT_SRC=/path/to/salt go test ./pillar -run TestGolden -update`,
# or: PYTHONPATH=$GSALT_SALT_SRC:<pyshim> python3 gen_golden.py <testdata dir>
import copy, json, logging, os, sys, tempfile

logging.disable(logging.CRITICAL)

import salt.config
import salt.pillar

here = os.path.abspath(sys.argv[1])
spec = json.load(open(os.path.join(here, "cases.json")))
tmp = tempfile.mkdtemp()
conf = os.path.join(tmp, "master")
with open(conf, "w") as f:
    f.write("root_dir: %s\nlog_level: critical\n" % tmp)
base_opts = salt.config.master_config(conf)
funcs = None
out = {}
for case in spec["cases"]:
    cfg = spec["configs"][case["config"]]
    opts = copy.deepcopy(base_opts)
    opts["pillar_roots"] = {
        env: [os.path.join(here, d) for d in dirs]
        for env, dirs in cfg["pillar_roots"].items()
    }
    opts["nodegroups"] = cfg.get("nodegroups", {})
    opts.update(case.get("opts", {}))
    grains = copy.deepcopy(spec["minions"][case["minion"]])
    res = {}
    try:
        p = salt.pillar.Pillar(
            opts, grains, grains["id"], case.get("saltenv"),
            functions=funcs,
            pillar_override=case.get("override"),
            pillarenv=case.get("pillarenv"),
        )
        funcs = p.functions
        if case.get("top"):
            top, errors = p.get_top()
            res["top"] = top
            res["top_errors"] = errors
        res["pillar"] = p.compile_pillar()
    except Exception as exc:  # Salt raises: the master answers no pillar
        res = {"exception": type(exc).__name__}
    out[case["name"]] = res
with open(os.path.join(here, "golden.json"), "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")

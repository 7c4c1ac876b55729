# Writes git_pillar_update.json: what Salt 3006's git_pillar.update runner
# (salt/runners/git_pillar.py over salt.utils.gitfs.GitPillar with
# GitPython) returns in the scenarios of TestGitPillarUpdateGolden, on the
# bare repositories pillar/testdata/git/mkrepos.sh makes in GITDIR.
# Usage: git_pillar_update.py GITDIR OUT.json (run by the test with -update).
import json, logging, os, shutil, subprocess, sys, tempfile

logging.disable(logging.CRITICAL)

import salt.config
import salt.loader
import salt.pillar

gitdir, out_file = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
scenarios = json.load(open(os.path.join(here, "git_pillar_update_cases.json")))


def subst(v):
    if isinstance(v, str):
        return v.replace("@GITDIR@", gitdir)
    if isinstance(v, list):
        return [subst(x) for x in v]
    if isinstance(v, dict):
        return {subst(k): subst(x) for k, x in v.items()}
    return v


def plain(v):
    if isinstance(v, str):
        return v.replace(gitdir, "@GITDIR@")
    if isinstance(v, dict):
        return {plain(k): plain(x) for k, x in v.items()}
    return v


results = []
for sc in scenarios:
    tmp = tempfile.mkdtemp()
    conf = os.path.join(tmp, "master")
    with open(conf, "w") as f:
        f.write("root_dir: %s\nlog_level: critical\n" % tmp)
    opts = salt.config.master_config(conf)
    opts["ext_pillar"] = subst(sc["ext_pillar"])
    opts.update(subst(sc.get("opts", {})))
    steps = []
    for st in sc["steps"]:
        if "push" in st:
            subprocess.run(["/bin/sh", os.path.join(here, "git_pillar_push.sh"), gitdir, st["push"]] + ([st["branch"]] if st.get("branch") else []), check=True)
            steps.append({"push": st["push"]})
            continue
        if "pillar" in st:
            # the master's pillar for a minion in a saltenv, from the
            # remotes as the runner left them (a master does not fetch
            # while compiling)
            mid = st["pillar"]
            try:
                p = salt.pillar.Pillar(opts, {"id": mid}, mid, st.get("saltenv"), pillarenv=st.get("pillarenv"))
                steps.append({"pillar": plain(p.compile_pillar())})
            except Exception as exc:  # the error, as the master logs it
                steps.append({"error": "%s: %s" % (type(exc).__name__, plain(str(exc)))})
            continue
        runners = salt.loader.runner(opts, utils=salt.loader.utils(opts))
        try:
            ret = {"return": plain(runners["git_pillar.update"](**subst(st["kwargs"])))}
        except Exception as exc:  # the runner's error, as salt-run prints it
            ret = {"error": "%s: %s" % (type(exc).__name__, plain(str(exc)))}
        steps.append(ret)
    results.append({"name": sc["name"], "steps": steps})
    shutil.rmtree(tmp)

with open(out_file, "w") as f:
    json.dump(results, f, indent=1)
    f.write("\n")

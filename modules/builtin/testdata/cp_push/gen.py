"""Prints golden.json: what Salt 3006's cp.push and cp.push_dir send to the
master (the _file_recv loads, tok left out) and return, for the steps of
scenarios.json (read from stdin) on a temporary tree, the master's answers
given per step (default True). Paths under the tree are written as $DIR.

Run by TestCpPushGolden with -update and GSALT_SALT_SRC set:
    /usr/bin/python3 gen.py < scenarios.json > golden.json
"""
import copy
import json
import os
import shutil
import sys
import tempfile

import salt.channel.client
import salt.modules.cp as cp


def build(root, tree):
    for d in tree["dirs"]:
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for p, text in tree["files"].items():
        full = os.path.join(root, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    for p, target in tree["links"].items():
        os.symlink(target, os.path.join(root, p))


class Auth:
    def gen_token(self, clear):
        return b"tok"


def main():
    sc = json.load(sys.stdin)
    out = []
    for step in sc["steps"]:
        root = os.path.realpath(tempfile.mkdtemp())
        try:
            build(root, sc["tree"])
            sent = []
            answers = list(step.get("answers", []))

            class Channel:
                def __enter__(self):
                    return self

                def __exit__(self, *a):
                    return False

                def send(self, load):
                    l = copy.deepcopy(load)
                    del l["tok"]
                    l["path"] = "/".join(l["path"]).replace(root.lstrip("/"), "$DIR")
                    l["data"] = l["data"].decode()
                    sent.append(l)
                    return answers.pop(0) if answers else True

            salt.channel.client.ReqChannel.factory = lambda opts: Channel()
            cp.__opts__ = {"id": "golden", "file_buffer_size": 4}
            cp.__context__ = {"auth": Auth()}
            sub = lambda v: v.replace("$DIR", root) if isinstance(v, str) else v
            args = [sub(a) for a in step["args"]]
            ret = getattr(cp, step["fun"])(*args, **step.get("kwargs", {}))
            sent.sort(key=lambda l: (l["path"], l["loc"]))
            out.append({"fun": "cp." + step["fun"], "args": step["args"], "kwargs": step.get("kwargs", {}),
                        "answers": step.get("answers", []), "return": ret, "sent": sent,
                        "left": sorted(p for p in sc["tree"]["files"] if os.path.lexists(os.path.join(root, p)))})
        finally:
            shutil.rmtree(root, ignore_errors=True)
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


main()

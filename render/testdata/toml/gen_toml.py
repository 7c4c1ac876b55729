# Writes toml.golden.json: each SLS below rendered by Salt 3006's toml
# renderer (salt.renderers.tomlmod.render, python3-toml 0.10.2 underneath),
# in the typed form of ../yamlex/gen_yamlex.py. The decoder itself is
# compared case by case in internal/pytoml (TestLoadsGolden). Run by
# `GSALT_SALT_SRC=/path/to/salt go test ./render -run TestTOMLRendererGolden -update`.
import sys
import json
import logging
import os

logging.disable(logging.CRITICAL)

import salt.renderers.tomlmod as renderer

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from typed import run  # noqa: E402

cases = [
    ("states", '[nginx.pkg]\n"pkg.installed" = []\n\n[nginx_conf."file.managed"]\nname = "/etc/nginx/nginx.conf"\nsource = "salt://nginx/files/nginx.conf"\nmode = "0644"\nrequire = [{pkg = "nginx"}]\n'),
    ("states list form", '[[vim."pkg.installed"]]\nname = "vim"\n[[vim."pkg.installed"]]\nrefresh = true\n'),
    ("pillar", '[users.alice]\nuid = 1001\nshell = "/bin/zsh"\ngroups = ["wheel", "docker"]\n\n[users.bob]\nuid = 1002\nweight = 72.5\nactive = false\n'),
    ("include", 'include = ["base", "web.nginx"]\n'),
    ("datetime", 'when = 1979-05-27T07:32:00\n'),
    ("empty", ''),
    ("comments only", '# nothing here\n\n# at all\n'),
    ("empty table", '[a]\n'),
    ("duplicate key", 'a = 1\na = 2\n'),
    ("bad value", 'a = nope\n'),
    ("unterminated", 'a = "x'),
    ("type error", 'a = "xyz"\na.b.c = 1\n'),
    ("duplicate table", '[a]\n[a]\n'),
]


out = [{"name": name, "input": text, "render": run(renderer.render, text)} for name, text in cases]
with open(os.path.join(here, "toml.golden.json"), "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(len(out), "cases")

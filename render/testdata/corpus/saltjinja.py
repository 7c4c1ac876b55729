"""Render Jinja cases through Salt 3006's own Jinja path, as a JSON-lines server.

Usage: python3 saltjinja.py CORPUS_DIR   (with PYTHONPATH naming Salt's source)

Reads one JSON request a line on stdin and writes one JSON answer a line on
stdout. Used by render/corpus_test.go (-update writes golden.json from the
answers) and by the differential fuzz target (a long-lived process).

Request:  {"id": "...", "template": "...", "name": "case.sls",
           "files": {"lib/map.jinja": "..."}, "vars": {...}, "opts": {...},
           "pillar": {...} (optional, replaces the fixture pillar)}
Answer:   {"id": "...", "out": "rendered text"}
      or  {"id": "...", "class": "undefined|syntax|salt|notfound|error",
           "exc": "Python exception type", "error": "Salt's message"}

Every request is rendered as an SLS file salt://<name> (sls derived from the
name) by salt.utils.templates.JINJA, the function Salt's jinja renderer
calls, in a masterless minion environment: file_client local, file_roots a
scratch folder holding the case's files, the corpus fixtures grains.json
and pillar.yaml as grains and pillar, and salt[...] served by Salt's own
execution-module loader. Paths of the scratch folder in error messages are
replaced by "<files>".

Resource bounds: the process's address space is limited to its size after
start-up plus GSALT_JINJA_MEM_MB (default 1024), so a template that
allocates without bound (range(10**9)|list, network_hosts of a /2) gets
Python's MemoryError instead of the machine's OOM killer; each render may
use GSALT_JINJA_CPU_S seconds of CPU (default 10). Both are answered with
the class "limit", the class gsalt gives its own bounds (render.ErrLimit).
"""
import copy
import io
import json
import logging
import os
import re
import resource
import shutil
import signal
import sys
import tempfile

corpus = os.path.abspath(sys.argv[1])
tmp = tempfile.mkdtemp(prefix="gsalt-corpus-")
srv = os.path.join(tmp, "srv")
os.makedirs(srv)
logging.disable(logging.CRITICAL)

import salt.config  # noqa: E402
import salt.exceptions  # noqa: E402
import salt.fileclient  # noqa: E402
import salt.loader  # noqa: E402
import salt.utils.templates  # noqa: E402
import salt.utils.yaml  # noqa: E402

with open(os.path.join(corpus, "grains.json")) as f:
    GRAINS = json.load(f)
with open(os.path.join(corpus, "pillar.yaml")) as f:
    PILLAR = salt.utils.yaml.safe_load(f)

base_opts = salt.config.minion_config(None)
base_opts.update(
    {
        "id": "corpus",
        "file_client": "local",
        "root_dir": tmp,
        "cachedir": os.path.join(tmp, "cache"),
        "file_roots": {"base": [srv]},
        "pillar_roots": {"base": [os.path.join(tmp, "pillar")]},
        "fileserver_backend": ["roots"],
        "enable_fqdns_grains": False,
        "grains": GRAINS,
        "pillar": PILLAR,
    }
)
FILES_PREFIX = os.path.join(base_opts["cachedir"], "files", "base")
FUNCS = salt.loader.minion_mods(base_opts)
FILECLIENT = salt.fileclient.get_file_client(base_opts)


MEM_MB = int(os.environ.get("GSALT_JINJA_MEM_MB", "1024"))
CPU_S = float(os.environ.get("GSALT_JINJA_CPU_S", "10"))


class CaseLimit(BaseException):
    """The per-case CPU bound: a BaseException, so Salt's broad
    ``except Exception`` clauses cannot swallow it."""


def on_cpu_bound(signum, frame):
    raise CaseLimit("render used more than %gs of CPU" % CPU_S)


def bound_memory():
    """Limit the address space to today's size plus MEM_MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                size = int(line.split()[1]) * 1024
                break
        else:
            return
    limit = size + MEM_MB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def reset_tree(files):
    for d in (srv, os.path.join(base_opts["cachedir"], "files")):
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(srv)
    for rel, text in files.items():
        p = os.path.join(srv, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8", newline="") as f:
            f.write(text)


def classify(exc):
    msg = str(exc)
    inner = exc.__context__ if isinstance(exc, salt.exceptions.SaltRenderError) else exc
    name = type(inner).__name__ if inner is not None else type(exc).__name__
    # a MemoryError anywhere in the chain is the address-space cap (Salt's
    # error reporter itself fails on one raised while compiling a template
    # whose folded constants are too large, and raises a TypeError)
    e = exc
    for _ in range(10):
        if e is None:
            break
        if isinstance(e, MemoryError):
            return "limit", "MemoryError"
        e = e.__context__
    if name == "MemoryError":
        return "limit", name
    if name in ("TemplateNotFound", "TemplatesNotFound"):
        return "notfound", name
    if msg.startswith("Jinja variable"):
        return "undefined", name
    if msg.startswith("Jinja syntax error"):
        return "syntax", name
    if msg.startswith("Problem running salt function"):
        return "salt", name
    return "error", name


ADDR = re.compile(r" at 0x[0-9a-f]+(>|&gt;)")


def clean(msg):
    """Replace the scratch tree's paths and object addresses."""
    msg = msg.replace(FILES_PREFIX, "<files>").replace(srv, "<files>")
    return ADDR.sub(r" at 0x...\1", msg)


def render(req):
    name = req.get("name") or "case.sls"
    files = dict(req.get("files") or {})
    files[name] = req["template"]
    reset_tree(files)
    # every case gets fresh copies: templates may change the dicts they see
    grains = copy.deepcopy(GRAINS)
    pillar = copy.deepcopy(req.get("pillar", PILLAR))
    opts = dict(base_opts)
    opts.update(copy.deepcopy(req.get("opts") or {}))
    opts["grains"] = grains
    opts["pillar"] = pillar
    sls = name[: -len(".sls")] if name.endswith(".sls") else name
    sls = sls.replace("/", ".")
    if sls.endswith(".init"):
        sls = sls[: -len(".init")]
    ctx = dict(req.get("vars") or {})
    try:
        signal.setitimer(signal.ITIMER_PROF, CPU_S)
        ret = salt.utils.templates.JINJA(
            io.StringIO(req["template"]),
            to_str=True,
            salt=FUNCS,
            grains=grains,
            opts=opts,
            pillar=pillar,
            saltenv="base",
            sls=sls,
            tmplpath=os.path.join(FILES_PREFIX, name),
            fileclient=FILECLIENT,
            context=ctx,
        )
    except CaseLimit as exc:
        return {"class": "limit", "exc": "CaseLimit", "error": str(exc)}
    except Exception as exc:  # pylint: disable=broad-except
        cls, name = classify(exc)
        return {"class": cls, "exc": name, "error": clean(str(exc))}
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    if not ret.get("result"):
        data = ret.get("data", "")
        last = data.strip().splitlines()[-1] if data.strip() else ""
        return {"class": "error", "exc": last.split(":", 1)[0], "error": clean(data)}
    return {"out": clean(ret["data"])}


def main():
    signal.signal(signal.SIGPROF, on_cpu_bound)
    bound_memory()
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            ans = render(req)
        except Exception as exc:  # pylint: disable=broad-except
            ans = {"class": "harness", "exc": type(exc).__name__, "error": str(exc)}
        ans["id"] = req.get("id", "")
        out.write(json.dumps(ans, ensure_ascii=False) + "\n")
        out.flush()
    shutil.rmtree(tmp, ignore_errors=True)


main()

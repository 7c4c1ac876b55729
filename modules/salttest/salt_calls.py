"""Run execution-module calls through real Salt 3006's loader.

Used by the golden tests of package modules/builtin (saltgolden_test.go):
reads {"conf": minion config path, "suites": [...]} on stdin, where each
suite has grains, pillar, opts and calls [{"fun", "args", "kwargs", "opts"}],
and prints one result per call: {"return": value} or {"error": text}, the
error text being what a minion returns for the exception.
"""
import json
import sys

import salt.config
import salt.loader
import salt.syspaths
from salt.exceptions import (
    CommandExecutionError,
    CommandNotFoundError,
    SaltInvocationError,
)


def plain(v):
    if isinstance(v, dict):
        return {k if isinstance(k, str) else json.dumps(plain(k)): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted(plain(x) for x in v)
    if isinstance(v, bytes):
        return {"$bytes": v.hex()}
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return repr(v)


def error_text(fun, exc):
    if isinstance(exc, SaltInvocationError):
        return "ERROR executing '{}': {}".format(fun, exc)
    if isinstance(exc, CommandNotFoundError):
        return "Command required for '{}' not found: {}".format(fun, exc)
    if isinstance(exc, CommandExecutionError):
        return "ERROR: {}".format(exc)
    if isinstance(exc, TypeError):
        return "Passed invalid arguments to {}: {}".format(fun, exc)
    name = type(exc).__name__
    mod = type(exc).__module__
    if mod not in ("builtins", "__main__"):
        name = mod + "." + name
    return "The minion function caused an exception: {}: {}".format(name, exc)


def main():
    req = json.load(sys.stdin)
    out = []
    for suite in req["suites"]:
        opts = salt.config.minion_config(req["conf"])
        opts["file_client"] = "local"
        opts["local"] = True
        opts.update(suite.get("opts") or {})
        if suite.get("real_grains"):
            opts["grains"] = salt.loader.grains(opts)
        else:
            opts["grains"] = suite.get("grains") or {}
        opts["pillar"] = suite.get("pillar") or {}
        utils = salt.loader.utils(opts)
        context = {}
        funcs = salt.loader.minion_mods(opts, utils=utils, context=context)
        res = []
        for call in suite["calls"]:
            fun = call["fun"]
            if not suite.get("keep_context"):
                context.clear()
            copts = call.get("opts") or {}
            saved = {k: opts.get(k) for k in copts}
            # A loaded module keeps its own copy of the options.
            mopts = funcs.opts
            if copts and fun in funcs:
                mopts = getattr(funcs[fun], "__globals__", {}).get("__opts__", mopts)
            lsaved = {k: mopts.get(k) for k in copts}
            opts.update(copts)
            for k, v in copts.items():
                mopts[k] = v
            if "aptpkg.etc_dir" in opts:
                # gsalt's aptpkg.etc_dir is apt's Dir::Etc.
                import apt_pkg  # pylint: disable=import-outside-toplevel

                apt_pkg.config.set("Dir::Etc", opts["aptpkg.etc_dir"])
            if "salt_proxy.config_dir" in opts:
                # gsalt's salt_proxy.config_dir is Salt's install-time
                # configuration directory, which salt_proxy writes to.
                salt.syspaths.CONFIG_DIR = opts["salt_proxy.config_dir"]
            try:
                if fun not in funcs:
                    raise KeyError(fun)
                ret = funcs[fun](*call.get("args", []), **call.get("kwargs", {}))
                res.append({"return": plain(ret)})
            except Exception as exc:  # pylint: disable=broad-except
                res.append({"error": error_text(fun, exc)})
            opts.update(saved)
            for k, v in lsaved.items():
                mopts[k] = v
        out.append({"results": res, "grains": plain(opts["grains"]) if suite.get("real_grains") else None})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()

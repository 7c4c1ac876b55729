#!/usr/bin/python3
"""Runs several salt-call --local calls in one process for TestFormulas.

Usage: formulas_salt.py CONFIG_DIR CALLS_JSON
CALLS_JSON is a JSON list of argument lists (what follows
`salt-call -c CONFIG_DIR --local --out json`). Each call goes through
salt.cli.caller like salt-call's (its arguments parsed by salt-call's
option parser for the first), reusing the first call's minion (grains, pillar, loaded
modules) so that Salt starts once; an argument "pillar=@pillar.items"
becomes pillar= with the JSON of the last pillar.items return; each result is printed as one line,
{"local": <return>} in JSON, as `--out json` prints it.
"""
import contextlib
import io
import json
import sys

import salt.cli.caller
import salt.output
import salt.utils.parsers


def main(conf, calls):
    caller = None
    pillar = None
    for argv in calls:
        argv = [
            "pillar=" + json.dumps(pillar) if a == "pillar=@pillar.items" else a
            for a in argv
        ]
        if caller is None:
            parser = salt.utils.parsers.SaltCallOptionParser()
            parser.parse_args(["-c", conf, "--local", "--out", "json"] + argv)
            caller = salt.cli.caller.Caller.factory(parser.config)
        else:
            # what the parser makes of the function and its arguments
            caller.opts["fun"], caller.opts["arg"] = argv[0], argv[1:]
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                ret = caller.call()
            if argv[0] == "pillar.items":
                pillar = ret["return"]
            out = salt.output.out_format({"local": ret["return"]}, "json", caller.opts)
            out = json.dumps(json.loads(out))
        except Exception as exc:  # one call failing does not stop the others
            out = json.dumps({"error": "%s: %s" % (type(exc).__name__, exc)})
        except SystemExit as exc:
            # salt-call's caller exits (after printing the error) when a
            # function raises CommandExecutionError, e.g. a pillar that
            # failed to render: that call failed, the next ones still run
            lines = [l for l in err.getvalue().splitlines() if l.strip()]
            out = json.dumps(
                {
                    "error": "SystemExit: exit status %s" % (exc.code,),
                    "last_line": lines[-1] if lines else "",
                }
            )
        sys.stderr.write(err.getvalue())
        sys.stdout.write(out + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1], json.loads(sys.argv[2]))

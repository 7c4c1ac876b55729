#!/usr/bin/python3
"""Regenerate reactor/testdata/golden.json from a real Salt 3006 tree.

Run from the repository with:

    GSALT_SALT_SRC=/work/salt-src go test ./reactor -run TestGolden -update

or directly:

    PYTHONPATH=$GSALT_SALT_SRC:<pyshim> /usr/bin/python3 gen_golden.py OUT.json

For every case it writes the reactor SLS files into a scratch directory,
asks salt.utils.reactor.Reactor(opts).reactions(tag, data, reactors) for
the low chunks, then runs each chunk through a real ReactWrap whose clients
are recorders: the LocalClient is a real LocalClient whose pub() records
what would be published (so cmd_async/run_job/condition_input/_get_timeout
are Salt's own), the runner and wheel clients record low() calls (with the
real loaders' functions for the legacy format_call path), the Caller
records cmd(). The scratch directory is written as "$DIR" in the output.
Warnings and errors logged by salt.utils.reactor are recorded too.
"""
import inspect
import json
import logging
import os
import shutil
import sys
import tempfile

import salt.client
import salt.config
import salt.runner
import salt.utils.args
import salt.utils.reactor
import salt.wheel

STAMP = "2024-05-01T10:00:00.123456"

CASES = [
    # --- the reactor documentation's examples -----------------------------
    {
        "name": "doc_sync_grains",
        "tag": "salt/minion/m1/start",
        "data": {"id": "m1", "cmd": "_minion_event", "data": "Minion m1 started at Wed May  1 10:00:00 2024", "pretag": None},
        "files": {"sync_grains.sls": "sync_grains:\n  local.saltutil.sync_grains:\n    - tgt: {{ data['id'] }}\n"},
        "reactors": ["$DIR/sync_grains.sls"],
    },
    {
        "name": "doc_highstate_if_true",
        "tag": "salt/minion/mysql1/start",
        "data": {"id": "mysql1"},
        "files": {"start.sls": "{% if data['id'] == 'mysql1' %}\nhighstate_run:\n  local.state.apply:\n    - tgt: mysql1\n{% endif %}\n"},
        "reactors": ["$DIR/start.sls"],
    },
    {
        "name": "doc_highstate_if_false",
        "tag": "salt/minion/web1/start",
        "data": {"id": "web1"},
        "files": {"start.sls": "{% if data['id'] == 'mysql1' %}\nhighstate_run:\n  local.state.apply:\n    - tgt: mysql1\n{% endif %}\n"},
        "reactors": ["$DIR/start.sls"],
    },
    {
        "name": "doc_runit_orch",
        "tag": "myco/custom",
        "data": {"id": "m1", "data": {"custom_var": "runit"}},
        "files": {"runit.sls": "{% if data['data']['custom_var'] == 'runit' %}\ncall_runit_orch:\n  runner.state.orchestrate:\n    - args:\n      - mods: orchestrate.runit\n{% endif %}\n"},
        "reactors": ["$DIR/runit.sls"],
    },
    {
        "name": "doc_install_zsh_new",
        "tag": "install/zsh",
        "data": {},
        "files": {"zsh.sls": "install_zsh:\n  local.state.single:\n    - tgt: 'kernel:Linux'\n    - tgt_type: grain\n    - args:\n      - fun: pkg.installed\n      - name: zsh\n      - fromrepo: updates\n"},
        "reactors": ["$DIR/zsh.sls"],
    },
    {
        "name": "doc_install_zsh_old",
        "tag": "install/zsh",
        "data": {},
        "files": {"zsh.sls": "install_zsh:\n  local.state.single:\n    - tgt: 'kernel:Linux'\n    - tgt_type: grain\n    - arg:\n      - pkg.installed\n      - zsh\n    - kwarg:\n        fromrepo: updates\n"},
        "reactors": ["$DIR/zsh.sls"],
    },
    {
        "name": "doc_deploy_app_new",
        "tag": "foo",
        "data": {"data": {"bar": "baz"}},
        "files": {"deploy.sls": "deploy_app:\n  runner.state.orchestrate:\n    - args:\n      - mods: orchestrate.deploy_app\n      - pillar:\n          event_tag: {{ tag }}\n          event_data: {{ data['data']|json }}\n"},
        "reactors": ["$DIR/deploy.sls"],
    },
    {
        "name": "doc_deploy_app_old",
        "tag": "foo",
        "data": {"data": {"bar": "baz"}},
        "files": {"deploy.sls": "deploy_app:\n  runner.state.orchestrate:\n    - mods: orchestrate.deploy_app\n    - kwarg:\n        pillar:\n          event_tag: {{ tag }}\n          event_data: {{ data['data']|json }}\n"},
        "reactors": ["$DIR/deploy.sls"],
    },
    {
        "name": "doc_remove_key_new",
        "tag": "salt/auth",
        "data": {"id": "ink1", "result": False, "act": "reject"},
        "files": {"rm.sls": "remove_key:\n  wheel.key.delete:\n    - args:\n      - match: {{ data['id'] }}\n"},
        "reactors": ["$DIR/rm.sls"],
    },
    {
        "name": "doc_remove_key_old",
        "tag": "salt/auth",
        "data": {"id": "ink1", "result": False, "act": "reject"},
        "files": {"rm.sls": "remove_key:\n  wheel.key.delete:\n    - match: {{ data['id'] }}\n"},
        "reactors": ["$DIR/rm.sls"],
    },
    {
        "name": "doc_touch_file_new",
        "tag": "touch",
        "data": {},
        "files": {"touch.sls": "touch_file:\n  caller.file.touch:\n    - args:\n      - name: /tmp/foo\n"},
        "reactors": ["$DIR/touch.sls"],
    },
    {
        "name": "doc_touch_file_old",
        "tag": "touch",
        "data": {},
        "files": {"touch.sls": "touch_file:\n  caller.file.touch:\n    - args:\n      - /tmp/foo\n"},
        "reactors": ["$DIR/touch.sls"],
    },
    {
        "name": "doc_invoke_orchestrate",
        "tag": "my/custom/event",
        "data": {"foo": "Foo!", "bar": "bar*", "baz": "Baz!"},
        "files": {"some_event.sls": "invoke_orchestrate_file:\n  runner.state.orchestrate:\n    - args:\n        - mods: orchestrate.do_complex_thing\n        - pillar:\n            event_tag: {{ tag }}\n            event_data: {{ data|json }}\n"},
        "reactors": ["$DIR/some_event.sls"],
    },
    {
        "name": "doc_haproxy_new_minion",
        "tag": "salt/key",
        "data": {"act": "accept", "id": "web7", "result": True},
        "files": {"react_new_minion.sls": "{% if data['act'] == 'accept' and data['id'].startswith('web') %}\nadd_new_minion_to_pool:\n  local.state.apply:\n    - tgt: 'haproxy*'\n    - args:\n      - mods: haproxy.refresh_pool\n      - pillar:\n          new_minion: {{ data['id'] }}\n{% endif %}\n"},
        "reactors": ["$DIR/react_new_minion.sls"],
    },
    {
        "name": "doc_auth_pending_reject",
        "tag": "salt/auth",
        "data": {"result": False, "id": "ink3", "act": "reject", "pub": "-----BEGIN PUBLIC KEY-----"},
        "files": {"auth-pending.sls": "{# Ink server failed to authenticate -- remove accepted key #}\n{% if not data['result'] and data['id'].startswith('ink') %}\nminion_remove:\n  wheel.key.delete:\n    - args:\n      - match: {{ data['id'] }}\nminion_rejoin:\n  local.cmd.run:\n    - tgt: salt-master.domain.tld\n    - args:\n      - cmd: ssh -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no \"{{ data['id'] }}\" 'sleep 10 && /etc/init.d/salt-minion restart'\n{% endif %}\n\n{# Ink server is sending new key -- accept this key #}\n{% if 'act' in data and data['act'] == 'pend' and data['id'].startswith('ink') %}\nminion_add:\n  wheel.key.accept:\n    - args:\n      - match: {{ data['id'] }}\n{% endif %}\n"},
        "reactors": ["$DIR/auth-pending.sls"],
    },
    {
        "name": "doc_auth_pending_pend",
        "tag": "salt/auth",
        "data": {"result": True, "id": "ink3", "act": "pend", "pub": "-----BEGIN PUBLIC KEY-----"},
        "files": {"auth-pending.sls": "{% if not data['result'] and data['id'].startswith('ink') %}\nminion_remove:\n  wheel.key.delete:\n    - args:\n      - match: {{ data['id'] }}\n{% endif %}\n{% if 'act' in data and data['act'] == 'pend' and data['id'].startswith('ink') %}\nminion_add:\n  wheel.key.accept:\n    - args:\n      - match: {{ data['id'] }}\n{% endif %}\n"},
        "reactors": ["$DIR/auth-pending.sls"],
    },
    {
        "name": "doc_auth_complete",
        "tag": "salt/minion/ink3/start",
        "data": {"id": "ink3"},
        "files": {"auth-complete.sls": "{# When an Ink server connects, run state.apply. #}\nhighstate_run:\n  local.state.apply:\n    - tgt: {{ data['id'] }}\n    - ret: smtp\n"},
        "reactors": ["$DIR/auth-complete.sls"],
    },
    # --- local reactions ----------------------------------------------------
    {
        "name": "legacy_cmd_alias",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "uptime:\n  cmd.cmd.run:\n    - tgt: '*'\n    - arg:\n      - uptime\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "local_all_options",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "full:\n  local.test.arg:\n    - tgt: [m1, m2]\n    - tgt_type: list\n    - arg: [1, two, 20240501100000123456]\n    - kwarg: {k: v, n: 3}\n    - ret: smtp,syslog\n    - timeout: 30\n    - jid: '20240501100000999999'\n    - metadata: {origin: reactor}\n    - batch: '10%'\n    - expr_form: grain\n    - delimiter: ';'\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "local_timeout_forms",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "t_str:\n  local.test.ping:\n    - tgt: a\n    - timeout: '42'\nt_bad:\n  local.test.ping:\n    - tgt: b\n    - timeout: soon\nt_float:\n  local.test.ping:\n    - tgt: c\n    - timeout: 2.5\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "local_missing_tgt",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "no_target:\n  local.test.ping:\n    - arg: []\nshort_form: local.test.ping\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "local_args_wins_over_arg",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "both:\n  local.cmd.run:\n    - tgt: m1\n    - arg: [ignored]\n    - kwarg: {also: ignored}\n    - args:\n      - cmd: echo hi\n      - cwd: /tmp\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "local_args_shapes",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "scalars:\n  local.test.arg:\n    - tgt: m1\n    - args: [a, 2, 1.5, true]\ninline_dict:\n  local.test.arg:\n    - tgt: m2\n    - args: {x: 1, y: [1, 2]}\nbad_nested:\n  local.test.arg:\n    - tgt: m3\n    - args: [[1, 2]]\nbad_multikey:\n  local.test.arg:\n    - tgt: m4\n    - args:\n      - {a: 1, b: 2}\nempty_list:\n  local.test.arg:\n    - tgt: m5\n    - args: []\nyaml_string:\n  local.test.arg:\n    - tgt: m6\n    - args: '[{q: 1}]'\nempty_dict:\n  local.test.arg:\n    - tgt: m7\n    - args: {}\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "local_arg_shapes",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "arg_string:\n  local.test.arg:\n    - tgt: m1\n    - arg: abc\narg_map:\n  local.test.arg:\n    - tgt: m2\n    - arg: {p: 1, q: 2}\nkwarg_list:\n  local.test.arg:\n    - tgt: m3\n    - kwarg: [1, 2]\nempty_kwarg:\n  local.test.arg:\n    - tgt: m4\n    - kwarg: {}\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "local_listen_key",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "listen:\n  local.test.ping:\n    - tgt: m1\n    - listen: true\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "local_name_and_template",
        "tag": "app/web3/deployed",
        "data": {"id": "web3", "data": {"ver": 7}},
        "files": {"a.sls": "notify_{{ data['id'] }}:\n  local.cmd.run:\n    - name: custom-name\n    - tgt: {{ tag.split('/')[1] }}\n    - arg:\n      - echo {{ data['data']['ver'] }} {{ salt['test.ping']() }}\n"},
        "reactors": ["$DIR/a.sls"],
    },
    # --- runner reactions ---------------------------------------------------
    {
        "name": "runner_legacy_defaults",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "lj:\n  runner.jobs.list_jobs: []\nlj2:\n  runner.jobs.list_jobs:\n    - search_function: 'test.*'\n    - display_progress: true\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "runner_legacy_errors",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "unknown_kw:\n  runner.jobs.list_jobs:\n    - foo: bar\nmissing_required:\n  runner.jobs.lookup_jid:\n    - missing: true\nunavailable:\n  runner.nope.fn:\n    - a: 1\nkwarg_only:\n  runner.jobs.list_jobs:\n    - kwarg: {search_function: x}\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "runner_legacy_positional",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "lookup:\n  runner.jobs.lookup_jid:\n    - jid: '20240501100000123456'\n    - returned: false\nboth:\n  runner.nope.fn:\n    - arg: [x]\n    - kwarg: {y: 1}\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "runner_new_syntax",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "lj:\n  runner.jobs.list_jobs:\n    - args:\n      - search_function: 'test.*'\ninline:\n  runner.state.orchestrate:\n    - args: {mods: orch.x, saltenv: dev}\nscalar:\n  runner.jobs.list_jobs:\n    - args: [foo]\nextra_top:\n  runner.jobs.list_jobs:\n    - timeout: 3\n    - args:\n      - search_target: m1\n"},
        "reactors": ["$DIR/a.sls"],
    },
    # --- wheel and caller reactions ----------------------------------------
    {
        "name": "wheel_forms",
        "tag": "t",
        "data": {"id": "m9"},
        "files": {"a.sls": "acc:\n  wheel.key.accept:\n    - match: {{ data['id'] }}\n    - include_rejected: true\nall:\n  wheel.key.list_all: []\nempty_args:\n  wheel.key.delete:\n    - args: []\nunavailable:\n  wheel.nope.fn:\n    - x: 1\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "caller_forms",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "positional:\n  caller.cmd.run:\n    - args: [echo hi, /tmp]\nno_args:\n  caller.test.ping: []\ninline:\n  caller.file.touch:\n    - args: {name: /tmp/bar}\nempty:\n  caller.test.ping:\n    - args: []\nlegacy_arg:\n  caller.test.arg:\n    - arg: [1]\n    - kwarg: {k: 2}\n"},
        "reactors": ["$DIR/a.sls"],
    },
    # --- compilation: ordering, several files, errors -----------------------
    {
        "name": "order_and_names",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "zz_first:\n  local.test.ping:\n    - tgt: z\n    - order: first\naa_last:\n  local.test.ping:\n    - tgt: a\n    - order: last\nmm_ten:\n  local.test.ping:\n    - tgt: m\n    - order: 10\nnn_plain:\n  local.test.ping:\n    - tgt: n\nmany:\n  local.cmd.run:\n    - tgt: x\n    - names:\n      - echo one\n      - echo two:\n        - tgt: y\nneg:\n  local.test.ping:\n    - tgt: neg\n    - order: -1\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "several_files_glob_override",
        "tag": "multi/x",
        "data": {},
        "files": {
            "m/10-a.sls": "shared:\n  local.test.ping:\n    - tgt: from-a\nonly_a:\n  local.test.ping:\n    - tgt: a\n",
            "m/20-b.sls": "shared:\n  local.test.ping:\n    - tgt: from-b\n",
            "extra.sls": "only_extra:\n  runner.jobs.active: []\n",
        },
        "reactors": ["$DIR/m/*.sls", "$DIR/extra.sls", "$DIR/missing.sls"],
    },
    {
        "name": "bad_file_skipped",
        "tag": "t",
        "data": {},
        "files": {
            "bad.sls": "listy:\n  - 1\n  - 2\n",
            "nodot.sls": "plain: nodothere\n",
            "good.sls": "ok:\n  local.test.ping:\n    - tgt: m1\n",
            "list.sls": "- a\n- b\n",
        },
        "reactors": ["$DIR/bad.sls", "$DIR/nodot.sls", "$DIR/good.sls", "$DIR/list.sls"],
    },
    {
        "name": "verify_high_errors",
        "tag": "t",
        "data": {},
        "files": {
            "bad.sls": "ws:\n  local.cmd.run:\n    - tgt: m1\n    - 'echo hi'\n",
            "good.sls": "ok:\n  local.test.ping:\n    - tgt: m1\n",
        },
        "reactors": ["$DIR/good.sls", "$DIR/bad.sls"],
    },
    {
        "name": "verify_high_not_list",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "x:\n  local.test.ping:\n    tgt: m1\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "unknown_type_aborts",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "aa:\n  foo.bar:\n    - tgt: x\nbb:\n  local.test.ping:\n    - tgt: m1\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "two_functions_same_type",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "x:\n  local.test.ping:\n    - tgt: m1\n  local.cmd.run:\n    - tgt: m2\n    - arg: [uptime]\n"},
        "reactors": ["$DIR/a.sls"],
    },
    {
        "name": "json_shebang",
        "tag": "t",
        "data": {},
        "files": {"a.sls": "#!json\n{\"j\": {\"local.test.ping\": [{\"tgt\": \"m1\"}]}}\n"},
        "reactors": ["$DIR/a.sls"],
    },
]

FUNCTIONS = {"runner": set(), "wheel": set()}


class Recorder:
    def __init__(self):
        self.calls = []


class FakePool:
    def fire_async(self, fn, args=None, kwargs=None):
        fn(*(args or ()), **(kwargs or {}))
        return True


def make_local(opts, rec):
    class RecLocal(salt.client.LocalClient):
        def __init__(self):  # pylint: disable=super-init-not-called
            self.opts = opts

        def pub(self, tgt, fun, arg=(), tgt_type="glob", ret="", jid="", timeout=5, listen=False, **kwargs):
            rec.calls.append({
                "type": "local", "tgt": tgt, "fun": fun, "arg": list(arg), "tgt_type": tgt_type,
                "ret": ret, "jid": jid, "timeout": timeout, "kwargs": kwargs,
            })
            return {"jid": "20240501100000000001", "minions": ["m1"]}

        def _check_pub_data(self, pub_data, listen=True):
            return pub_data

    return RecLocal()


class RecClient:
    def __init__(self, kind, functions, rec):
        self.kind = kind
        self.functions = functions
        self.rec = rec

    def low(self, fun, low):
        FUNCTIONS[self.kind].add(fun)
        self.rec.calls.append({
            "type": self.kind, "fun": fun, "arg": list(low["arg"]), "kwarg": dict(low["kwarg"]),
            "user": low.get("__user__"),
        })


class RecCaller:
    def __init__(self, rec):
        self.rec = rec

    def cmd(self, fun, *args, **kwargs):
        self.rec.calls.append({"type": "caller", "fun": fun, "arg": list(args), "kwarg": kwargs})


class LogCapture(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append({"level": record.levelname, "msg": record.getMessage().split("\n")[0]})


def jsonable(v):
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def signature(fn):
    spec = salt.utils.args.get_function_argspec(fn)
    params = []
    ndef = len(spec.defaults or ())
    for i, name in enumerate(spec.args):
        j = i - (len(spec.args) - ndef)
        if j >= 0:
            params.append({"name": name, "default": jsonable(spec.defaults[j])})
        else:
            params.append({"name": name, "required": True})
    return {"params": params, "varkw": spec.keywords is not None}


def main(out):
    scratch = tempfile.mkdtemp(prefix="gsalt-reactor-golden-")
    try:
        conf = os.path.join(scratch, "etc")
        os.makedirs(conf)
        with open(os.path.join(conf, "master"), "w") as f:
            f.write("root_dir: {0}/root\nfile_roots: {{base: [{0}/srv]}}\nlog_level: error\n"
                    "enable_fqdns_grains: False\nipv6: False\nuser: root\n".format(scratch))
        opts = salt.config.master_config(os.path.join(conf, "master"))
        reactor = salt.utils.reactor.Reactor(opts)
        runner_funcs = salt.runner.RunnerClient(opts).functions
        wheel_funcs = salt.wheel.WheelClient(opts).functions
        cap = LogCapture()
        logging.getLogger("salt.utils.reactor").addHandler(cap)
        results = []
        for case in CASES:
            cdir = os.path.join(scratch, case["name"])
            for name, text in case["files"].items():
                p = os.path.join(cdir, name)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "w") as f:
                    f.write(text)
            reactors = [r.replace("$DIR", cdir) for r in case["reactors"]]
            data = dict(case["data"])
            data["_stamp"] = STAMP
            cap.records = []
            chunks = reactor.reactions(case["tag"], data, reactors)
            outcomes = []
            rec = Recorder()
            wrap = salt.utils.reactor.ReactWrap(opts)
            wrap.pool = FakePool()
            wrap.client_cache = {
                "local": make_local(opts, rec),
                "runner": RecClient("runner", runner_funcs, rec),
                "wheel": RecClient("wheel", wheel_funcs, rec),
                "caller": RecCaller(rec),
            }
            compile_logs = cap.records
            cap.records = []
            aborted = False
            for chunk in chunks:
                if aborted:
                    outcomes.append({"outcome": "skipped"})
                    continue
                before = len(rec.calls)
                cap.records = []
                try:
                    wrap.run(dict(chunk))
                except Exception as exc:  # what _call_reactions catches
                    outcomes.append({"outcome": "abort", "error": repr(exc)})
                    aborted = True
                    continue
                if len(rec.calls) > before:
                    call = rec.calls[-1]
                    o = {"outcome": "call", "call": call}
                    warn = [r["msg"] for r in cap.records if r["level"] == "WARNING"]
                    if warn:
                        o["warnings"] = warn
                    outcomes.append(o)
                else:
                    outcomes.append({"outcome": "error", "log": [r["msg"] for r in cap.records]})
            for ch in chunks:
                if ch.get("state") == "runner":
                    FUNCTIONS["runner"].add(ch["fun"])
                if ch.get("state") == "wheel":
                    FUNCTIONS["wheel"].add(ch["fun"])
            text = json.dumps({
                "name": case["name"], "tag": case["tag"], "data": data, "files": case["files"],
                "reactors": case["reactors"], "chunks": jsonable(chunks), "outcomes": jsonable(outcomes),
                "compile_log": [r["msg"] for r in compile_logs],
            })
            results.append(json.loads(text.replace(cdir, "$DIR")))
        sigs = {"runner": {}, "wheel": {}}
        for kind, funcs in (("runner", runner_funcs), ("wheel", wheel_funcs)):
            for fun in sorted(FUNCTIONS[kind]):
                fn = funcs.get(fun)
                if fn is not None:
                    sigs[kind][fun] = signature(fn)
        with open(out, "w") as f:
            json.dump({"generator": "reactor/testdata/gen_golden.py", "signatures": sigs, "cases": results},
                      f, indent=1, sort_keys=True)
            f.write("\n")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "golden.json")

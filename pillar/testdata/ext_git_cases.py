# Writes ext_git_cases.json: the git ext_pillar cases (Salt's
# salt/pillar/git_pillar.py over salt.utils.gitfs.GitPillar with GitPython)
# that TestGitExtPillarGolden compiles, on the local bare repositories
# git/mkrepos.sh creates in @GITDIR@.
import json

cases = []


def case(name, ep, minion="web1", **kw):
    c = {"name": name, "minion": minion, "ext_pillar": ep}
    c.update(kw)
    cases.append(c)


BASE = "file://@GITDIR@/base.git"
SECOND = "file://@GITDIR@/second.git"
ENVS = "file://@GITDIR@/envs.git"
case("git_simple", [{"git": ["master " + BASE]}])
case("git_simple_db1", [{"git": ["master " + BASE]}], minion="db1")
case("git_string_arg", [{"git": "master " + BASE}])
case("git_branch_dev", [{"git": ["dev " + BASE]}])
case("git_tag", [{"git": ["v1 " + BASE]}])
case("git_two_remotes", [{"git": ["master " + BASE, "master " + SECOND]}])
case("git_two_remotes_merge_lists", [{"git": ["master " + BASE, "master " + SECOND]}], opts={"pillar_merge_lists": True})
case("git_two_entries", [{"git": ["master " + SECOND]}, {"git": ["master " + BASE]}])
case("git_root", [{"git": [{"master " + BASE: [{"root": "sub"}]}]}])
case("git_root_missing", [{"git": [{"master " + BASE: [{"root": "nope"}]}, "master " + SECOND]}])
case("git_env_param", [{"git": [{"master " + BASE: [{"env": "dev"}]}]}])
case("git_env_param_dunder", [{"git": [{"master " + ENVS: [{"env": "__env__"}]}]}], pillarenv="prod")
case("git_dunder_env_base", [{"git": ["__env__ " + ENVS]}])
case("git_dunder_env_pillarenv", [{"git": ["__env__ " + ENVS]}], pillarenv="dev")
case("git_dunder_env_base_param", [{"git": [{"__env__ " + ENVS: [{"base": "prod"}]}]}])
case("git_dunder_all_saltenvs", [{"git": [{"__env__ " + ENVS: [{"all_saltenvs": "dev"}]}]}], pillarenv="prod")
case("git_dunder_fallback", [{"git": [{"__env__ " + ENVS: [{"fallback": "prod"}]}]}], pillarenv="qa")
case("git_dunder_no_branch", [{"git": ["__env__ " + ENVS]}], pillarenv="qa")
case("git_pillarenv_selects", [{"git": ["master " + BASE, "dev " + BASE]}], pillarenv="dev")
case("git_pillarenv_excludes", [{"git": ["master " + BASE]}], pillarenv="dev")
case("git_branch_missing", [{"git": ["nope " + BASE, "master " + SECOND]}])
case("git_bad_url", [{"git": ["master file://@GITDIR@/missing.git"]}])
case("git_invalid_param", [{"git": [{"master " + BASE: [{"bogus": 1}]}]}])
case("git_auth_param", [{"git": [{"master " + BASE: [{"user": "u"}]}]}])
case("git_base_without_env", [{"git": [{"master " + BASE: [{"base": "dev"}]}]}])
case("git_empty_per_remote", [{"git": [{"master " + BASE: []}]}])
case("git_duplicate_remote", [{"git": ["master " + BASE, "master " + BASE]}])
case("git_duplicate_named", [{"git": ["master " + BASE, {"master " + BASE: [{"name": "other"}]}]}])
case("git_name_param", [{"git": [{"master " + SECOND: [{"name": "custom"}]}]}])
case("git_mountpoint_included", [{"git": ["master file://@GITDIR@/usesmount.git", {"master file://@GITDIR@/mounted.git": [{"mountpoint": "salt://a/b"}]}]}])
case("git_mountpoint_not_included", [{"git": ["master file://@GITDIR@/usesmount.git", {"master file://@GITDIR@/mounted.git": [{"mountpoint": "a/b"}]}]}], opts={"git_pillar_includes": False})
case("git_includes_same_env", [{"git": ["master " + SECOND, "master " + BASE]}], opts={"git_pillar_includes": True})
case("git_global_branch", [{"git": [BASE]}], opts={"git_pillar_branch": "dev"})
case("git_global_root", [{"git": ["master " + BASE]}], opts={"git_pillar_root": "sub"})
case("git_global_env", [{"git": ["master " + SECOND]}], opts={"git_pillar_env": "dev"})
case("git_global_base", [{"git": ["__env__ " + ENVS]}], opts={"git_pillar_base": "prod"})
case("git_with_roots", [{"git": ["master " + SECOND]}], roots=True)
case("git_with_roots_ext_first", [{"git": ["master " + SECOND]}], roots=True, opts={"ext_pillar_first": True})
case("git_kwargs", [{"git": {"master": BASE}}])
case("git_no_remotes", [{"git": []}])
YX = "master file://@GITDIR@/yamlex.git"
case("git_yamlex_recurse", [{"git": [YX]}])
case("git_yamlex_aggregate", [{"git": [YX]}], opts={"pillar_source_merging_strategy": "aggregate"})
case("git_yamlex_smart_renderer", [{"git": [YX]}], opts={"renderer": "jinja|yamlex"})
case("git_per_remote_branch", [{"git": [{"master " + BASE: [{"branch": "dev"}]}]}])
case("git_global_fallback", [{"git": ["__env__ " + ENVS]}], pillarenv="qa", opts={"git_pillar_fallback": "dev"})
case("git_ssl_verify_refspecs", [{"git": [{"master " + SECOND: [{"ssl_verify": False}, {"refspecs": ["+refs/heads/*:refs/remotes/origin/*"]}]}]}])
case("git_tag_refspec_missing", [{"git": [{"v1 " + BASE: [{"refspecs": "+refs/heads/*:refs/remotes/origin/*"}]}]}])
case("git_list_remote", [{"git": [["master", BASE]]}])
# __env__ following the minion's saltenv when no pillarenv is asked for
case("git_dunder_env_saltenv", [{"git": ["__env__ " + ENVS]}], saltenv="dev")
case("git_dunder_env_saltenv_pillarenv", [{"git": ["__env__ " + ENVS]}], saltenv="dev", pillarenv="prod")
case("git_dunder_env_saltenv_fallback", [{"git": [{"__env__ " + ENVS: [{"fallback": "prod"}]}]}], saltenv="qa")
case("git_dunder_env_saltenv_missing", [{"git": ["__env__ " + ENVS]}], saltenv="qa")
case("git_fixed_branches_saltenv", [{"git": ["master " + BASE, "dev " + BASE]}], saltenv="dev")
case("git_dunder_env_pillarenv_from_saltenv", [{"git": ["__env__ " + ENVS, "master " + BASE]}], saltenv="prod", opts={"pillarenv_from_saltenv": True})
case("git_dunder_env_two_remotes_saltenv", [{"git": ["__env__ " + ENVS, {"__env__ " + BASE: [{"base": "dev"}]}]}], saltenv="dev")

spec = json.load(open("ext_cases.json"))
spec["cases"] = cases
with open("ext_git_cases.json", "w") as f:
    json.dump(spec, f, indent=1)
    f.write("\n")

package builtin_test

import (
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// cfnGetOnlyOpts is an Options that cannot list its keys.
type cfnGetOnlyOpts struct{ m *payload.Map }

func (g cfnGetOnlyOpts) Get(key string) (any, bool) { return g.m.Get(key) }

func cfnConfigEnv() *modules.Env {
	return &modules.Env{
		Opts: payload.NewMap(
			"id", "m1",
			"shared", "from-opts",
			"nested", payload.NewMap("a", payload.NewMap("b", "opts-b")),
			"merged", payload.NewMap("o", int64(1), "both", "opts"),
			"lst", []any{"o1"},
			"redis.host", "opts-redis",
			"sdbish", "sdb://nowhere/key",
		),
		Grains: payload.NewMap(
			"os", "Debian",
			"shared", "from-grains",
			"ports", []any{int64(80), payload.NewMap("name", "https", "port", int64(443))},
			"merged", payload.NewMap("g", int64(2), "both", "grains"),
			"numkeys", payload.NewMap(int64(80), "http"),
		),
		Pillar: payload.NewMap(
			"role", "web",
			"shared", "from-pillar",
			"merged", payload.NewMap("p", int64(3), "both", "pillar", "deep", payload.NewMap("x", int64(1))),
			"lst", []any{"p1"},
			"master", payload.NewMap(
				"only_master", "m",
				"merged", payload.NewMap("m", int64(4), "both", "master", "deep", payload.NewMap("y", int64(2))),
				"lst", []any{"m1"},
				"redis.port", int64(1234),
				"redis.db", "9",
			),
		),
	}
}

func TestConfigGet(t *testing.T) {
	tests := []struct {
		name string
		args []any
		want any
	}{
		{"opts first", []any{"shared"}, "from-opts"},
		{"grains", []any{"os"}, "Debian"},
		{"pillar", []any{"role"}, "web"},
		{"master", []any{"only_master"}, "m"},
		{"defaults", []any{"test.foo"}, "unconfigured"},
		{"defaults nested", []any{"virt:images"}, "/srv/salt-images"},
		{"missing", []any{"nope"}, ""},
		{"missing with default", []any{"nope", "dflt"}, "dflt"},
		{"missing default kwarg", []any{"nope", kw("default", int64(5))}, int64(5)},
		{"nested", []any{"nested:a:b"}, "opts-b"},
		{"delimiter", []any{"nested/a/b", kw("delimiter", "/")}, "opts-b"},
		{"list index", []any{"ports:0"}, int64(80)},
		{"list of dicts", []any{"ports:port"}, int64(443)},
		{"yaml key", []any{"numkeys:80"}, "http"},
		{"omit_opts", []any{"shared", kw("omit_opts", true)}, "from-grains"},
		{"omit opts and grains", []any{"shared", kw("omit_opts", true, "omit_grains", true)}, "from-pillar"},
		{"omit_master", []any{"only_master", kw("omit_master", true)}, ""},
		{"sdb left as is", []any{"sdbish"}, "sdb://nowhere/key"},
		{"merge recurse", []any{"merged", kw("merge", "recurse")},
			payload.NewMap("m", int64(4), "both", "opts", "deep", payload.NewMap("y", int64(2), "x", int64(1)), "p", int64(3), "g", int64(2), "o", int64(1))},
		{"merge recurse nested", []any{"merged:deep", kw("merge", "recurse")}, payload.NewMap("y", int64(2), "x", int64(1))},
		{"merge overwrite", []any{"merged", kw("merge", "overwrite")}, payload.NewMap("o", int64(1), "both", "opts")},
		{"merge lists replaced", []any{"lst", kw("merge", "recurse")}, []any{"o1"}},
		{"merge unknown falls back to recurse", []any{"merged:deep:x", kw("merge", "bogus")}, int64(1)},
		{"merge missing", []any{"nope", "d", kw("merge", "recurse")}, "d"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := cfnRun(t, cfnConfigEnv(), "config.get", tc.args, nil)
			if res.Retcode != 0 {
				t.Fatalf("retcode %d: %#v", res.Retcode, res.Return)
			}
			if d := vectors.Equal(res.Return, tc.want); d != "" {
				t.Fatalf("return %#v: %s", res.Return, d)
			}
		})
	}
	// Options that only answer Get still serve top-level and nested keys.
	env := cfnConfigEnv()
	env.Opts = cfnGetOnlyOpts{env.Opts.(*payload.Map)}
	for key, want := range map[string]any{"nested:a:b": "opts-b", "shared": "from-opts", "merged:o": int64(1)} {
		if res := cfnRun(t, env, "config.get", []any{key, kw("merge", "recurse")}, nil); vectors.Equal(res.Return, want) != "" {
			t.Errorf("get-only opts %s: %#v", key, res.Return)
		}
		if res := cfnRun(t, env, "config.get", []any{key}, nil); vectors.Equal(res.Return, want) != "" {
			t.Errorf("get-only opts %s: %#v", key, res.Return)
		}
	}
	// no data at all
	if res := cfnRun(t, nil, "config.get", []any{"x:y", "z"}, nil); res.Return != "z" {
		t.Fatalf("empty env: %#v", res.Return)
	}
}

func TestConfigOption(t *testing.T) {
	tests := []struct {
		name string
		fun  string
		args []any
		want any
	}{
		{"opts", "config.option", []any{"redis.host"}, "opts-redis"},
		{"master", "config.option", []any{"redis.port"}, int64(1234)},
		{"defaults", "config.option", []any{"redis.db", kw("omit_master", true)}, "0"},
		{"omit_all", "config.option", []any{"redis.host", kw("omit_all", true)}, "salt"},
		{"no recursion", "config.option", []any{"nested:a"}, ""},
		{"default", "config.option", []any{"nope", "d"}, "d"},
		{"wildcard", "config.option", []any{"redis.*", kw("wildcard", true)},
			payload.NewMap("redis.port", int64(1234), "redis.db", "9", "redis.host", "opts-redis")},
		{"wildcard omit_all", "config.option", []any{"ldap.p*", kw("wildcard", true, "omit_all", true)}, payload.NewMap("ldap.port", "389")},
		{"wildcard none", "config.option", []any{"zzz*", kw("wildcard", true)}, payload.NewMap()},
		{"merge dicts", "config.merge", []any{"merged"},
			payload.NewMap("p", int64(3), "both", "opts", "deep", payload.NewMap("y", int64(2)), "m", int64(4), "o", int64(1))},
		{"merge lists", "config.merge", []any{"lst"}, []any{"o1", "m1", "p1"}},
		{"merge string wins", "config.merge", []any{"shared"}, "from-opts"},
		{"merge defaults", "config.merge", []any{"test.foo"}, "unconfigured"},
		{"merge default", "config.merge", []any{"nope", "d"}, "d"},
		{"dot_vals", "config.dot_vals", []any{"redis"}, payload.NewMap("redis.port", int64(1234), "redis.db", "9", "redis.host", "opts-redis")},
		{"valid_fileproto salt", "config.valid_fileproto", []any{"salt://top.sls"}, true},
		{"valid_fileproto https", "config.valid_fileproto", []any{"HTTPS://x"}, true},
		{"valid_fileproto path", "config.valid_fileproto", []any{"/srv/salt"}, false},
		{"valid_fileproto other", "config.valid_fileproto", []any{"git://x"}, false},
		{"backup_mode", "config.backup_mode", []any{"minion"}, "minion"},
		{"backup_mode option", "config.backup_mode", nil, ""},
		{"manage_mode", "config.manage_mode", []any{int64(644)}, "0644"},
		{"manage_mode none", "config.manage_mode", []any{nil}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := cfnRun(t, cfnConfigEnv(), tc.fun, tc.args, nil)
			if res.Retcode != 0 {
				t.Fatalf("retcode %d: %#v", res.Retcode, res.Return)
			}
			if d := vectors.Equal(res.Return, tc.want); d != "" {
				t.Fatalf("return %#v: %s", res.Return, d)
			}
		})
	}
}

func TestConfigItems(t *testing.T) {
	env := cfnConfigEnv()
	res := cfnRun(t, env, "config.items", nil, nil)
	m, ok := res.Return.(*payload.Map)
	if !ok || strings.Join(m.Keys(), ",") != strings.Join(env.Opts.(*payload.Map).Keys(), ",") {
		t.Fatalf("items %#v", res.Return)
	}
	env.Opts = cfnGetOnlyOpts{env.Opts.(*payload.Map)}
	if res := cfnRun(t, env, "config.items", nil, nil); res.Return.(*payload.Map).Len() != 0 {
		t.Fatalf("get-only items %#v", res.Return)
	}
}

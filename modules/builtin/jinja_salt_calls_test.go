package builtin_test

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// jinjaCall renders tmpl through slsutil.renderer's jinja renderer, where
// salt['mod.fun'](...) runs the execution functions of the registry (Salt's
// loader in the golden).
func jinjaCall(name, tmpl string) salttest.Call {
	return salttest.Call{Name: name, Fun: "slsutil.renderer", Kwargs: []any{"string", tmpl, "default_renderer", "jinja"}}
}

// TestJinjaSaltCallsGolden: template values crossing into execution
// functions through salt['mod.fun'](...) and back keep what Python keeps:
// tuples stay tuples (also inside lists and dicts and as dict keys), dict
// keys that are bools, None or ints stay so, and the returned value renders
// as Salt's does (testdata/golden/jinja_salt_calls.json, made by Salt 3006's
// loader rendering the same templates).
func TestJinjaSaltCallsGolden(t *testing.T) {
	runSuite(t, salttest.Suite{
		Name: "jinja_salt_calls",
		Srv:  formulaTree,
		Calls: []salttest.Call{
			jinjaCall("test.arg tuple", "{{ salt['test.arg']((1, 2)) }}"),
			jinjaCall("test.arg nested tuples", "{{ salt['test.arg']([(1, 2), [3]], {'t': (4, (5,)), 'l': [6]}) }}"),
			jinjaCall("test.arg tuple keys", "{{ salt['test.arg']({(1, 2): 'a', 'b': {(3,): 'c'}}) }}"),
			jinjaCall("test.arg other keys", "{{ salt['test.arg']({True: 't', None: 'n', 1: 'i', 2.5: 'f', 'k': 's'}) }}"),
			jinjaCall("test.arg kwargs tuple", "{{ salt['test.arg'](k=(1, 2), d={(1,): ()}) }}"),
			jinjaCall("test.arg empty tuple", "{{ salt['test.arg'](()) }}"),
			jinjaCall("test.arg tuple is not list", "{% set r = salt['test.arg']((1, 2)) %}{{ r.args[0] is sequence }}|{{ r.args[0]|string }}|{{ r.args[0] == [1, 2] }}|{{ r.args[0] == (1, 2) }}"),
			jinjaCall("test.echo tuple", "{{ salt['test.echo']((1, 2)) }}"),
			jinjaCall("slsutil.merge tuples", "{{ salt['slsutil.merge']({'a': (1, 2), (1, 2): 'k', 'n': {'x': (3,)}}, {'b': (4,), 'n': {'y': (5, 6)}}) }}"),
			jinjaCall("slsutil.merge tuple keys both", "{{ salt['slsutil.merge']({(1, 2): 'a'}, {(1, 2): 'b', (3,): 'c'}) }}"),
			jinjaCall("slsutil.merge int keys", "{{ salt['slsutil.merge']({1: 'a', True: 'b'}, {1: 'c', None: 'd'}) }}"),
			jinjaCall("slsutil.merge_all tuples", "{{ salt['slsutil.merge_all']([{'a': (1,)}, {'b': (2, 3), (4,): 5}]) }}"),
			jinjaCall("slsutil.update tuples", "{% set d = {'a': (1, 2), (7,): 'x'} %}{% do salt['slsutil.update'](d, {'b': (3,)}) %}{{ d }}"),
			jinjaCall("defaults.merge tuples", "{% set d = {'a': (1, 2), (7,): 'x'} %}{% do salt['defaults.merge'](d, {'b': (3,), 'a': (9,)}) %}{{ d }}"),
			jinjaCall("defaults.merge returns", "{{ salt['defaults.merge']({'a': (1, 2)}, {(5, 6): (3,)}, in_place=False) }}"),
			jinjaCall("defaults.deepcopy tuple", "{{ salt['defaults.deepcopy']({'a': (1, [2]), (1, 2): 'k'}) }}"),
			jinjaCall("serialize yaml tuple", "{{ salt['slsutil.serialize']('yaml', {'a': (1, 2), 'b': [(3, 4)]}) }}"),
			jinjaCall("serialize json tuple", "{{ salt['slsutil.serialize']('json', {'a': (1, 2), 'b': [(3, 4)]}) }}"),
			jinjaCall("serialize yaml tuple key", "{{ salt['slsutil.serialize']('yaml', {(1, 2): 'a'}) }}"),
			jinjaCall("grains.filter_by tuple", "{{ salt['grains.filter_by']({'Debian': {'pkgs': ('a', 'b')}, 'default': {'pkgs': ()}}) }}"),
			jinjaCall("grains.filter_by tuple default", "{{ salt['grains.filter_by']({'Nope': (1,), 'default': ('d', 'e')}, grain='os_family') }}"),
			jinjaCall("grains.filter_by merge tuple", "{{ salt['grains.filter_by']({'Debian': {'a': (1,)}}, merge={'b': (2, 3)}) }}"),
			jinjaCall("pillar.get default tuple", "{{ salt['pillar.get']('nope', (1, 2)) }}"),
			jinjaCall("config.get default tuple", "{{ salt['config.get']('nope', default=(1, 2)) }}"),
			jinjaCall("serialize json other keys", "{{ salt['slsutil.serialize']('json', {True: 1, None: 2, 3: 3, 2.5: 4}) }}"),
			jinjaCall("serialize yaml other keys", "{{ salt['slsutil.serialize']('yaml', {True: 1, None: 2, 3: 3, 2.5: 4, (1, (2,)): 5}) }}"),
			jinjaCall("test.arg args tuple ops", "{% set r = salt['test.arg'](1, 'a') %}{{ r.args + (2,) }}|{{ r.args|length }}|{{ r.args[-1] }}|{{ r.args|tojson }}"),
			jinjaCall("tuple loop back", "{% for x in salt['test.arg']((1, 2), ('a',)).args %}{{ x }};{% endfor %}"),
			jinjaCall("tuple key lookup back", "{% set r = salt['test.echo']({(1, 2): 'k'}) %}{{ r[(1, 2)] }}|{{ r|list }}"),
		},
	})
}

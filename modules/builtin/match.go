package builtin

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// matchFunctions is Salt's match module (salt/modules/match.py): the
// minion-side matchers for templates and formulas (match.grain,
// match.compound, match.filter_by, ...). As in Salt a matcher error is
// logged and counts as no match.
func matchFunctions() []modules.Function {
	idSpec := modules.Spec{Params: []modules.Param{req("tgt"), opt("minion_id", nil)}}
	delimSpec := modules.Spec{Params: []modules.Param{req("tgt"), opt("delimiter", target.DefaultDelimiter)}}
	fns := []modules.Function{
		{Name: "match.compound", Spec: idSpec, Fn: matchFn("compound"),
			Doc: "Return True if the minion ID matches the given compound target\n\nminion_id\n    Specify the minion ID to match against the target expression\n\nCLI Example:\n\n    salt '*' match.compound 'L@cheese,foo and *'"},
		{Name: "match.ipcidr", Spec: modules.Spec{Params: []modules.Param{req("tgt")}}, Fn: matchFn("ipcidr"),
			Doc: "Return True if the minion matches the given ipcidr target\n\nCLI Example:\n\n    salt '*' match.ipcidr '192.168.44.0/24'"},
		{Name: "match.pillar_pcre", Spec: delimSpec, Fn: matchFn("pillar_pcre"),
			Doc: "Return True if the minion matches the given pillar_pcre target. The\n``delimiter`` argument can be used to specify a different delimiter.\n\nCLI Example:\n\n    salt '*' match.pillar_pcre 'cheese:(swiss|american)'"},
		{Name: "match.pillar", Spec: delimSpec, Fn: matchFn("pillar"),
			Doc: "Return True if the minion matches the given pillar target. The\n``delimiter`` argument can be used to specify a different delimiter.\n\nCLI Example:\n\n    salt '*' match.pillar 'cheese:foo'\n    salt '*' match.pillar 'clone_url|https://github.com/saltstack/salt.git' delimiter='|'"},
		{Name: "match.grain_pcre", Spec: delimSpec, Fn: matchFn("grain_pcre"),
			Doc: "Return True if the minion matches the given grain_pcre target. The\n``delimiter`` argument can be used to specify a different delimiter.\n\nCLI Example:\n\n    salt '*' match.grain_pcre 'os:Fedo.*'"},
		{Name: "match.grain", Spec: delimSpec, Fn: matchFn("grain"),
			Doc: "Return True if the minion matches the given grain target. The ``delimiter``\nargument can be used to specify a different delimiter.\n\nCLI Example:\n\n    salt '*' match.grain 'os:Ubuntu'\n    salt '*' match.grain 'ipv6|2001:db8::ff00:42:8329' delimiter='|'"},
		{Name: "match.list", Spec: idSpec, Fn: matchFn("list"),
			Doc: "Return True if the minion ID matches the given list target\n\nminion_id\n    Specify the minion ID to match against the target expression\n\nCLI Example:\n\n    salt '*' match.list 'server1,server2'"},
		{Name: "match.pcre", Spec: idSpec, Fn: matchFn("pcre"),
			Doc: "Return True if the minion ID matches the given pcre target\n\nminion_id\n    Specify the minion ID to match against the target expression\n\nCLI Example:\n\n    salt '*' match.pcre '.*'"},
		{Name: "match.glob", Spec: idSpec, Fn: matchFn("glob"),
			Doc: "Return True if the minion ID matches the given glob target\n\nminion_id\n    Specify the minion ID to match against the target expression\n\nCLI Example:\n\n    salt '*' match.glob '*'"},
		{Name: "match.data", Spec: modules.Spec{Params: []modules.Param{req("tgt")}},
			Doc: "Return True if the minion matches the given data target\n\nCLI Example:\n\n    salt '*' match.data 'spam:eggs'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				// Salt 3006's data matcher calls data.getval, which the data
				// module does not have: the KeyError is logged and the
				// target never matches. gsalt keeps that behaviour.
				c.Log().Error("match.data: KeyError: 'data.getval'", "tgt", pyfmt.Str(c.Args.Get("tgt")))
				return false, nil
			}},
		{Name: "match.filter_by", Spec: modules.Spec{Params: []modules.Param{req("lookup"), opt("tgt_type", "compound"), opt("minion_id", nil),
			opt("merge", nil), opt("merge_lists", false), opt("default", "default")}},
			Doc: "Return the first match in a dictionary of target patterns\n\nCLI Example:\n\n    salt '*' match.filter_by '{foo*: Foo!, bar*: Bar!}' minion_id=bar03\n\nPillar Example:\n\n    {% set roles = salt['match.filter_by']({\n        'web*': ['app', 'caching'],\n        'db*': ['db'],\n    }, minion_id=grains['id'], default='web*') %}",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return matchFilterBy(c, c.Args.Get("lookup"), c.Args.Str("tgt_type"), c.Args.Get("minion_id"), c.Args.Get("merge"), argsBool(c, "merge_lists"), c.Args.Get("default"))
			}},
		{Name: "match.search_by", Spec: modules.Spec{Params: []modules.Param{req("lookup"), opt("tgt_type", "compound"), opt("minion_id", nil)}},
			Doc: "Search a dictionary of target strings for matching targets\n\nThis is the inverse of match.filter_by and allows matching values instead of\nmatching keys. A minion can be matched by multiple entries.\n\nCLI Example:\n\n    salt '*' match.search_by '{web: [node1, node2], db: [node2, node]}'",
			Fn:  matchSearchBy},
		{Name: "match.ifelse", Spec: modules.Spec{Varargs: true, Kwargs: true},
			Doc: "Evaluate each pair of arguments up to the last one as a (matcher, value)\ntuple, returning ``value`` if matched.  If none match, returns the last\nargument.\n\nCLI Example:\n\n    salt '*' match.ifelse 'foo*' 'Foo!' 'bar*' 'Bar!' minion_id=bar03",
			Fn:  matchIfelse},
	}
	return fns
}

// matchTypes maps the match module's function names (what filter_by's
// tgt_type names) to target types; the second parameter of the first
// group is minion_id, of the second the delimiter.
var (
	matchIDTypes    = map[string]string{"compound": target.TypeCompound, "list_": target.TypeList, "list": target.TypeList, "pcre": target.TypePCRE, "glob": target.TypeGlob}
	matchDelimTypes = map[string]string{"grain": target.TypeGrain, "grain_pcre": target.TypeGrainPCRE, "pillar": target.TypePillar, "pillar_pcre": target.TypePillarPCRE}
)

func matchFn(kind string) modules.Func {
	return func(_ context.Context, c *modules.Call) (any, error) {
		var second any
		switch {
		case kind == "ipcidr":
		case matchDelimTypes[kind] != "":
			second = c.Args.Get("delimiter")
		default:
			second = c.Args.Get("minion_id")
		}
		if kind == "ipcidr" && !matchValidCIDR(c.Args.Get("tgt")) {
			// Salt's ipcidr matcher returns an empty list for a bad target.
			c.Log().Error("Invalid IP/CIDR target: " + pyfmt.Str(c.Args.Get("tgt")))
			return []any{}, nil
		}
		return matchOne(c, kind, c.Args.Get("tgt"), second), nil
	}
}

// matchValidCIDR reports whether tgt is an IP address or network.
func matchValidCIDR(tgt any) bool {
	s, ok := tgt.(string)
	if !ok {
		return false
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		// Python's ip_network is strict: no host bits.
		return p.Masked() == p
	}
	return false
}

// matchOne runs the match function kind with tgt and its second
// argument (minion_id or delimiter), false on any matcher error.
func matchOne(c *modules.Call, kind string, tgt, second any) bool {
	mn := target.Minion{}
	if c.Env != nil {
		mn.ID = c.Env.ID
		if c.Env.Grains != nil {
			mn.Grains = c.Env.Grains
		}
		if c.Env.Pillar != nil {
			mn.Pillar = c.Env.Pillar
		}
		if c.Env.Opts != nil {
			if v, ok := c.Env.Opts.Get("id"); ok && payload.Text(v) != "" {
				mn.ID = payload.Text(v)
			}
		}
	}
	if mn.Grains == nil {
		mn.Grains = &payload.Map{}
	}
	if mn.Pillar == nil {
		mn.Pillar = &payload.Map{}
	}
	m := target.New(target.Options{Logger: c.Log()})
	delimiter := target.DefaultDelimiter
	tt := kind
	if t, ok := matchIDTypes[kind]; ok {
		tt = t
		if payload.Truthy(second) {
			mn.ID = pyfmt.Str(second)
		}
	} else if t, ok := matchDelimTypes[kind]; ok {
		tt = t
		if second != nil {
			delimiter = pyfmt.Str(second)
		}
	}
	ok, err := m.Match(tgt, tt, delimiter, mn)
	if err != nil {
		c.Log().Error("match failed", "tgt", pyfmt.Str(tgt), "type", kind, "err", err)
		return false
	}
	return ok
}

// matchByType runs filter_by's tgt_type function on key.
func matchByType(c *modules.Call, tgtType string, key, minionID any) (bool, error) {
	_, isID := matchIDTypes[tgtType]
	_, isDelim := matchDelimTypes[tgtType]
	if tgtType == "list" {
		isID = false
	}
	switch {
	case isID, isDelim:
		if !payload.Truthy(minionID) {
			minionID = nil
		}
		return matchOne(c, tgtType, key, minionID), nil
	case tgtType == "ipcidr":
		if payload.Truthy(minionID) {
			return false, fmt.Errorf("%w: ipcidr() takes 1 positional argument but 2 were given", modules.ErrArguments)
		}
		return matchOne(c, tgtType, key, nil), nil
	}
	return false, fmt.Errorf("KeyError: %s", pyfmt.Repr(tgtType))
}

func matchFilterBy(c *modules.Call, lookupV any, tgtType string, minionID, merge any, mergeLists bool, def any) (any, error) {
	lookup, ok := lookupV.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("AttributeError: '%s' object has no attribute 'get'", payload.TypeName(lookupV))
	}
	for _, it := range lookup.Items() {
		ok, err := matchByType(c, tgtType, it.Key, minionID)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if payload.Truthy(merge) {
			if _, isMap := merge.(*payload.Map); !isMap {
				return nil, errors.New("salt.exceptions.SaltException: filter_by merge argument must be a dictionary.")
			}
			if it.Value == nil {
				return merge, nil
			}
			if _, err := dictUpdate(it.Value, payload.DeepClone(merge), true, mergeLists); err != nil {
				return nil, err
			}
		}
		return it.Value, nil
	}
	v, _ := lookup.GetKey(def)
	return v, nil
}

func matchSearchBy(_ context.Context, c *modules.Call) (any, error) {
	lookup, ok := c.Args.Get("lookup").(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("AttributeError: '%s' object has no attribute 'items'", payload.TypeName(c.Args.Get("lookup")))
	}
	var matches []any
	for _, it := range lookup.Items() {
		var targets []any
		switch tl := it.Value.(type) {
		case []any:
			targets = tl
		case string:
			for _, r := range tl {
				targets = append(targets, string(r))
			}
		case *payload.Map:
			for _, k := range tl.Items() {
				targets = append(targets, k.Key)
			}
		default:
			return nil, fmt.Errorf("%w: '%s' object is not iterable", modules.ErrArguments, payload.TypeName(it.Value))
		}
		for _, tgt := range targets {
			ok, err := matchByType(c, c.Args.Str("tgt_type"), tgt, c.Args.Get("minion_id"))
			if err != nil {
				return nil, err
			}
			if ok {
				matches = append(matches, it.Key)
			}
		}
	}
	if len(matches) == 0 {
		return nil, nil
	}
	return matches, nil
}

func matchIfelse(_ context.Context, c *modules.Call) (any, error) {
	args := c.Args.Varargs
	kw := c.Args.CleanKwargs()
	for _, k := range kw.Keys() {
		switch k {
		case "tgt_type", "minion_id", "merge", "merge_lists":
		default:
			return nil, fmt.Errorf("%w: ifelse() got an unexpected keyword argument '%s'", modules.ErrArguments, k)
		}
	}
	if len(args)%2 == 0 {
		return nil, errors.New("salt.exceptions.SaltException: The ifelse function must have an odd number of arguments!")
	}
	if len(args) == 1 {
		return args[0], nil
	}
	const defKey = "SALT_IFELSE_FUNCTION_DEFAULT"
	lookup := &payload.Map{}
	for i := 0; i+1 < len(args); i += 2 {
		key := args[i]
		switch key {
		case true:
			key = "*"
		case false:
			key = "SALT_IFELSE_MATCH_NOTHING"
		}
		lookup.SetKey(key, args[i+1])
	}
	lookup.Set(defKey, args[len(args)-1])
	tgtType := "compound"
	if v, ok := kw.Get("tgt_type"); ok {
		tgtType = payload.Text(v)
	}
	minionID, _ := kw.Get("minion_id")
	merge, _ := kw.Get("merge")
	mergeLists, _ := kw.Get("merge_lists")
	return matchFilterBy(c, lookup, tgtType, minionID, merge, payload.Truthy(mergeLists), defKey)
}

package builtin

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/wire/payload"
)

// Pkg is the pkg beacon (Salt 3006's salt/beacons/pkg.py): for every
// package named in the "pkgs" lists of its configuration it asks
// pkg.version (use_context=False) and, for an installed one,
// pkg.latest_version, and classes it "not-installed", "installed" or
// "upgrade". From the second run on, a package whose class changed gives
// an event {pkg, version, status} (version: the latest version for
// "upgrade", the installed one for "installed", None otherwise), tag
// suffix empty. The first run only records the classes.
//
// Salt's beacon reads a "refresh" option from the configuration list as
// if it were a dict, so a "- refresh: True" item never takes effect:
// latest_version is always asked with refresh=False, as in Salt.
func Pkg() beacons.Module {
	return beacons.Module{
		Name:     "pkg",
		Validate: validatePkg,
		New: func(env *beacons.Env) beacons.Beacon {
			return &pkgBeacon{env: env, last: map[string]string{}}
		},
	}
}

func validatePkg(config any) (bool, string) {
	items, ok := config.([]any)
	if !ok {
		return false, "Configuration for pkg beacon must be a list."
	}
	found, listed := false, false
	for _, it := range items {
		m, ok := it.(*payload.Map)
		if !ok {
			continue
		}
		if v, has := m.Get("pkgs"); has {
			found = true
			if _, isList := v.([]any); isList {
				listed = true
			}
		}
	}
	if !found || !listed {
		return false, "Configuration for pkg beacon requires list of pkgs."
	}
	return true, "Valid beacon configuration"
}

// pkgBeacon keeps Salt's __context__["beacon.pkg"]: the class each
// package had at the previous run.
type pkgBeacon struct {
	env  *beacons.Env
	last map[string]string
}

// pkgNames is the concatenation of the configuration's "pkgs" values
// (Python's list += extends with the items of a list, the characters of
// a string).
func pkgNames(config any) ([]any, error) {
	items, _ := config.([]any)
	var names []any
	for _, it := range items {
		if s, ok := it.(string); ok && s == "refresh" {
			// "refresh" in config is true, and config["refresh"] on a list raises.
			return nil, fmt.Errorf("list indices must be integers or slices, not str")
		}
		m, ok := it.(*payload.Map)
		if !ok {
			continue
		}
		v, has := m.Get("pkgs")
		if !has {
			continue
		}
		switch x := v.(type) {
		case []any:
			names = append(names, x...)
		case string:
			for _, r := range x {
				names = append(names, string(r))
			}
		default:
			return nil, fmt.Errorf("'%s' object is not iterable", payload.TypeName(v))
		}
	}
	return names, nil
}

func (b *pkgBeacon) Beacon(ctx context.Context, req *beacons.Request) ([]*payload.Map, error) {
	names, err := pkgNames(req.Config)
	if err != nil {
		return nil, err
	}
	var ret []*payload.Map
	for _, name := range names {
		key := payload.KeyString(name)
		prev := b.last[key]
		installed, err := b.env.Call(ctx, "pkg.version", name, payload.NewMap("__kwarg__", true, "use_context", false))
		if err != nil {
			return nil, fmt.Errorf("pkg.version %v: %w", name, err)
		}
		var version any
		class := "not-installed"
		if payload.Truthy(installed) {
			version, class = installed, "installed"
			latest, err := b.env.Call(ctx, "pkg.latest_version", name, payload.NewMap("__kwarg__", true, "refresh", false))
			if err != nil {
				return nil, fmt.Errorf("pkg.latest_version %v: %w", name, err)
			}
			if payload.Truthy(latest) {
				version, class = latest, "upgrade"
			}
		}
		b.last[key] = class
		if prev != "" && prev != class {
			ret = append(ret, payload.NewMap("pkg", name, "version", version, "status", class))
		}
	}
	return ret, nil
}

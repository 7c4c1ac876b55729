package builtin

// This file is Salt's pkg.mod_aggregate (salt/states/pkg.py): with
// state_aggregate on, the first pkg.installed/latest/removed/purged chunk
// to run takes the packages of the other not-yet-run chunks of the same
// function and repo, so one package manager call installs them all.

import (
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// PkgModAggregate is pkg.mod_aggregate.
func PkgModAggregate(low *payload.Map, chunks []*payload.Map, running *payload.Map) {
	fun := low.Str("fun")
	switch fun {
	case "installed", "latest", "removed", "purged":
	default:
		return
	}
	var pkgs []any
	pkgType := ""
	fromrepo, _ := low.Get("fromrepo")
	for _, ch := range chunks {
		if running.Has(states.GenTag(ch)) || ch.Str("state") != "pkg" || ch.Has("__agg__") || ch.Str("fun") != fun {
			continue
		}
		if r, _ := ch.Get("fromrepo"); !pyfmt.Equal(r, fromrepo) {
			continue
		}
		if ch.Has("sources") {
			if pkgType == "" {
				pkgType = "sources"
			}
			if pkgType == "sources" {
				l, _ := ch.Get("sources")
				ll, _ := l.([]any)
				pkgs = append(pkgs, ll...)
				ch.Set("__agg__", true)
			}
			continue
		}
		if ch.Has("hold") {
			continue
		}
		if pkgType == "" {
			pkgType = "pkgs"
		}
		if pkgType != "pkgs" {
			continue
		}
		switch {
		case ch.Has("pkgs"):
			l, _ := ch.Get("pkgs")
			ll, _ := l.([]any)
			pkgs = append(pkgs, ll...)
			ch.Set("__agg__", true)
		case ch.Has("name"):
			name, _ := ch.Get("name")
			version, hasVersion := ch.Delete("version")
			if hasVersion && version != nil {
				pkgs = append(pkgs, payload.NewMap(pyfmt.Str(name), version))
			} else {
				pkgs = append(pkgs, name)
			}
			ch.Set("__agg__", true)
		}
	}
	if pkgType == "" || len(pkgs) == 0 {
		return
	}
	if cur, ok := low.Get(pkgType); ok {
		l, _ := cur.([]any)
		low.Set(pkgType, append(append([]any(nil), l...), pkgs...))
	} else {
		low.Set(pkgType, pkgs)
	}
}

package proxy

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/grains"
	"github.com/gsalt/gsalt/wire/payload"
)

// proxyHostGrains lists, in Salt's order, the core grains a Salt 3006
// salt-proxy reports from its host on Linux (salt/grains/core.py returns
// early for proxies in most functions, and grain modules without
// __proxyenabled__ do not load). Python-only grains (pythonversion, ...)
// are omitted as on gsalt-minion.
var proxyHostGrains = []string{
	"cwd", "ip_gw", "ip4_gw", "ip6_gw", "dns", "fqdns", "machine_id", "master",
	"hwaddr_interfaces", "id", "kernelparams", "locale_info", "num_gpus", "gpus",
	"kernel", "nodename", "kernelrelease", "kernelversion", "cpuarch", "osrelease",
	"os", "os_family", "osfullname", "osarch", "mem_total", "virtual", "ps",
	"osrelease_info", "osfinger", "path", "systempath", "saltversion",
	"saltversioninfo", "shell", "transactional", "efi", "efi-secure-boot",
}

// proxyFixedGrains are the values Salt's core grains give every proxy.
func proxyFixedGrains(g *payload.Map) {
	for _, k := range []string{"kernel", "kernelrelease", "kernelversion", "osrelease", "os", "os_family", "osfullname"} {
		g.Set(k, "proxy")
	}
	g.Set("osrelease_info", []any{"proxy"})
	g.Set("osfinger", "proxy-proxy")
	g.Set("mem_total", int64(0))
	g.Set("ps", "ps -efHww")
	g.Set("locale_info", &payload.Map{})
	g.Set("fqdns", []any{})
	// _osarch of the "proxy" os_family is the cpu architecture.
	if v, ok := g.Get("cpuarch"); ok {
		g.Set("osarch", v)
	}
}

// HostGrains computes the grains every proxy served by this process shares:
// the host's core grains reduced to what a Salt salt-proxy reports, with
// kernel, os and friends set to "proxy". cfg gives the options grain
// computation reads. The map is new; the id and master grains are set per
// device.
func HostGrains(ctx context.Context, cfg *config.Minion) (*payload.Map, error) {
	master, _ := cfg.Opts.Get("master")
	core, err := grains.Core(ctx, grains.Options{ID: cfg.ID, Master: master, Opts: cfg.Opts})
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	proxyFixedGrains(core)
	out := &payload.Map{}
	for _, k := range proxyHostGrains {
		if v, ok := core.Get(k); ok {
			out.Set(k, v)
		}
	}
	return out, nil
}

// mergeGrains updates dst with src: shallow like Salt's dict.update, or
// recursive for grains_deep_merge.
func mergeGrains(dst, src *payload.Map, deep bool) {
	for _, it := range src.Items() {
		if deep {
			if sm, ok := it.Value.(*payload.Map); ok {
				if dv, ok := dst.GetKey(it.Key); ok {
					if dm, ok := dv.(*payload.Map); ok {
						dm = dm.Clone()
						mergeGrains(dm, sm, true)
						dst.SetKey(it.Key, dm)
						continue
					}
				}
			}
		}
		dst.SetKey(it.Key, it.Value)
	}
}

package proxy

import (
	"log/slog"
	"sync"

	"github.com/gsalt/gsalt/wire/transport"
)

// Request connections the devices of one fleet share to one master.
const (
	// fleetReqOpen bounds a fleet's requests in flight to one master: a
	// fan-out's returns from 10,000 devices go through these connections
	// instead of opening one each (two file descriptors per device, in
	// the proxy and in the master, with the SSH sessions already holding
	// one each). The master answers a return in well under a millisecond,
	// so a burst drains quickly.
	fleetReqOpen = 256
	// fleetReqIdle is the idle connections kept to one master.
	fleetReqIdle = 64
	// fleetAuthSlots bounds the devices of a fleet signing in (_auth) at
	// once: 10,000 devices dialing the master together after a start or a
	// master restart held ~17,000 connections (near a container's 20,000
	// open files) and made the master time most of them out.
	fleetAuthSlots = 64
	// maxFleetReqPools bounds the masters a fleet keeps pools for.
	maxFleetReqPools = 64
)

// OpenFilesFor is the open files a gsalt-proxy serving n devices needs:
// one device connection each (SSH, NETCONF, HTTP keep-alive), the fleet's
// shared master connections (requests, sign-ins, the publisher) and room
// for files, logs and short-lived connections.
func OpenFilesFor(n int) uint64 {
	return uint64(max(n, 0)) + fleetReqOpen + fleetReqIdle + 2*fleetAuthSlots + 1024
}

// reqPools gives every device of a fleet the same transport.ReqPool for a
// master address (minion.Options.ReqPool). The requests and replies are
// the ones each device's minion sends; only the connections are shared, a
// REQ connection carrying one request at a time whoever sends it.
type reqPools struct {
	log *slog.Logger

	mu    sync.Mutex
	pools map[string]*transport.ReqPool
}

func newReqPools(log *slog.Logger) *reqPools {
	return &reqPools{log: log, pools: map[string]*transport.ReqPool{}}
}

// pool implements minion.Options.ReqPool.
func (r *reqPools) pool(addr string) *transport.ReqPool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.pools[addr]; ok {
		return p
	}
	if len(r.pools) >= maxFleetReqPools {
		// Devices follow a master_type: func or DNS that keeps naming new
		// masters: forget the pools (their idle connections close; requests
		// in flight keep theirs) rather than grow without bound.
		for a, p := range r.pools {
			p.Close()
			delete(r.pools, a)
		}
	}
	p := &transport.ReqPool{Addr: addr, MaxIdle: fleetReqIdle, MaxOpen: fleetReqOpen, Logger: r.log}
	r.pools[addr] = p
	return p
}

// close closes every pool's idle connections (the fleet stops).
func (r *reqPools) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for a, p := range r.pools {
		p.Close()
		delete(r.pools, a)
	}
}

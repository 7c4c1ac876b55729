package minion

import (
	"sync"
	"time"

	"github.com/gsalt/gsalt/wire/transport"
)

// maxReqPools bounds the masters a minion keeps request connections to.
const maxReqPools = 8

// reqPoolIdle is the idle connections kept to one master: the file client
// keeps several _serve_file requests in flight (modules/builtin's
// serveWindow), and with one idle connection all but one of them would
// connect and handshake again for every chunk. A minion returning a burst
// of jobs has as many returns in flight as the master takes to commit
// them: with 4 kept, a reactor publishing ~1,500 jobs/s to 4 identities
// made the master accept, handshake and close a connection for most
// returns (a quarter of its CPU); 32 kept cut its CPU per job from 0.28
// to 0.22 ms and the swarm's by half. Idle ones still close after
// reqPoolIdleTimeout.
const reqPoolIdle = 32

// reqPoolOpen bounds a minion's requests in flight to one master (a
// request beyond it waits for one to end): a burst of returns larger
// than reqPoolIdle otherwise opened a connection for each request beyond
// the idle ones, and put closed it again after its one reply. With a
// reactor publishing ~2,000 jobs/s to 4 swarm identities that kept up to
// 100 returns in flight per identity, the TCP connect, ZMTP handshake and
// close were ~20% of the swarm's CPU and ~18% of the master's. A
// master's reply to a minion's request never waits for another request
// of the same minion, so the bound cannot deadlock; 32 in flight per
// minion is still far more than one master's request workers serve at
// once.
const reqPoolOpen = reqPoolIdle

// reqPoolIdleTimeout is how long a minion keeps a request connection it
// is not using. Salt's minion opens a REQ connection for each request and
// closes it after the reply (Minion._send_req_async: a ReqChannel in a
// with block); gsalt's keeps it for the next job. It was 5 s while a
// master had no other defence against running out of descriptors
// (10,000 minions holding their REQ connections besides their publish
// ones exhausted a master's 20,000); a master now keeps within its budget
// by closing the request connection idle the longest when it needs a
// place (transport.ConnGate), and the minion sends its next request on a
// new one. With 5 s every job more than 5 s after the last one connected
// and handshook again at both ends for each return: at 10,000 identities
// a ping 8 s after the previous one cost the master 0.26 ms of CPU per
// return instead of 0.10, and the swarm 0.30 ms per identity instead of
// 0.11.
const reqPoolIdleTimeout = 2 * time.Minute

// reqPools keeps one transport.ReqPool per master address: the minion's
// AES requests (returns, events, mine, file client) reuse their REQ
// connection instead of connecting for every request. The messages are the
// ones Salt sends; only the connection lives longer.
type reqPools struct {
	mu    sync.Mutex
	pools map[string]*transport.ReqPool
}

// reqPool returns the pool for addr.
func (m *Minion) reqPool(addr string) *transport.ReqPool {
	if m.reqPoolFn != nil {
		return m.reqPoolFn(addr)
	}
	r := &m.reqs
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.pools[addr]; ok {
		return p
	}
	if r.pools == nil || len(r.pools) >= maxReqPools {
		for _, p := range r.pools {
			p.Close()
		}
		r.pools = map[string]*transport.ReqPool{}
	}
	p := &transport.ReqPool{Addr: addr, MaxIdle: reqPoolIdle, MaxOpen: reqPoolOpen, IdleTimeout: reqPoolIdleTimeout, Logger: m.log, Gate: m.gates.For(addr), Source: m.source}
	r.pools[addr] = p
	return p
}

// closeReqPools closes the idle request connections (the minion stops).
func (m *Minion) closeReqPools() {
	r := &m.reqs
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.pools {
		p.Close()
	}
	r.pools = nil
}

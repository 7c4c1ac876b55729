package minion

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gsalt/gsalt/returners"
	"github.com/gsalt/gsalt/wire/payload"
)

// minionReturners are the returners a minion's jobs name (--return, the
// minion's "return" option, a schedule's "returner"), opened on first use
// and kept until Run ends. Writes of returners that can batch go through a
// queue spooled in cachedir/returners/NAME.spool, so a return is not lost
// while the database is down.
type minionReturners struct {
	reg *returners.Registry

	mu   sync.Mutex
	open map[string]*minionReturner
}

type minionReturner struct {
	r returners.Returner
	q *returners.Queue // nil: Return is called directly
}

// returnerTimeout bounds a direct returner call.
const returnerTimeout = 30 * time.Second

func newMinionReturners(reg *returners.Registry) *minionReturners {
	return &minionReturners{reg: reg, open: map[string]*minionReturner{}}
}

// option reads a returner option like config.option on a minion: its
// options, then grains, then pillar.
func (m *Minion) returnerOption(key string) (any, bool) {
	m.mu.RLock()
	opts, grains, pillar := m.opts, m.grains, m.pillar
	m.mu.RUnlock()
	for _, src := range []*payload.Map{opts, grains, pillar} {
		if src == nil {
			continue
		}
		if v, ok := src.Get(key); ok {
			return v, true
		}
	}
	return nil, false
}

// unknownReturner returns Salt's loader text for the first name no
// returner is registered under, "" when all are known.
func (m *Minion) unknownReturner(names []string) string {
	for _, n := range names {
		if !m.rets.reg.Has(n) {
			return fmt.Sprintf("Returner %s.returner could not be loaded: %s", n, returners.MissingText(n, "returner"))
		}
	}
	return ""
}

func (rs *minionReturners) get(m *Minion, name string) (*minionReturner, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r, ok := rs.open[name]; ok {
		return r, nil
	}
	r, err := rs.reg.Open(name, returners.Env{ID: m.id, Log: m.log, Option: m.returnerOption})
	if err != nil {
		return nil, err
	}
	mr := &minionReturner{r: r}
	if b, ok := r.(returners.Batcher); ok && m.cacheDir != "" {
		dir := filepath.Join(m.cacheDir, "returners")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			r.Close()
			return nil, err
		}
		q, err := returners.NewQueue(b, returners.QueueOptions{Name: name + " returner", SpoolPath: filepath.Join(dir, name+".spool"), Logger: m.log})
		if err != nil {
			r.Close()
			return nil, err
		}
		mr.q = q
	}
	rs.open[name] = mr
	return mr, nil
}

// closeAll closes the open returners (queued writes go to their spools).
func (rs *minionReturners) closeAll() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for name, r := range rs.open {
		if r.q != nil {
			r.q.Close()
		}
		r.r.Close()
		delete(rs.open, name)
	}
}

// callReturners hands a job's return to the returners named in names, as
// Salt's minion does after sending the return to the master: the ret dict
// gets the publish's ret_config and ret_kwargs and the minion id. Failures
// are logged; the job's return to the master is not affected.
func (m *Minion) callReturners(names []string, ret *payload.Map, pub *payload.Map) {
	if len(names) == 0 {
		return
	}
	r := ret.Clone()
	for _, k := range []string{"ret_config", "ret_kwargs"} {
		if pub != nil {
			if v, ok := pub.Get(k); ok {
				r.Set(k, v)
			}
		}
	}
	r.Set("id", m.id)
	for _, name := range names {
		mr, err := m.rets.get(m, name)
		if err != nil {
			m.log.Error(fmt.Sprintf("Returner %s.returner could not be loaded: %v", name, err), "jid", r.Str("jid"))
			continue
		}
		if mr.q != nil {
			mr.q.Put(returners.Op{Kind: returners.OpReturn, JID: r.Str("jid"), Data: r})
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), returnerTimeout)
		if err := mr.r.Return(ctx, r); err != nil {
			m.log.Error("The return failed for job", "jid", r.Str("jid"), "returner", name, "err", err)
		}
		cancel()
	}
}

// jobReturners lists the returners of a publish: its "ret" and the
// minion's "return" option, like Salt's _thread_return.
func (m *Minion) jobReturners(load *payload.Map) []string {
	v, _ := load.Get("ret")
	names := returners.Names(v)
	m.mu.RLock()
	opt, _ := m.opts.Get("return")
	m.mu.RUnlock()
	return mergeNames(names, returners.Names(opt))
}

func mergeNames(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range [][]string{a, b} {
		for _, n := range l {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

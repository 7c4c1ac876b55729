package master

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/gsalt/gsalt/internal/atomicfile"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxCacheFile bounds a data.p or mine.p file read back from disk.
const maxCacheFile = 64 << 20

// maxCachedMinions bounds the minions whose data is loaded at start-up.
const maxCachedMinions = 1 << 17

type minionData struct {
	grains any
	pillar any
}

// dataCache is the master's minion data cache in Salt's localfs layout:
// <cachedir>/minions/<id>/data.p = {"grains", "pillar"} and mine.p =
// {fun: data}, msgpack with str/bin (SALT-WIRE §7.3). Grains and pillars
// are kept in memory for targeting; mine data is read on demand and kept.
type dataCache struct {
	dir string
	log *slog.Logger

	mu   sync.RWMutex
	data map[string]minionData
	mine map[string]*payload.Map
	// last is the data stored last: a new minion's grains and pillar
	// share the memory of every part equal to it (payload.Share), so
	// 10,000 minions of a few kinds do not keep 10,000 copies of the
	// same os, kernel and pillar values. Cached data is read-only.
	last minionData
	// loaded is closed once load has read the cache from disk; every
	// method waits for it.
	loaded chan struct{}
}

// newDataCache returns the cache and reads it from disk in the
// background: at 10,000 minions the read took 0.76 CPU-s and ~5 s on a
// loaded machine before the master opened its request port, and every
// minion's re-authentication after a restart waited for it. Only what
// reads or changes the cache (targeting by grains or pillar, _pillar,
// the mine, presence) waits for the read; authentication and returns do
// not use it.
func newDataCache(dir string, log *slog.Logger) *dataCache {
	c := &dataCache{dir: dir, log: log, data: map[string]minionData{}, mine: map[string]*payload.Map{}, loaded: make(chan struct{})}
	go func() {
		defer close(c.loaded)
		c.load()
	}()
	return c
}

// wait returns once the cache has been read from disk.
func (c *dataCache) wait() { <-c.loaded }

// load reads every data.p below dir.
func (c *dataCache) load() {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			c.log.Warn("cannot read the minion data cache", "dir", c.dir, "err", err)
		}
		return
	}
	for i, e := range ents {
		if i >= maxCachedMinions {
			c.log.Warn("minion data cache too large, the rest is not loaded", "loaded", i)
			break
		}
		if !e.IsDir() {
			continue
		}
		v, err := readCacheFile(filepath.Join(c.dir, e.Name(), "data.p"))
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				c.log.Warn("cannot read a minion data cache file", "id", e.Name(), "err", err)
			}
			continue
		}
		d, ok := v.(*payload.Map)
		if !ok {
			continue
		}
		g, _ := d.Get("grains")
		p, _ := d.Get("pillar")
		md := minionData{grains: payload.Share(g, c.last.grains), pillar: payload.Share(p, c.last.pillar)}
		c.data[e.Name()] = md
		c.last = md
	}
}

func readCacheFile(path string) (any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxCacheFile {
		return nil, fmt.Errorf("master: %s: cache file too large", path)
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return payload.Unmarshal(b)
}

// writeCacheFile writes v atomically (temporary file + rename), without
// fsync: it is a cache the master rebuilds from the minions' next _pillar
// and mine requests (Salt's localfs cache writes it the same way). An
// fsync per file made a 10,000-minion sign-in wait on ~20,000 disk
// flushes; a file cut short by a crash reads as an error and counts as
// missing.
func writeCacheFile(path string, v any) error {
	b, err := payload.MarshalBin(v)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.WriteCache(path, b, 0o600)
}

// targetCache is the target.CacheFunc over the cached grains and pillars.
func (c *dataCache) targetCache(id string) (grains, pillar any, ok bool) {
	c.wait()
	c.mu.RLock()
	d, ok := c.data[id]
	c.mu.RUnlock()
	return d.grains, d.pillar, ok
}

// grains returns the cached grains of id (nil when unknown).
func (c *dataCache) grains(id string) any {
	g, _, _ := c.targetCache(id)
	return g
}

// ids returns the ids with cached data.
func (c *dataCache) ids() []string {
	c.wait()
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.data))
	for id := range c.data {
		out = append(out, id)
	}
	return out
}

// store saves a minion's grains and pillar (the _pillar request).
func (c *dataCache) store(id string, grains, pillar any) error {
	c.wait()
	err := writeCacheFile(filepath.Join(c.dir, id, "data.p"), payload.NewMap("grains", grains, "pillar", pillar))
	c.mu.Lock()
	d := minionData{grains: payload.Share(grains, c.last.grains), pillar: payload.Share(pillar, c.last.pillar)}
	c.data[id] = d
	c.last = d
	c.mu.Unlock()
	return err
}

// getMine returns the mine data of id (an empty map when there is none).
func (c *dataCache) getMine(id string) *payload.Map {
	c.wait()
	c.mu.RLock()
	m, ok := c.mine[id]
	c.mu.RUnlock()
	if ok {
		return m
	}
	m = payload.NewMap()
	v, err := readCacheFile(filepath.Join(c.dir, id, "mine.p"))
	if err == nil {
		if mm, ok := v.(*payload.Map); ok {
			m = mm
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		c.log.Warn("cannot read mine data", "id", id, "err", err)
	}
	c.mu.Lock()
	if cur, ok := c.mine[id]; ok {
		m = cur
	} else {
		c.mine[id] = m
	}
	c.mu.Unlock()
	return m
}

// updateMine merges data into id's mine (or replaces it when replace) and
// persists it. Maps handed out by getMine are never modified in place.
func (c *dataCache) updateMine(id string, data *payload.Map, replace bool) error {
	c.wait()
	cur := c.getMine(id)
	c.mu.Lock()
	next := payload.NewMap()
	if !replace {
		if m, ok := c.mine[id]; ok {
			cur = m
		}
		for _, it := range cur.Items() {
			next.SetKey(it.Key, it.Value)
		}
	}
	for _, it := range data.Items() {
		next.SetKey(it.Key, it.Value)
	}
	c.mine[id] = next
	c.mu.Unlock()
	return writeCacheFile(filepath.Join(c.dir, id, "mine.p"), next)
}

// deleteMine removes one function from id's mine; it reports false when
// the minion has no mine data.
func (c *dataCache) deleteMine(id, fun string) (bool, error) {
	c.wait()
	cur := c.getMine(id)
	if cur.Len() == 0 {
		if _, err := os.Stat(filepath.Join(c.dir, id, "mine.p")); err != nil {
			return false, nil
		}
	}
	if !cur.Has(fun) {
		return true, nil
	}
	c.mu.Lock()
	next := payload.NewMap()
	for _, it := range c.mine[id].Items() {
		if payload.KeyString(it.Key) != fun {
			next.SetKey(it.Key, it.Value)
		}
	}
	c.mine[id] = next
	c.mu.Unlock()
	return true, writeCacheFile(filepath.Join(c.dir, id, "mine.p"), next)
}

// flushMine removes id's mine; like Salt's localfs flush it reports false
// when there was nothing to remove.
func (c *dataCache) flushMine(id string) (bool, error) {
	c.wait()
	c.mu.Lock()
	delete(c.mine, id)
	c.mu.Unlock()
	err := os.Remove(filepath.Join(c.dir, id, "mine.p"))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// dropStale forgets minions whose cache directory was removed (the key
// store removes it when a key is deleted).
func (c *dataCache) dropStale() {
	c.wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.data {
		if _, err := os.Stat(filepath.Join(c.dir, id)); errors.Is(err, os.ErrNotExist) {
			delete(c.data, id)
			delete(c.mine, id)
		}
	}
	for id := range c.mine {
		if _, err := os.Stat(filepath.Join(c.dir, id)); errors.Is(err, os.ErrNotExist) {
			delete(c.mine, id)
		}
	}
}

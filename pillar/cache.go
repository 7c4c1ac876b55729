package pillar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gsalt/gsalt/internal/atomicfile"
	"github.com/gsalt/gsalt/wire/payload"
)

// Keys of Salt's CacheDisk file.
const (
	cacheDataKey = "CacheDisk_data"
	cacheTimeKey = "CacheDisk_cachetime"
)

// maxCacheFile bounds a pillar cache file read back.
const maxCacheFile = 64 << 20

// maxMemoryCache bounds the minions the memory back-end keeps.
const maxMemoryCache = 1 << 16

// pillarCache is Salt's PillarCache: compiled pillars kept per minion id
// and requested pillarenv, for pillar_cache_ttl after the minion's entry
// was last written. Grains, saltenv and pillar_override are not part of
// the key (Salt's "TODO Compare grains"), so a hit returns the pillar of
// the first request. A request with clean_cache (saltutil.refresh_pillar
// sends it by default) empties the minion's cache first.
//
// The disk back-end keeps one file per minion, cachedir/pillar_cache/<id>,
// in Salt's format (msgpack {"CacheDisk_data": {id: {pillarenv: pillar}},
// "CacheDisk_cachetime": {id: unix time}}, pillarenv nil when unset), so
// Salt's own pillar cache runners can read it. The memory back-end keeps
// the same in this process (Salt's memory cache lives only for one
// request on a master and never hits).
type pillarCache struct {
	backend string
	dir     string
	ttl     time.Duration
	log     *slog.Logger
	now     func() time.Time

	mu  sync.Mutex
	mem map[string]*memEntry
}

type memEntry struct {
	at   time.Time
	envs *payload.Map // pillarenv (nil key when unset) -> pillar
}

func newPillarCache(cfg Config, log *slog.Logger, now func() time.Time) *pillarCache {
	pc := &pillarCache{backend: cfg.CacheBackend, ttl: cfg.CacheTTL, log: log, now: now, mem: map[string]*memEntry{}}
	if pc.backend == "" {
		pc.backend = CacheDisk
	}
	if cfg.CacheDir != "" {
		pc.dir = filepath.Join(cfg.CacheDir, "pillar_cache")
	}
	if pc.backend != CacheDisk && pc.backend != CacheMemory {
		log.Error("CacheFactory received unrecognized cache type", "pillar_cache_backend", pc.backend)
	}
	return pc
}

// envKey is the cache key of a pillarenv: nil for None, as Salt writes it.
func envKey(pillarenv string) any {
	if pillarenv == "" {
		return nil
	}
	return pillarenv
}

// usable reports whether the cache can serve id.
func (pc *pillarCache) usable(id string) bool {
	switch pc.backend {
	case CacheMemory:
		return true
	case CacheDisk:
		return pc.dir != "" && id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\\x00")
	}
	return false
}

// compile serves req from the cache or compiles it with fresh and stores
// the result.
func (pc *pillarCache) compile(ctx context.Context, req Request, fresh func(context.Context, Request) (*payload.Map, error)) (*payload.Map, error) {
	if !pc.usable(req.ID) {
		return fresh(ctx, req)
	}
	if req.CleanCache {
		if err := pc.Clear(req.ID); err != nil {
			pc.log.Warn("cannot clear the pillar cache", "id", req.ID, "err", err)
		}
	}
	key := envKey(req.Pillarenv)
	if p, ok := pc.lookup(req.ID, key); ok {
		pc.log.Debug("pillar cache hit", "id", req.ID, "pillarenv", req.Pillarenv)
		return p, nil
	}
	p, err := fresh(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := pc.store(req.ID, key, p); err != nil {
		pc.log.Warn("cannot write the pillar cache", "id", req.ID, "err", err)
	}
	pc.log.Debug("pillar cache miss", "id", req.ID, "pillarenv", req.Pillarenv)
	return p, nil
}

// expired applies the TTL the way CacheDict does (strictly older).
func (pc *pillarCache) expired(at time.Time) bool {
	return pc.now().Sub(at) > pc.ttl
}

func (pc *pillarCache) lookup(id string, key any) (*payload.Map, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	e := pc.entry(id)
	if e == nil {
		return nil, false
	}
	v, ok := e.envs.GetKey(key)
	p, isMap := v.(*payload.Map)
	if !ok || !isMap {
		return nil, false
	}
	return payload.DeepClone(p).(*payload.Map), true
}

// entry returns id's live entry (nil when absent or expired); pc.mu held.
func (pc *pillarCache) entry(id string) *memEntry {
	var e *memEntry
	if pc.backend == CacheMemory {
		e = pc.mem[id]
	} else {
		e = pc.readFile(id)
	}
	if e == nil || pc.expired(e.at) {
		if e != nil && pc.backend == CacheMemory {
			delete(pc.mem, id)
		}
		return nil
	}
	return e
}

func (pc *pillarCache) store(id string, key any, p *payload.Map) error {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	e := pc.entry(id)
	if e == nil {
		e = &memEntry{envs: payload.NewMap()}
	}
	e.envs.SetKey(key, payload.DeepClone(p))
	e.at = pc.now()
	if pc.backend == CacheMemory {
		if _, ok := pc.mem[id]; !ok && len(pc.mem) >= maxMemoryCache {
			for old := range pc.mem {
				delete(pc.mem, old)
				break
			}
		}
		pc.mem[id] = e
		return nil
	}
	return pc.writeFile(id, e)
}

// Clear empties the cache of one minion (clean_cache).
func (pc *pillarCache) Clear(id string) error {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.backend == CacheMemory {
		delete(pc.mem, id)
		return nil
	}
	if !pc.usable(id) {
		return nil
	}
	return pc.writeFile(id, nil)
}

func (pc *pillarCache) path(id string) string { return filepath.Join(pc.dir, id) }

// readFile reads id's cache file; unreadable files count as empty, like
// Salt's CacheDisk.
func (pc *pillarCache) readFile(id string) *memEntry {
	f, err := os.Open(pc.path(id))
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCacheFile+1))
	if err != nil || len(b) == 0 || len(b) > maxCacheFile {
		return nil
	}
	v, err := payload.UnmarshalLimits(b, payload.Limits{MaxSize: maxCacheFile, MaxDepth: payload.DefaultLimits.MaxDepth})
	if err != nil {
		pc.log.Debug("unreadable pillar cache file", "path", pc.path(id), "err", err)
		return nil
	}
	m, _ := v.(*payload.Map)
	data, _ := m.Get(cacheDataKey)
	times, _ := m.Get(cacheTimeKey)
	dm, _ := data.(*payload.Map)
	tm, _ := times.(*payload.Map)
	envsV, _ := dm.Get(id)
	envs, _ := envsV.(*payload.Map)
	tv, _ := tm.Get(id)
	if envs == nil {
		return nil
	}
	var secs float64
	switch t := tv.(type) {
	case float64:
		secs = t
	case int64:
		secs = float64(t)
	default:
		return nil
	}
	return &memEntry{at: time.Unix(0, int64(secs*1e9)), envs: envs}
}

// writeFile writes id's cache file (an empty cache when e is nil).
func (pc *pillarCache) writeFile(id string, e *memEntry) error {
	data, times := payload.NewMap(), payload.NewMap()
	if e != nil {
		data.Set(id, e.envs)
		times.Set(id, float64(e.at.UnixNano())/1e9)
	}
	b, err := payload.MarshalBin(payload.NewMap(cacheDataKey, data, cacheTimeKey, times))
	if err != nil {
		return fmt.Errorf("pillar: cache: %w", err)
	}
	if err := os.MkdirAll(pc.dir, 0o700); err != nil {
		return fmt.Errorf("pillar: cache: %w", err)
	}
	if err := atomicfile.WriteFile(pc.path(id), b, 0o600, false); err != nil {
		return fmt.Errorf("pillar: cache: %w", err)
	}
	return nil
}

// ErrNoCache is returned by ClearCache when pillar_cache is off.
var ErrNoCache = errors.New("pillar: pillar_cache is not enabled")

// ClearCache empties the pillar cache of minion id (what a clean_cache
// request does).
func (c *Compiler) ClearCache(id string) error {
	if c.cache == nil {
		return ErrNoCache
	}
	return c.cache.Clear(id)
}

// CachedPillar returns the cached pillar of id for pillarenv ("" for
// None), or false when there is none (or pillar_cache is off).
func (c *Compiler) CachedPillar(id, pillarenv string) (*payload.Map, bool) {
	if c.cache == nil || !c.cache.usable(id) {
		return nil, false
	}
	return c.cache.lookup(id, envKey(pillarenv))
}

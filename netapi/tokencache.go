package netapi

import (
	"sync"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// tokenCacheTTL is how long gsalt-api trusts a token the master confirmed
// (get_token) before asking again; a token is never trusted past its own
// expiry. salt-api trusts its session for the session's whole life; the
// master checks the token again on every job either way.
const tokenCacheTTL = 10 * time.Second

// tokenCacheMax bounds the number of cached tokens.
const tokenCacheMax = 4096

// tokenCache remembers recent get_token answers so that a request costs
// one round trip to the master, not two.
type tokenCache struct {
	mu  sync.Mutex
	now func() time.Time
	m   map[string]cachedToken
}

type cachedToken struct {
	td    *payload.Map
	until time.Time
}

func newTokenCache(now func() time.Time) *tokenCache {
	if now == nil {
		now = time.Now
	}
	return &tokenCache{now: now, m: map[string]cachedToken{}}
}

// get returns the cached token data of tok, or nil.
func (c *tokenCache) get(tok string) *payload.Map {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[tok]
	if !ok {
		return nil
	}
	if !c.now().Before(e.until) {
		delete(c.m, tok)
		return nil
	}
	return e.td
}

// put caches a valid token's data until the TTL or its expiry, whichever
// comes first.
func (c *tokenCache) put(tok string, td *payload.Map) {
	now := c.now()
	until := now.Add(tokenCacheTTL)
	if exp, ok := expiry(mustGet(td, "expire")); ok && exp.Before(until) {
		until = exp
	}
	if !now.Before(until) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= tokenCacheMax {
		for k, e := range c.m {
			if !now.Before(e.until) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= tokenCacheMax {
			clear(c.m)
		}
	}
	c.m[tok] = cachedToken{td: td, until: until}
}

// drop forgets tok (logout).
func (c *tokenCache) drop(tok string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, tok)
}

// expiry reads a token's "expire" (Unix seconds, float or int).
func expiry(v any) (time.Time, bool) {
	switch x := v.(type) {
	case float64:
		return time.Unix(0, int64(x*1e9)), true
	case float32:
		return time.Unix(0, int64(float64(x)*1e9)), true
	}
	if n, ok := payload.AsInt(v); ok {
		return time.Unix(n, 0), true
	}
	return time.Time{}, false
}

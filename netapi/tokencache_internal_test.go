package netapi

import (
	"fmt"
	"testing"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestTokenCache: a confirmed token is trusted for tokenCacheTTL, never
// past its own expiry; logout drops it; the cache stays bounded.
func TestTokenCache(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	now := t0
	c := newTokenCache(func() time.Time { return now })
	td := func(tok string, expire any) *payload.Map { return payload.NewMap("token", tok, "expire", expire) }
	c.put("long", td("long", float64(t0.Unix()+3600)))
	c.put("short", td("short", float64(t0.Unix())+2.5))
	c.put("intexp", td("intexp", t0.Unix()+1))
	c.put("expired", td("expired", float64(t0.Unix()-1)))
	c.put("noexp", td("noexp", nil))
	for _, tc := range []struct {
		after time.Duration
		tok   string
		want  bool
	}{
		{0, "long", true}, {0, "short", true}, {0, "intexp", true}, {0, "expired", false}, {0, "noexp", true},
		{time.Second, "intexp", false},
		{2 * time.Second, "short", true},
		{3 * time.Second, "short", false},
		{tokenCacheTTL - time.Millisecond, "long", true},
		{tokenCacheTTL, "long", false},
		{tokenCacheTTL, "noexp", false},
	} {
		now = t0.Add(tc.after)
		if got := c.get(tc.tok) != nil; got != tc.want {
			t.Errorf("after %v, %s cached = %v, want %v", tc.after, tc.tok, got, tc.want)
		}
	}
	now = t0
	c.put("bye", td("bye", float64(t0.Unix()+3600)))
	c.drop("bye")
	if c.get("bye") != nil {
		t.Error("a dropped token is still cached")
	}
	for i := range 3 * tokenCacheMax {
		c.put(fmt.Sprint(i), td(fmt.Sprint(i), float64(t0.Unix()+3600)))
	}
	if n := len(c.m); n > tokenCacheMax {
		t.Errorf("%d cached tokens, bound %d", n, tokenCacheMax)
	}
}

package driver

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/scrapli/scrapligo/driver/network"
)

// maxPrompts bounds the patterns a PromptCache keeps (one per platform and
// set of privilege levels; a handful in practice).
const maxPrompts = 64

// PromptCache shares compiled prompt patterns between the connections of
// one process. scrapligo compiles, for every new connection, one pattern
// joining the prompts of all the platform's privilege levels (its channel's
// PromptPattern, ~25 KiB of regexp program on arista_eos) and keeps it for
// the connection's life; connections of the same platform can share one,
// since a compiled regexp is safe for concurrent use. The zero value is not
// usable: call NewPromptCache. A nil *PromptCache shares nothing.
type PromptCache struct {
	mu sync.Mutex
	m  map[string]*regexp.Regexp
}

// NewPromptCache returns an empty cache.
func NewPromptCache() *PromptCache { return &PromptCache{m: map[string]*regexp.Regexp{}} }

// Len returns the number of patterns kept.
func (c *PromptCache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// share replaces d's joined prompt pattern by the cache's pattern for the
// same privilege levels. The levels are joined in sorted order: scrapligo
// joins them in map order (random per connection), and alternatives of
// whole prompts that each end the line match the same prompts in any order.
func (c *PromptCache) share(d *network.Driver) {
	if c == nil || d == nil || d.Channel == nil || len(d.PrivilegeLevels) == 0 {
		return
	}
	pats := make([]string, 0, len(d.PrivilegeLevels))
	for _, lvl := range d.PrivilegeLevels {
		pats = append(pats, lvl.Pattern)
	}
	slices.Sort(pats)
	key := strings.Join(pats, "|")
	c.mu.Lock()
	defer c.mu.Unlock()
	re, ok := c.m[key]
	if !ok {
		var err error
		if re, err = regexp.Compile(key); err != nil {
			return // leave scrapligo's own pattern
		}
		if len(c.m) < maxPrompts {
			c.m[key] = re
		}
	}
	d.Channel.PromptPattern = re
}

package driver

import (
	"fmt"
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
// PromptPattern, ~25 KiB of regexp program on arista_eos) and one pattern
// per privilege level (kept in the driver's PrivilegeLevels, another ~25
// KiB), and keeps them for the connection's life; connections of the same
// platform can share them, since a compiled regexp is safe for concurrent
// use and the drivers only read their privilege levels once built. The
// zero value is not usable: call NewPromptCache. A nil *PromptCache shares
// nothing.
type PromptCache struct {
	mu     sync.Mutex
	m      map[string]*regexp.Regexp
	levels map[string]network.PrivilegeLevels
}

// NewPromptCache returns an empty cache.
func NewPromptCache() *PromptCache {
	return &PromptCache{m: map[string]*regexp.Regexp{}, levels: map[string]network.PrivilegeLevels{}}
}

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
// same privilege levels, and d's privilege levels (with their compiled
// patterns) by the cache's equal ones. The levels are joined in sorted
// order: scrapligo joins them in map order (random per connection), and
// alternatives of whole prompts that each end the line match the same
// prompts in any order. d must be fresh from scrapligo (its levels built
// by network.NewDriver) and not opened yet.
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
	lkey := levelsKey(d.PrivilegeLevels)
	c.mu.Lock()
	defer c.mu.Unlock()
	if lv, ok := c.levels[lkey]; ok {
		d.PrivilegeLevels = lv
	} else if len(c.levels) < maxPrompts {
		c.levels[lkey] = d.PrivilegeLevels
	}
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

// levelsKey is a fingerprint of every field of a driver's privilege levels
// that scrapligo reads: drivers with equal keys can share one set.
func levelsKey(lv network.PrivilegeLevels) string {
	names := make([]string, 0, len(lv))
	for name := range lv {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		l := lv[name]
		if l == nil {
			b.WriteString(name + "\x00nil\x01")
			continue
		}
		fmt.Fprintf(&b, "%q %q %q %q %q %q %q %t %q\x01", name, l.Name, l.Pattern, l.NotContains, l.PreviousPriv,
			l.Deescalate, l.Escalate, l.EscalateAuth, l.EscalatePrompt)
	}
	return b.String()
}

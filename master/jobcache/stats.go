package jobcache

import "errors"

// Stats are the cache's write counters since Open.
type Stats struct {
	// Writes counts committed writes (job loads, returns, minion lists);
	// WriteErrors the writes that failed (damage, a full disk, closing);
	// a duplicate return, refused on purpose, is neither.
	Writes, WriteErrors uint64
	// Commits counts the store transactions that committed writes: one
	// for each batch of writes queued together (one fsync each), so
	// Writes/Commits is the mean batch size.
	Commits uint64
}

// Stats returns the write counters.
func (c *Cache) Stats() Stats {
	return Stats{Writes: c.writesDone.Load(), WriteErrors: c.writeErrors.Load(), Commits: c.commits.Load()}
}

// countWrite counts the outcome of one write.
func (c *Cache) countWrite(err error) {
	if errors.Is(err, ErrDuplicate) {
		return
	}
	if err != nil {
		c.writeErrors.Add(1)
		return
	}
	c.writesDone.Add(1)
}

// IsOpen reports whether the cache takes writes (false once Close began).
func (c *Cache) IsOpen() bool {
	select {
	case <-c.closing:
		return false
	default:
		return true
	}
}

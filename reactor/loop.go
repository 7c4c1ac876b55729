package reactor

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	saltjid "github.com/gsalt/gsalt/internal/jid"

	"github.com/gsalt/gsalt/wire/payload"
)

// Loop protection, which Salt lacks: a reactor whose reactions make the
// event it reacts to again (a local job running event.send with the same
// tag, a reaction to job returns that starts jobs) reacts forever in Salt.
// gsalt bounds it twice:
//
//   - every (tag, reactor file, source minion id) has a token bucket: Burst
//     renders at once, then Rate per second (job ids in tags are
//     generalised, so salt/job/<jid>/ret/m1 is one key);
//   - events traced back to an earlier reaction of the same reactor file
//     (through the job ids of the jobs reactions started: in the tag, in
//     the data's jid, or in the __pub_jid an event.send run by that job
//     adds) are a detected loop, with a much smaller budget per reactor
//     file: LoopBurst, then LoopRate per second.
//
// Suppressed renders are logged (first one, then every 1000th) and counted
// in Stats.

// Loop protection defaults.
const (
	DefaultBurst     = 50
	DefaultRate      = 10.0
	DefaultLoopBurst = 10
	DefaultLoopRate  = 0.1
	// maxBuckets bounds the limiter's keys; idle ones are forgotten first.
	maxBuckets = 1 << 16
	// maxOrigins bounds the remembered reaction job ids.
	maxOrigins = 1 << 16
	// maxChain bounds a reaction chain (distinct reactor files).
	maxChain = 64
)

// LoopOptions tune the loop protection; zero values take the defaults.
type LoopOptions struct {
	// Burst and Rate bound one (tag, reactor file, minion id).
	Burst int
	Rate  float64
	// LoopBurst and LoopRate bound a reactor file reacting to the
	// consequences of its own reactions.
	LoopBurst int
	LoopRate  float64
	// Now supplies the time (nil: time.Now).
	Now func() time.Time
}

type bucket struct {
	tokens     float64
	last       time.Time
	suppressed uint64
}

// limiter holds the token buckets.
type limiter struct {
	o       LoopOptions
	mu      sync.Mutex
	buckets map[string]*bucket
	loops   map[string]*bucket
}

func newLimiter(o LoopOptions) *limiter {
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	if o.Rate <= 0 {
		o.Rate = DefaultRate
	}
	if o.LoopBurst <= 0 {
		o.LoopBurst = DefaultLoopBurst
	}
	if o.LoopRate <= 0 {
		o.LoopRate = DefaultLoopRate
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &limiter{o: o, buckets: map[string]*bucket{}, loops: map[string]*bucket{}}
}

// take takes a token from the bucket of key; it returns whether it got one
// and the bucket.
func (l *limiter) take(m map[string]*bucket, key string, burst int, rate float64) (bool, *bucket) {
	now := l.o.Now()
	b, ok := m[key]
	if !ok {
		if len(m) >= maxBuckets {
			l.evict(m, burst, rate, now)
		}
		b = &bucket{tokens: float64(burst), last: now}
		m[key] = b
	}
	b.tokens = min(float64(burst), b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, b
	}
	return false, b
}

// evict forgets buckets that are full again, then any, until the map is
// half empty.
func (l *limiter) evict(m map[string]*bucket, burst int, rate float64, now time.Time) {
	for k, b := range m {
		if b.tokens+now.Sub(b.last).Seconds()*rate >= float64(burst) {
			delete(m, k)
		}
	}
	for k := range m {
		if len(m) < maxBuckets/2 {
			break
		}
		delete(m, k)
	}
}

// allow applies the per-(tag, file, id) bucket.
func (l *limiter) allow(log *slog.Logger, tag, sls, id string) bool {
	key := generalTag(tag) + "\x00" + sls + "\x00" + id
	l.mu.Lock()
	ok, b := l.take(l.buckets, key, l.o.Burst, l.o.Rate)
	n := b.suppressed
	if ok {
		b.suppressed = 0
	} else {
		b.suppressed++
	}
	l.mu.Unlock()
	switch {
	case ok && n > 0:
		log.Info("reactor: reactions resumed after rate limiting", "tag", tag, "sls", sls, "id", id, "suppressed", n)
	case !ok && (n == 0 || (n+1)%1000 == 0):
		log.Warn(fmt.Sprintf("reactor: tag %s triggers %s more than %d times at once (then %g/s): possible reactor loop, reactions are rate-limited",
			tag, sls, l.o.Burst, l.o.Rate), "id", id, "suppressed", n+1)
	}
	return ok
}

// allowLoop applies the per-file bucket of detected loops.
func (l *limiter) allowLoop(log *slog.Logger, sls, tag, jid string) bool {
	l.mu.Lock()
	ok, b := l.take(l.loops, sls, l.o.LoopBurst, l.o.LoopRate)
	n := b.suppressed
	if ok {
		b.suppressed = 0
	} else {
		b.suppressed++
	}
	l.mu.Unlock()
	if ok || n == 0 || (n+1)%1000 == 0 {
		verdict := "reacting within the loop budget"
		if !ok {
			verdict = "reaction suppressed"
		}
		log.Warn(fmt.Sprintf("reactor loop detected: event %s comes from job %s started by a reaction of %s and triggers %s again; %s (%d at once, then one every %s)",
			tag, jid, sls, sls, verdict, l.o.LoopBurst, time.Duration(float64(time.Second)/l.o.LoopRate)), "suppressed", n+boolInt(!ok))
	}
	return ok
}

// generalTag replaces job ids in a tag by "*".
func generalTag(tag string) string {
	if !strings.ContainsAny(tag, "0123456789") {
		return tag
	}
	parts := strings.Split(tag, "/")
	for i, p := range parts {
		if len(p) >= 20 && saltjid.Is(p) {
			parts[i] = "*"
		}
	}
	return strings.Join(parts, "/")
}

// origins remembers which reaction chain started each job id (bounded,
// oldest forgotten first).
type origins struct {
	mu    sync.Mutex
	m     map[string][]string
	ring  []string
	next  int
	limit int
}

func newOrigins(limit int) *origins {
	return &origins{m: map[string][]string{}, ring: make([]string, limit), limit: limit}
}

// add records the chain (reactor files, oldest first) behind jid.
func (o *origins) add(jid string, chain []string) {
	if len(chain) > maxChain {
		chain = chain[len(chain)-maxChain:]
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.m[jid]; !ok {
		if old := o.ring[o.next]; old != "" {
			delete(o.m, old)
		}
		o.ring[o.next] = jid
		o.next = (o.next + 1) % o.limit
	}
	o.m[jid] = chain
}

// chainOf returns the reaction chain that caused an event, found through
// the job ids in its tag, its data's jid, or the __pub_jid that
// event.send adds when a job fires an event; and the jid it was found by.
func (o *origins) chainOf(tag string, data *payload.Map) ([]string, string) {
	var cands []string
	if strings.HasPrefix(tag, "salt/") || saltjid.Is(tag) {
		for _, p := range strings.Split(tag, "/") {
			if len(p) >= 20 && saltjid.Is(p) {
				cands = append(cands, p)
			}
		}
	}
	add := func(m *payload.Map, k string) {
		if m == nil {
			return
		}
		if s, ok := mapGet(m, k).(string); ok && s != "" {
			cands = append(cands, s)
		}
	}
	add(data, "jid")
	add(data, "__pub_jid")
	if inner, ok := mapGet(data, "data").(*payload.Map); ok {
		add(inner, "__pub_jid")
		add(inner, "jid")
	}
	if len(cands) == 0 {
		return nil, ""
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range cands {
		if ch, ok := o.m[c]; ok {
			return ch, c
		}
	}
	return nil, ""
}

func boolInt(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

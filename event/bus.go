package event

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Default limits of a Bus.
const (
	// DefaultQueue is the subscription queue length used when Subscribe
	// is given 0 or less.
	DefaultQueue = 1024
	// MaxQueue caps any subscription queue.
	MaxQueue = 1 << 20
	// DefaultDropLogEvery is how many drops pass between two log lines
	// about the same slow subscriber.
	DefaultDropLogEvery = 1000
)

// Options configure a Bus. The zero value is usable.
type Options struct {
	// MaxEventSize is Salt's max_event_size: data whose encoding is larger
	// is trimmed (see Trim). 0 means DefaultMaxEventSize; negative
	// disables trimming.
	MaxEventSize int
	// QueueSize is the default subscription queue (0: DefaultQueue).
	QueueSize int
	// DropLogEvery limits logging of a slow subscriber's lost events to
	// the first drop and then one line per this many (0: DefaultDropLogEvery).
	DropLogEvery uint64
	// Logger receives warnings (nil: slog.Default()).
	Logger *slog.Logger
	// Now supplies the time for _stamp (nil: time.Now).
	Now func() time.Time
}

// sink receives every published event. deliver must never block.
type sink interface {
	deliver(ev Event, packed []byte)
	closeSink()
}

// Bus is an in-process event hub. Publish never waits for subscribers: a
// subscriber whose queue is full loses the event (counted in Dropped).
// All methods are safe for concurrent use.
type Bus struct {
	maxSize  int
	queue    int
	logEvery uint64
	log      *slog.Logger
	now      func() time.Time

	mu     sync.Mutex // serialises changes to sinks and closed
	sinks  atomic.Pointer[[]sink]
	closed atomic.Bool
	done   chan struct{}
	// dropped counts events lost by all subscriptions (Dropped).
	dropped atomic.Uint64
}

// New returns a running bus.
func New(opts Options) *Bus {
	b := &Bus{
		maxSize:  opts.MaxEventSize,
		queue:    opts.QueueSize,
		logEvery: opts.DropLogEvery,
		log:      opts.Logger,
		now:      opts.Now,
		done:     make(chan struct{}),
	}
	if b.maxSize == 0 {
		b.maxSize = DefaultMaxEventSize
	}
	if b.queue <= 0 {
		b.queue = DefaultQueue
	}
	if b.queue > MaxQueue {
		b.queue = MaxQueue
	}
	if b.logEvery == 0 {
		b.logEvery = DefaultDropLogEvery
	}
	if b.log == nil {
		b.log = slog.Default()
	}
	if b.now == nil {
		b.now = time.Now
	}
	empty := []sink{}
	b.sinks.Store(&empty)
	return b
}

// Publish puts ev on the bus without blocking: it adds _stamp when missing
// (on a copy; the caller's map is not modified), trims data over
// MaxEventSize and hands the event to every matching subscriber. Errors
// (closed bus, empty tag, unencodable data) are logged; use Fire to get
// them. The caller must not modify ev.Data afterwards.
func (b *Bus) Publish(ev Event) {
	if err := b.Fire(ev); err != nil {
		if errors.Is(err, ErrClosed) {
			b.log.Debug("event: publish on closed bus", "tag", ev.Tag)
			return
		}
		b.log.Warn("event: publish failed", "tag", ev.Tag, "err", err)
	}
}

// Fire is Publish returning the reason an event was not published.
func (b *Bus) Fire(ev Event) error { return b.fire(ev, false) }

// FireOwned is Fire for data the caller hands over and no longer uses
// (a master's return event: the load it decoded from the minion's
// request): a missing _stamp is set on ev.Data itself rather than on a
// copy, which spares a copy of the map per event. The event and its
// bytes are those Fire would publish.
func (b *Bus) FireOwned(ev Event) error { return b.fire(ev, true) }

// fire prepares ev (own: its data is the caller's to hand over, see
// prepareData) and delivers it to every subscriber.
func (b *Bus) fire(ev Event, own bool) error {
	if b.closed.Load() {
		return ErrClosed
	}
	ev, packed, err := prepareData(ev, b.now(), b.maxSize, own)
	if err != nil {
		return err
	}
	for _, s := range *b.sinks.Load() {
		s.deliver(ev, packed)
	}
	return nil
}

// Done is closed when the bus is closed.
func (b *Bus) Done() <-chan struct{} { return b.done }

// Close ends every subscription (their channels are closed after any
// queued events) and makes Publish a no-op. It is idempotent.
func (b *Bus) Close() {
	b.mu.Lock()
	if b.closed.Swap(true) {
		b.mu.Unlock()
		return
	}
	old := *b.sinks.Load()
	empty := []sink{}
	b.sinks.Store(&empty)
	close(b.done)
	b.mu.Unlock()
	for _, s := range old {
		s.closeSink()
	}
}

// addSink registers s; it returns false when the bus is closed.
func (b *Bus) addSink(s sink) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return false
	}
	old := *b.sinks.Load()
	next := make([]sink, len(old), len(old)+1)
	copy(next, old)
	next = append(next, s)
	b.sinks.Store(&next)
	return true
}

// removeSink unregisters s.
func (b *Bus) removeSink(s sink) {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := *b.sinks.Load()
	next := make([]sink, 0, len(old))
	for _, x := range old {
		if x != s {
			next = append(next, x)
		}
	}
	b.sinks.Store(&next)
}

// Subscribers returns the number of registered subscriptions and servers.
func (b *Bus) Subscribers() int { return len(*b.sinks.Load()) }

// Dropped returns how many events subscriptions of the bus lost because
// their queue was full, over all subscriptions since New (the IPC
// server's readers count theirs in IPCServer.Dropped).
func (b *Bus) Dropped() uint64 { return b.dropped.Load() }

// Subscription is one consumer's bounded queue of matching events.
type Subscription struct {
	bus     *Bus
	match   Matcher
	ch      chan Event
	mu      sync.Mutex // guards closed and sends on ch
	closed  bool
	dropped atomic.Uint64
}

// Subscribe returns a subscription receiving events whose tag match
// accepts (nil: all events), queueing up to queue events (0 or less: the
// bus default; capped at MaxQueue). Events arriving while the queue is
// full are dropped for this subscription only. On a closed bus the
// subscription's channel is already closed.
func (b *Bus) Subscribe(match Matcher, queue int) *Subscription {
	if match == nil {
		match = All()
	}
	if queue <= 0 {
		queue = b.queue
	}
	if queue > MaxQueue {
		queue = MaxQueue
	}
	s := &Subscription{bus: b, match: match, ch: make(chan Event, queue)}
	if !b.addSink(s) {
		s.closed = true
		close(s.ch)
	}
	return s
}

// C returns the event channel. It is closed when the subscription or the
// bus is closed; queued events can still be read first.
func (s *Subscription) C() <-chan Event { return s.ch }

// Dropped returns how many matching events were lost because the queue
// was full.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Close ends the subscription and closes its channel. It is idempotent.
func (s *Subscription) Close() {
	if s.shut() {
		s.bus.removeSink(s)
	}
}

// shut closes the channel once; it reports whether this call did it.
func (s *Subscription) shut() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.closed = true
	close(s.ch)
	return true
}

func (s *Subscription) closeSink() { s.shut() }

func (s *Subscription) deliver(ev Event, _ []byte) {
	if !s.match.Match(ev.Tag) {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	sent := true
	select {
	case s.ch <- ev:
	default:
		sent = false
	}
	s.mu.Unlock()
	if !sent {
		n := s.dropped.Add(1)
		s.bus.dropped.Add(1)
		if n == 1 || n%s.bus.logEvery == 0 {
			s.bus.log.Warn("event: slow subscriber, events dropped",
				"dropped_total", n, "queue", cap(s.ch), "tag", ev.Tag)
		}
	}
}

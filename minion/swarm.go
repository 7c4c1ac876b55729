package minion

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math/big"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/gsalt/gsalt/wire/transport"
)

// MaxSwarm bounds the identities of one swarm process.
const MaxSwarm = 100000

// SwarmGCPercent is the collector target gsalt-minion --swarm runs with
// (GOGC overrides it). A swarm's live heap is its identities' state, kept
// for the process's life, and a job leaves a few KiB of garbage per
// identity: at Go's default of 100 a 5,000-identity process collected
// about every 10 pings of all its identities, each collection marking
// 250-400 MB and the stacks of thousands of goroutines. At 200 it
// collects half as often (see the README's Benchmarks notes).
const SwarmGCPercent = 200

// SwarmOptions configures RunSwarm.
type SwarmOptions struct {
	// Config is the minion configuration shared by every identity.
	Config *config.Minion
	// N is the number of identities.
	N int
	// Registry is shared by all identities; nil builds one.
	Registry *modules.Registry
	// Logger receives the logs; nil means slog.Default().
	Logger *slog.Logger
	// SourceNet, when set, is a network (CIDR) whose addresses the
	// identities connect from, identity i from its (i+1)th address (as
	// source_address), as N minions on N hosts would: from one address,
	// every connection of every identity to the master's two ports takes
	// an ephemeral port of the same range, and past ~20,000 connections
	// the kernel's search for a free one (__inet_hash_connect) was nearly
	// half the machine's CPU in a 10,000-identity auth storm. The
	// addresses must be local (any of 127.0.0.0/8 on Linux).
	SourceNet string
	// Started, when non-nil, receives each minion once it is created,
	// before it connects (for tests and progress reports).
	Started func(*Minion)
}

// SwarmID is the id of the i-th swarm identity: <id>-0000, <id>-0001, ...
func SwarmID(base string, i int) string { return fmt.Sprintf("%s-%04d", base, i) }

// RunSwarm runs N minion identities in this process, each a full minion
// with its own key pair and master key cache under pki_dir/<identity>/ and
// its own cache under cachedir/<identity>/; they share nothing but the
// process, the registry and the grains computed once at start (each with
// its own id grain). It returns when ctx is done (nil) or every minion has
// stopped, joining their fatal errors.
func RunSwarm(ctx context.Context, o SwarmOptions) error {
	if o.Config == nil {
		return errors.New("minion: SwarmOptions.Config is required")
	}
	if o.N <= 0 || o.N > MaxSwarm {
		return fmt.Errorf("minion: swarm size %d out of range 1..%d", o.N, MaxSwarm)
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	reg := o.Registry
	if reg == nil {
		var err error
		if reg, err = NewRegistry(); err != nil {
			return err
		}
	}
	sources, err := swarmSources(o.SourceNet, o.N)
	if err != nil {
		return err
	}
	base := o.Config.ID
	g, err := LoadGrains(ctx, o.Config, base, log)
	if err != nil {
		return err
	}
	freeze(g)
	shared := swarmShared{opts: baseOptions(o.Config), matcher: target.New(target.Options{Logger: log}), verified: newVerifiedPubs(), opened: newOpenedPubs(),
		clock:   newBeaconClock(beacons.New(beacons.Options{Opts: o.Config.Opts, Logger: log}).LoopInterval()),
		workers: newJobWorkers(ctx, max(jobWorkersMaxIdle, o.N), jobWorkersIdleFor), gates: &transport.DialGates{}}
	go shared.clock.run(ctx)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	sem := make(chan struct{}, max(1, runtime.NumCPU()))
	for i := 0; i < o.N; i++ {
		id := SwarmID(base, i)
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return nil
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := newSwarmMinion(o, shared, reg, g, log, id, sources(i))
			<-sem
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", id, err))
				mu.Unlock()
				return
			}
			if o.Started != nil {
				o.Started(m)
			}
			if err := m.Run(ctx); err != nil {
				log.Error("swarm minion stopped", "minion", id, "err", err)
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", id, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return errors.Join(errs...)
}

// swarmShared holds what the identities of a swarm share.
type swarmShared struct {
	opts     *payload.Map
	matcher  *target.Matcher
	verified *verifiedPubs
	opened   *openedPubs
	clock    *beaconClock
	workers  *jobWorkers
	// gates: while a master is down one identity probes it, the others
	// wait (their in-flight returns, re-authentications and publisher
	// reconnections).
	gates *transport.DialGates
}

func newSwarmMinion(o SwarmOptions, sh swarmShared, reg *modules.Registry, g *payload.Map, log *slog.Logger, id, source string) (*Minion, error) {
	return New(Options{
		baseOpts:      sh.opts,
		matcher:       sh.matcher,
		verified:      sh.verified,
		opened:        sh.opened,
		clock:         sh.clock,
		workers:       sh.workers,
		Config:        o.Config,
		ID:            id,
		SourceAddress: source,
		PKIDir:        filepath.Join(o.Config.PKIDir, id),
		CacheDir:      filepath.Join(o.Config.CacheDir, id),
		Registry:      reg,
		Grains:        g,
		Logger:        log,
		SubQueue:      swarmSubQueue,
		DialGates:     sh.gates,
	})
}

// swarmSources returns the source address of identity i: the (i+1)th
// address of cidr, or "" for every identity when cidr is "". A network
// smaller than n+1 addresses is an error.
func swarmSources(cidr string, n int) (func(i int) string, error) {
	if cidr == "" {
		return func(int) string { return "" }, nil
	}
	_, ipn, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, fmt.Errorf("minion: swarm source network: %w", err)
	}
	ones, bits := ipn.Mask.Size()
	if host := bits - ones; host < 63 && n+1 > 1<<host {
		return nil, fmt.Errorf("minion: swarm source network %s has fewer than %d addresses", cidr, n+1)
	}
	base := new(big.Int).SetBytes(ipn.IP)
	size := len(ipn.IP)
	return func(i int) string {
		b := new(big.Int).Add(base, big.NewInt(int64(i)+1)).Bytes()
		ip := make(net.IP, size)
		copy(ip[size-len(b):], b)
		return ip.String()
	}, nil
}

// swarmSubQueue bounds each identity's queue of received publishes (a
// channel allocated up front: the default of 1,000 made ~24 KiB per
// identity; publishes are taken as fast as they arrive).
const swarmSubQueue = 128

// maxVerified bounds the publish signatures a swarm remembers.
const maxVerified = 64

// verifiedPubs remembers the publish signatures that verified, shared by
// the identities of a swarm: every identity receives the same signed
// publish from the same master key, so the RSA verification is done once
// per publish instead of once per identity. A signature that fails is not
// remembered (each identity checks it and drops the publish itself).
type verifiedPubs struct {
	mu   sync.Mutex
	seen map[[sha256.Size]byte]struct{}
	ring [][sha256.Size]byte
}

func newVerifiedPubs() *verifiedPubs {
	return &verifiedPubs{seen: map[[sha256.Size]byte]struct{}{}}
}

// verifiedKey binds the key, the signed bytes and the signature.
func verifiedKey(pub *rsa.PublicKey, blob, sig []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write(pub.N.Bytes())
	var e [8]byte
	binary.BigEndian.PutUint64(e[:], uint64(pub.E))
	h.Write(e[:])
	binary.BigEndian.PutUint64(e[:], uint64(len(blob)))
	h.Write(e[:])
	h.Write(blob)
	h.Write(sig)
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// verify checks sig over blob with pub, once per distinct triple.
func (v *verifiedPubs) verify(pub *rsa.PublicKey, blob, sig []byte) error {
	k := verifiedKey(pub, blob, sig)
	v.mu.Lock()
	_, ok := v.seen[k]
	v.mu.Unlock()
	if ok {
		return nil
	}
	if err := crypt.Verify(pub, blob, sig); err != nil {
		return err
	}
	v.mu.Lock()
	if _, ok := v.seen[k]; !ok {
		if len(v.ring) >= maxVerified {
			delete(v.seen, v.ring[0])
			v.ring = v.ring[1:]
		}
		v.seen[k] = struct{}{}
		v.ring = append(v.ring, k)
	}
	v.mu.Unlock()
	return nil
}

// PublishCache is the publish signature and decoding cache of identities
// that receive the same publishes (Options.PublishCache); a swarm has one
// of its own. Safe for concurrent use.
type PublishCache struct {
	verified *verifiedPubs
	opened   *openedPubs
}

// NewPublishCache returns an empty cache.
func NewPublishCache() *PublishCache {
	return &PublishCache{verified: newVerifiedPubs(), opened: newOpenedPubs()}
}

// maxOpened bounds the opened publishes a swarm remembers.
const maxOpened = 64

// openedPubs remembers the publishes the identities of a swarm opened:
// they all receive the same frame, encrypted with the same session key,
// so it is decoded, checked and decrypted once per publish instead of
// once per identity (with a thousand identities that was most of the
// swarm's work for a job that targets a few). A hit needs the same
// session key, master key, signature setting and frame bytes; the load
// handed out is shared and must not be modified (a targeted identity
// clones it). Failures are not remembered: each identity meets them
// itself (and re-authenticates on a bad HMAC).
type openedPubs struct {
	seed maphash.Seed
	mu   sync.Mutex
	m    map[uint64][]*openedPub
	ring []uint64

	// frames and fring are the received publish bodies kept for intern.
	fmu    sync.Mutex
	frames map[uint64][]byte
	fring  []uint64
}

// internMin is the smallest publish body intern shares (below it a copy
// per identity costs little); maxInterned bounds the bodies kept.
const (
	internMin   = 4 << 10
	maxInterned = 16
)

// intern is the identities' transport.SubOptions.Intern: a received
// publish whose body equals one another identity received recently gets
// that body's bytes, so while identities are busy (re-authenticating
// after a master restart) their queues hold one copy of each large
// publish instead of one per identity (a find_job to 10,000 ids is ~100
// KiB: 128 queued per identity took gigabytes).
func (o *openedPubs) intern(frames [][]byte) [][]byte {
	if len(frames) == 0 {
		return frames
	}
	body := frames[len(frames)-1]
	if len(body) < internMin {
		return frames
	}
	h := maphash.Bytes(o.seed, body)
	o.fmu.Lock()
	defer o.fmu.Unlock()
	if b, ok := o.frames[h]; ok && bytes.Equal(b, body) {
		frames[len(frames)-1] = b
		return frames
	}
	if o.frames == nil {
		o.frames = map[uint64][]byte{}
	}
	if len(o.fring) >= maxInterned {
		delete(o.frames, o.fring[0])
		o.fring = o.fring[1:]
	}
	if _, ok := o.frames[h]; !ok {
		o.fring = append(o.fring, h)
	}
	o.frames[h] = body
	return frames
}

type openedPub struct {
	key  string
	pub  *rsa.PublicKey // nil: not signed-checked
	body []byte
	// done is closed once load, serial and err are set (by the one
	// identity that opens the publish; the others wait for it).
	done   chan struct{}
	load   *payload.Map
	serial int64
	err    error
	// proc is the proc data encoding of the jobs of this publish.
	proc sharedProc
}

func newOpenedPubs() *openedPubs {
	return &openedPubs{seed: maphash.MakeSeed(), m: map[uint64][]*openedPub{}}
}

func samePub(a, b *rsa.PublicKey) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a == b || a.Equal(b)
}

// find returns the entry for the triple among the entries of hash h, or nil;
// o.mu is held.
func (o *openedPubs) find(h uint64, key string, pub *rsa.PublicKey, body []byte) *openedPub {
	for _, e := range o.m[h] {
		if e.key == key && samePub(e.pub, pub) && bytes.Equal(e.body, body) {
			return e
		}
	}
	return nil
}

// open returns the opened publish of body under session key and master
// key pub (nil when signatures are not checked), opening it with fn once:
// the identities that receive the frame while it is being opened wait for
// that one opening instead of each decoding it (thousands of identities
// get the same frame at the same moment; a publish to a list of 10,000 ids
// is ~100 KiB, and opening it in every identity at once took gigabytes).
// When the opening fails, each waiter opens the frame itself, so every
// identity meets the failure (a bad HMAC makes it re-authenticate).
// proc is the publish's shared proc data encoding (nil on a failure).
func (o *openedPubs) open(key string, pub *rsa.PublicKey, body []byte, fn func() (*payload.Map, int64, error)) (*payload.Map, int64, *sharedProc, error) {
	h := maphash.Bytes(o.seed, body)
	o.mu.Lock()
	e := o.find(h, key, pub, body)
	if e != nil {
		o.mu.Unlock()
		<-e.done
		if e.err != nil {
			load, serial, err := fn()
			return load, serial, nil, err
		}
		return e.load, e.serial, &e.proc, nil
	}
	e = &openedPub{key: key, pub: pub, body: bytes.Clone(body), done: make(chan struct{})}
	if len(o.ring) >= maxOpened {
		o.evictOldest()
	}
	o.m[h] = append(o.m[h], e)
	o.ring = append(o.ring, h)
	o.mu.Unlock()

	e.load, e.serial, e.err = fn()
	close(e.done)
	if e.err != nil {
		o.mu.Lock()
		o.remove(h, e)
		o.mu.Unlock()
		return nil, 0, nil, e.err
	}
	return e.load, e.serial, &e.proc, nil
}

// evictOldest drops the oldest entry; o.mu is held.
func (o *openedPubs) evictOldest() {
	old := o.ring[0]
	o.ring = o.ring[1:]
	if l := o.m[old]; len(l) > 1 {
		o.m[old] = l[1:]
	} else {
		delete(o.m, old)
	}
}

// remove drops entry e of hash h (a failed opening); o.mu is held.
func (o *openedPubs) remove(h uint64, e *openedPub) {
	l := o.m[h]
	for i, x := range l {
		if x != e {
			continue
		}
		l = append(l[:i:i], l[i+1:]...)
		if len(l) == 0 {
			delete(o.m, h)
		} else {
			o.m[h] = l
		}
		// The ring keeps one slot per entry of h; drop the newest of them.
		for j := len(o.ring) - 1; j >= 0; j-- {
			if o.ring[j] == h {
				o.ring = append(o.ring[:j:j], o.ring[j+1:]...)
				break
			}
		}
		return
	}
}

// beaconClock is the one beacon timer of a swarm: every loop interval it
// ticks the beacons of each identity that has any (beacons.Manager.Idle
// is a few lookups), instead of a timer and a goroutine wake-up per
// identity per second, which was most of an idle swarm's CPU. A tick
// runs in its own goroutine, one at a time per identity.
type beaconClock struct {
	every time.Duration
	mu    sync.Mutex
	ms    map[*Minion]*clockMember
}

// clockMember is one identity on the clock with the beacon manager it
// runs (as runBeacons captures it) and whether a tick of it is running.
type clockMember struct {
	mgr  *beacons.Manager
	fire func(context.Context, []beacons.Event)
	busy atomic.Bool
}

// BeaconClock is one beacon timer for the minions of a process that
// serves many identities (Options.BeaconClock): every loop interval it
// ticks the beacons of each joined minion that has any. Run it for the
// life of the minions.
type BeaconClock struct{ c *beaconClock }

// NewBeaconClock returns a clock ticking every loop interval (Salt's
// loop_interval; 0 means one second).
func NewBeaconClock(every time.Duration) *BeaconClock {
	return &BeaconClock{c: newBeaconClock(every)}
}

// Run ticks the joined minions until ctx ends.
func (b *BeaconClock) Run(ctx context.Context) { b.c.run(ctx) }

func newBeaconClock(every time.Duration) *beaconClock {
	if every <= 0 {
		every = time.Second
	}
	return &beaconClock{every: every, ms: map[*Minion]*clockMember{}}
}

// join puts identity m's beacon manager on the clock; fire sends its
// events.
func (c *beaconClock) join(m *Minion, mgr *beacons.Manager, fire func(context.Context, []beacons.Event)) {
	c.mu.Lock()
	c.ms[m] = &clockMember{mgr: mgr, fire: fire}
	c.mu.Unlock()
}

func (c *beaconClock) leave(m *Minion) {
	c.mu.Lock()
	delete(c.ms, m)
	c.mu.Unlock()
}

// run ticks the joined identities until ctx ends.
func (c *beaconClock) run(ctx context.Context) {
	t := time.NewTicker(c.every)
	defer t.Stop()
	var list []*clockMember
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			list = c.tick(ctx, now, list[:0])
		}
	}
}

// tick starts the beacon loop of every joined identity that has beacons
// and no loop running yet; it returns the members it started (in buf).
func (c *beaconClock) tick(ctx context.Context, now time.Time, buf []*clockMember) []*clockMember {
	c.mu.Lock()
	all := make([]*clockMember, 0, len(c.ms))
	for _, e := range c.ms {
		all = append(all, e)
	}
	c.mu.Unlock()
	started := buf
	for _, e := range all {
		if e.mgr.Idle() || !e.busy.CompareAndSwap(false, true) {
			continue
		}
		started = append(started, e)
		go func() {
			defer e.busy.Store(false)
			e.mgr.Tick(ctx, now, e.fire)
		}()
	}
	return started
}

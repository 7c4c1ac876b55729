package minion

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// replayGuardFile in the minion's cachedir keeps what the replay checks
// need across restarts: the last publish serial accepted under a session
// key (by its SHA-256) and the jid queue (minion_jid_queue_hwm jids). A
// captured publish replayed after a minion restart is then still dropped,
// by its serial (same session key) or by its jid.
const replayGuardFile = "gsalt_replay_guard.p"

// replayState is the persisted replay guard.
type replayState struct {
	keyHash string
	serial  int64
	// file is the open guard file when it is written with pwrite (it
	// could not be mapped) and size its length (saveReplayGuard). A
	// mapped guard keeps no descriptor: a fleet of 10,000 proxied
	// devices held one each, half the process's 20,000 open files (new
	// connections then failed with EMFILE).
	file *os.File
	size int64
	// dev and ino identify the mapped file (its removal check).
	dev, ino uint64
	// key is the session key keyHash was computed from (saved again for
	// every job: the hash is not recomputed while the key stays).
	key string
	// buf is the encoding buffer, reused for every save.
	buf []byte
	// checked is when the open file was last checked for removal.
	checked time.Time
	// mem is the file mapped shared (writeMapped), nil when it is not
	// mapped; used is how many of its leading bytes may be non-zero.
	mem  []byte
	used int
	// noMap is set once mapping failed (the pwrite path is used then).
	noMap bool
	// path is the guard file's path, joined once.
	path string
}

// replayPage is the granularity of the guard file's mapping: one page
// holds the key hash, the serial and ~150 jids.
const replayPage = 4096

// replayCheckEvery is how often the open guard file is checked for having
// been removed (its directory cleared), instead of a stat per job. Every
// second was still a stat for nearly every job of a 10,000-identity
// swarm pinged every 2 s (3.6% of its CPU in the 10k bench's profile).
const replayCheckEvery = 10 * time.Second

func sessionKeyHash(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// loadReplayGuard reads the persisted guard into the jid queue and the
// serial state used by the first session.
func (m *Minion) loadReplayGuard() {
	b, err := os.ReadFile(filepath.Join(m.cacheDir, replayGuardFile))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			m.log.Warn("cannot read the replay guard; replays of jobs seen before this start are not detected", "err", err)
		}
		return
	}
	// The guard is rewritten in place (saveReplayGuard): a stale tail of a
	// longer earlier version may follow the value.
	v, _, err := payload.UnmarshalPrefix(b)
	st, ok := v.(*payload.Map)
	if err == nil && !ok {
		err = payload.ErrNotMap
	}
	if err != nil {
		m.log.Warn("the replay guard file is damaged; starting a new one", "err", err)
		return
	}
	m.replay.keyHash = st.Str("key")
	m.replay.serial, _ = payload.AsInt(mustGetAny(st, "serial"))
	for _, j := range st.List("jids") {
		if s, ok := j.(string); ok && !m.jidSeen[s] {
			m.jidSeen[s] = true
			m.jidQueue = append(m.jidQueue, s)
		}
	}
}

func mustGetAny(m *payload.Map, k string) any { v, _ := m.Get(k); return v }

// serialGuardFor returns the serial guard of a new session with key: it
// continues from the persisted serial when the key is the one it was
// recorded under.
func (m *Minion) serialGuardFor(key string) *message.SerialGuard {
	g := &message.SerialGuard{}
	m.replayMu.Lock()
	defer m.replayMu.Unlock()
	if m.replay.keyHash != "" && m.replay.keyHash == sessionKeyHash(key) && m.replay.serial > 0 {
		_ = g.Accept(m.replay.serial)
	}
	return g
}

// saveReplayGuard persists the accepted serial under the session key and
// the jid queue, before the job runs.
func (m *Minion) saveReplayGuard(key string, serial int64) {
	m.replayMu.Lock()
	defer m.replayMu.Unlock()
	g := &m.replay
	if key != g.key || g.keyHash == "" {
		g.key = key
		kh := sessionKeyHash(key)
		if kh != g.keyHash {
			g.keyHash, g.serial = kh, max(serial, 0)
		}
	}
	if serial > 0 {
		g.serial = serial
	}
	m.mu.Lock()
	g.buf = appendReplayGuard(g.buf[:0], g.keyHash, g.serial, m.jidQueue)
	m.mu.Unlock()
	if err := m.writeReplayGuard(g.buf); err != nil {
		m.log.Warn("cannot persist the replay guard", "err", err)
	}
}

// writeReplayGuard writes b over the guard file, called under replayMu.
// It is rewritten for every job, so it stays mapped shared (its
// descriptor closed once mapped): the
// guard is copied into the file's pages, which the kernel writes back,
// without a system call (a pwrite per job was ~8% of a 10,000-identity
// swarm's CPU, most of it the inode time update). A msgpack value is
// self-delimiting: the rest of the page is zeroed, and a longer earlier
// version's tail is ignored by loadReplayGuard if the minion dies in
// between. Not synced, as before: a killed or restarted minion reads the
// old or the new guard. When the file cannot be mapped (the process's
// mapping limit), it is overwritten in place with one pwrite. A guard
// file that was removed (its directory cleared) is created again.
func (m *Minion) writeReplayGuard(b []byte) error {
	g := &m.replay
	if g.path == "" {
		g.path = filepath.Join(m.cacheDir, replayGuardFile)
	}
	path := g.path
	if now := time.Now(); (g.file != nil || g.mem != nil) && now.Sub(g.checked) >= replayCheckEvery {
		g.checked = now
		if g.gone(path) {
			g.closeFile()
		}
	}
	if !g.noMap {
		err := g.writeMapped(path, b)
		if err == nil {
			return nil
		}
		m.log.Debug("the replay guard is written without mapping it", "err", err)
		g.unmap()
		g.noMap = true
	}
	if g.file == nil {
		f, fi, err := openReplayGuard(path)
		if err != nil {
			return err
		}
		g.file, g.size, g.checked = f, fi.Size(), time.Now()
		g.dev, g.ino = fileID(fi)
	}
	if _, err := g.file.WriteAt(b, 0); err != nil {
		return err
	}
	if int64(len(b)) < g.size {
		if err := g.file.Truncate(int64(len(b))); err != nil {
			return err
		}
	}
	g.size = int64(len(b))
	return nil
}

// openReplayGuard opens (creating) the guard file at path.
func openReplayGuard(path string) (*os.File, os.FileInfo, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// fileID is the device and inode of fi (zero where the system has none).
func fileID(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}

// gone reports whether the guard file written (mapped or open) is no
// longer the one at path: removed (its directory cleared) or replaced.
func (g *replayState) gone(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return true
	}
	dev, ino := fileID(fi)
	return dev != g.dev || ino != g.ino
}

// writeMapped copies b to the start of the mapped guard file at path
// (mapping or growing it first) and zeroes what an earlier, longer guard
// left after it. A fault on the mapping (the file truncated by another
// process) is returned as an error instead of crashing the process.
func (g *replayState) writeMapped(path string, b []byte) (err error) {
	if len(b) > len(g.mem) {
		if err := g.remap(path, len(b)); err != nil {
			return err
		}
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("minion: replay guard mapping: %v", r)
		}
	}()
	copy(g.mem, b)
	if g.used > len(b) {
		clear(g.mem[len(b):g.used])
	}
	g.used = len(b)
	return nil
}

// remap maps the guard file at path with room for n bytes, in whole
// pages, growing the file (never shrinking it: what it holds stays
// readable until it is overwritten); the descriptor is closed once the
// file is mapped.
func (g *replayState) remap(path string, n int) error {
	f, fi, err := openReplayGuard(path)
	if err != nil {
		return err
	}
	defer f.Close()
	cur := fi.Size()
	size := max((max(int64(n), cur)+replayPage-1)/replayPage*replayPage, replayPage)
	if size > cur {
		if err := f.Truncate(size); err != nil {
			return err
		}
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("minion: mapping the replay guard: %w", err)
	}
	used := g.used
	if g.mem == nil {
		used = int(cur) // unknown: zero everything after the next guard
	}
	g.unmap()
	if g.file != nil {
		g.file.Close()
		g.file = nil
	}
	g.mem, g.used, g.size = mem, used, size
	g.dev, g.ino = fileID(fi)
	if g.checked.IsZero() {
		g.checked = time.Now()
	}
	return nil
}

// unmap releases the guard file's mapping, if any.
func (g *replayState) unmap() {
	if g.mem != nil {
		_ = syscall.Munmap(g.mem)
		g.mem, g.used = nil, 0
	}
}

// closeFile unmaps and closes the guard file.
func (g *replayState) closeFile() {
	g.unmap()
	if g.file != nil {
		g.file.Close()
	}
	g.file, g.size = nil, 0
}

// closeReplayGuard closes the guard file (the minion stops).
func (m *Minion) closeReplayGuard() {
	m.replayMu.Lock()
	defer m.replayMu.Unlock()
	m.replay.closeFile()
}

// appendReplayGuard appends the guard {"key": keyHash, "serial": serial,
// "jids": jids} to b, byte for byte what payload.MarshalBin writes for that
// map, without building it (it is saved for every job of every identity).
func appendReplayGuard(b []byte, keyHash string, serial int64, jids []string) []byte {
	b = append(b, 0x83)
	b = appendMsgpackStr(b, "key")
	b = appendMsgpackStr(b, keyHash)
	b = appendMsgpackStr(b, "serial")
	b = appendMsgpackInt(b, serial)
	b = appendMsgpackStr(b, "jids")
	switch n := len(jids); {
	case n < 16:
		b = append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		b = append(b, 0xdc, byte(n>>8), byte(n))
	default:
		b = append(b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	for _, j := range jids {
		b = appendMsgpackStr(b, j)
	}
	return b
}

// appendMsgpackStr appends s as a msgpack str (valid UTF-8; a jid or hex).
func appendMsgpackStr(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = append(b, 0xda, byte(n>>8), byte(n))
	default:
		b = append(b, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, s...)
}

// appendMsgpackInt appends n in msgpack's most compact integer form.
func appendMsgpackInt(b []byte, n int64) []byte {
	if n < 0 {
		switch {
		case n >= -32:
			return append(b, byte(n))
		case n >= math.MinInt8:
			return append(b, 0xd0, byte(n))
		case n >= math.MinInt16:
			return append(b, 0xd1, byte(n>>8), byte(n))
		case n >= math.MinInt32:
			return append(b, 0xd2, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
	}
	switch {
	case n < 128:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xcc, byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xcd, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return append(b, 0xce, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
}

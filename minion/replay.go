package minion

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

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
	// file is the open guard file and size its length (saveReplayGuard).
	file *os.File
	size int64
}

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
	kh := sessionKeyHash(key)
	if serial > 0 || kh != m.replay.keyHash {
		m.replay.keyHash, m.replay.serial = kh, max(serial, 0)
	}
	m.mu.Lock()
	jids := make([]any, 0, len(m.jidQueue))
	for _, j := range m.jidQueue {
		jids = append(jids, j)
	}
	m.mu.Unlock()
	b, err := payload.MarshalBin(payload.NewMap("key", m.replay.keyHash, "serial", m.replay.serial, "jids", jids))
	if err == nil {
		err = m.writeReplayGuard(b)
	}
	if err != nil {
		m.log.Warn("cannot persist the replay guard", "err", err)
	}
}

// writeReplayGuard writes b over the guard file, called under replayMu.
// It is rewritten for every job, so it stays open and is overwritten in
// place with one write (a msgpack value is self-delimiting: a longer
// earlier version's tail is cut off afterwards and ignored by
// loadReplayGuard if the minion dies in between), not synced: a killed
// or restarted minion reads the old or the new guard. A guard file that
// was removed (its directory cleared) is created again.
func (m *Minion) writeReplayGuard(b []byte) error {
	g := &m.replay
	if g.file != nil {
		if fi, err := g.file.Stat(); err != nil || replayFileGone(fi) {
			g.file.Close()
			g.file, g.size = nil, 0
		}
	}
	if g.file == nil {
		if err := os.MkdirAll(m.cacheDir, 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(m.cacheDir, replayGuardFile), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return err
		}
		g.file, g.size = f, fi.Size()
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

// closeReplayGuard closes the guard file (the minion stops).
func (m *Minion) closeReplayGuard() {
	m.replayMu.Lock()
	defer m.replayMu.Unlock()
	if m.replay.file != nil {
		m.replay.file.Close()
		m.replay.file, m.replay.size = nil, 0
	}
}

// replayFileGone reports whether the open guard file was unlinked.
func replayFileGone(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}

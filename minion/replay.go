package minion

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gsalt/gsalt/internal/atomicfile"
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
	st, err := payload.UnmarshalMap(b)
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
		if err = os.MkdirAll(m.cacheDir, 0o700); err == nil {
			// Rewritten for every job: replaced atomically (a restarted
			// minion reads the old or the new guard) but not fsynced, which
			// cost two fsyncs per job and identity.
			err = atomicfile.Replace(filepath.Join(m.cacheDir, replayGuardFile), b, 0o600)
		}
	}
	if err != nil {
		m.log.Warn("cannot persist the replay guard", "err", err)
	}
}

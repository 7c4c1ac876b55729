package minion

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/gsalt/gsalt/wire/transport"
)

// wireLimits bounds what the minion decodes from the master.
var wireLimits = payload.Limits{MaxSize: 100 << 20, MaxDepth: 256}

// session is what one successful _auth gives the minion.
type session struct {
	crypticle   *crypt.Crypticle
	key         string
	publishPort int
	masterPub   *rsa.PublicKey
	// serial is the publish replay guard; it is shared with the previous
	// session when the master handed out the same key again.
	serial *message.SerialGuard
}

// current returns the session of the primary master, or nil before the
// first auth.
func (m *Minion) current() *session { return m.linkSession(m.primary()) }

// masterPubPath is the cached master key, minion_master.pub.
func (m *Minion) masterPubPath() string { return filepath.Join(m.pkiDir, "minion_master.pub") }

// autosignGrains is the autosign_grains map of the _auth load.
func (m *Minion) autosignGrains() *payload.Map {
	names := m.cfg.Opts.StrList("autosign_grains")
	if len(names) == 0 {
		return nil
	}
	g := m.Grains()
	out := &payload.Map{}
	for _, n := range names {
		v, _ := g.Get(n)
		out.Set(n, v)
	}
	return out
}

// checkMasterReachable tries one TCP connection to the master before an
// _auth exchange and logs a failure at once at warning with its real
// reason (a master name that does not resolve, a refused connection), once
// per reason, instead of waiting for the exchange's timeouts.
func (m *Minion) checkMasterReachable(ctx context.Context, l *link) {
	var d net.Dialer
	if m.source != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(m.source)}
	}
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, addr := l.target()
	c, err := d.DialContext(dctx, "tcp", addr)
	reason := ""
	if err != nil {
		reason = err.Error()
	} else {
		c.Close()
	}
	m.mu.Lock()
	last := l.lastDialErr
	l.lastDialErr = reason
	m.mu.Unlock()
	switch {
	case reason != "" && reason != last:
		m.log.Warn("cannot reach the master; retrying", "master", addr, "err", err)
	case reason == "" && last != "":
		m.log.Info("the master is reachable again", "master", addr)
	}
}

// signIn makes one _auth exchange with l (with Salt's auth_tries and
// auth_timeout for transport failures, one try when failFast) and checks
// the reply.
func (m *Minion) signIn(ctx context.Context, l *link, failFast bool) (*message.AuthResult, error) {
	if l == nil {
		return nil, ErrNoMaster
	}
	_, addr := l.target()
	cached, err := os.ReadFile(m.masterPubPath())
	if err != nil {
		cached = nil
	}
	var masterPub *rsa.PublicKey
	if cached != nil {
		if masterPub, err = crypt.ParsePublicKeyPEM(cached); err != nil {
			return nil, fmt.Errorf("minion: cached master key %s: %w", m.masterPubPath(), err)
		}
	}
	si, err := message.NewSignIn(m.id, m.pubPEM, masterPub, m.autosignGrains())
	if err != nil {
		return nil, err
	}
	frame, err := message.EncodeClearRequest(si.Load)
	if err != nil {
		return nil, err
	}
	tries := m.cfg.AuthTries
	if tries <= 0 {
		tries = 7
	}
	if failFast {
		// eval_master sets auth_tries to 0 in failover: one attempt, then
		// the next master.
		tries = 1
	}
	timeout := time.Duration(m.cfg.AuthTimeout) * time.Second
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	if m.authSlots != nil {
		select {
		case m.authSlots <- struct{}{}:
			defer func() { <-m.authSlots }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// The probe only when the master was not reached last time: after a
	// master restart 10,000 re-authenticating minions would each make one
	// more connection to a master whose listen backlog they already fill.
	m.mu.Lock()
	reached := l.reached
	m.mu.Unlock()
	if !reached {
		m.checkMasterReachable(ctx, l)
	}
	// An earlier try keeps waiting while the next one is sent: a master
	// busy with a crowd of re-authenticating minions answers late, and
	// its answer still counts (see transport.ReqClient.KeepWaiting).
	// The connection that gets the reply stays open in the request pool:
	// the returns and other requests that follow the sign-in use it.
	client := transport.ReqClient{Addr: addr, Tries: tries, Timeout: timeout, Logger: m.log, KeepWaiting: !failFast, Gate: m.gates.For(addr), Pool: m.reqPool(addr), Source: m.source}
	reply, err := client.Send(ctx, frame)
	m.mu.Lock()
	l.reached = err == nil
	m.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("minion: _auth: %w", err)
	}
	res, err := message.OpenAuthReplySigned(reply, si, m.priv, cached, wireLimits, m.masterKeySign())
	if err != nil {
		m.logMasterKeySign(err, l.master)
		return nil, err
	}
	if res.Status != message.AuthAccepted {
		return res, nil
	}
	pemText := res.MasterPubPEM
	if pemText == nil {
		pemText = cached
	}
	if want := m.cfg.MasterFinger; want != "" {
		got, err := crypt.Fingerprint(pemText, m.cfg.HashType)
		if err != nil || got != want {
			return nil, fmt.Errorf("%w: got %s, want %s", ErrMasterFinger, got, want)
		}
	}
	if res.CacheKey {
		if err := os.WriteFile(m.masterPubPath(), res.MasterPubPEM, 0o644); err != nil {
			return nil, fmt.Errorf("minion: caching the master key: %w", err)
		}
		if m.cfg.VerifyMasterPubkeySign {
			m.log.Info(fmt.Sprintf("Received signed and verified master pubkey from master %s", l.master), "path", m.masterPubPath())
		} else {
			m.log.Info("trusting the master's key on first contact", "path", m.masterPubPath())
		}
	}
	return res, nil
}

// masterSignPubPath is <pki_dir>/<master_sign_key_name>.pub, the key that
// signs the master's public key (verify_master_pubkey_sign).
func (m *Minion) masterSignPubPath() string {
	name := m.cfg.MasterSignKeyName
	if name == "" {
		name = "master_sign"
	}
	return filepath.Join(m.pkiDir, name+".pub")
}

// masterKeySign reads the signed-master-key options and master_sign.pub
// (read at every sign-in, as Salt does, so a key copied in later counts).
func (m *Minion) masterKeySign() message.MasterKeySign {
	ks := message.MasterKeySign{Verify: m.cfg.VerifyMasterPubkeySign, Always: m.cfg.AlwaysVerifySignature}
	if !ks.Verify && !ks.Always {
		return ks
	}
	data, err := os.ReadFile(m.masterSignPubPath())
	if err != nil {
		return ks
	}
	if ks.SignPub, err = crypt.ParsePublicKeyPEM(data); err != nil {
		m.log.Error("cannot read the master signing key", "path", m.masterSignPubPath(), "err", err)
	}
	return ks
}

// logMasterKeySign logs a signed-master-key failure with Salt's texts.
func (m *Minion) logMasterKeySign(err error, master string) {
	switch {
	case errors.Is(err, message.ErrAuthDeps) && m.cfg.VerifyMasterPubkeySign:
		m.log.Error("The master did not send its public-key signature, but signature verification is enabled on the minion. " +
			"Either disable signature verification on the minion or enable signing the public on the master!")
	case errors.Is(err, message.ErrAuthDeps):
		m.log.Error("The masters sent its public-key signature, but signature verification is not enabled on the minion. " +
			"Either enable signature verification on the minion or disable signing the public key on the master!")
	case errors.Is(err, message.ErrMasterKeySig):
		if _, statErr := os.Stat(m.masterSignPubPath()); statErr != nil {
			m.log.Error(fmt.Sprintf("Verification public key %s does not exist. You need to copy it from the master to the minions pki directory",
				filepath.Base(m.masterSignPubPath())))
		}
		m.log.Error(fmt.Sprintf("Received signed public-key from master %s but signature verification failed!", master), "err", err)
	}
}

// authenticate signs in until the master accepts the key. It waits
// acceptance_wait_time between attempts while the key is pending (doubling
// up to acceptance_wait_time_max), retries failed attempts the same way,
// and returns ErrRejected (after Salt's pause) when the key is rejected
// and rejected_retry is off, ErrMasterFinger on a fingerprint mismatch and
// ErrPending for a caller. With failFast (a failover list) a master that
// cannot be reached is given up at once and its error returned.
func (m *Minion) authenticate(ctx context.Context, l *link, failFast bool) (*session, error) {
	wait := seconds(m.cfg.AcceptanceWaitTime)
	if wait <= 0 {
		wait = 10 * time.Second
	}
	waitMax := seconds(m.cfg.AcceptanceWaitTimeMax)
	grow := func() {
		// Salt doubles the wait while it is below the maximum (so the
		// last wait may exceed it, as in AsyncAuth._authenticate).
		if wait < waitMax {
			wait += wait
		}
	}
	for {
		res, err := m.signIn(ctx, l, failFast)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch {
		case err != nil && failFast && !errors.Is(err, ErrMasterFinger):
			m.setAuthErr(err)
			return nil, err
		case errors.Is(err, ErrMasterFinger):
			m.setAuthErr(err)
			m.log.Error("the master's public key fingerprint does not match master_finger; exiting", "err", err)
			return nil, err
		case errors.Is(err, ErrNoMaster):
			return nil, err
		case err != nil && m.caller:
			m.setAuthErr(err)
			return nil, err
		case errors.Is(err, message.ErrMasterKeyChanged):
			m.setAuthErr(err)
			m.log.Error("The Salt Master server's public key did not authenticate! If you are confident that you are "+
				"connecting to a valid Salt Master, then remove the master public key and restart the Salt Minion.",
				"path", m.masterPubPath())
		case err != nil:
			m.setAuthErr(err)
			m.log.Warn("authentication with the master failed", "master", l.master, "err", err)
		case res.Status == message.AuthAccepted:
			m.setAuthErr(nil)
			return m.newSession(l, res)
		case res.Status == message.AuthRejected && !m.cfg.RejectedRetry:
			m.setAuthErr(ErrRejected)
			m.log.Error("The Salt Master has rejected this minion's public key! To repair this issue, delete the public " +
				"key for this minion on the Salt Master and restart this minion. The minion will now exit.")
			d := m.rejDelay
			if d == 0 {
				d = jitter(10*time.Second, 20*time.Second)
			}
			if err := sleep(ctx, d); err != nil {
				return nil, err
			}
			return nil, ErrRejected
		case res.Status == message.AuthRejected:
			m.setAuthErr(ErrRejected)
			m.log.Error("The Salt Master has rejected this minion's public key. The minion will attempt to re-authenticate.")
		case res.Status == message.AuthFull:
			m.setAuthErr(errors.New("minion: the master is full (max_minions)"))
			m.log.Warn("the master has reached max_minions")
		default:
			m.setAuthErr(ErrPending)
			if m.caller {
				return nil, ErrPending
			}
			m.log.Error("The Salt Master has cached the public key for this node, this salt minion will wait before attempting to re-authenticate",
				"wait", wait)
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
		grow()
	}
}

// newSession installs the session of an accepted auth with l.
func (m *Minion) newSession(l *link, res *message.AuthResult) (*session, error) {
	c, err := crypt.NewCrypticle(res.SessionKey)
	if err != nil {
		return nil, err
	}
	var pemText []byte
	if res.MasterPubPEM != nil {
		pemText = res.MasterPubPEM
	} else if pemText, err = os.ReadFile(m.masterPubPath()); err != nil {
		return nil, err
	}
	mp, err := crypt.ParsePublicKeyPEM(pemText)
	if err != nil {
		return nil, err
	}
	s := &session{crypticle: c, key: res.SessionKey, publishPort: res.PublishPort, masterPub: mp}
	fresh := m.serialGuardFor(res.SessionKey)
	m.mu.Lock()
	if old := l.sess; old != nil && old.key == res.SessionKey {
		s.serial = old.serial
	} else {
		s.serial = fresh
	}
	l.sess = s
	m.mu.Unlock()
	m.authCount.Add(1)
	m.log.Info("authenticated with the master", "master", l.master)
	return s, nil
}

// reauth replaces l's stale session with a fresh one, unless another
// goroutine already did so since stale was read. A fatal authentication
// error stops the minion.
func (m *Minion) reauth(ctx context.Context, l *link, stale *session) (*session, error) {
	if l == nil {
		return nil, ErrNotConnected
	}
	l.authMu.Lock()
	defer l.authMu.Unlock()
	if cur := m.linkSession(l); cur != stale && cur != nil {
		return cur, nil
	}
	m.log.Info("re-authenticating with the master", "master", l.master)
	s, err := m.authenticate(ctx, l, false)
	if err != nil {
		m.fatal(err)
		return nil, err
	}
	m.checkPublishPort(l, s)
	return s, nil
}

// authenticateAny signs in with the first master of the list that accepts
// the key (salt-call's eval_master over a list), evaluating master_type
// func first.
func (m *Minion) authenticateAny(ctx context.Context) (*session, error) {
	if m.masterFunc != "" && len(m.links) == 0 {
		if err := m.evalMasterFunc(ctx); err != nil {
			return nil, err
		}
	}
	if len(m.links) == 0 {
		return nil, ErrNoMaster
	}
	var last error
	for _, l := range m.links {
		if err := m.resolveLink(ctx, l); err != nil {
			last = err
			continue
		}
		l.authMu.Lock()
		s, err := m.authenticate(ctx, l, len(m.links) > 1)
		l.authMu.Unlock()
		if err == nil {
			if m.mode == modeFailover {
				m.active.Store(l)
			}
			return s, nil
		}
		last = err
		if ctx.Err() != nil || errors.Is(err, ErrRejected) || errors.Is(err, ErrMasterFinger) || errors.Is(err, ErrPending) {
			return nil, err
		}
	}
	return nil, last
}

// publishAddr is where the minion subscribes to l for s.
func (m *Minion) publishAddr(l *link, s *session) (string, int) {
	port := s.publishPort
	if p := m.cfg.PublishPort; p > 0 && p != 4506 {
		port = p
	}
	host, _ := l.target()
	return joinHostPort(host, port), port
}

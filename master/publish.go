package master

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"strings"
	"time"

	saltjid "github.com/gsalt/gsalt/internal/jid"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// PublishRequest is a job to publish, with the fields of Salt's clear
// publish load (SALT-WIRE §6.1).
type PublishRequest struct {
	// Tgt is the target: a string, or a []string / []any for list targets.
	Tgt any
	// TgtType is glob (""), pcre, list, grain, grain_pcre, pillar,
	// pillar_pcre, pillar_exact, ipcidr, compound or nodegroup (nodegroup
	// targets and N@ words are expanded before publishing, as Salt's
	// LocalClient does).
	TgtType string
	// Fun is the function: a string, or a list for multi-function jobs.
	Fun any
	// Arg holds the arguments; keyword arguments travel as one trailing
	// map with "__kwarg__": true.
	Arg []any
	// Ret names returners the minions call themselves ("" for none).
	Ret string
	// JID is a pre-assigned jid ("" allocates one).
	JID string
	// User is the publishing user ("" means the master's user).
	User string
	// Timeout is the client timeout saved with the job (0: the master's
	// timeout option).
	Timeout int
	// Kwargs are Salt's client options (delimiter, metadata, ret_config,
	// ret_kwargs, module_executors, executor_opts, master_id, nocache, ...);
	// nil for none.
	Kwargs *payload.Map
	// Queued queues the job's load for the job cache instead of waiting
	// for its commit (Salt's local_cache writes it without an fsync): the
	// load still commits before any return of the job, but may not be
	// readable yet when Publish returns. For publishers that wait for
	// nothing (the reactor's cmd_async).
	Queued bool
}

// load renders r as Salt's clear publish load (without key).
func (r PublishRequest) load(m *Master) *payload.Map {
	tt := r.TgtType
	if tt == "" {
		tt = target.TypeGlob
	}
	arg := r.Arg
	if arg == nil {
		arg = []any{}
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = m.cfg.Timeout
	}
	user := r.User
	if user == "" {
		user = m.cfg.User
	}
	l := payload.NewMap("cmd", "publish", "tgt", listAny(r.Tgt), "fun", listAny(r.Fun), "arg", arg,
		"tgt_type", tt, "ret", r.Ret, "timeout", timeout, "jid", r.JID)
	if r.Kwargs != nil && r.Kwargs.Len() > 0 {
		l.Set("kwargs", r.Kwargs)
	}
	l.Set("user", user)
	return l
}

// listAny turns a []string into []any so loads hold payload types only.
func listAny(v any) any {
	if l, ok := v.([]string); ok {
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out
	}
	return v
}

// Publish publishes a job in-process, exactly as the clear publish command
// does after authentication: expected minions from the accepted keys and
// the minion data cache, a jid, the bare-jid and salt/job/<jid>/new events,
// the job saved in the job cache, the signed encrypted publish. It returns
// ErrNoMinions (with no jid) when the target matches no accepted minion.
func (m *Master) Publish(ctx context.Context, req PublishRequest) (jid string, minions, missing []string, err error) {
	if err := ctx.Err(); err != nil {
		return "", nil, nil, err
	}
	mode := saveWait
	if req.Queued {
		mode = saveQueued
	}
	return m.publishMirror(req.load(m), mode)
}

// publish is the common path of the clear publish command and the
// master's batches: publishMirror with the local_cache mirror written.
func (m *Master) publish(clear *payload.Map) (string, []string, []string, error) {
	return m.publishMirror(clear, saveMirror)
}

// saveMode says how publishMirror saves a job's load.
type saveMode int

const (
	// saveWait waits for the job cache's commit.
	saveWait saveMode = iota
	// saveMirror waits for it and writes the local_cache mirror too.
	saveMirror
	// saveQueued queues the write without waiting (PublishRequest.Queued).
	saveQueued
)

// publishMirror is the common path of Publish and the clear publish
// command. clear is the clear load (key already removed); its jid is set.
// saveMirror writes the local_cache files Python's LocalClient reads (see
// localcache.go); in-process publishers (reactor, orchestrate, runners)
// have no such client waiting, and the three files per job were a
// quarter of the master's CPU in a reactor publishing jobs.
func (m *Master) publishMirror(clear *payload.Map, save saveMode) (string, []string, []string, error) {
	if m.ctx.Err() != nil {
		return "", nil, nil, ErrClosed
	}
	fun, ok := clear.Get("fun")
	if !ok || !validFun(fun) {
		return "", nil, nil, fmt.Errorf("%w: fun must be a function name or a list of them", ErrBadRequest)
	}
	tgt, ok := clear.Get("tgt")
	if !ok {
		return "", nil, nil, fmt.Errorf("%w: no tgt", ErrBadRequest)
	}
	if _, ok := clear.Get("arg"); !ok {
		return "", nil, nil, fmt.Errorf("%w: no arg", ErrBadRequest)
	}
	tgtType := target.TypeGlob
	if v, ok := clear.Get("tgt_type"); ok {
		s, ok := v.(string)
		if !ok {
			return "", nil, nil, fmt.Errorf("%w: tgt_type is %s", ErrBadRequest, payload.TypeName(v))
		}
		tgtType = s
	}
	rtgt, rtype, err := target.ResolvePublishTarget(tgt, tgtType, m.cfg.Nodegroups)
	if err != nil {
		return "", nil, nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if rtype != tgtType || !sameValue(rtgt, tgt) {
		tgt, tgtType = listAny(rtgt), rtype
		clear.Set("tgt", tgt)
		clear.Set("tgt_type", tgtType)
	}
	kwargs := clear.Map("kwargs")
	delim := target.DefaultDelimiter
	if kwargs != nil {
		if d := kwargs.Str("delimiter"); d != "" {
			delim = d
		}
	}
	minions, missing, err := m.checkMinions(tgt, tgtType, delim, true)
	if err != nil {
		m.log.Info("target evaluation", "tgt", payload.Text(tgt), "tgt_type", tgtType, "err", err)
	}
	if len(minions) == 0 {
		return "", nil, missing, ErrNoMinions
	}
	if kwargs != nil && kwargs.Has("batch") {
		if sz, _ := kwargs.Get("batch"); payload.Truthy(sz) && m.batchAsyncRequired(minions, payload.Text(sz)) {
			jid, err := m.startBatch(clear, kwargs, minions)
			return jid, minions, missing, err
		}
	}
	jid := clear.Str("jid")
	if jid == "" {
		jid = m.jobs.NewJID()
	} else if !saltjid.Is(jid) {
		return "", nil, nil, fmt.Errorf("%w: %q is not a jid", ErrBadRequest, jid)
	}
	clear.Set("jid", jid)

	m.fire(jid, payload.NewMap("minions", strAny(minions)))
	m.fire(event.Tagify([]string{jid, "new"}, "job"), payload.NewMap(
		"jid", jid, "tgt_type", tgtType, "tgt", tgt, "user", clear.Str("user"),
		"fun", fun, "arg", clear.List("arg"), "minions", strAny(minions), "missing", strAny(missing)))
	if m.ext != nil {
		// Salt writes the publish load to master_job_cache always.
		m.ext.SaveLoad(jid, clear)
	}
	saved := func() {}
	if m.cfg.JobCache && !(kwargs != nil && kwargs.Bool("nocache")) {
		saved = m.saveLoad(jid, clear, minions, save)
	}
	load := m.pubLoad(clear, kwargs, delim)
	var topics []string
	if tgtType == target.TypeGlob || tgtType == target.TypePCRE || tgtType == target.TypeList {
		topics = minions
		if l, ok := tgt.([]any); ok && tgtType == target.TypeList {
			topics = topics[:0:0]
			for _, e := range l {
				topics = append(topics, payload.Text(e))
			}
		}
	}
	err = m.send(load, topics)
	saved()
	if err != nil {
		return jid, minions, missing, err
	}
	m.st.published.Add(1)
	m.log.Info("published a job", "jid", jid, "fun", payload.Text(fun), "tgt", payload.Text(tgt), "minions", len(minions))
	return jid, minions, missing, nil
}

// loadCommitWait bounds how long a publish waits for its load's commit
// before its client is answered. The commit's fsync takes 1.5-90 ms on a
// loaded machine, but can take seconds while other processes fill the
// disk (ext4 flushes their data with the job cache's journal commit; a
// goroutine dump 10 s into a loaded 10,000-minion storm had 208 return
// workers waiting on the writer's fdatasync), and the CLI's request
// timeout is the job's -t, 5 s by default. The answer does not depend on
// the commit; past the bound the write stays queued and its failure is
// logged. (The CLI time-out first seen in that storm came from the
// master's start-up, see newDataCache; three loaded 10k runs since
// counted no publish over the bound.)
const loadCommitWait = time.Second

// saveLoad starts writing a job's load to the job cache as save says and
// returns the function that finishes it; the caller publishes the job in
// between. A queued write (saveQueued) finishes at once: it is queued
// before the publish leaves, so it commits before any of the job's
// returns, and its failure is logged when the writer reaches it. With
// saveWait and saveMirror the function waits for the commit, at most
// loadCommitWait (and then writes the local_cache mirror): the commit's
// fsync overlaps sending the job instead of delaying it, and the client
// is answered once the load is stored, or once the bound has passed. The
// load's write is queued before the publish, so it still commits before
// any of the job's returns.
func (m *Master) saveLoad(jid string, clear *payload.Map, minions []string, save saveMode) (finish func()) {
	logErr := func(err error) {
		if err != nil {
			m.log.Error("cannot save the job load", "jid", jid, "err", err)
		}
	}
	if save == saveQueued {
		logErr(m.jobs.SaveLoadQueued(jid, clear, minions, logErr))
		return func() {}
	}
	wait := m.jobs.SaveLoadStart(jid, clear, minions)
	return func() {
		done := make(chan error, 1)
		go func() { done <- wait() }()
		t := time.NewTimer(loadCommitWait)
		select {
		case err := <-done:
			t.Stop()
			logErr(err)
		case <-t.C:
			m.st.slowLoadCommits.Add(1)
			m.log.Warn("the job cache has not committed the job load yet; answering the publish", "jid", jid, "waited", loadCommitWait)
			go func() { logErr(<-done) }()
		}
		if save == saveMirror {
			if err := m.mirrorLoad(jid, clear, minions); err != nil {
				m.log.Error("cannot write the local_cache job load", "jid", jid, "err", err)
			}
		}
	}
}

// pubLoad builds the published job load in Salt's key order (§6.2).
func (m *Master) pubLoad(clear, kwargs *payload.Map, delim string) *payload.Map {
	get := func(k string) any { v, _ := clear.Get(k); return v }
	load := payload.NewMap("fun", get("fun"), "arg", get("arg"), "tgt", get("tgt"), "jid", get("jid"), "ret", clear.Str("ret"))
	if v, ok := m.cfg.Opts.Get("master_id"); ok {
		load.Set("master_id", v)
	}
	if kwargs != nil {
		if v, ok := kwargs.Get("master_id"); ok {
			load.Set("master_id", v)
		}
	}
	if delim != target.DefaultDelimiter {
		load.Set("delimiter", delim)
	}
	if kwargs != nil {
		if v, ok := kwargs.Get("id"); ok {
			load.Set("id", v)
		}
	}
	if v, ok := clear.Get("tgt_type"); ok {
		load.Set("tgt_type", v)
	}
	if v, ok := clear.Get("to"); ok {
		load.Set("to", v)
	}
	if kwargs != nil {
		for _, k := range []string{"ret_config", "metadata", "module_executors", "executor_opts", "ret_kwargs"} {
			if v, ok := kwargs.Get(k); ok {
				load.Set(k, v)
			}
		}
	}
	if v, ok := clear.Get("user"); ok {
		load.Set("user", v)
	}
	return load
}

// send encrypts, signs and publishes load with the next serial.
// Publishes leave in the order of their serials; the encryption and the
// RSA signature (sign_pub_messages) of concurrent publishes run in
// parallel on the callers' goroutines. As Salt's wrap_payload, one
// signature covers the encrypted load, and the envelope is serialized
// once for every topic. With zmq_filtering one copy goes to each topic
// (minion id), or one "broadcast" copy when topics is nil.
//
// The signature is ~0.27 ms of libcrypto per publish, the reactor's
// signed jobs cost ~0.35 ms of CPU more than unsigned ones: the rest is
// the runtime handing the P of a goroutine in a long C call to another
// thread and back. A pool of GOMAXPROCS signer goroutines locked to their
// threads cost 30-60 µs more per job, and bounding the signers to
// GOMAXPROCS changed nothing (masterd BenchmarkReactorLocalJobs,
// cpu-µs/job), so each caller signs its own publish.
func (m *Master) send(load *payload.Map, topics []string) error {
	m.pubMu.Lock()
	s := m.sess.Load()
	serial := m.serial.Next()
	prev, mine := m.pubTail, make(chan struct{})
	m.pubTail = mine
	m.pubMu.Unlock()
	defer close(mine)
	var priv *rsa.PrivateKey
	if m.cfg.SignPubMessages {
		priv = m.priv
	}
	body, err := message.EncodePublish(s.c, priv, load, serial)
	if prev != nil {
		<-prev
	}
	if err != nil {
		return fmt.Errorf("master: encode publish: %w", err)
	}
	if !m.cfg.ZMQFiltering {
		return m.pub.Publish(body)
	}
	if topics == nil {
		return m.pub.Publish([]byte("broadcast"), body)
	}
	for _, id := range topics {
		if err := m.pub.Publish(idTopic(id), body); err != nil {
			return err
		}
	}
	return nil
}

// checkMinions computes the expected minions over the accepted keys.
func (m *Master) checkMinions(tgt any, tgtType, delim string, greedy bool) (minions, missing []string, err error) {
	accepted, err := m.accepted.listing()
	if err != nil {
		return nil, nil, err
	}
	var cache target.CacheFunc
	if m.cfg.MinionDataCache {
		cache = m.data.targetCache
	}
	return m.matcher.CheckMinions(tgt, tgtType, delim, accepted, cache, m.cfg.Nodegroups, greedy)
}

// clearPublish answers the clear publish command (SALT-WIRE §6.1).
func (m *Master) clearPublish(_ context.Context, load *payload.Map) any {
	keyV, _ := load.Delete("key")
	if !load.Has("user") {
		load.Set("user", m.cfg.User)
	}
	if refusal := m.publishAuth(load, keyV); refusal != nil {
		return refusal
	}
	if !load.Has("user") {
		load.Set("user", m.cfg.User)
	}
	tgt := mustGet(load, "tgt")
	jid, minions, missing, err := m.publish(load)
	switch {
	case err == nil:
	case errors.Is(err, ErrNoMinions):
		return payload.NewMap("enc", "clear", "load", payload.NewMap(
			"jid", nil, "minions", []any{},
			"error", "Master could not resolve minions for target "+pyStr(tgt)))
	default:
		m.log.Error("publish failed", "err", err)
		if jid == "" {
			return payload.NewMap("enc", "clear", "load", payload.NewMap("error", "Master failed to assign jid"))
		}
	}
	return payload.NewMap("enc", "clear", "load", payload.NewMap(
		"jid", jid, "minions", strAny(minions), "missing", strAny(missing)))
}

func mustGet(m *payload.Map, k string) any { v, _ := m.Get(k); return v }

// validFun reports whether fun is a function name or a non-empty list of
// them.
func validFun(fun any) bool {
	switch f := fun.(type) {
	case string:
		return f != ""
	case []any:
		if len(f) == 0 {
			return false
		}
		for _, e := range f {
			if s, ok := e.(string); !ok || s == "" {
				return false
			}
		}
		return true
	case []string:
		return len(f) > 0
	}
	return false
}

// sameValue compares two targets shallowly.
func sameValue(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok || bok {
		return aok && bok && as == bs
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// strAny converts ids for payload maps (never nil, so they encode as []).
func strAny(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// pyStr renders a target like Python's str(): strings as they are, lists
// as ['a', 'b'].
func pyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			if s, ok := e.(string); ok {
				parts[i] = "'" + strings.ReplaceAll(s, "'", "\\'") + "'"
			} else {
				parts[i] = pyStr(e)
			}
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case nil:
		return "None"
	}
	return payload.Text(v)
}

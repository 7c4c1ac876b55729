package master

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	saltjid "github.com/gsalt/gsalt/internal/jid"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// aesReturn handles _return (SALT-WIRE §7.2): the return is stored in the
// job cache and fired as salt/job/<jid>/ret/<id>. The reply is nil.
func (m *Master) aesReturn(_ context.Context, load *payload.Map) (any, error) {
	for _, k := range []string{"return", "jid", "id"} {
		if !load.Has(k) {
			m.log.Debug("incomplete _return ignored", "missing", k)
			return nil, nil
		}
	}
	id, _ := payloadString(load, "id")
	if !m.validID(id) {
		m.log.Warn("_return with an invalid id ignored", "id", payload.Text(mustGet(load, "id")))
		return nil, nil
	}
	pub, err := m.accepted.get(id)
	if errors.Is(err, errKeyUnreadable) {
		return nil, err
	}
	if err != nil {
		m.log.Warn("_return from a minion without an accepted key ignored", "id", id)
		return nil, nil
	}
	if m.cfg.RequireMinionSignMessages && !load.Has("sig") {
		m.log.Error("_return without the required signature dropped", "id", id)
		return false, nil
	}
	verified := false
	if sigV, ok := load.Delete("sig"); ok {
		sig := []byte(payload.Text(sigV))
		if b, ok := sigV.([]byte); ok {
			sig = b
		}
		packed, err := payload.MarshalBin(load)
		if err == nil {
			err = crypt.Verify(pub, packed, sig)
		}
		if err != nil {
			m.log.Warn("_return signature does not verify", "id", id, "err", err)
			if m.cfg.DropMessagesSignatureFail {
				return false, nil
			}
		}
		verified = err == nil
		load.Set("sig", sigV)
	}
	jid := payload.Text(mustGet(load, "jid"))
	if jid == "req" {
		jid = m.jobs.NewJID()
		arg, ok := load.Get("arg")
		if !ok {
			arg, ok = load.Get("fun_args")
		}
		if !ok {
			arg = []any{}
		}
		load.Set("arg", arg)
		load.Set("tgt_type", target.TypeGlob)
		load.Set("tgt", id)
		load.Set("jid", jid)
		if m.cfg.JobCache {
			if err := m.jobs.SaveLoad(jid, load, nil); err != nil {
				m.log.Error("cannot save the load of a minion job", "jid", jid, "err", err)
			}
		}
	}
	if !load.Has("fun") {
		if r := load.Map("return"); r != nil {
			if f, ok := r.Get("fun"); ok {
				load.Set("fun", f)
			}
			if u, ok := r.Get("user"); ok {
				load.Set("user", u)
			}
		}
	}
	if m.cfg.JobCache && jid != "nocache" && saltjid.Is(jid) {
		err := m.jobs.SaveReturnSigned(jid, id, returnRecord(load), verified)
		if errors.Is(err, jobcache.ErrDuplicate) {
			m.log.Error("an extra return was detected from a minion, dropped (replay?)", "id", id, "jid", jid)
			return nil, nil
		}
		if err != nil {
			m.log.Error("cannot store a return", "id", id, "jid", jid, "err", err)
		}
		if m.ext != nil {
			// Salt fires the return event before store_job hands the load
			// to master_job_cache, so the load it writes carries the
			// event's _stamp; the event below keeps this one.
			if !load.Has("_stamp") {
				load.Set("_stamp", event.Stamp(time.Now()))
			}
			m.ext.Return(load)
		}
	}
	if m.log.Enabled(context.Background(), slog.LevelInfo) {
		// Guarded: the arguments of a disabled line are still boxed, for
		// every return.
		m.log.Info("got a return", "id", id, "jid", jid)
	}
	m.st.returns.Add(1)
	// The load is this request's own (decoded from its frame; the job
	// cache got its encoding above): the event takes it as it is.
	m.fireOwned(event.Tagify([]string{jid, "ret", id}, "job"), load)
	return nil, nil
}

// returnRecord is what the job cache keeps of a return.
func returnRecord(load *payload.Map) *payload.Map {
	rec := payload.NewMap()
	rec.Grow(len(returnRecordKeys))
	for _, k := range returnRecordKeys {
		if v, ok := load.GetKey(k); ok {
			rec.SetKey(k, v)
		}
	}
	return rec
}

// returnRecordKeys are the fields of a return the job cache keeps, boxed
// once (a key boxed per Set was an allocation per field per return).
var returnRecordKeys = [...]any{"return", "retcode", "success", "out", "fun", "fun_args"}

// aesMinionEvent handles _minion_event (SALT-WIRE §9.4).
func (m *Master) aesMinionEvent(ctx context.Context, load *payload.Map) (any, error) {
	if ok, err := m.verifyTok(load, "id", "tok"); !ok {
		return payload.NewMap(), err
	}
	id := load.Str("id")
	if evs, ok := load.Get("events"); ok {
		list, _ := evs.([]any)
		pretag, hasPretag := load.Get("pretag")
		for _, e := range list {
			em, ok := e.(*payload.Map)
			if !ok {
				continue
			}
			tag, ok := payloadString(em, "tag")
			if !ok || tag == "" {
				continue
			}
			data := em
			if d, ok := em.Get("data"); ok {
				dm, ok := d.(*payload.Map)
				if !ok {
					m.log.Debug("minion event data is not a map, dropped", "id", id, "tag", tag)
					continue
				}
				data = dm
			}
			m.fire(tag, data)
			if hasPretag && pretag != nil {
				m.fire(payload.Text(pretag)+"/"+tag, data)
			}
		}
		return nil, nil
	}
	tag, ok := payloadString(load, "tag")
	if !ok || !load.Has("data") {
		return nil, nil
	}
	if tag == "_salt_error" {
		msg := ""
		if d := load.Map("data"); d != nil {
			msg = d.Str("message")
		}
		m.log.Error("received a minion error", "id", id, "message", msg)
	}
	if isStartTag(tag, id) {
		return heldStart{id: id, tag: tag, load: load}, nil
	}
	m.fire(tag, load)
	return nil, nil
}

// aesPillar handles _pillar: the minion's grains (and pillar) go to the
// minion data cache, minion/refresh/<id> is fired, and the pillar is sent
// back with send_private (SALT-WIRE §8.1).
func (m *Master) aesPillar(ctx context.Context, s *session, load *payload.Map, nonce string, version int64) ([]byte, bool) {
	send := func(v any) ([]byte, bool) {
		out, err := message.EncodeSendReply(s.c, v, nonce)
		if err != nil {
			return clearReply(message.HandlerErrorText), true
		}
		return out, true
	}
	_, hasID := load.Get("id")
	id, _ := payloadString(load, "id")
	var ret any = false
	if hasID && load.Has("grains") && m.validID(id) {
		if grains := load.Map("grains"); grains != nil {
			_, err := m.accepted.get(id)
			if errors.Is(err, errKeyUnreadable) {
				m.log.Error("cannot read the minion's key: no reply, the minion sends the request again", "cmd", "_pillar", "id", id, "err", err)
				return nil, false
			}
			if err == nil {
				grains.Set("id", id)
				ret = m.compilePillar(ctx, id, grains, load)
			}
		}
	}
	if !hasID {
		return send(ret)
	}
	if ver, _ := load.Get("ver"); payload.Text(ver) != "2" && m.pillarVersion() == 1 {
		return send(ret)
	}
	pub, err := m.accepted.get(id)
	if errors.Is(err, errKeyUnreadable) {
		m.log.Error("cannot read the minion's key: no reply, the minion sends the request again", "cmd", "_pillar", "id", id, "err", err)
		return nil, false
	}
	if err != nil {
		m.log.Error("AES key not found", "id", id)
		return clearReply(payload.NewMap("error", "AES key not found")), true
	}
	if ret == false {
		ret = payload.NewMap()
	}
	if version > 1 && nonce == "" {
		return clearReply(payload.NewMap("error", "Nonce not included in request")), true
	}
	if version <= 1 {
		nonce = ""
	}
	out, err := message.EncodePrivateReply(m.priv, pub, ret, nonce)
	if err != nil {
		m.log.Error("cannot encrypt the pillar", "id", id, "err", err)
		return send(payload.NewMap())
	}
	return out, true
}

// compilePillar runs the pillar function, stores the data cache and fires
// the refresh event. Failures give an empty pillar.
func (m *Master) compilePillar(ctx context.Context, id string, grains, load *payload.Map) *payload.Map {
	pillar := payload.NewMap()
	if m.pillar != nil {
		req := PillarRequest{ID: id, Grains: grains, Override: load.Map("pillar_override"), Extra: load.Map("extra_minion_data")}
		req.Saltenv = load.Str("saltenv")
		if req.Saltenv == "" {
			req.Saltenv = load.Str("env")
		}
		req.Pillarenv = load.Str("pillarenv")
		req.CleanCache = load.Bool("clean_cache")
		if ext, ok := load.Get("ext"); ok && ext != nil {
			req.Ext = ext
		}
		p, err := m.pillar(ctx, req)
		if err != nil {
			m.log.Error("pillar compilation failed", "id", id, "err", err)
		} else if p != nil {
			pillar = p
		}
	}
	if m.cfg.MinionDataCache {
		if err := m.data.store(id, grains, pillar); err != nil {
			m.log.Error("cannot write the minion data cache", "id", id, "err", err)
		}
		if v, ok := m.cfg.Opts.Get("minion_data_cache_events"); !ok || v == true {
			m.fire("minion/refresh/"+id, payload.NewMap("Minion data cache refresh", id))
		}
	}
	return pillar
}

func (m *Master) pillarVersion() int {
	v, err := m.cfg.Opts.Int("pillar_version")
	if err != nil {
		return 2
	}
	return v
}

// aesMasterOpts handles _master_opts.
func (m *Master) aesMasterOpts(_ context.Context, load *payload.Map) (any, error) {
	roots := payload.NewMap()
	for _, env := range m.fs.envs() {
		roots.Set(env, []any{})
	}
	opt := func(k string) any { v, _ := m.cfg.Opts.Get(k); return v }
	out := payload.NewMap("file_roots", roots,
		"top_file_merging_strategy", opt("top_file_merging_strategy"),
		"env_order", opt("env_order"),
		"default_top", opt("default_top"))
	if load.Bool("env_only") {
		return out, nil
	}
	for _, k := range []string{"renderer", "failhard", "state_top", "state_top_saltenv", "nodegroups",
		"state_auto_order", "state_events", "state_aggregate", "jinja_env", "jinja_sls_env",
		"jinja_lstrip_blocks", "jinja_trim_blocks"} {
		out.Set(k, opt(k))
	}
	return out, nil
}

// aesMasterTops handles _master_tops: no master_tops are configured.
func (m *Master) aesMasterTops(_ context.Context, load *payload.Map) (any, error) {
	if _, err := m.verifyTok(load, "id", "tok"); err != nil {
		return nil, err
	}
	return payload.NewMap(), nil
}

// mineEnabled is Salt's minion_data_cache or enforce_mine_cache.
func (m *Master) mineEnabled() bool {
	return m.cfg.MinionDataCache || m.cfg.Opts.Bool("enforce_mine_cache")
}

// aesMine handles _mine: store (merge, or replace with clear) mine data.
func (m *Master) aesMine(_ context.Context, load *payload.Map) (any, error) {
	if ok, err := m.verifyTok(load, "id", "data", "tok"); !ok {
		return payload.NewMap(), err
	}
	if !m.mineEnabled() {
		return true, nil
	}
	data := load.Map("data")
	if data == nil {
		return "", nil
	}
	if err := m.data.updateMine(load.Str("id"), data, load.Bool("clear")); err != nil {
		return nil, err
	}
	return true, nil
}

// aesMineDelete handles _mine_delete.
func (m *Master) aesMineDelete(_ context.Context, load *payload.Map) (any, error) {
	if ok, err := m.verifyTok(load, "id", "fun", "tok"); !ok {
		return payload.NewMap(), err
	}
	if !m.mineEnabled() {
		return true, nil
	}
	ok, err := m.data.deleteMine(load.Str("id"), payload.Text(mustGet(load, "fun")))
	if err != nil {
		return false, nil
	}
	return ok, nil
}

// aesMineFlush handles _mine_flush.
func (m *Master) aesMineFlush(_ context.Context, load *payload.Map) (any, error) {
	if ok, err := m.verifyTok(load, "id", "tok"); !ok {
		return payload.NewMap(), err
	}
	if !m.mineEnabled() {
		return true, nil
	}
	return m.data.flushMine(load.Str("id"))
}

const (
	mineACLID   = "__saltmine_acl__"
	mineACLData = "__data__"
)

// aesMineGet handles _mine_get (RemoteFuncs._mine_get).
func (m *Master) aesMineGet(_ context.Context, load *payload.Map) (any, error) {
	if ok, err := m.verifyTok(load, "id", "tgt", "fun", "tok"); !ok {
		return payload.NewMap(), err
	}
	return m.mineGet(load.Str("id"), load), nil
}

// mineGet is RemoteFuncs._mine_get for requester req: the mine data of the
// targeted minions for the requested functions, after the mine_get and
// allow_tgt ACLs.
func (m *Master) mineGet(req string, load *payload.Map) *payload.Map {
	var funcs []string
	multi := false
	switch f := mustGet(load, "fun").(type) {
	case string:
		seen := map[string]bool{}
		for _, p := range strings.Split(f, ",") {
			if !seen[p] {
				seen[p] = true
				funcs = append(funcs, p)
			}
		}
		multi = len(funcs) > 1
	case []any:
		for _, e := range f {
			funcs = append(funcs, payload.Text(e))
		}
		multi = true
	default:
		return payload.NewMap()
	}
	if acl, ok := m.cfg.Opts.Get("mine_get"); ok {
		aclMap, ok := acl.(map[string]any)
		if !ok {
			return payload.NewMap()
		}
		var perms []string
		for pat, v := range aclMap {
			if ok, _ := m.matcher.PCREMatch(pat, req); !ok {
				continue
			}
			if l, ok := v.([]any); ok {
				for _, p := range l {
					perms = append(perms, payload.Text(p))
				}
			}
		}
		var allowed []string
		for _, f := range funcs {
			for _, p := range perms {
				if ok, _ := m.matcher.PCREMatch(p, f); ok {
					allowed = append(allowed, f)
					break
				}
			}
		}
		if len(allowed) == 0 {
			return payload.NewMap()
		}
		funcs = allowed
	}
	tgtType := "glob"
	if v, ok := load.Get("tgt_type"); ok {
		tgtType = payload.Text(v)
	} else if v, ok := load.Get("expr_form"); ok && v != nil {
		tgtType = payload.Text(v)
	}
	switch strings.ToLower(tgtType) {
	case "pillar":
		tgtType = target.TypePillarExact
	case "compound":
		tgtType = target.TypeCompoundPillarExact
	}
	minions, _, err := m.checkMinions(mustGet(load, "tgt"), tgtType, target.DefaultDelimiter, false)
	if err != nil {
		m.log.Debug("mine target", "err", err)
	}
	ret := payload.NewMap()
	aclCache := map[string]map[string][]string{}
	for _, minion := range minions {
		mine := m.data.getMine(minion)
		if mine.Len() == 0 {
			continue
		}
		for _, fn := range funcs {
			entry, ok := mine.Get(fn)
			if !ok {
				continue
			}
			result := entry
			if em, ok := entry.(*payload.Map); ok && em.Has(mineACLID) {
				result, _ = em.Get(mineACLData)
				if at, ok := em.Get("allow_tgt"); ok {
					att := em.Str("allow_tgt_type")
					if att == "" {
						att = "glob"
					}
					allowed, _, _ := m.checkMinions(at, att, target.DefaultDelimiter, true)
					if len(allowed) == 0 {
						continue
					}
					if aclCache[minion] == nil {
						aclCache[minion] = map[string][]string{}
					}
					aclCache[minion][fn] = allowed
				}
			}
			if acl := aclCache[minion][fn]; len(acl) > 0 && !contains(acl, req) {
				continue
			}
			if multi {
				sub := ret.Map(fn)
				if sub == nil {
					sub = payload.NewMap()
					ret.Set(fn, sub)
				}
				sub.Set(minion, result)
			} else {
				ret.Set(minion, result)
			}
		}
	}
	return ret
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// aesRevokeAuth handles revoke_auth: a minion deletes its own key.
func (m *Master) aesRevokeAuth(_ context.Context, load *payload.Map) (any, error) {
	if ok, err := m.verifyTok(load, "id", "tok"); !ok {
		return false, err
	}
	if !m.cfg.AllowMinionKeyRevoke {
		m.log.Warn("minion requested key revocation, but allow_minion_key_revoke is off", "id", load.Str("id"))
		return load, nil
	}
	id := load.Str("id")
	if _, err := m.keys.DeleteMatches(keys.Listing{{State: keys.StateAccepted, IDs: []string{id}}}, load.Bool("preserve_minion_cache")); err != nil {
		return false, err
	}
	m.log.Info("minion revoked its key", "id", id)
	return true, nil
}

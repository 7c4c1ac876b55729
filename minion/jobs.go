package minion

import (
	"context"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/returners"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/gsalt/gsalt/wire/transport"
)

// job is one running job.
type job struct {
	jid    string
	cancel context.CancelFunc
	killed bool
	// pf is the job's proc file; nil for jobs without one.
	pf *procFile
	// proc is the proc data, encoded (procData) only when something reads
	// it: most jobs (test.ping) end before their proc file is due and
	// nobody asks saltutil.running meanwhile.
	proc     *payload.Map
	procOnce sync.Once
	procEnc  []byte
	procDone atomic.Bool // procOnce ran: procEnc is set (or nil on failure)
	// shared, when set, encodes proc once for every identity of a swarm
	// or proxy fleet that runs the same publish (their proc data are
	// equal: the same process, the same load).
	shared *sharedProc
}

// sharedProc is the proc data encoding of one publish, made once for the
// identities sharing an opened publish (openedPubs). A fan-out to 10,000
// proxied devices sent as a list target (the CLI's --static batch) gave
// every device a ~100 KiB proc file to encode: 20% of gsalt-proxy's CPU
// during the fan-out.
type sharedProc struct {
	once sync.Once
	enc  []byte
}

// encode returns the msgpack of proc, made by the first caller; nil when
// it cannot be encoded.
func (s *sharedProc) encode(proc *payload.Map) []byte {
	s.once.Do(func() {
		if b, err := payload.Marshal(proc); err == nil {
			s.enc = b
		}
	})
	return s.enc
}

// marshalProc encodes the job's proc data, through the shared encoding
// when there is one.
func (j *job) marshalProc() ([]byte, error) {
	if j.shared != nil {
		if b := j.shared.encode(j.proc); b != nil {
			return b, nil
		}
	}
	return payload.Marshal(j.proc)
}

// procData returns the proc file content (msgpack of proc), nil when it
// cannot be encoded; the encoding is kept for the job's later readers.
func (j *job) procData() []byte {
	j.procOnce.Do(func() {
		b, err := j.marshalProc()
		if err == nil {
			j.procEnc = b
		}
		j.procDone.Store(true)
	})
	return j.procEnc
}

// procFileData is the proc file content for writing it once: the kept
// encoding when a reader (saltutil.running) made one, otherwise a fresh
// one the job does not keep. A publish can be large (a find_job names
// every minion yet to return), and thousands of identities' jobs held
// their encoding until they ended.
func (j *job) procFileData() []byte {
	if j.procDone.Load() {
		return j.procEnc
	}
	b, err := j.marshalProc()
	if err != nil {
		return nil
	}
	return b
}

// isolateMutableArgs gives the proc data its own deep copy of the job's
// arguments (under key) when they hold a map or a list: they may change
// while the job runs (the binder takes __kwarg__ out of a keyword map,
// modules edit dicts in place), and the lazy encode reads the copy.
// Jobs with scalar arguments only (test.ping) share them. The copy is
// of the arguments alone: encoding the whole proc data at the start
// instead cost every device of a 10,000-device fan-out (net.load_config
// with keyword arguments) an encoding of the publish, 55% of
// gsalt-proxy's CPU during the fan-out.
func (j *job) isolateMutableArgs(key string, args any) {
	list, _ := args.([]any)
	for _, a := range list {
		switch a.(type) {
		case *payload.Map, []any:
			j.proc.Set(key, payload.DeepClone(args))
			return
		}
	}
}

// jobTable tracks the running jobs; it is the "jobs" service.
type jobTable struct {
	mu   sync.Mutex
	jobs map[string]*job
	// pid is this process's id, read once: every job's proc data and
	// Signal give it (a job is a goroutine of this process), and
	// os.Getpid is a system call each time (a swarm of 10,000 identities
	// made one per identity per job).
	pid int
}

func newJobTable() *jobTable { return &jobTable{jobs: map[string]*job{}, pid: os.Getpid()} }

func (t *jobTable) add(j *job) {
	t.mu.Lock()
	t.jobs[j.jid] = j
	t.mu.Unlock()
}

func (t *jobTable) remove(jid string) {
	t.mu.Lock()
	delete(t.jobs, jid)
	t.mu.Unlock()
}

// Running returns the proc data of every running job, sorted by jid.
func (t *jobTable) Running() []*payload.Map {
	t.mu.Lock()
	list := make([]*job, 0, len(t.jobs))
	for _, j := range t.jobs {
		list = append(list, j)
	}
	t.mu.Unlock()
	sort.Slice(list, func(i, k int) bool { return list[i].jid < list[k].jid })
	out := make([]*payload.Map, 0, len(list))
	for _, j := range list {
		if m, err := payload.UnmarshalMap(j.procData()); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// RunningJob returns the proc data of the running job jid
// (builtin.JobFinder).
func (t *jobTable) RunningJob(jid string) (*payload.Map, bool) {
	t.mu.Lock()
	j, ok := t.jobs[jid]
	t.mu.Unlock()
	if !ok {
		return nil, false
	}
	m, err := payload.UnmarshalMap(j.procData())
	if err != nil {
		return nil, false
	}
	return m, true
}

// removeJob forgets j unless its jid already names another job.
func (t *jobTable) removeJob(j *job) {
	t.mu.Lock()
	if t.jobs[j.jid] == j {
		delete(t.jobs, j.jid)
	}
	t.mu.Unlock()
}

// Signal cancels the job for every signal but 0 (a liveness check). A
// signalled job is gone at once, as a Salt job process killed by the
// signal: saltutil.running and find_job stop listing it and its proc
// file is removed before Signal returns, even while its goroutine is
// still unwinding.
func (t *jobTable) Signal(jid string, sig int) (int, bool) {
	t.mu.Lock()
	j, ok := t.jobs[jid]
	if ok && sig != 0 {
		j.killed = true
		delete(t.jobs, jid)
	}
	t.mu.Unlock()
	if !ok {
		return 0, false
	}
	if sig != 0 {
		j.cancel()
		j.pf.done()
	}
	return t.pid, true
}

// count returns the number of running jobs.
func (t *jobTable) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.jobs)
}

// pidAlive reports whether a process exists.
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// hexID is the zmq_filtering topic of an id: sha1(id) in hex.
func hexID(id string) string {
	h := sha1.Sum([]byte(id))
	return hex.EncodeToString(h[:])
}

// handleFrames decodes one published message and starts its job when this
// minion is targeted (Minion._handle_payload).
func (m *Minion) handleFrames(ctx context.Context, frames [][]byte) {
	m.handlePublish(ctx, frames, true)
}

// handlePublish is handleFrames. A publish that fails its HMAC needs a
// re-authentication (a request to the master) before it is opened again:
// with reauth false it is left alone and handlePublish returns false; in
// every other case it returns true.
func (m *Minion) handlePublish(ctx context.Context, frames [][]byte, reauth bool) bool {
	var body []byte
	switch len(frames) {
	case 1:
		body = frames[0]
	case 2:
		if t := string(frames[0]); t != "broadcast" && t != hexID(m.id) {
			return true
		}
		body = frames[1]
	default:
		m.log.Debug("dropping a publish with too many frames", "frames", len(frames))
		return true
	}
	l := m.linkFor(ctx)
	s := m.linkSession(l)
	if s == nil {
		return true
	}
	load, serial, shared, err := m.openPublish(s, body)
	if errors.Is(err, message.ErrDecrypt) {
		if !reauth {
			return false
		}
		// The master's session key changed: re-authenticate and try the
		// same message once more (SALT-WIRE §5.3).
		m.log.Info("a publish failed its HMAC; re-authenticating")
		ns, aerr := m.reauth(ctx, l, s)
		if aerr != nil {
			return true
		}
		s = ns
		load, serial, shared, err = m.openPublish(s, body)
	}
	if err != nil {
		m.log.Debug("dropping a publish", "err", err)
		return true
	}
	if serial != 0 {
		if err := s.serial.Accept(serial); err != nil {
			m.log.Warn("dropping a replayed publish", "err", err)
			return true
		}
	}
	for _, k := range []string{"tgt", "jid", "fun", "arg"} {
		if !load.Has(k) {
			m.log.Debug("dropping a publish without " + k)
			return true
		}
	}
	if !m.targeted(load) {
		return true
	}
	jid := load.Str("jid")
	if !m.firstSeen(jid) {
		m.log.Debug("ignoring a duplicate job", "jid", jid)
		return true
	}
	m.saveReplayGuard(s.key, serial)
	if m.opened != nil {
		// Shared between the identities: the job gets its own.
		load = cloneJobLoad(load)
	}
	m.startJob(ctx, load, shared)
	return true
}

// cloneJobLoad copies a shared publish load for one job: every value but
// the target, which jobs only read and which can be a list of thousands of
// ids (the CLI's saltutil.find_job names every minion yet to return).
func cloneJobLoad(load *payload.Map) *payload.Map {
	c := load.Clone()
	for _, it := range load.Items() {
		if k, ok := it.Key.(string); ok && k != "tgt" {
			c.Set(k, payload.DeepClone(it.Value))
		}
	}
	return c
}

// openPublish decrypts a publish body with s (checking sig when the
// minion's sign_pub_messages is on); shared is the publish's proc data
// encoding shared by the identities of a swarm or fleet (nil otherwise).
func (m *Minion) openPublish(s *session, body []byte) (load *payload.Map, serial int64, shared *sharedProc, err error) {
	var pub = s.masterPub
	if !m.cfg.SignPubMessages {
		pub = nil
	}
	if m.opened != nil {
		// A swarm opens each publish once for all identities.
		return m.opened.open(s.key, pub, body, func() (*payload.Map, int64, error) {
			return m.openPublishOwn(s, pub, body)
		})
	}
	load, serial, err = m.openPublishOwn(s, pub, body)
	return load, serial, nil, err
}

// openPublishOwn is openPublish without the swarm's shared cache.
func (m *Minion) openPublishOwn(s *session, pub *rsa.PublicKey, body []byte) (*payload.Map, int64, error) {
	if pub != nil && m.verified != nil {
		// A swarm checks each publish signature once for all identities.
		return message.OpenPublishWith(s.crypticle, func(blob, sig []byte) error {
			return m.verified.verify(pub, blob, sig)
		}, body, wireLimits)
	}
	return message.OpenPublish(s.crypticle, pub, body, wireLimits)
}

// targeted is Minion._target_load's matcher check.
func (m *Minion) targeted(load *payload.Map) bool {
	tgt, _ := load.Get("tgt")
	tgtType := load.Str("tgt_type")
	delim := load.Str("delimiter")
	m.mu.RLock()
	mn := target.Minion{ID: m.id, Grains: m.grains, Pillar: m.pillar}
	m.mu.RUnlock()
	ok, err := m.matcher.Match(tgt, tgtType, delim, mn)
	if err != nil {
		m.log.Debug("target does not match", "tgt", tgt, "tgt_type", tgtType, "err", err)
		return false
	}
	return ok
}

// firstSeen records jid in the jid queue and reports whether it is new.
func (m *Minion) firstSeen(jid string) bool {
	hwm := m.optInt("minion_jid_queue_hwm", 100)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.jidSeen[jid] {
		return false
	}
	m.jidSeen[jid] = true
	m.jidQueue = append(m.jidQueue, jid)
	for len(m.jidQueue) > hwm && hwm > 0 {
		delete(m.jidSeen, m.jidQueue[0])
		m.jidQueue = m.jidQueue[1:]
	}
	return true
}

// startJob runs the job of load in its own goroutine.
func (m *Minion) startJob(ctx context.Context, load *payload.Map, shared *sharedProc) {
	jid := load.Str("jid")
	proc := &payload.Map{}
	proc.Grow(load.Len() + 1)
	proc.Set("pid", int64(m.jobs.pid))
	for _, it := range load.Items() {
		proc.SetKey(it.Key, it.Value)
	}
	jctx, cancel := context.WithCancel(ctx)
	j := &job{jid: jid, proc: proc, cancel: cancel, shared: shared}
	arg, _ := load.Get("arg")
	j.isolateMutableArgs("arg", arg)
	var pf *procFile
	if filepath.Base(jid) == jid && jid != "" && jid != "." && jid != ".." {
		pf = m.writeProcLater(m.cacheDir, jid, j.procFileData)
		j.pf = pf
	}
	if max := m.optInt("process_count_max", -1); max > 0 {
		// Salt waits while process_count_max jobs run.
		for m.jobs.count() >= max {
			m.log.Warn("Maximum number of processes reached while executing jid, waiting...", "jid", jid)
			if sleep(ctx, time.Second) != nil {
				pf.done()
				cancel()
				return
			}
		}
	}
	m.jobs.add(j)
	// Guarded: the arguments of a disabled log line are still built (a
	// swarm starts a job per identity per publish).
	if m.log.Enabled(ctx, slog.LevelInfo) {
		if u := load.Str("user"); u != "" {
			m.log.Info("executing command", "user", u, "fun", load.Str("fun"), "jid", jid)
		} else {
			m.log.Info("executing command", "fun", load.Str("fun"), "jid", jid)
		}
	}
	m.wg.Add(1)
	m.goJob(func() {
		defer m.wg.Done()
		defer cancel()
		ret := m.runJob(jctx, load)
		m.jobs.removeJob(j)
		pf.done()
		m.jobs.mu.Lock()
		killed := j.killed
		m.jobs.mu.Unlock()
		if killed || ctx.Err() != nil {
			m.log.Info("job ended without a return", "jid", jid, "killed", killed)
			return
		}
		m.returnJob(ctx, ret)
		m.callReturners(m.jobReturners(load), ret, load)
	})
}

// procDelay is how long a job runs before its proc file is written: a job
// that ends sooner (test.ping) never touches the disk for it, since nothing
// outside could have seen it running; saltutil.running and find_job in
// this process read the job table.
const procDelay = 20 * time.Millisecond

// procFile is the cachedir/proc/<jid> file of a running job (Salt's
// proc file, read by other processes), written once the job has run for
// procDelay and removed when it ends.
type procFile struct {
	mu      sync.Mutex
	path    string
	written bool
	ended   bool
	timer   *time.Timer
}

// writeProcLater schedules the proc file of a job, cacheDir/proc/jid. The
// path is joined only when the file is written (most jobs end sooner).
func (m *Minion) writeProcLater(cacheDir, jid string, data func() []byte) *procFile {
	pf := &procFile{}
	delay := m.procDelay
	if delay <= 0 {
		delay = procDelay
	}
	pf.timer = time.AfterFunc(delay, func() {
		pf.mu.Lock()
		defer pf.mu.Unlock()
		if pf.ended {
			return
		}
		path := filepath.Join(cacheDir, "proc", jid)
		b := data()
		if b == nil {
			m.log.Error("cannot encode the job's proc data", "path", path)
			return
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			m.log.Warn("cannot write the proc file", "path", path, "err", err)
			return
		}
		pf.path, pf.written = path, true
	})
	return pf
}

// done cancels or removes the proc file (the job ended); nil is a no-op.
func (pf *procFile) done() {
	if pf == nil {
		return
	}
	pf.timer.Stop()
	pf.mu.Lock()
	defer pf.mu.Unlock()
	pf.ended = true
	if pf.written {
		_ = os.Remove(pf.path)
	}
}

// env is the execution environment of one job.
func (m *Minion) env() *modules.Env {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return &modules.Env{ID: m.id, Opts: m.opts, Grains: m.grains, Pillar: m.pillar, Log: m.log, Registry: m.reg, Services: m.services}
}

// pythonModuleNote explains a missing function of a custom Python module
// synced to extension_modules (saltutil.sync_modules), or "".
func (m *Minion) pythonModuleNote(fun string) string {
	m.mu.RLock()
	ext := m.opts.Str("extension_modules")
	if ext == "" && m.cacheDir != "" {
		ext = filepath.Join(m.cacheDir, "extmods")
	}
	m.mu.RUnlock()
	return builtin.PythonModuleMissing(ext, "modules", fun)
}

// execute runs one function like _thread_return: a missing function gets
// the sys.doc listing of its prefix when there is one.
func (m *Minion) execute(ctx context.Context, fun string, args []any, pub *payload.Map) (modules.Result, bool) {
	env := m.env()
	if _, ok := m.reg.Lookup(fun); !ok {
		missing := "'" + fun + "' is not available."
		if note := m.pythonModuleNote(fun); note != "" {
			m.log.Warn(note)
			return modules.Result{Return: note, Retcode: modules.ExitGeneric, Out: "nested"}, true
		}
		if _, hasDoc := m.reg.Lookup("sys.doc"); hasDoc {
			docs := m.reg.Execute(ctx, modules.Binder{}, env, "sys.doc", []any{fun + "*"}, nil)
			if dm, ok := docs.Return.(*payload.Map); ok && dm.Len() > 0 {
				dm.Set(fun, missing)
				return modules.Result{Return: dm, Retcode: modules.ExitGeneric, Out: "nested"}, true
			}
		}
		return modules.Result{Return: missing, Retcode: modules.ExitGeneric, Out: "nested"}, true
	}
	if msg := m.blackout(env, fun); msg != "" {
		return modules.Result{Return: "ERROR executing '" + fun + "': " + msg, Retcode: modules.ExitGeneric, Out: "nested"}, false
	}
	return m.reg.Execute(ctx, m.binder, env, fun, args, pub), false
}

// blackout is _execute_job_function's minion_blackout check (pillar, then
// grains): only saltutil.refresh_pillar and the whitelist run.
func (m *Minion) blackout(env *modules.Env, fun string) string {
	violation := false
	for _, src := range []*payload.Map{env.Pillar, env.Grains} {
		if v, _ := src.Get("minion_blackout"); !payload.Truthy(v) {
			continue
		}
		if fun == "saltutil.refresh_pillar" {
			continue
		}
		allowed := false
		wl, _ := src.Get("minion_blackout_whitelist")
		if l, ok := wl.([]any); ok {
			for _, w := range l {
				if payload.Text(w) == fun {
					allowed = true
				}
			}
		}
		if !allowed {
			violation = true
		}
	}
	if !violation {
		return ""
	}
	return "Minion in blackout mode. Set 'minion_blackout' to False in pillar or grains to resume operations. Only saltutil.refresh_pillar allowed in blackout mode."
}

// argList returns a job's argument list.
func argList(v any) []any {
	switch a := v.(type) {
	case []any:
		return a
	case nil:
		return []any{}
	}
	return []any{v}
}

// runJob executes a job and builds its return in Salt's key order.
func (m *Minion) runJob(ctx context.Context, load *payload.Map) *payload.Map {
	funV, _ := load.Get("fun")
	argV, _ := load.Get("arg")
	if funs, ok := funV.([]any); ok {
		return m.runMulti(ctx, load, funs, argList(argV))
	}
	fun := payload.Text(funV)
	args := argList(argV)
	var res modules.Result
	var missing bool
	retV, _ := load.Get("ret")
	if msg := m.unknownReturner(returners.Names(retV)); msg != "" {
		// Never run a job whose returners would be silently skipped.
		m.log.Error(msg, "jid", load.Str("jid"))
		res, missing = modules.Result{Return: msg, Retcode: modules.ExitGeneric, Out: "nested"}, true
	} else {
		res, missing = m.execute(ctx, fun, args, load)
	}
	fnOut := ""
	if fn, ok := m.reg.Lookup(fun); ok {
		fnOut = fn.Outputter
	}
	ret := payload.NewMap("success", false)
	ret.Grow(9) // return, out, retcode, jid, fun, fun_args, user, master_id, metadata
	ret.Set("return", res.Return)
	failed := missing || res.Out != fnOut
	if failed && !missing {
		ret.Set("out", res.Out)
	}
	ret.Set("retcode", int64(res.Retcode))
	if missing {
		ret.Set("success", false).Set("out", "nested")
	} else {
		ret.Set("success", res.Success)
	}
	m.copyJobFields(ret, load, argV, true)
	if !failed && fnOut != "" {
		ret.Set("out", fnOut)
	}
	return ret
}

// copyJobFields adds jid, fun, fun_args and the copied publish fields.
func (m *Minion) copyJobFields(ret, load *payload.Map, argV any, single bool) {
	jid, _ := load.Get("jid")
	fun, _ := load.Get("fun")
	if argV == nil {
		argV = []any{}
	}
	ret.Set("jid", jid).Set("fun", fun).Set("fun_args", argV)
	if u, ok := load.Get("user"); ok {
		ret.Set("user", u)
	}
	if single {
		if mid, ok := load.Get("master_id"); ok {
			ret.Set("master_id", mid)
		}
		if md, ok := load.Get("metadata"); ok {
			if _, isMap := md.(*payload.Map); isMap {
				ret.Set("metadata", md)
			} else {
				m.log.Warn("The metadata parameter must be a dictionary. Ignoring.")
			}
		}
	} else if md, ok := load.Get("metadata"); ok {
		ret.Set("metadata", md)
	}
}

// runMulti is _thread_multi_return.
func (m *Minion) runMulti(ctx context.Context, load *payload.Map, funs, args []any) *payload.Map {
	ordered := false
	if v, ok := m.opts.Get("multifunc_ordered"); ok {
		ordered = payload.Truthy(v)
	}
	var ret *payload.Map
	rets, codes, succ := make([]any, len(funs)), make([]any, len(funs)), make([]any, len(funs))
	rm, cm, sm := &payload.Map{}, &payload.Map{}, &payload.Map{}
	for i := range funs {
		succ[i] = false
	}
	for i, f := range funs {
		name := payload.Text(f)
		var a []any
		if i < len(args) {
			a = argList(args[i])
		} else {
			a = []any{}
		}
		if !ordered {
			sm.Set(name, false)
		}
		res, _ := m.execute(ctx, name, a, load)
		if ordered {
			rets[i], codes[i], succ[i] = res.Return, int64(res.Retcode), res.Success
		} else {
			rm.Set(name, res.Return)
			cm.Set(name, int64(res.Retcode))
			sm.Set(name, res.Success)
		}
	}
	if ordered {
		ret = payload.NewMap("return", rets, "retcode", codes, "success", succ)
	} else {
		ret = payload.NewMap("return", rm, "retcode", cm, "success", sm)
	}
	argV, _ := load.Get("arg")
	m.copyJobFields(ret, load, argV, false)
	return ret
}

// returnJob sends a job's return (_return_pub) unless pub_ret is off, and
// caches it with cache_jobs.
func (m *Minion) returnJob(ctx context.Context, ret *payload.Map) {
	jid := ret.Str("jid")
	if v, ok := m.opts.Get("cache_jobs"); ok && payload.Truthy(v) && filepath.Base(jid) == jid && jid != "" && jid != "req" && jid != "nocache" {
		dir := filepath.Join(m.cacheDir, "minion_jobs", jid)
		b, err := payload.Marshal(ret)
		if err == nil {
			err = os.MkdirAll(dir, 0o700)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "return.p"), b, 0o600)
		}
		if err != nil {
			m.log.Warn("cache_jobs: could not cache the job's return", "jid", jid, "err", err)
		}
	}
	if v, ok := m.opts.Get("pub_ret"); ok && !payload.Truthy(v) {
		return
	}
	load := &payload.Map{}
	load.Grow(ret.Len() + 4) // cmd, id, the items, then sig and the nonce
	load.Set("cmd", "_return").Set("id", m.id)
	for _, it := range ret.Items() {
		load.SetKey(it.Key, it.Value)
	}
	if m.cfg.MinionSignMessages {
		// Salt's minion_sign_messages: PKCS#1 v1.5 SHA-1 over the load packed
		// with use_bin_type=True, before the channel adds the nonce. A master
		// with require_minion_sign_messages then refuses returns that do not
		// come from the key of the id they name.
		packed, err := payload.MarshalBin(load)
		if err == nil {
			var sig []byte
			if sig, err = crypt.Sign(m.priv, packed); err == nil {
				load.Set("sig", sig)
			}
		}
		if err != nil {
			m.log.Error("cannot sign the return", "jid", jid, "err", err)
		}
	}
	tries := m.cfg.ReturnRetryTries
	if tries <= 0 {
		tries = defaultRequestTries
	}
	if m.log.Enabled(ctx, slog.LevelInfo) {
		m.log.Info("returning information for job", "jid", jid)
	}
	// A return that failed for a reason a new session or a restarted
	// master fixes (timeout, "bad load", not authenticated yet) is sent
	// again after return_retry_timer..return_retry_timer_max seconds, up to
	// return_retry_tries rounds; the master drops a duplicate.
	for round := 1; ; round++ {
		_, err := m.request(ctx, load, tries, defaultRequestTimeout)
		if err == nil {
			return
		}
		if round >= tries || !retryableReturn(err) || ctx.Err() != nil {
			m.log.Warn("The minion failed to return the job information for job "+jid+". This is often due to the master being shut down or overloaded. If the master is running, consider increasing the worker_threads value.",
				"jid", jid, "err", err, "rounds", round)
			return
		}
		wait := m.returnRetryWait()
		m.log.Info("return failed, sending it again", "jid", jid, "err", err, "round", round, "in", wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			m.log.Warn("The minion failed to return the job information", "jid", jid, "err", ctx.Err())
			return
		}
	}
}

// retryableReturn reports whether a failed return may succeed when sent
// again: the master did not answer, could not decrypt it, or the minion
// had no session at that moment.
func retryableReturn(err error) bool {
	return errors.Is(err, transport.ErrTimeout) || errors.Is(err, message.ErrDecrypt) ||
		errors.Is(err, ErrNotConnected) || errors.Is(err, transport.ErrProtocol) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// returnRetryWait is Salt's _return_retry_timer: a random whole number of
// seconds between return_retry_timer and return_retry_timer_max.
func (m *Minion) returnRetryWait() time.Duration {
	lo, hi := 5, 10
	if v, ok := m.opts.Get("return_retry_timer"); ok {
		if n, ok := payload.AsInt(v); ok && n >= 0 {
			lo = int(n)
		}
	}
	if v, ok := m.opts.Get("return_retry_timer_max"); ok {
		if n, ok := payload.AsInt(v); ok && n >= 0 {
			hi = int(n)
		}
	}
	if hi <= lo {
		return time.Duration(lo) * time.Second
	}
	return time.Duration(lo+rand.IntN(hi-lo+1)) * time.Second
}

package master

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// simBehaviour scripts one minion for the batch tests.
type simBehaviour struct {
	down  bool          // answers nothing (not even the presence ping)
	hang  bool          // answers the ping, never returns the job nor find_job
	delay time.Duration // before returning the job
}

// batchSim answers the master's publishes for a few minions sharing the
// minion1 vector key and records how many ran the batch job at once.
type batchSim struct {
	e     *env
	tm    *tminion
	who   map[string]simBehaviour
	mu    sync.Mutex
	run   map[string]bool // running the batch job now
	peak  int
	start []string // minions in the order they got the job
}

func newBatchSim(t *testing.T, who map[string]simBehaviour) *batchSim {
	e := newEnv(t, "timeout: 1\ngather_job_timeout: 1\n")
	s := &batchSim{e: e, who: who, run: map[string]bool{}}
	ids := make([]string, 0, len(who))
	for id := range who {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		s.tm = e.login("minion1", id)
	}
	e.pub.mu.Lock()
	e.pub.hook = s.handle
	e.pub.mu.Unlock()
	return s
}

func (s *batchSim) send(id, jid, fun string, ret any) {
	frame, _, err := message.EncodeAESRequest(s.tm.sess, returnLoad(id, jid, ret).Set("fun", fun))
	if err == nil {
		s.e.m.HandleRequest(context.Background(), frame)
	}
}

func (s *batchSim) handle(frames [][]byte) {
	load, _, err := message.OpenPublish(s.tm.sess, nil, frames[0], payload.DefaultLimits)
	if err != nil {
		return
	}
	fun, jid := load.Str("fun"), load.Str("jid")
	var ids []string
	switch tgt, _ := load.Get("tgt"); x := tgt.(type) {
	case []any:
		for _, v := range x {
			ids = append(ids, payload.Text(v))
		}
	default:
		for id := range s.who {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		b := s.who[id]
		if b.down {
			continue
		}
		switch fun {
		case "test.ping":
			s.send(id, jid, fun, true)
		case "saltutil.find_job":
			if !b.hang {
				s.send(id, jid, fun, payload.NewMap())
			}
		default:
			s.mu.Lock()
			s.run[id] = true
			s.start = append(s.start, id)
			if len(s.run) > s.peak {
				s.peak = len(s.run)
			}
			s.mu.Unlock()
			if b.hang {
				continue
			}
			go func(id string, d time.Duration) {
				time.Sleep(d) // the minion's job takes this long
				s.mu.Lock()
				delete(s.run, id)
				s.mu.Unlock()
				s.send(id, jid, fun, "done-"+id)
			}(id, b.delay)
		}
	}
}

// waitTag waits for the event tag on the env's subscription.
func waitTag(t *testing.T, e *env, tag string, within time.Duration) event.Event {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case ev := <-e.events.C():
			if ev.Tag == tag {
				return ev
			}
		case <-deadline:
			t.Fatalf("no event %s within %v", tag, within)
		}
	}
}

func strList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = payload.Text(x)
	}
	return out
}

// TestBatchAsync: a publish with kwargs.batch runs as Salt's BatchAsync:
// the reply carries the batch jid at once, at most batch-size minions run
// the job together, every return lands under the batch jid, and the start
// and done events name the available, down, done and timed-out minions.
func TestBatchAsync(t *testing.T) {
	s := newBatchSim(t, map[string]simBehaviour{
		"m1": {delay: 50 * time.Millisecond}, "m2": {delay: 300 * time.Millisecond},
		"m3": {delay: 50 * time.Millisecond}, "m4": {delay: 10 * time.Millisecond},
		"m5": {down: true}, "m6": {hang: true},
	})
	e := s.e
	e.drain()
	jid, minions, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "*", Fun: "test.echo", Arg: []any{"x"},
		Kwargs: payload.NewMap("batch", "2", "batch_delay", 0, "batch_presence_ping_timeout", 1, "metadata", payload.NewMap("who", "test"))})
	if err != nil {
		t.Fatal(err)
	}
	if len(minions) != 6 {
		t.Fatalf("targeted %v", minions)
	}
	st := waitTag(t, e, "salt/batch/"+jid+"/start", 30*time.Second)
	if got := fmt.Sprint(strList(st.Data.List("available_minions")), strList(st.Data.List("down_minions"))); got != "[m1 m2 m3 m4 m6] [m5]" {
		t.Errorf("start event minions %s", got)
	}
	if md := st.Data.Map("metadata"); md == nil || md.Str("who") != "test" || md.Str("batch_jid") != jid {
		t.Errorf("start event metadata %v", md)
	}
	done := waitTag(t, e, "salt/batch/"+jid+"/done", 60*time.Second)
	if got := fmt.Sprint(strList(done.Data.List("done_minions")), strList(done.Data.List("timedout_minions"))); got != "[m1 m2 m3 m4] [m6]" {
		t.Errorf("done event: done, timed out %s", got)
	}
	s.mu.Lock()
	peak, started := s.peak, append([]string(nil), s.start...)
	s.mu.Unlock()
	if peak > 2 {
		t.Errorf("%d minions ran the job at once, batch size 2", peak)
	}
	if len(started) != 5 {
		t.Errorf("the job went to %v, want each available minion once", started)
	}
	job, err := e.jobs.Get(jid)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"m1", "m2", "m3", "m4"} {
		if r, ok := job.Returns[id]; !ok || fmt.Sprint(r.Get("return")) != fmt.Sprint("done-"+id, true) {
			t.Errorf("return of %s under the batch jid: %v", id, job.Returns[id])
		}
	}
}

// TestBatchAsyncRefusals: a bad batch size times every minion out without
// running the job; batch_async threshold 0 publishes normally.
func TestBatchAsyncRefusals(t *testing.T) {
	s := newBatchSim(t, map[string]simBehaviour{"m1": {}, "m2": {}})
	e := s.e
	jid, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "*", Fun: "test.echo", Arg: []any{"x"},
		Kwargs: payload.NewMap("batch", "lots", "batch_delay", 0, "batch_presence_ping_timeout", 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := waitTag(t, e, "salt/batch/"+jid+"/done", 30*time.Second)
	if got := fmt.Sprint(strList(done.Data.List("done_minions")), strList(done.Data.List("timedout_minions"))); got != "[] [m1 m2]" {
		t.Errorf("bad size: %s", got)
	}
	s.mu.Lock()
	n := len(s.start)
	s.mu.Unlock()
	if n != 0 {
		t.Errorf("the job ran on %d minions with a bad batch size", n)
	}
	if _, err := e.jobs.Get(jid); err == nil {
		t.Errorf("a job was cached under the batch jid although nothing ran")
	}

	e2 := newEnv(t, "batch_async: {threshold: 0}\n")
	e2.login("minion1", "m1")
	jid2, _, _, err := e2.m.Publish(context.Background(), PublishRequest{Tgt: "*", Fun: "test.echo", Kwargs: payload.NewMap("batch", "1")})
	if err != nil || errors.Is(err, ErrBusy) {
		t.Fatal(err)
	}
	if ev := waitTag(t, e2, "salt/job/"+jid2+"/new", 5*time.Second); fmt.Sprint(strList(ev.Data.List("minions"))) != "[m1]" {
		t.Errorf("threshold 0 publishes the job at once: %v", ev.Data)
	}
}

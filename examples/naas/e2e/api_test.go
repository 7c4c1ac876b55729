package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// api is a client of gsalt-api on loopback.
type api struct {
	base  string
	token string
	hc    *http.Client
}

// do sends a JSON request and decodes the JSON answer into out (when not
// nil); it returns the status code.
func (a *api) do(t *testing.T, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.token != "" {
		req.Header.Set("X-Auth-Token", a.token)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, b)
		}
	}
	return resp.StatusCode
}

// login gets a token for user (eauth auto) once gsalt-api answers.
func (a *api) login(t *testing.T, user string) {
	t.Helper()
	var out struct {
		Return []struct {
			Token string `json:"token"`
		} `json:"return"`
	}
	var code int
	var err error
	ok := testutil.Poll(60*time.Second, func() bool {
		req, _ := http.NewRequest(http.MethodPost, a.base+"/login",
			strings.NewReader(fmt.Sprintf(`{"username": %q, "password": "x", "eauth": "auto"}`, user)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		var resp *http.Response
		if resp, err = a.hc.Do(req); err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		code = resp.StatusCode
		if code == http.StatusOK && json.Unmarshal(b, &out) == nil && len(out.Return) == 1 && out.Return[0].Token != "" {
			a.token = out.Return[0].Token
			return true
		}
		return false
	})
	if !ok {
		t.Fatalf("no token from gsalt-api /login (last status %d, err %v)", code, err)
	}
}

// sseEvent is one event read from /events.
type sseEvent struct {
	Tag  string
	Data map[string]any
	At   time.Time
}

// eventStream reads gsalt-api's /events in the background and keeps every
// event for the test to look at.
type eventStream struct {
	mu     sync.Mutex
	events []sseEvent
	err    error
	cancel context.CancelFunc
	wake   chan struct{}
}

// openEvents connects to /events with the token in the query string, as
// browsers' EventSource do, and waits for the stream's first line.
func (a *api) openEvents(t *testing.T) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/events?token="+a.token, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		t.Fatalf("/events: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	s := &eventStream{cancel: cancel, wake: make(chan struct{}, 1)}
	t.Cleanup(cancel)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "retry:") {
		cancel()
		t.Fatalf("/events did not start with retry: (%v)", sc.Err())
	}
	go func() {
		defer resp.Body.Close()
		var tag string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "tag: "):
				tag = strings.TrimPrefix(line, "tag: ")
			case strings.HasPrefix(line, "data: "):
				var ev struct {
					Tag  string         `json:"tag"`
					Data map[string]any `json:"data"`
				}
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil || ev.Tag != tag {
					s.fail(fmt.Errorf("/events: bad data line for %q: %.200s (%v)", tag, line, err))
					return
				}
				s.mu.Lock()
				s.events = append(s.events, sseEvent{Tag: ev.Tag, Data: ev.Data, At: time.Now()})
				s.mu.Unlock()
				s.poke()
			}
		}
		if ctx.Err() == nil {
			s.fail(fmt.Errorf("/events ended: %v", sc.Err()))
		}
	}()
	return s
}

func (s *eventStream) fail(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	s.poke()
}

func (s *eventStream) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// snapshot returns the events read so far.
func (s *eventStream) snapshot() ([]sseEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sseEvent(nil), s.events...), s.err
}

// wait returns the events read so far once done(events) holds, failing
// the test after timeout.
func (s *eventStream) wait(t *testing.T, what string, timeout time.Duration, done func([]sseEvent) bool) []sseEvent {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		evs, err := s.snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if done(evs) {
			return evs
		}
		select {
		case <-s.wake:
		case <-deadline.C:
			tags := map[string]int{}
			for _, e := range evs {
				tags[e.Tag]++
			}
			t.Fatalf("%s: not seen on /events within %v; tags seen: %v", what, timeout, tags)
		}
	}
}

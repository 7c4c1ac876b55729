package netapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/netapi"
)

// startAPIWith runs a gsalt master, an in-process gsalt minion m1 and
// gsalt-api in front of the master, all on loopback sockets, with the
// rest_cherrypy options changed by edit (when not nil) before gsalt-api
// reads them.
func startAPIWith(t *testing.T, edit func(rc map[string]any)) *apiEnv {
	return startAPICfg(t, func(cfg *config.Master) {
		if edit != nil {
			raw, _ := cfg.Opts.Get("rest_cherrypy")
			edit(raw.(map[string]any))
		}
	})
}

// startAPICfg is startAPIWith with the whole master configuration to
// change (edit may be nil).
func startAPICfg(t *testing.T, edit func(cfg *config.Master)) *apiEnv {
	cfg, _, _ := startMasterMinion(t)
	if edit != nil {
		edit(cfg)
	}
	o, err := netapi.OptionsFrom(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- netapi.New(cfg, o, quiet(), quiet()).Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("gsalt-api did not stop")
		}
	})
	return &apiEnv{t: t, base: "http://" + ln.Addr().String(), hc: &http.Client{Timeout: 60 * time.Second}}
}

// TestAppAndStatic checks rest_cherrypy's app/app_path and
// static/static_path: the single-page app at every path below app_path,
// its assets below static_path, and browsers asking for HTML elsewhere
// getting the app while API clients keep their JSON.
func TestAppAndStatic(t *testing.T) {
	dir := t.TempDir()
	index := filepath.Join(dir, "index.html")
	os.WriteFile(index, []byte("<html>my app</html>"), 0o644)
	os.MkdirAll(filepath.Join(dir, "static", "js"), 0o755)
	os.WriteFile(filepath.Join(dir, "static", "js", "app.js"), []byte("console.log(1)"), 0o644)
	e := startAPIWith(t, func(rc map[string]any) {
		rc["app"] = index
		rc["app_path"] = "/gui"
		rc["static"] = filepath.Join(dir, "static")
	})
	get := func(path, accept string) (int, string, string) {
		req, _ := http.NewRequest("GET", e.base+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := e.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	for _, tc := range []struct {
		path, accept string
		code         int
		body         string
	}{
		{"/gui", "application/json", 200, "<html>my app</html>"},
		{"/gui/minions/m1", "application/json", 200, "<html>my app</html>"},
		{"/static/js/app.js", "*/*", 200, "console.log(1)"},
		{"/static/js/", "*/*", 404, ""},
		{"/static/nope.js", "*/*", 404, ""},
		{"/minions", "text/html,application/xhtml+xml,*/*;q=0.8", 200, "<html>my app</html>"},
		{"/", "", 200, "<html>my app</html>"},
		{"/", "*/*", 200, `"return":"Welcome"`},
		{"/", "application/json", 200, `"return":"Welcome"`},
		{"/", "text/html;q=0, application/json", 200, `"return":"Welcome"`},
	} {
		code, _, body := get(tc.path, tc.accept)
		if code != tc.code || (tc.body != "" && !strings.Contains(body, tc.body)) {
			t.Errorf("GET %s (Accept %q): %d %q, want %d %q", tc.path, tc.accept, code, body, tc.code, tc.body)
		}
	}
	// Without app, app_path serves gsalt-api's own page and nothing is
	// redirected.
	e2 := startAPIWith(t, func(rc map[string]any) {})
	req, _ := http.NewRequest("GET", e2.base+"/app/x", nil)
	resp, err := e2.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "gsalt-api is running") {
		t.Fatalf("default app page: %d %s", resp.StatusCode, b)
	}
	if code, _, b := e2.do("GET", "/", "", "", nil, "Accept", "text/html"); code != 200 || !strings.Contains(string(b), "Welcome") {
		t.Fatalf("no app: / with Accept text/html: %d %s", code, b)
	}
}

// TestWebsocketEvents checks /ws/<token>: refused without a valid token,
// silent until the client says it is ready, then every event as
// "data: {json}"; with format_events, Salt's jobs summary.
func TestWebsocketEvents(t *testing.T) {
	e := startAPI(t)
	tok := e.login("fred", "auto", "x")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	wsBase := "ws" + strings.TrimPrefix(e.base, "http")

	if _, resp, err := websocket.Dial(ctx, wsBase+"/ws/deadbeef", nil); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("bad token: err %v, resp %v", err, resp)
	}
	if _, resp, err := websocket.Dial(ctx, wsBase+"/ws", nil); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("no token: err %v, resp %v", err, resp)
	}

	for _, format := range []bool{false, true} {
		url := wsBase + "/ws/" + tok
		if format {
			url += "?format_events"
		}
		c, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Write(ctx, websocket.MessageText, []byte("websocket client ready")); err != nil {
			t.Fatal(err)
		}
		_, msg, err := c.Read(ctx)
		if err != nil || string(msg) != "server received message" {
			t.Fatalf("ack: %q %v", msg, err)
		}
		// Run a job through the API once the stream is subscribed: poll
		// by re-running until its return shows up in the stream.
		found := make(chan string, 1)
		go func() {
			for {
				_, m, err := c.Read(ctx)
				if err != nil {
					return
				}
				s := string(m)
				if !format && strings.HasPrefix(s, "data: ") && strings.HasSuffix(s, "\n\n") && strings.Contains(s, `/ret/m1"`) {
					var ev struct {
						Tag  string         `json:"tag"`
						Data map[string]any `json:"data"`
					}
					if json.Unmarshal([]byte(strings.TrimPrefix(s, "data: ")), &ev) == nil && ev.Data["return"] == true {
						found <- s
						return
					}
				}
				if format && strings.HasPrefix(s, `{"jobs":`) && strings.Contains(s, `"state":"complete"`) && strings.Contains(s, `"fun":"test.ping"`) {
					found <- s
					return
				}
			}
		}()
		var got string
		for got == "" {
			if code, _, b := e.do("POST", "/", tok, "", []any{map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping"}}); code != 200 {
				t.Fatalf("test.ping: %d %s", code, b)
			}
			select {
			case got = <-found:
			case <-time.After(5 * time.Second):
			case <-ctx.Done():
				t.Fatalf("format_events=%v: no job return on the websocket", format)
			}
		}
		c.Close(websocket.StatusNormalClosure, "")
	}
}

package netapi_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gsalt/gsalt/config"
)

// TestSaltGUI drives SaltGUI (github.com/erwindon/SaltGUI, a static web
// app for salt-api; fetched by scripts/saltgui-check.sh, never committed)
// served by gsalt-api through rest_cherrypy's app/static options, in
// headless Chromium: log in with eauth "file" (a text user file), the
// minions page lists m1, test.ping from the command box returns true for
// m1, the keys and jobs pages show m1's key and the ping, and the events
// page shows a webhook's event fired after it opened. A screenshot of
// each page goes to $GSALT_SALTGUI_SHOTS (default: the test's temporary
// directory). Gated on GSALT_SALTGUI_DIR (the checkout's "saltgui"
// directory or its parent) and a chromium binary.
func TestSaltGUI(t *testing.T) {
	dir := os.Getenv("GSALT_SALTGUI_DIR")
	if dir == "" {
		t.Skip("SaltGUI check: set GSALT_SALTGUI_DIR (scripts/saltgui-check.sh fetches SaltGUI and sets it)")
	}
	if _, err := os.Stat(filepath.Join(dir, "saltgui", "index.html")); err == nil {
		dir = filepath.Join(dir, "saltgui")
	}
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
		t.Fatalf("GSALT_SALTGUI_DIR: %v", err)
	}
	browser := ""
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("SaltGUI check: no chromium (apt-get install chromium)")
	}
	shots := os.Getenv("GSALT_SALTGUI_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(t.TempDir(), "users.txt")
	if err := os.WriteFile(users, []byte("gui:guipass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := startAPICfg(t, func(cfg *config.Master) {
		ea := cfg.Opts.Map("external_auth")
		ea["file"] = map[string]any{"^filename": users, "^filetype": "text",
			"gui": []any{".*", "@runner", "@wheel", "@jobs"}}
		rc := cfg.Opts.Map("rest_cherrypy")
		rc["app"] = filepath.Join(dir, "index.html")
		rc["static"] = filepath.Join(dir, "static")
		rc["static_path"] = "/static"
		rc["webhook_disable_auth"] = true
	})

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.WindowSize(1400, 900))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer cancelC()
	// The first Run starts the browser: no timeout on its context.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	defer cancelT()
	shot := func(name string) {
		t.Helper()
		b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Logf("screenshot %s: %v", name, err)
			return
		}
		p := filepath.Join(shots, "saltgui-"+name+".png")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			shot("failed")
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(90*time.Second))
	}

	// Log in: SaltGUI's eauth menu offers "file".
	do("login page", chromedp.Navigate(e.base+"/"), chromedp.WaitVisible(chromedp.CSS("#username")))
	do("log in",
		chromedp.SendKeys(chromedp.CSS("#username"), "gui"),
		chromedp.SendKeys(chromedp.CSS("#password"), "guipass"),
		chromedp.SetValue(chromedp.CSS("select"), "file"),
		chromedp.Click(chromedp.CSS("#login-button")))

	// The minions page lists m1 with its OS.
	do("minions page", poll(`(() => { const t = document.querySelector('table tbody');
		return !!t && t.innerText.includes('m1') && t.innerText.includes('Debian'); })()`))
	shot("minions")
	t.Logf("minions page: %.400s", strings.Join(strings.Fields(text("body")), " "))

	// test.ping from the command box.
	do("command box",
		chromedp.Click(chromedp.CSS("#button-manual-run")),
		chromedp.WaitVisible(chromedp.CSS("#target")),
		chromedp.SetValue(chromedp.CSS("#target"), "m1"),
		chromedp.SetValue(chromedp.CSS("#command"), "test.ping"),
		chromedp.Click(chromedp.CSS("#run-command")),
		poll(`(() => { const o = document.querySelector('.run-command pre');
			return !!o && o.innerText.includes('m1') && !o.innerText.includes('Waiting') && !o.innerText.includes('Loading'); })()`))
	shot("test-ping")
	out := text(".run-command pre")
	t.Logf("command box output: %q", out)
	if !strings.Contains(out, "m1") || !strings.Contains(strings.ToLower(out), "true") {
		t.Errorf("test.ping output %q", out)
	}
	do("close the command box", chromedp.Click(chromedp.CSS("#cmd-close-button")))

	// The keys and jobs pages, through SaltGUI's menu: the page becomes
	// visible with m1's accepted key, the test.ping job.
	for _, page := range []struct{ name, want string }{{"keys", "accepted"}, {"jobs", "test.ping"}} {
		do(page.name+" page",
			chromedp.Evaluate[chromedp.Void](`(() => { const b = [...document.querySelectorAll('[id^="button-`+page.name+`"]')].
				find(e => e.offsetParent !== null); b.click(); return true; })()`),
			poll(`(() => { const p = document.getElementById('page-`+page.name+`');
				return !!p && p.offsetParent !== null && p.innerText.includes('m1') && p.innerText.includes('`+page.want+`'); })()`))
		shot(page.name)
		t.Logf("%s page: %.300s", page.name, strings.Join(strings.Fields(text("#page-"+page.name)), " "))
	}

	// The events page: SaltGUI's EventSource on /events shows an event
	// fired after the page opened (a webhook with a tag of its own).
	do("events page",
		chromedp.Evaluate[chromedp.Void](`(() => { const b = [...document.querySelectorAll('[id^="button-events"]')].
			find(e => e.offsetParent !== null); b.click(); return true; })()`),
		poll(`(() => { const p = document.getElementById('page-events');
			return !!p && p.offsetParent !== null; })()`),
		// The panel starts paused; its play button is the visible
		// clickable span showing SaltGUI's play glyph (U+2BC8).
		chromedp.Evaluate[chromedp.Void](`(() => { const b = [...document.querySelectorAll('#page-events .small-button-for-click')].
			find(e => e.offsetParent !== null && e.textContent.includes('\u2BC8')); b.click(); return true; })()`))
	resp, err := http.Post(e.base+"/hook/saltgui-check", "application/json", strings.NewReader(`{"from": "TestSaltGUI"}`))
	if err != nil {
		t.Fatalf("POST /hook/saltgui-check: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /hook/saltgui-check: %s", resp.Status)
	}
	do("the webhook's event on the events page",
		poll(`(() => { const p = document.getElementById('page-events');
			return !!p && p.innerText.includes('salt/netapi/hook/saltgui-check') && p.innerText.includes('TestSaltGUI'); })()`))
	shot("events")
	t.Logf("events page: %.300s", strings.Join(strings.Fields(text("#page-events")), " "))
}

package saltlog

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

func TestLevels(t *testing.T) {
	for _, tc := range []struct {
		level   string
		logged  []slog.Level
		skipped []slog.Level
	}{
		{"critical", []slog.Level{LevelCritical}, []slog.Level{slog.LevelError, slog.LevelWarn}},
		{"error", []slog.Level{slog.LevelError, LevelCritical}, []slog.Level{slog.LevelWarn}},
		{"warning", []slog.Level{slog.LevelWarn}, []slog.Level{slog.LevelInfo}},
		{"info", []slog.Level{slog.LevelInfo}, []slog.Level{LevelProfile, slog.LevelDebug}},
		{"debug", []slog.Level{slog.LevelDebug}, []slog.Level{LevelTrace}},
		{"trace", []slog.Level{LevelTrace}, []slog.Level{LevelGarbage}},
		{"garbage", []slog.Level{LevelGarbage}, nil},
		{"quiet", nil, []slog.Level{LevelCritical}},
	} {
		var buf bytes.Buffer
		lg, closer, err := Setup(&buf, tc.level, "", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range tc.logged {
			buf.Reset()
			lg.Log(context.Background(), l, "m")
			if buf.Len() == 0 {
				t.Errorf("-l %s: %s not logged", tc.level, levelName(l))
			}
		}
		for _, l := range tc.skipped {
			buf.Reset()
			lg.Log(context.Background(), l, "m")
			if buf.Len() != 0 {
				t.Errorf("-l %s: %s logged: %q", tc.level, levelName(l), buf.String())
			}
		}
		closer()
	}
	if _, _, err := Setup(&bytes.Buffer{}, "loud", "", ""); err == nil {
		t.Error("unknown level accepted")
	}
}

func TestFormatsAndGranular(t *testing.T) {
	var buf bytes.Buffer
	lg, closer, err := SetupConfig(&buf, Config{Level: "warning",
		FmtConsole: "%(bracketlevel)s %(name)s|%(levelno)d|%(message)s|%(bracketprocess)s|%%",
		Granular:   map[string]string{"salt.reactor": "debug", "gsalt.reactor.noisy": "error"}})
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	lg.Info("dropped")
	lg.Warn("kept", "jid", "2024", "text", "two words")
	r := lg.With("component", "reactor")
	r.Debug("reactor debug")
	lg.With("component", "reactor.noisy").Warn("noisy warning")
	lg.With("component", "schedule").Info("schedule info")
	want := "[WARNING ] gsalt|30|kept jid=2024 text=\"two words\"|[" + pad5(os.Getpid()) + "]|%\n" +
		"[DEBUG   ] gsalt.reactor|10|reactor debug|[" + pad5(os.Getpid()) + "]|%\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	for _, bad := range []string{"%(nosuch)s", "%(message)", "%s", "%(message)q"} {
		if _, _, err := SetupConfig(&bytes.Buffer{}, Config{FmtConsole: bad}); err == nil {
			t.Errorf("format %q accepted", bad)
		}
	}
	if _, _, err := SetupConfig(&bytes.Buffer{}, Config{Granular: map[string]string{"x": "loud"}}); err == nil {
		t.Error("bad granular level accepted")
	}
}

func pad5(n int) string {
	s := strings.Repeat(" ", 5) + itoa(n)
	return s[len(s)-max(5, len(itoa(n))):]
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestFormatLikePython renders the same record with Python's
// logging.Formatter and with gsalt's formatter: the standard fields must
// come out byte for byte the same.
func TestFormatLikePython(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("saltlog: /usr/bin/python3 not found; skipping the comparison with Python's logging")
	}
	when := time.Date(2026, 3, 4, 5, 6, 7, 890123000, time.Local)
	formats := []string{
		DefaultFmtConsole, "%(asctime)s,%(msecs)03d [%(name)-17s][%(levelname)-8s][%(process)d] %(message)s",
		"%(levelname)s:%(name)s:%(message)s", "%(levelno)5d %(name)20s %(message)-10s|", "%(created)f %(msecs)d %%",
		"[%(process)08d] %(levelname).3s %(message)s",
	}
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, LevelCritical}
	script := `
import json, logging, sys
cases = json.load(sys.stdin)
out = []
for c in cases:
    r = logging.LogRecord(c["name"], c["levelno"], "x.py", 1, c["msg"], None, None)
    r.created = c["created"]; r.msecs = c["msecs"]; r.process = c["pid"]
    out.append(logging.Formatter(c["fmt"], c["datefmt"]).format(r))
json.dump(out, sys.stdout)
`
	type pcase struct {
		Name    string  `json:"name"`
		Levelno int     `json:"levelno"`
		Msg     string  `json:"msg"`
		Created float64 `json:"created"`
		Msecs   int     `json:"msecs"`
		Pid     int     `json:"pid"`
		Fmt     string  `json:"fmt"`
		Datefmt string  `json:"datefmt"`
	}
	var cases []pcase
	var ours []string
	for _, f := range formats {
		parts, err := parseFormat(f)
		if err != nil {
			t.Fatalf("%q: %v", f, err)
		}
		for _, l := range levels {
			rec := slog.NewRecord(when, l, "hello wörld", 0)
			lr := logRecord{r: rec, name: "gsalt.master", msg: rec.Message, pid: 4242, datefmt: DefaultDateFmtLogfile}
			ours = append(ours, render(parts, &lr))
			cases = append(cases, pcase{Name: "gsalt.master", Levelno: int(l)*5/2 + 20, Msg: rec.Message,
				Created: float64(when.UnixNano()) / 1e9, Msecs: when.Nanosecond() / 1e6, Pid: 4242, Fmt: f, Datefmt: DefaultDateFmtLogfile})
		}
	}
	in, _ := json.Marshal(cases)
	cmd := osexec.Command(py, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var theirs []string
	if err := json.Unmarshal(out, &theirs); err != nil {
		t.Fatal(err)
	}
	for i := range ours {
		// Python names levels 30 "WARNING" and 50 "CRITICAL" as Salt does.
		if ours[i] != theirs[i] {
			t.Errorf("format %q level %d:\n ours   %q\n python %q", cases[i].Fmt, cases[i].Levelno, ours[i], theirs[i])
		}
	}
}

// TestLogFileAndSyslog checks log_file as a path at its own level and as
// a file:// syslog URL on a socket the test listens on.
func TestLogFileAndSyslog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "logs", "minion")
	var console bytes.Buffer
	lg, closer, err := Setup(&console, "error", path, "debug")
	if err != nil {
		t.Fatal(err)
	}
	lg.Debug("to the file only")
	closer()
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "[gsalt            :") || !strings.Contains(string(b), "[DEBUG   ]") || !strings.Contains(string(b), "to the file only") || console.Len() != 0 {
		t.Fatalf("log file %q, console %q", b, console.String())
	}

	sock := filepath.Join(dir, "log.sock")
	pc, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	lg, closer, err = Setup(&console, "quiet", "file://"+sock+"/LOG_LOCAL3", "warning")
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	lg.Error("to syslog")
	buf := make([]byte, 4096)
	_ = pc.SetReadDeadline(time.Now().Add(testutil.Scale(10 * time.Second)))
	n, _, err := pc.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	// <PRI> = facility local3 (19) * 8 + err (3) = 155
	if msg := string(buf[:n]); !strings.HasPrefix(msg, "<155>") || !strings.Contains(msg, "to syslog") {
		t.Fatalf("syslog datagram %q", msg)
	}
	if _, _, err := Setup(&console, "info", "ftp://x/y", ""); err != nil {
		t.Fatalf("a bad syslog URL must not stop the daemon: %v", err)
	}
	if !strings.Contains(console.String(), "unsupported scheme") {
		t.Fatalf("bad syslog URL not reported: %q", console.String())
	}
}

package devsim

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// goldenNow is the fixed clock of golden sessions.
var goldenNow = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// replay feeds a transcript (one input line per line; "#" comments; "<CR>" alone sends an empty
// line, "<SPACE>" a bare space key, "<q>" a bare q key) into a fresh shell of device index 1 of a
// three-device fleet and returns everything the device wrote, with \r removed.
func replay(t *testing.T, platformName, transcript string) string {
	t.Helper()
	f, err := Start(context.Background(), Options{Platform: platformName, Devices: 3, Secret: "s3cret",
		Now: func() time.Time { return goldenNow }})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	sh := newShell(f.Device(1), "admin", &out, done, func() {})
	sh.write(sh.p.banner + sh.prompt())
	sc := bufio.NewScanner(strings.NewReader(transcript))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "#"):
			continue
		case l == "<CR>":
			l = ""
		case l == "<SPACE>":
			sh.feed([]byte(" "))
			continue
		case l == "<q>":
			sh.feed([]byte("q"))
			continue
		}
		if sh.feed([]byte(l + "\r")) {
			break
		}
	}
	return strings.ReplaceAll(out.String(), "\r", "")
}

func TestGoldenSessions(t *testing.T) {
	files, err := filepath.Glob("testdata/*.session")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sessions: %v", err)
	}
	for _, in := range files {
		name := strings.TrimSuffix(filepath.Base(in), ".session")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			plat, _, _ := strings.Cut(name, "_")
			got := replay(t, plat, string(src))
			golden := strings.TrimSuffix(in, ".session") + ".golden"
			if testutil.Update() {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("session %s differs from %s:\n%s", in, golden, firstDiff(string(want), got))
			}
		})
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n want: " + w + "\n  got: " + g
		}
	}
	return "(no line differs)"
}

// TestGoldenStartupConfigs pins the startup configuration every platform builds for each device
// of a five-device fleet (hostnames, addresses, neighbors and AS numbers differ per device).
func TestGoldenStartupConfigs(t *testing.T) {
	for _, plat := range []string{PlatformIOS, PlatformEOS, PlatformNXOS, PlatformIOSXR} {
		t.Run(plat, func(t *testing.T) {
			f, err := Start(context.Background(), Options{Platform: plat, Devices: 5,
				Now: func() time.Time { return goldenNow }})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var b strings.Builder
			for i := range f.Len() {
				b.WriteString("==== device " + strconv.Itoa(i) + " running\n")
				b.WriteString(f.Device(i).RunningConfig())
				b.WriteString("==== device " + strconv.Itoa(i) + " startup\n")
				b.WriteString(f.Device(i).StartupConfig())
			}
			checkGolden(t, "testdata/"+plat+"_configs.golden", b.String())
		})
	}
}

// checkGolden compares got with a golden file (rewritten with -update).
func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	if testutil.Update() {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n%s", golden, firstDiff(string(want), got))
	}
}

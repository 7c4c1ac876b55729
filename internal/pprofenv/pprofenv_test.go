package pprofenv

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestStart(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		wantErr   error
		serves    bool
	}{
		{name: "unset", env: ""},
		{name: "public address", env: "0.0.0.0:0", wantErr: ErrNotLoopback},
		{name: "host name", env: "example.com:0", wantErr: ErrNotLoopback},
		{name: "loopback", env: "127.0.0.1:0", serves: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvVar, tc.env)
			addr, stop, err := Start(nil)
			defer stop()
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Start: err %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.serves {
				if addr != "" {
					t.Fatalf("Start served on %s with %s unset", addr, EnvVar)
				}
				return
			}
			resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "goroutine profile:") {
				t.Fatalf("goroutine profile: %d %.200s", resp.StatusCode, b)
			}
		})
	}
}

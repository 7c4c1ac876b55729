package builtin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/modules"
)

// TestGetURLHTTP fetches http:// URLs from a loopback server into the
// extrn_files cache (or a dest), and checks the texts of Salt's
// MinionError for HTTP errors and refused connections.
func TestGetURLHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/files/a.txt":
			fmt.Fprint(w, "hello\n")
		case "/moved":
			http.Redirect(w, r, "/files/a.txt", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	closed := fmt.Sprintf("127.0.0.1:%d", proc.FreePort(t))
	cache := t.TempDir()
	fc := &SaltFileClient{cacheDir: cache}
	dest := filepath.Join(t.TempDir(), "out.txt")
	tests := []struct {
		name, url, dest string
		toFile          bool
		want            string // path (toFile) or content
		err             string
	}{
		{"cached", srv.URL + "/files/a.txt", "", true, filepath.Join(cache, "extrn_files", "base", host, "files", "a.txt"), ""},
		{"query in the cache name", srv.URL + "/files/a.txt?v=1", "", true, filepath.Join(cache, "extrn_files", "base", host, "files", "a.txt-v=1"), ""},
		{"to dest after a redirect", srv.URL + "/moved", dest, true, dest, ""},
		{"content", srv.URL + "/files/a.txt", "", false, "hello\n", ""},
		{"not found", srv.URL + "/nope", "", true, "", "Error: HTTP 404: Not Found reading /nope"},
		{"refused", "http://" + closed + "/x/y", "", true, "", "Error: [Errno 111] Connection refused reading /x/y"},
		{"dest directory missing", srv.URL + "/files/a.txt", filepath.Join(t.TempDir(), "no", "dir", "f"), true, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fc.GetURL(context.Background(), tc.url, tc.dest, tc.toFile, false, "base")
			if tc.err != "" {
				if err == nil || !errors.Is(err, modules.ErrExecution) || !strings.HasSuffix(err.Error(), ": "+tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.toFile {
				if string(got.([]byte)) != tc.want {
					t.Fatalf("content %q", got)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("path %v, want %q", got, tc.want)
			}
			if tc.want != "" {
				if b, err := os.ReadFile(tc.want); err != nil || string(b) != "hello\n" {
					t.Fatalf("file: %q %v", b, err)
				}
			}
		})
	}
}

// TestPyNetError: Go's network errors as str() of the Python exception
// Salt's HTTP client reports.
func TestPyNetError(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&net.DNSError{Err: "no such host", Name: "x.example", IsNotFound: true}, "[Errno -2] Name or service not known"},
		{&net.DNSError{Err: "server misbehaving", Name: "x.example", IsTemporary: true}, "[Errno -3] Temporary failure in name resolution"},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", errRefused)}, "[Errno 111] Connection refused"},
		{errors.New("other"), "wrapped: other"},
	}
	for _, tc := range tests {
		if got := pyNetError(fmt.Errorf("wrapped: %w", tc.err)); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.err, got, tc.want)
		}
	}
}

var errRefused = syscall.ECONNREFUSED

// Package pprofenv serves Go's net/http/pprof profiles when the
// environment asks for it: GSALT_PPROF=127.0.0.1:6060 makes a daemon listen
// there (loopback addresses only) so `go tool pprof
// http://127.0.0.1:6060/debug/pprof/heap` can read its heap, goroutine and
// CPU profiles. Without the variable nothing is served. It is off by
// default and meant for benchmarks and debugging.
package pprofenv

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

// EnvVar names the environment variable holding the listen address.
const EnvVar = "GSALT_PPROF"

// ErrNotLoopback: the address is not a loopback address.
var ErrNotLoopback = errors.New("pprofenv: the pprof address must be a loopback address (127.0.0.1:PORT or [::1]:PORT)")

// Start serves the profiles on the address in $GSALT_PPROF (nothing when
// it is unset) until stop is called. It returns the address it listens
// on ("" when off) and stop (never nil).
func Start(log *slog.Logger) (listen string, stop func(), err error) {
	addr := os.Getenv(EnvVar)
	if addr == "" {
		return "", func() {}, nil
	}
	return Serve(addr, EnvVar, log)
}

// Serve serves the profiles on addr (a loopback host:port; from the
// environment variable named env, for error texts) until stop is called.
func Serve(addr, env string, log *slog.Logger) (listen string, stop func(), err error) {
	stop = func() {}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", stop, fmt.Errorf("pprofenv: %s=%q: %w", env, addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", stop, fmt.Errorf("%w: %s=%q", ErrNotLoopback, env, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", stop, fmt.Errorf("pprofenv: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	if log != nil {
		log.Info("serving pprof profiles", "addr", ln.Addr().String())
	}
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}

package daemon

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"runtime"
	"runtime/pprof"
)

// Profiling environment variables, read by Start; both are off unless set.
const (
	// EnvCPUProfile names a file that receives a pprof CPU profile of the
	// whole daemon run, written when the daemon stops.
	EnvCPUProfile = "GSALT_CPUPROFILE"
	// EnvMemProfile names a file that receives a pprof heap profile
	// (after a GC) when the daemon stops.
	EnvMemProfile = "GSALT_MEMPROFILE"
	// EnvPprofAddr names a loopback address (127.0.0.1:PORT) on which the
	// daemon serves net/http/pprof's /debug/pprof/ pages while it runs.
	EnvPprofAddr = "GSALT_PPROF_ADDR"
)

// servePprof serves /debug/pprof/ on addr (loopback only) until the
// returned function is called.
func servePprof(addr string, log *slog.Logger) (func(), error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvPprofAddr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("%s: %q is not a loopback address", EnvPprofAddr, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvPprofAddr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
	srv := &http.Server{Handler: mux}
	go func() {
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			log.Warn("pprof server stopped", "err", err)
		}
	}()
	log.Info("serving pprof", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}

// StartProfiles is startProfiles for commands that are not daemons (the
// gsalt CLI): GSALT_CPUPROFILE and GSALT_MEMPROFILE, when set, get their
// profiles when the returned function is called.
func StartProfiles() (func(), error) { return startProfiles() }

// startProfiles starts the profiles the environment asks for and returns
// the function that writes them out (a no-op when none was asked for).
func startProfiles() (func(), error) {
	cpuPath, memPath := os.Getenv(EnvCPUProfile), os.Getenv(EnvMemProfile)
	if cpuPath == "" && memPath == "" {
		return func() {}, nil
	}
	var cpu *os.File
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvCPUProfile, err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", EnvCPUProfile, err)
		}
		cpu = f
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if memPath != "" {
			if f, err := os.Create(memPath); err == nil {
				runtime.GC()
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	}, nil
}

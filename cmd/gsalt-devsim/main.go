// Command gsalt-devsim serves a fleet of simulated Cisco IOS-XE, Arista EOS, Cisco NX-OS or
// Cisco IOS XR devices (--platform) over SSH
// for gsalt proxy tests and benchmarks: device i listens on 127.0.0.1:BASE+i. It runs in the
// foreground and stops cleanly on SIGTERM or SIGINT. GSALT_PPROF=ADDR (loopback) serves Go's
// pprof profiles there.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gsalt/gsalt/internal/pprofenv"
	"github.com/gsalt/gsalt/internal/rlimit"
	"github.com/gsalt/gsalt/proxy/devsim"
)

func main() {
	var o devsim.Options
	var faults, logLevel, platformDir string
	cmd := &cobra.Command{
		Use:           "gsalt-devsim",
		Short:         "Simulate network devices (IOS-XE, EOS, NX-OS, IOS XR) over SSH",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var lvl slog.Level
			if err := lvl.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level: %w", err)
			}
			o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
			// A listener and a connection per device, and some to spare.
			if _, err := rlimit.RaiseNoFile(uint64(2*max(o.Devices, 0) + 256)); err != nil {
				o.Logger.Warn("gsalt-devsim: not enough open files for every device", "err", err)
			}
			fm, err := devsim.ParseFaults(faults)
			if err != nil {
				return err
			}
			o.Faults = fm
			if platformDir != "" {
				o.Platforms = os.DirFS(platformDir)
			}
			_, stopPprof, err := pprofenv.Start(o.Logger)
			if err != nil {
				return err
			}
			defer stopPprof()
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			fleet, err := devsim.Start(ctx, o)
			if err != nil {
				return err
			}
			fmt.Printf("gsalt-devsim: %d %s devices on %s .. %s\n", fleet.Len(), fleet.Options().Platform,
				fleet.Addr(0), fleet.Addr(fleet.Len()-1))
			<-ctx.Done()
			return fleet.Close()
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.BasePort, "base-port", 10022, "port of the first device; device i listens on base-port+i (0: free ports)")
	f.IntVar(&o.Devices, "devices", 1, "number of devices")
	f.StringVar(&o.Platform, "platform", devsim.PlatformIOS, "device platform: "+strings.Join(devsim.PlatformNames(nil), ", ")+" or one of --platforms")
	f.StringVar(&platformDir, "platforms", "", "directory with more platform definitions (platforms/<name>/platform.yaml and templates)")
	f.StringVar(&o.Host, "host", "127.0.0.1", "listen address")
	f.StringVar(&o.User, "user", "admin", "accepted login name")
	f.StringVar(&o.Password, "password", "admin", "accepted password")
	f.StringVar(&o.Secret, "secret", "", "enable secret (empty: enable asks for no password)")
	f.DurationVar(&o.Latency, "latency", 0, "delay before answering each command, e.g. 5ms")
	f.StringVar(&o.HostnamePrefix, "hostname-prefix", "sw", "device i is named PREFIX<i+1>")
	f.StringVar(&faults, "faults", "", "faults by zero-based device index, e.g. hang:3,badauth:5,drop:7-9,refuse:2")
	f.IntVar(&o.MaxSessions, "max-sessions", devsim.DefaultMaxSessions, "concurrent connections per device")
	f.DurationVar(&o.IdleTimeout, "idle-timeout", devsim.DefaultIdleTimeout, "close connections idle this long")
	f.StringVar(&logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "gsalt-devsim:", err)
		os.Exit(1)
	}
}

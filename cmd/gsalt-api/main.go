// Command gsalt-api serves Salt's rest_cherrypy HTTP API (salt-api) in
// front of the master, configured by the rest_cherrypy section of the
// master config file. GSALT_PPROF=ADDR (loopback) serves Go's pprof
// profiles there.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/health"
	"github.com/gsalt/gsalt/internal/pprofenv"
	"github.com/gsalt/gsalt/netapi"
)

func main() {
	var confDir, logLevel, metricsHost string
	var metricsPort int
	cmd := &cobra.Command{
		Use:           "gsalt-api [options]",
		Short:         "Salt's REST API (salt-api rest_cherrypy compatible)",
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := config.LoadMaster(confDir)
			if err != nil {
				return err
			}
			o, err := netapi.OptionsFrom(cfg)
			if err != nil {
				return err
			}
			if logLevel == "warning" {
				logLevel = "warn"
			}
			var lvl slog.Level
			if err := lvl.UnmarshalText([]byte(logLevel)); err != nil {
				lvl = slog.LevelWarn
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
			_, stopPprof, err := pprofenv.Start(log)
			if err != nil {
				return err
			}
			defer stopPprof()
			access := log
			if o.AccessLog != "" {
				f, err := os.OpenFile(o.AccessLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
				if err != nil {
					return err
				}
				defer f.Close()
				access = slog.New(slog.NewTextHandler(f, nil))
			}
			hc, err := netapi.HealthConfig(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			hs := health.New(hc.Override(metricsPort, metricsHost), log)
			if err := hs.Start(ctx); err != nil {
				return err
			}
			defer hs.Close()
			ln, err := net.Listen("tcp", net.JoinHostPort(o.Host, strconv.Itoa(o.Port)))
			if err != nil {
				return err
			}
			log.Info("gsalt-api listening", "addr", ln.Addr().String(), "tls", !o.DisableSSL)
			srv := netapi.New(cfg, o, log, access)
			srv.RegisterHealth(ctx, hs, ln.Addr)
			return srv.Serve(ctx, ln)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&confDir, "config-dir", "c", "/etc/salt", "directory holding the master config file")
	f.StringVarP(&logLevel, "log-level", "l", "warning", "console log level")
	f.IntVar(&metricsPort, "metrics-port", 0, "serve /healthz, /readyz and /metrics on this port (default: rest_cherrypy's metrics_port; off when unset)")
	f.StringVar(&metricsHost, "metrics-host", "", "address of the metrics listener (default: rest_cherrypy's metrics_host, else 127.0.0.1)")
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "gsalt-api:", err)
		os.Exit(2)
	}
}

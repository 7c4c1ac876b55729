// Command gsalt-master is a Salt 3006 compatible master: it reads Salt's
// master configuration (-c DIR: DIR/master and DIR/master.d/*.conf) and
// serves Salt minions, proxies and the salt CLI on the publish and request
// ports. It runs in the foreground (or detached with -d) and stops cleanly
// on SIGTERM or SIGINT; under systemd (Type=notify) it reports READY,
// STOPPING and watchdog pings.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/daemon"
	"github.com/gsalt/gsalt/internal/pprofenv"
	"github.com/gsalt/gsalt/internal/saltfile"
	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/masterd"
	virtrunner "github.com/gsalt/gsalt/virt/runner"
)

func main() {
	var confDir, logLevel string
	var df daemon.Flags
	cmd := &cobra.Command{
		Use:           "gsalt-master",
		Short:         "Salt 3006 compatible master",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if df.Version {
				fmt.Print(daemon.VersionReport("gsalt-master"))
				return nil
			}
			sf, err := saltfile.Load(cmd.Flags(), "gsalt-master", "salt-master")
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("config-dir") {
				if err := daemon.CheckConfigDir(confDir); err != nil {
					return err
				}
			}
			cfg, err := config.LoadMaster(confDir)
			if err != nil {
				return err
			}
			if df.PidFile != "" {
				cfg.Opts.Set("pidfile", df.PidFile)
			}
			if parent, err := df.Daemonize(); err != nil || parent {
				return err
			}
			lg := daemon.Logging{Level: cfg.LogLevel, File: cfg.LogFile, FileLevel: cfg.LogLevelLogfile, Opts: cfg.Opts}
			df.Apply(&lg)
			ctx, logger, stop, err := daemon.Start(lg, logLevel)
			if err != nil {
				return err
			}
			defer stop()
			sf.Log(logger)
			_, stopPprof, err := pprofenv.Start(logger)
			if err != nil {
				return err
			}
			defer stopPprof()
			// Returns make short-lived garbage: collect at 1.5x the
			// default growth (GOGC overrides).
			daemon.GCPercent(masterd.GCPercent)
			if err := daemon.SwitchUser(df.User); err != nil {
				return err
			}
			run := runners.Default()
			for _, rn := range virtrunner.RunnerFunctions() {
				if err := run.Register(rn); err != nil {
					return err
				}
			}
			hc, err := masterd.HealthConfig(cfg)
			if err != nil {
				return err
			}
			hs, err := df.Health(ctx, hc, logger)
			if err != nil {
				return err
			}
			defer hs.Close()
			defer daemon.Notify("STOPPING=1")
			return masterd.Run(ctx, cfg, masterd.Options{Logger: logger, Runners: run, Health: hs, Ready: func() {
				_ = daemon.Notify("READY=1")
				daemon.Watchdog(ctx)
			}})
		},
	}
	f := cmd.Flags()
	saltfile.AddFlag(f)
	f.StringVarP(&confDir, "config-dir", "c", config.DefaultConfigDir, "directory holding the master configuration file")
	df.Register(f)
	f.StringVarP(&logLevel, "log-level", "l", "", "console log level: all, garbage, trace, debug, profile, info, warning, error, critical, quiet (default: log_level from the configuration)")
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "gsalt-master:", err)
		os.Exit(1)
	}
}

// Command gsalt-minion is a Salt 3006 compatible minion: it reads Salt's
// minion configuration (-c DIR: DIR/minion and DIR/minion.d/*.conf),
// authenticates with the master and runs the jobs it publishes. With
// --swarm N it runs N minion identities (<id>-0000, <id>-0001, ...) in one
// process, each with its own key pair under pki_dir/<identity>/. It runs in
// the foreground and stops on SIGTERM or SIGINT.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/daemon"
	"github.com/gsalt/gsalt/internal/health"
	"github.com/gsalt/gsalt/internal/pprofenv"
	"github.com/gsalt/gsalt/minion"
	"github.com/gsalt/gsalt/virt"
)

func main() {
	var (
		confDir, logLevel string
		swarm             int
		swarmSourceNet    string
		df                daemon.Flags
	)
	code := 0
	cmd := &cobra.Command{
		Use:           "gsalt-minion",
		Short:         "Salt 3006 compatible minion",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if df.Version {
				fmt.Print(daemon.VersionReport("gsalt-minion"))
				return nil
			}
			if cmd.Flags().Changed("config-dir") {
				if err := daemon.CheckConfigDir(confDir); err != nil {
					return err
				}
			}
			cfg, err := config.LoadMinion(confDir)
			if err != nil {
				return err
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
			_, stopPprof, err := pprofenv.Start(logger)
			if err != nil {
				return err
			}
			defer stopPprof()
			if err := daemon.SwitchUser(df.User); err != nil {
				return err
			}
			release, err := df.LockPidfile(cfg.Opts.Str("pidfile"), "gsalt-minion", logger)
			if err != nil {
				return err
			}
			defer release()
			_ = daemon.Notify("READY=1")
			daemon.Watchdog(ctx)
			defer daemon.Notify("STOPPING=1")
			hc, err := health.ConfigFrom(cfg.Opts.Get, health.DefaultHost)
			if err != nil {
				return err
			}
			hs, err := df.Health(ctx, hc, logger)
			if err != nil {
				return err
			}
			defer hs.Close()
			reg, err := minion.NewRegistry(virt.Extension)
			if err != nil {
				return err
			}
			if swarm > 0 {
				daemon.GCPercent(minion.SwarmGCPercent)
				sh := minion.RegisterSwarmHealth(ctx, hs, swarm)
				return minion.RunSwarm(ctx, minion.SwarmOptions{Config: cfg, N: swarm, SourceNet: swarmSourceNet, Logger: logger, Registry: reg, Started: sh.Add})
			}
			m, err := minion.New(minion.Options{Config: cfg, Logger: logger, Registry: reg})
			if err != nil {
				return err
			}
			m.RegisterHealth(ctx, hs)
			err = m.Run(ctx)
			switch {
			case errors.Is(err, minion.ErrRejected):
				code = minion.ExitRejected
			case errors.Is(err, minion.ErrMasterFinger):
				code = minion.ExitMasterFinger
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&confDir, "config-dir", "c", config.DefaultConfigDir, "directory holding the minion configuration file")
	f.StringVarP(&logLevel, "log-level", "l", "", "console log level: all, garbage, trace, debug, profile, info, warning, error, critical, quiet (default: log_level from the configuration)")
	df.Register(f)
	f.IntVar(&swarm, "swarm", 0, "run N minion identities <id>-0000 ... in this process")
	f.StringVar(&swarmSourceNet, "swarm-source-net", "", "with --swarm: connect identity i from the (i+1)th address of this network (e.g. 127.1.0.0/16 with a master on loopback), as N hosts would")
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "gsalt-minion:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

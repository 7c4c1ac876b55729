// Command gsalt-proxy is a Salt 3006 compatible proxy minion that serves
// many devices from one process. Like salt-proxy it reads -c DIR (DIR/proxy,
// proxy.d/*.conf, proxy.d/<id>/*.conf) for each --proxyid; --proxyid may be
// repeated and --proxyids-file names a file of ids, one a line. Every id is
// a separate minion to the master, with its own key pair under
// pki_dir/<id>/. An id whose configuration sets metaproxy: deltaproxy is a
// control proxy that also serves the ids of its proxy configuration.
//
// Fleets: --shard I/N (or GSALT_SHARDS=N with a StatefulSet pod name
// name-I in HOSTNAME) serves only the devices of the --proxyids-file list
// (a file of ids, a YAML list or a directory) and of deltaproxy control
// proxies (their pillar's proxy:ids) that rendezvous hashing gives shard
// I; --pki-seed-dir copies pre-generated key pairs in. It runs in the
// foreground and stops on SIGTERM or SIGINT. GSALT_PPROF=ADDR (loopback)
// serves Go's pprof profiles there.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/daemon"
	"github.com/gsalt/gsalt/internal/pprofenv"
	"github.com/gsalt/gsalt/internal/rlimit"
	"github.com/gsalt/gsalt/internal/saltfile"
	"github.com/gsalt/gsalt/minion"
	"github.com/gsalt/gsalt/proxy"
)

func main() {
	var (
		confDir, logLevel, idsFile string
		shardFlag, seedDir         string
		ids                        []string
		maxConns, queueDepth       int
		df                         daemon.Flags
	)
	code := 0
	cmd := &cobra.Command{
		Use:           "gsalt-proxy",
		Short:         "Salt 3006 compatible proxy minion for many devices",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if df.Version {
				fmt.Print(daemon.VersionReport("gsalt-proxy"))
				return nil
			}
			sf, err := saltfile.Load(cmd.Flags(), "gsalt-proxy", "salt-proxy")
			if err != nil {
				return err
			}
			shard, err := proxy.ShardFromEnv(os.Getenv)
			if shardFlag != "" {
				shard, err = proxy.ParseShard(shardFlag)
			}
			if err != nil {
				return err
			}
			// --proxyid ids are served as given (a deltaproxy control
			// proxy's sub-proxies are sharded); the device list is
			// sharded.
			all := append([]string(nil), ids...)
			var list []string
			if idsFile != "" {
				if list, err = proxy.LoadDeviceList(idsFile); err != nil {
					return err
				}
				all = append(all, shard.Select(list)...)
			}
			if len(ids)+len(list) == 0 {
				return proxy.ErrNoIDs
			}
			// The configuration is read for the first id given, so every
			// shard reads the same one whatever it serves.
			confID := append(ids, list...)[0]
			if cmd.Flags().Changed("config-dir") {
				if err := daemon.CheckConfigDir(confDir); err != nil {
					return err
				}
			}
			cfg, err := config.LoadProxy(confDir, confID)
			if err != nil {
				return err
			}
			if seedDir != "" {
				if _, err := proxy.SeedKeys(seedDir, cfg.PKIDir, all); err != nil {
					return err
				}
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
			// The heap is mostly the devices' long-lived state: collect
			// at half the default growth (GOGC overrides).
			daemon.GCPercent(proxy.GCPercent)
			// One device connection per device; the master connections
			// are the fleet's, shared.
			if _, err := rlimit.RaiseNoFile(proxy.OpenFilesFor(len(all))); err != nil {
				logger.Warn("not enough open files for every device", "devices", len(all), "err", err)
			}
			if err := daemon.SwitchUser(df.User); err != nil {
				return err
			}
			release, err := df.LockPidfile(cfg.Opts.Str("pidfile"), "gsalt-proxy", logger)
			if err != nil {
				return err
			}
			defer release()
			_ = daemon.Notify("READY=1")
			daemon.Watchdog(ctx)
			defer daemon.Notify("STOPPING=1")
			if len(all) == 0 {
				// A shard the list gives no device: stay up (a
				// StatefulSet member must not crash-loop) until stopped.
				logger.Warn("no device of the list falls to this shard; idle", "shard", shard.String())
				<-ctx.Done()
				return nil
			}
			logger.Info("serving devices", "shard", shard.String(), "devices", len(all))
			f, err := proxy.New(proxy.Options{ConfigDir: confDir, IDs: all, Shard: shard, Logger: logger, MaxConns: maxConns, QueueDepth: queueDepth})
			if err != nil {
				return err
			}
			hs, err := proxyHealth(ctx, cfg, &df, logger)
			if err != nil {
				return err
			}
			defer hs.Close()
			f.RegisterHealth(ctx, hs)
			err = f.Run(ctx)
			if len(all) == 1 && !shard.Enabled() {
				// One device: exit like salt-proxy would.
				switch {
				case errors.Is(err, minion.ErrRejected):
					code = minion.ExitRejected
				case errors.Is(err, minion.ErrMasterFinger):
					code = minion.ExitMasterFinger
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	saltfile.AddFlag(f)
	f.StringVarP(&confDir, "config-dir", "c", config.DefaultConfigDir, "directory holding the proxy configuration file")
	df.Register(f)
	f.StringArrayVar(&ids, "proxyid", nil, "id of a device to serve (repeatable)")
	f.StringVar(&idsFile, "proxyids-file", "", "device list: a file of ids (one a line with # comments, or a YAML list) or a directory (one entry per id)")
	f.StringVar(&shardFlag, "shard", "", "serve shard I/N of the device list (rendezvous hashing); default from GSALT_SHARDS=N and the -I of HOSTNAME (or GSALT_SHARD)")
	f.StringVar(&seedDir, "pki-seed-dir", "", "directory of pre-generated key pairs ID.pem/ID.pub (gsalt-key --gen-keys): copied to pki_dir/ID/ for devices without a key")
	f.StringVarP(&logLevel, "log-level", "l", "", "console log level: all, garbage, trace, debug, profile, info, warning, error, critical, quiet (default: log_level from the configuration)")
	f.IntVar(&maxConns, "max-conns", proxy.DefaultMaxConns, "device operations in flight across all devices")
	f.IntVar(&queueDepth, "queue-depth", proxy.DefaultQueueDepth, "commands that may wait for one device")
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "gsalt-proxy:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

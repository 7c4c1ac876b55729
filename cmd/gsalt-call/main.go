// Command gsalt-call runs one execution function on the local minion, like
// salt-call: with --local without a master, otherwise after authenticating
// with the master (the return is also sent to the master's job cache).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gsalt/gsalt/cli/callcli"
	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/saltfile"
	"github.com/gsalt/gsalt/internal/saltlog"
	"github.com/gsalt/gsalt/minion"
	"github.com/gsalt/gsalt/virt"
)

func main() {
	var (
		o                   callcli.Options
		logLevel            string
		noColor, forceColor bool
	)
	code := 0
	cmd := &cobra.Command{
		Use:           "gsalt-call [options] FUNCTION [ARG ...]",
		Short:         "Run a Salt execution function on this minion (salt-call compatible)",
		Args:          cobra.MinimumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			sf, err := saltfile.Load(cmd.Flags(), "gsalt-call", "salt-call")
			if err != nil {
				return err
			}
			logger, closeLog, err := saltlog.Setup(os.Stderr, logLevel, "", "")
			if err != nil {
				return err
			}
			defer closeLog()
			sf.Log(logger)
			o.Logger = logger
			o.Fun, o.Args = args[0], args[1:]
			o.Color = forceColor || (!noColor && term.IsTerminal(int(os.Stdout.Fd())))
			if o.Registry, err = minion.NewRegistry(virt.Extension); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			code = callcli.Run(ctx, o)
			return nil
		},
	}
	f := cmd.Flags()
	saltfile.AddFlag(f)
	f.StringVarP(&o.ConfigDir, "config-dir", "c", config.DefaultConfigDir, "directory holding the minion configuration file")
	f.BoolVar(&o.Local, "local", false, "run without a master (file_client: local)")
	f.StringVar(&o.ID, "id", "", "minion id to use instead of the configured one")
	f.StringVar(&o.Cachedir, "cachedir", "", "cache directory (overrides the configured cachedir; extension_modules keeps its configured value, as in salt-call)")
	f.StringVar(&o.Out, "out", "", "outputter: nested, json, yaml, txt, raw, pprint, newline_values_only, quiet")
	f.StringVar(&o.OutFile, "out-file", "", "write the output to this file")
	f.BoolVar(&o.RetcodePassthrough, "retcode-passthrough", false, "exit with the function's retcode")
	f.StringVarP(&logLevel, "log-level", "l", "warning", "console log level")
	f.BoolVar(&noColor, "no-color", false, "disable colours")
	f.BoolVar(&forceColor, "force-color", false, "force colours")
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "gsalt-call:", err)
		code = 1
	}
	os.Exit(code)
}

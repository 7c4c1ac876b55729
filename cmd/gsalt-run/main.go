// Command gsalt-run runs Salt runners on the master like `salt-run`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gsalt/gsalt/cli/runcli"
	"github.com/gsalt/gsalt/cli/saltcli"
	"github.com/gsalt/gsalt/internal/saltfile"
)

func main() {
	var o runcli.Options
	var cf saltcli.CLIFlags
	var timeout int
	cmd := &cobra.Command{
		Use:           "gsalt-run [options] <function> [arguments]",
		Short:         "Run a runner function on the master (salt-run compatible)",
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			sf, err := saltfile.Load(cmd.Flags(), "gsalt-run", "salt-run")
			if err != nil {
				return err
			}
			o.Words = args
			o.Out, o.OutFile, o.OutFileAppend, o.OutIndent, o.StateOpts = cf.Out, cf.OutFile, cf.OutFileAppend, cf.OutIndent(), cf.StateOpts()
			o.NoColor, o.ForceColor, o.NoParse = cf.NoColor, cf.ForceColor, cf.NoParse()
			if timeout > 0 {
				o.Timeout = time.Duration(timeout) * time.Second
			}
			o.IsTerminal = term.IsTerminal(int(os.Stdout.Fd()))
			if o.Logger, err = cf.Logger(); err != nil {
				return err
			}
			sf.Log(o.Logger)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := runcli.Run(ctx, o)
			stop()
			os.Exit(code)
			return nil
		},
	}
	f := cmd.Flags()
	saltfile.AddFlag(f)
	f.SetInterspersed(true)
	f.StringVarP(&o.ConfigDir, "config-dir", "c", "/etc/salt", "directory holding the master config file")
	f.IntVarP(&timeout, "timeout", "t", 0, "seconds to wait for the runner's return (default: the master's rest_timeout, 300)")
	f.BoolVar(&o.Async, "async", false, "start the runner and return without waiting")
	f.BoolVar(&o.Quiet, "quiet", false, "do not print the return")
	f.StringVarP(&o.Eauth.Eauth, "auth", "a", "", "external authentication system to use (pam, file, sharedsecret, auto, ...)")
	for _, alias := range []string{"eauth", "external-auth"} {
		f.StringVar(&o.Eauth.Eauth, alias, "", "same as --auth")
		_ = f.MarkHidden(alias)
	}
	f.BoolVarP(&o.Eauth.MakeToken, "make-token", "T", false, "generate and save an authentication token for re-use")
	f.StringVar(&o.Eauth.Username, "username", "", "username for external authentication")
	f.StringVar(&o.Eauth.Password, "password", "", "password for external authentication")
	cf.Add(f)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "gsalt-run:", err)
		os.Exit(2)
	}
}

// Command gsalt publishes jobs to minions and prints their returns like
// Salt's `salt` command.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gsalt/gsalt/cli/saltcli"
	"github.com/gsalt/gsalt/internal/daemon"
	"github.com/gsalt/gsalt/internal/saltfile"
)

// targetFlags maps Salt's target options to their tgt_type.
var targetFlags = []struct {
	long, short, tgtType, help string
}{
	{"pcre", "E", "pcre", "use a PCRE regular expression on the minion ids"},
	{"list", "L", "list", "take a comma or whitespace delimited list of minion ids"},
	{"grain", "G", "grain", "match a grain value with a glob: 'os:Arch*'"},
	{"grain-pcre", "P", "grain_pcre", "match a grain value with a PCRE: 'os:Arch.*'"},
	{"nodegroup", "N", "nodegroup", "use a nodegroup from the master config"},
	{"range", "R", "range", "use a range expression"},
	{"compound", "C", "compound", "compound target: 'G@os:RedHat and webser* or E@database.*'"},
	{"pillar", "I", "pillar", "match a pillar value with a glob: 'role:production*'"},
	{"pillar-pcre", "J", "pillar_pcre", "match a pillar value with a PCRE: 'role:prod.*'"},
	{"ipcidr", "S", "ipcidr", "match minions by subnet (CIDR notation) or IP address"},
}

func main() {
	var o saltcli.Options
	var cf saltcli.CLIFlags
	selected := make([]bool, len(targetFlags))
	cmd := &cobra.Command{
		Use:           "gsalt [options] '<target>' <function> [arguments]",
		Short:         "Run a function on minions (salt compatible)",
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			sf, err := saltfile.Load(cmd.Flags(), "gsalt", "salt")
			if err != nil {
				return err
			}
			var chosen []string
			for i, t := range targetFlags {
				if selected[i] {
					chosen = append(chosen, "--"+t.long)
					o.TargetType = t.tgtType
				}
			}
			if len(chosen) > 1 {
				fmt.Fprintf(os.Stderr, "Usage: %s\n\ngsalt: error: The options %s are mutually exclusive. Please only choose one of them\n", cmd.Use, strings.Join(chosen, "/"))
				os.Exit(2)
			}
			if len(args) <= 1 {
				_ = cmd.Help()
			}
			o.Words = args
			o.Out, o.OutFile, o.OutFileAppend, o.OutIndent, o.StateOpts = cf.Out, cf.OutFile, cf.OutFileAppend, cf.OutIndent(), cf.StateOpts()
			o.NoColor, o.ForceColor, o.NoParse = cf.NoColor, cf.ForceColor, cf.NoParse()
			o.IsTerminal = term.IsTerminal(int(os.Stdout.Fd()))
			if o.Logger, err = cf.Logger(); err != nil {
				return err
			}
			sf.Log(o.Logger)
			stopProf, err := daemon.StartProfiles()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := saltcli.Run(ctx, o)
			stop()
			stopProf()
			os.Exit(code)
			return nil
		},
	}
	f := cmd.Flags()
	saltfile.AddFlag(f)
	f.SetInterspersed(true)
	f.StringVarP(&o.ConfigDir, "config-dir", "c", "/etc/salt", "directory holding the master config file")
	f.IntVarP(&o.Timeout, "timeout", "t", 0, "seconds to wait for the minions before asking whether they still run the job (default: the master's timeout, 5)")
	f.BoolVarP(&o.Static, "static", "s", false, "return the data from the minions as a group after they all return")
	f.BoolVar(&o.Async, "async", false, "publish the job and print its jid without waiting for returns")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "print the jid and the minions that did not return")
	f.BoolVar(&o.HideTimeout, "hide-timeout", false, "do not report minions that time out")
	f.BoolVar(&o.ShowJID, "show-jid", false, "print the jid")
	f.BoolVar(&o.Summary, "summary", false, "print a summary of the returns")
	f.BoolVar(&o.RetcodePassthrough, "retcode-passthrough", false, "exit with the highest retcode of the minions")
	f.StringVarP(&o.Batch, "batch", "b", "", "run the job in batches: N minions or N% of the responding minions at a time")
	f.StringVar(&o.Batch, "batch-size", "", "alias of --batch")
	f.Float64Var(&o.BatchWait, "batch-wait", 0, "seconds to wait after a minion returns before its batch slot is reused")
	f.IntVar(&o.BatchSafeLimit, "batch-safe-limit", 0, "run as a batch when the job targets at least this many minions")
	f.StringVar(&o.BatchSafeSize, "batch-safe-size", "8", "batch size used by --batch-safe-limit")
	f.BoolVar(&o.Failhard, "failhard", false, "stop a batch at the first minion that fails or returns a non-zero retcode")
	for i, t := range targetFlags {
		f.BoolVarP(&selected[i], t.long, t.short, false, t.help)
	}
	f.StringVar(&o.Delimiter, "delimiter", ":", "delimiter for multi-level data in grain and pillar targets")
	f.StringVar(&o.Return, "return", "", "returners the minions also send the return to")
	f.StringVar(&o.ReturnConfig, "return_config", "", "alternative returner configuration")
	f.StringVar(&o.ReturnKwargs, "return_kwargs", "", "returner options")
	f.StringVar(&o.Metadata, "metadata", "", "metadata passed with the job")
	f.StringVarP(&o.Eauth.Eauth, "auth", "a", "", "external authentication system to use (pam, file, sharedsecret, auto, ...)")
	for _, alias := range []string{"eauth", "external-auth"} {
		f.StringVar(&o.Eauth.Eauth, alias, "", "same as --auth")
		_ = f.MarkHidden(alias)
	}
	f.BoolVarP(&o.Eauth.MakeToken, "make-token", "T", false, "generate and save an authentication token for re-use")
	f.StringVar(&o.Eauth.Username, "username", "", "username for external authentication")
	f.StringVar(&o.Eauth.Password, "password", "", "password for external authentication")
	f.StringVar(&o.ModuleExecutors, "module-executors", "", "executors to run the function with")
	f.StringVar(&o.ExecutorOpts, "executor-opts", "", "options for the executors")
	f.StringVar(&o.ArgsSeparator, "args-separator", ",", "separator of argument groups in multi-function jobs")
	cf.Add(f)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "gsalt:", err)
		os.Exit(2)
	}
}

// Command gsalt-key manages the master's minion keys like salt-key.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gsalt/gsalt/cli/keycli"
	"github.com/gsalt/gsalt/internal/saltfile"
)

func main() {
	o := keycli.Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	var noColor, forceColor bool
	cmd := &cobra.Command{
		Use:           "gsalt-key",
		Short:         "Manage Salt minion keys (salt-key compatible)",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := saltfile.Load(cmd.Flags(), "gsalt-key", "salt-key"); err != nil {
				return err
			}
			o.ListAll = o.ListAll || o.ListState == ""
			o.Color = forceColor || (!noColor && term.IsTerminal(int(os.Stdout.Fd())))
			code, err := keycli.Run(o)
			if err != nil {
				fmt.Fprintln(os.Stderr, "gsalt-key:", err)
			}
			os.Exit(code)
			return nil
		},
	}
	f := cmd.Flags()
	saltfile.AddFlag(f)
	f.StringVarP(&o.ConfigDir, "config-dir", "c", "/etc/salt", "directory holding the master config file")
	f.BoolVarP(&o.ListAll, "list-all", "L", false, "list all public keys")
	f.StringVarP(&o.ListState, "list", "l", "", "list keys in a state: pre|un|unaccepted, acc|accepted, rej|rejected, den|denied, all")
	f.StringVarP(&o.Accept, "accept", "a", "", "accept the keys matching the glob")
	f.BoolVarP(&o.AcceptAll, "accept-all", "A", false, "accept all pending keys")
	f.StringVarP(&o.Reject, "reject", "r", "", "reject the keys matching the glob")
	f.BoolVarP(&o.RejectAll, "reject-all", "R", false, "reject all pending keys")
	f.StringVarP(&o.Delete, "delete", "d", "", "delete the keys matching the glob")
	f.BoolVarP(&o.DeleteAll, "delete-all", "D", false, "delete all keys")
	f.StringVarP(&o.Finger, "finger", "f", "", "print the fingerprints of the keys matching the glob")
	f.BoolVarP(&o.FingerAll, "finger-all", "F", false, "print all fingerprints")
	f.StringVarP(&o.Print, "print", "p", "", "print the keys matching the glob")
	f.BoolVarP(&o.PrintAll, "print-all", "P", false, "print all keys")
	f.StringVar(&o.GenKeys, "gen-keys", "", "generate a key pair NAME.pem/NAME.pub")
	f.StringVar(&o.GenKeysDir, "gen-keys-dir", ".", "directory for --gen-keys")
	f.IntVar(&o.KeySize, "keysize", 2048, "key size for --gen-keys")
	f.BoolVarP(&o.Yes, "yes", "y", false, "answer yes to all questions")
	f.BoolVar(&o.IncludeAll, "include-all", false, "include keys in every state")
	f.BoolVar(&o.IncludeAccepted, "include-accepted", false, "include accepted keys")
	f.BoolVar(&o.IncludeRejected, "include-rejected", false, "include rejected keys")
	f.BoolVar(&o.IncludeDenied, "include-denied", false, "include denied keys")
	f.StringVar(&o.Out, "out", "", "output format: key (default), json, yaml")
	f.BoolVar(&noColor, "no-color", false, "disable colours")
	f.BoolVar(&forceColor, "force-color", false, "force colours")
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "gsalt-key:", err)
		os.Exit(2)
	}
}

// Command gsalt-run runs Salt runners on the master like `salt-run`.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gsalt/gsalt/cli/runcli"
)

func main() {
	var o runcli.Options
	var outIndent, timeout int
	var noParse, logLevel string
	cmd := &cobra.Command{
		Use:           "gsalt-run [options] <function> [arguments]",
		Short:         "Run a runner function on the master (salt-run compatible)",
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Words = args
			if cmd.Flags().Changed("out-indent") || cmd.Flags().Changed("output-indent") {
				o.OutIndent = &outIndent
			}
			if timeout > 0 {
				o.Timeout = time.Duration(timeout) * time.Second
			}
			if noParse == "" {
				noParse = os.Getenv("SALT_NO_PARSE")
			}
			for _, n := range strings.Split(noParse, ",") {
				if n = strings.TrimSpace(n); n != "" {
					o.NoParse = append(o.NoParse, n)
				}
			}
			o.IsTerminal = term.IsTerminal(int(os.Stdout.Fd()))
			o.Log = newLogger(logLevel)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := runcli.Run(ctx, o)
			stop()
			os.Exit(code)
			return nil
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(true)
	f.StringVarP(&o.ConfigDir, "config-dir", "c", "/etc/salt", "directory holding the master config file")
	f.IntVarP(&timeout, "timeout", "t", 0, "seconds to wait for the runner's return (default: the master's rest_timeout, 300)")
	f.BoolVar(&o.Async, "async", false, "start the runner and return without waiting")
	f.BoolVar(&o.Quiet, "quiet", false, "do not print the return")
	f.StringVar(&noParse, "no-parse", "", "comma-separated argument names whose values are not YAML-parsed")
	f.StringVar(&o.Out, "out", "", "outputter: nested, json, yaml, txt, raw, pprint, newline_values_only")
	f.StringVar(&o.Out, "output", "", "alias of --out")
	f.IntVar(&outIndent, "out-indent", 0, "indentation of the json/yaml output (negative: none)")
	f.IntVar(&outIndent, "output-indent", 0, "alias of --out-indent")
	f.StringVar(&o.OutFile, "out-file", "", "write the output to this file")
	f.StringVar(&o.OutFile, "output-file", "", "alias of --out-file")
	f.BoolVar(&o.OutFileAppend, "out-file-append", false, "append to --out-file instead of truncating it")
	f.BoolVar(&o.OutFileAppend, "output-file-append", false, "alias of --out-file-append")
	f.BoolVar(&o.NoColor, "no-color", false, "disable colours")
	f.BoolVar(&o.NoColor, "no-colour", false, "alias of --no-color")
	f.BoolVar(&o.ForceColor, "force-color", false, "force colours")
	f.BoolVar(&o.ForceColor, "force-colour", false, "alias of --force-color")
	f.StringVarP(&logLevel, "log-level", "l", "warning", "console log level: debug, info, warning, error, quiet")
	for _, alias := range []string{"output", "output-indent", "output-file", "output-file-append", "no-colour", "force-colour"} {
		_ = f.MarkHidden(alias)
	}
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "gsalt-run:", err)
		os.Exit(2)
	}
}

// newLogger logs to stderr at Salt's console log level names.
func newLogger(level string) *slog.Logger {
	var l slog.Level
	switch strings.ToLower(level) {
	case "all", "garbage", "trace", "debug", "profile":
		l = slog.LevelDebug
	case "info":
		l = slog.LevelInfo
	case "error", "critical":
		l = slog.LevelError
	case "quiet":
		l = slog.LevelError + 100
	default:
		l = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

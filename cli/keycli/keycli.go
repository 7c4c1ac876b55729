// Package keycli is the behaviour of gsalt-key (salt-key): it reads the
// master config, opens the key store and runs one action with salt-key's
// prompts and output. cmd/gsalt-key only maps flags onto Options.
package keycli

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"bufio"
	"errors"
	"fmt"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/wire/payload"
	"io"
	"log/slog"
	"strings"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/master/keys"
)

// Options is one gsalt-key invocation.
type Options struct {
	ConfigDir string
	// Exactly one action: List ("" or a state name), Accept, Reject,
	// Delete, Finger, Print (an id glob), or the *All flags, or GenKeys.
	ListAll   bool
	ListState string
	Accept    string
	AcceptAll bool
	Reject    string
	RejectAll bool
	Delete    string
	DeleteAll bool
	Finger    string
	FingerAll bool
	Print     string
	PrintAll  bool

	GenKeys    string
	GenKeysDir string
	KeySize    int

	Yes                                                         bool
	IncludeAll, IncludeAccepted, IncludeRejected, IncludeDenied bool
	// Out is "", "key", "json" or "yaml".
	Out   string
	Color bool

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Logger *slog.Logger
}

// ErrUsage means the options name no action or several.
var ErrUsage = errors.New("gsalt-key: choose one action")

// Run executes the action and returns the process exit code.
func Run(o Options) (int, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.GenKeys != "" {
		dir := o.GenKeysDir
		if dir == "" {
			dir = "."
		}
		fp, err := keys.GenKeys(o.GenKeys, dir, o.KeySize)
		if err != nil {
			return 1, err
		}
		if o.Out == "json" {
			fmt.Fprint(o.Stdout, keys.FormatGenKeysJSON(fp))
		} else {
			fmt.Fprint(o.Stdout, keys.FormatGenKeys(fp, o.Color))
		}
		return 0, nil
	}
	cfg, err := config.LoadClient(o.ConfigDir)
	if err != nil {
		return 1, err
	}
	store, err := keys.Open(keys.Options{
		PKIDir:              cfg.PKIDir,
		CacheDir:            cfg.CacheDir,
		KeySize:             cfg.KeySize,
		HashType:            cfg.HashType,
		NoRotateAESKey:      !cfg.RotateAESKey,
		PermissivePKIAccess: cfg.PermissivePKIAccess,
		Logger:              o.Logger,
		Event:               masterBus(cfg.SockDir, o.Logger),
	})
	if err != nil {
		return 1, err
	}
	switch {
	case o.AcceptAll:
		return act(o, store, keys.ActAccept, "*")
	case o.Accept != "":
		return act(o, store, keys.ActAccept, o.Accept)
	case o.RejectAll:
		return act(o, store, keys.ActReject, "*")
	case o.Reject != "":
		return act(o, store, keys.ActReject, o.Reject)
	case o.DeleteAll:
		return act(o, store, keys.ActDelete, "*")
	case o.Delete != "":
		return act(o, store, keys.ActDelete, o.Delete)
	case o.FingerAll || o.Finger != "":
		pat := o.Finger
		if o.FingerAll {
			pat = "*"
		}
		l, err := store.Finger(pat)
		if err != nil {
			return 1, err
		}
		return show(o, l)
	case o.PrintAll || o.Print != "":
		pat := o.Print
		if o.PrintAll {
			pat = "*"
		}
		l, err := store.Print(pat)
		if err != nil {
			return 1, err
		}
		return show(o, l)
	default:
		arg := o.ListState
		if arg == "" {
			arg = "all"
		}
		st, all, err := keys.ParseListArg(arg)
		if err != nil {
			return 1, err
		}
		var l keys.Listing
		if all {
			l, err = store.ListAll()
		} else {
			var ids []string
			ids, err = store.ListState(st)
			l = keys.Listing{{State: st, IDs: ids}}
		}
		if err != nil {
			return 1, err
		}
		return show(o, l)
	}
}

// masterBus returns an event callback that hands salt/key events to a
// running master's bus through its pull socket, as salt-key does; without a
// running master the events are dropped (debug log).
func masterBus(sockDir string, log *slog.Logger) func(tag string, data map[string]any) {
	path := filepath.Join(sockDir, event.MasterPullSocket)
	return func(tag string, data map[string]any) {
		if _, err := os.Stat(path); err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := event.FirePull(ctx, path, event.Event{Tag: tag, Data: payload.FromGo(data).(*payload.Map)}); err != nil {
			log.Debug("salt/key event not delivered", "tag", tag, "err", err)
		}
	}
}

func show(o Options, l keys.Listing) (int, error) {
	switch o.Out {
	case "json":
		fmt.Fprint(o.Stdout, keys.FormatJSON(l))
	case "yaml":
		fmt.Fprint(o.Stdout, formatYAML(l))
	default:
		fmt.Fprint(o.Stdout, keys.FormatKeys(l, o.Color))
	}
	return 0, nil
}

// formatYAML renders a listing like Salt's yaml outputter (block style).
func formatYAML(l keys.Listing) string {
	if len(l) == 0 {
		return "{}\n"
	}
	var b strings.Builder
	for _, g := range l {
		b.WriteString(g.State.Name() + ":")
		switch {
		case g.IsDict() && len(g.IDs) == 0:
			b.WriteString(" {}\n")
		case g.IsDict():
			b.WriteString("\n")
			for i, id := range g.IDs {
				fmt.Fprintf(&b, "  %s: %s\n", id, g.Values[i])
			}
		case len(g.IDs) == 0:
			b.WriteString(" []\n")
		default:
			b.WriteString("\n")
			for _, id := range g.IDs {
				fmt.Fprintf(&b, "- %s\n", id)
			}
		}
	}
	return b.String()
}

// act runs accept/reject/delete the way salt-key does: match, filter by
// the include flags, show the keys, ask (unless -y), act, report.
func act(o Options, store *keys.Store, a keys.Act, pattern string) (int, error) {
	inc := keys.CLIInclude(a, o.IncludeAll, o.IncludeAccepted, o.IncludeRejected, o.IncludeDenied)
	matched, err := store.Match(false, pattern)
	if err != nil {
		return 1, err
	}
	todo := matched.Filter(a, inc)
	if todo.Empty() {
		fmt.Fprint(o.Stdout, keys.FormatNoMatch(pattern, inc))
		return 0, nil
	}
	fmt.Fprint(o.Stdout, keys.FormatGoingTo(a))
	fmt.Fprint(o.Stdout, keys.FormatKeys(todo, o.Color))
	if !o.Yes {
		prompt, defYes := keys.ProceedPrompt(a)
		fmt.Fprint(o.Stdout, prompt)
		line, _ := bufio.NewReader(o.Stdin).ReadString('\n')
		ans := strings.TrimSpace(line)
		yes := strings.HasPrefix(strings.ToLower(ans), "y") || (ans == "" && defYes)
		if !yes {
			return 0, nil
		}
	}
	var out keys.Outcome
	switch a {
	case keys.ActAccept:
		out, err = store.AcceptMatches(todo, inc)
	case keys.ActReject:
		out, err = store.RejectMatches(todo, inc)
	case keys.ActDelete:
		out, err = store.DeleteMatches(todo, false)
	}
	if err != nil {
		return 1, err
	}
	for _, c := range out.Invalid {
		fmt.Fprint(o.Stderr, keys.FormatInvalid(c.ID))
	}
	if a == keys.ActDelete {
		fmt.Fprint(o.Stdout, keys.FormatDone(a, todo))
	} else {
		fmt.Fprint(o.Stdout, keys.FormatDone(a, out.After))
	}
	return 0, nil
}

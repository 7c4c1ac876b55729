// Command publisher sends intended device configurations over NATS, the
// way the seed's watch service does: the body of <device>.cfg goes to the
// subject dc1.<device>.configure (-subject), where gsalt-master's NATS
// bridge turns it into the event nats/configure/<device> and the reactor
// replaces the device's running configuration with it
// (examples/nats-intended-configs/README.md).
//
//	publisher [-s nats://127.0.0.1:4222] [-js] [-wait 60s] sw1.cfg sw2.cfg
//	publisher -watch /srv/intended        # publish every .cfg that changes
//
// With -wait it waits for each device's job return, which the bridge
// mirrors to <prefix>.salt.job.<jid>.ret.<device>, prints the outcome and
// exits 1 when a replace failed. With -js the message is published to
// JetStream and the stream's acknowledgement awaited: it is stored even
// while gsalt-master is down.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

type publisher struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	subject string
	prefix  string
	wait    time.Duration
}

func main() {
	server := flag.String("s", nats.DefaultURL, "NATS server URL(s), comma-separated (nats://user:password@host:4222 for credentials)")
	subject := flag.String("subject", "dc1.{device}.configure", "subject; {device} is the file name without .cfg")
	prefix := flag.String("prefix", "salt", "the bridge's subject_prefix (for -wait)")
	useJS := flag.Bool("js", false, "publish to JetStream and wait for the stream's acknowledgement")
	wait := flag.Duration("wait", 0, "wait this long for each device's job return (0: do not wait)")
	watch := flag.String("watch", "", "watch this directory: publish each <device>.cfg whose content changes")
	interval := flag.Duration("interval", time.Second, "how often -watch looks at the directory")
	creds := flag.String("creds", "", "NATS credentials file")
	token := flag.String("token", "", "NATS token")
	ca := flag.String("tls-ca", "", "CA certificate file of the NATS server")
	cert := flag.String("tls-cert", "", "client certificate file")
	key := flag.String("tls-key", "", "client key file")
	flag.Parse()
	if (*watch == "") == (flag.NArg() == 0) {
		fmt.Fprintln(os.Stderr, "publisher: give <device>.cfg files or -watch DIR")
		os.Exit(2)
	}
	opts := []nats.Option{nats.Name("gsalt intended-config publisher")}
	if *creds != "" {
		opts = append(opts, nats.UserCredentials(*creds))
	}
	if *token != "" {
		opts = append(opts, nats.Token(*token))
	}
	if *ca != "" {
		opts = append(opts, nats.RootCAs(*ca))
	}
	if *cert != "" {
		opts = append(opts, nats.ClientCert(*cert, *key))
	}
	nc, err := nats.Connect(*server, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "publisher:", err)
		os.Exit(1)
	}
	defer nc.Close()
	p := &publisher{nc: nc, subject: *subject, prefix: *prefix, wait: *wait}
	if *useJS {
		if p.js, err = jetstream.New(nc); err != nil {
			fmt.Fprintln(os.Stderr, "publisher:", err)
			os.Exit(1)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *watch != "" {
		err = p.watch(ctx, *watch, *interval)
	} else {
		for _, f := range flag.Args() {
			if err = p.publishFile(ctx, f); err != nil {
				break
			}
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "publisher:", err)
		os.Exit(1)
	}
}

// publishFile sends one <device>.cfg and, with -wait, reports its return.
func (p *publisher) publishFile(ctx context.Context, path string) error {
	device := strings.TrimSuffix(filepath.Base(path), ".cfg")
	if device == "" || strings.ContainsAny(device, ". *>") {
		return fmt.Errorf("%s: the file name must be <device>.cfg with a device id of one subject token", path)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	subj := strings.ReplaceAll(p.subject, "{device}", device)
	var rets *nats.Subscription
	if p.wait > 0 {
		// Subscribed before publishing: the return cannot be missed.
		if rets, err = p.nc.SubscribeSync(p.prefix + ".salt.job.*.ret." + device); err != nil {
			return err
		}
		defer rets.Unsubscribe()
	}
	if p.js != nil {
		if _, err := p.js.Publish(ctx, subj, text); err != nil {
			return fmt.Errorf("%s: %w", subj, err)
		}
	} else if err := p.nc.Publish(subj, text); err != nil {
		return fmt.Errorf("%s: %w", subj, err)
	}
	if err := p.nc.FlushTimeout(10 * time.Second); err != nil {
		return err
	}
	fmt.Printf("published %s (%d bytes)\n", subj, len(text))
	if rets == nil {
		return nil
	}
	deadline := time.Now().Add(p.wait)
	for {
		m, err := rets.NextMsg(time.Until(deadline))
		if err != nil {
			return fmt.Errorf("%s: no net.load_config return within %v: %w", device, p.wait, err)
		}
		var ret struct {
			Fun    string `json:"fun"`
			Jid    string `json:"jid"`
			Return struct {
				Result  bool   `json:"result"`
				Comment string `json:"comment"`
				Diff    string `json:"diff"`
			} `json:"return"`
		}
		if json.Unmarshal(m.Data, &ret) != nil || ret.Fun != "net.load_config" {
			continue
		}
		fmt.Printf("%s: jid %s result %v\n", device, ret.Jid, ret.Return.Result)
		if ret.Return.Comment != "" {
			fmt.Printf("  comment: %s\n", ret.Return.Comment)
		}
		if ret.Return.Diff != "" {
			fmt.Printf("  diff:\n%s\n", ret.Return.Diff)
		}
		if !ret.Return.Result {
			return fmt.Errorf("%s: the replace failed", device)
		}
		return nil
	}
}

// watch publishes every <device>.cfg of dir whose content differs from
// what was last published (all of them at the start), until ctx ends.
// Temporary and hidden files are ignored: write a file next to its final
// name and rename it.
func (p *publisher) watch(ctx context.Context, dir string, every time.Duration) error {
	seen := map[string][32]byte{}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".cfg") || strings.HasPrefix(name, ".") {
				continue
			}
			path := filepath.Join(dir, name)
			b, err := os.ReadFile(path)
			if err != nil {
				continue // removed meanwhile
			}
			sum := sha256.Sum256(b)
			if old, ok := seen[name]; ok && slices.Equal(old[:], sum[:]) {
				continue
			}
			// A failure is reported and tried again when the file changes.
			seen[name] = sum
			if err := p.publishFile(ctx, path); err != nil {
				fmt.Fprintln(os.Stderr, "publisher:", err)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

package saltcli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/wire/payload"
)

// EauthOptions are the salt CLI's external authentication options
// (-a/--auth/--eauth, -T/--make-token, --username, --password).
type EauthOptions struct {
	Eauth     string
	MakeToken bool
	Username  string
	Password  string
	// Stdin is where missing credentials are prompted from (os.Stdin when
	// nil); prompts go to Stderr.
	Stdin io.Reader
}

// ErrEauthFailed is Salt's "ERROR: Authentication failed".
var ErrEauthFailed = errors.New("ERROR: Authentication failed")

// TokenFile is salt.config.client_config's token_file: the token_file
// option, else ~/.config/salt/salt_token when ~/.config/salt exists, else
// ~/salt_token.
func TokenFile(cfg *config.Master) string {
	if s := cfg.Opts.Str("token_file"); s != "" {
		return expandHome(s)
	}
	home, _ := os.UserHomeDir()
	xdg := filepath.Join(home, ".config", "salt")
	if fi, err := os.Stat(xdg); err == nil && fi.IsDir() {
		return filepath.Join(xdg, "salt_token")
	}
	return filepath.Join(home, "salt_token")
}

func expandHome(p string) string {
	if strings.HasPrefix(p, "~/") {
		home, _ := os.UserHomeDir()
		return filepath.Join(home, p[2:])
	}
	return p
}

// SavedToken returns the token in the token file when the file is younger
// than token_expire ("" otherwise), as client_config loads it.
func SavedToken(cfg *config.Master) string {
	path := TokenFile(cfg)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	expire := 43200
	if n, err := cfg.Opts.Int("token_expire"); err == nil && n > 0 {
		expire = n
	}
	if fi.ModTime().Add(time.Duration(expire) * time.Second).Before(time.Now()) {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// EauthKwargs builds the client kwargs for eauth like salt.cli.salt: a
// saved token when there is one; else the credentials (prompted for when
// not given), exchanged for a token written to the token file with -T.
// It returns nil when no eauth is in use.
func (c *Client) EauthKwargs(ctx context.Context, o EauthOptions, stderr io.Writer) (*payload.Map, error) {
	if tok := SavedToken(c.Master); tok != "" {
		return payload.NewMap("token", tok), nil
	}
	if o.Eauth == "" {
		return nil, nil
	}
	in := o.Stdin
	if in == nil {
		in = os.Stdin
	}
	rd := bufio.NewReader(in)
	user, pass := o.Username, o.Password
	if user == "" {
		fmt.Fprint(stderr, "username: ")
		line, _ := rd.ReadString('\n')
		user = strings.TrimRight(line, "\r\n")
		if user == "" {
			user = SaltUser()
		}
	}
	if pass == "" {
		fmt.Fprint(stderr, "password: ")
		if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			b, err := term.ReadPassword(int(f.Fd()))
			fmt.Fprintln(stderr)
			if err != nil {
				return nil, ErrEauthFailed
			}
			pass = string(b)
		} else {
			line, _ := rd.ReadString('\n')
			pass = strings.TrimRight(line, "\r\n")
		}
	}
	kw := payload.NewMap()
	if o.MakeToken {
		rep, err := c.Request(ctx, payload.NewMap("cmd", "mk_token", "eauth", o.Eauth, "username", user, "password", pass), 30*time.Second)
		if err != nil {
			return nil, err
		}
		if td, ok := rep.(*payload.Map); ok && td.Str("token") != "" {
			tok := td.Str("token")
			path := TokenFile(c.Master)
			if err := os.WriteFile(path, []byte(tok), 0o600); err == nil {
				_ = os.Chmod(path, 0o600)
			}
			kw.Set("token", tok)
		}
	}
	kw.Set("username", user)
	kw.Set("password", pass)
	kw.Set("eauth", o.Eauth)
	return kw, nil
}

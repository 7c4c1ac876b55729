package eauth

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/gsalt/gsalt/wire/payload"
)

func optsOf(m map[string]any) func(string) (any, bool) {
	return func(k string) (any, bool) { v, ok := m[k]; return v, ok }
}

func TestBackends(t *testing.T) {
	dir := t.TempDir()
	sum := sha256.Sum256([]byte("s3cret"))
	text := filepath.Join(dir, "users.txt")
	os.WriteFile(text, []byte("fred:plainpw\nbob:"+hex.EncodeToString(sum[:])+"\n"), 0o600)
	csv := filepath.Join(dir, "users.csv")
	os.WriteFile(csv, []byte("1|joe|pw1\n2|ann|pw2\n"), 0o600)
	bc, _ := bcrypt.GenerateFromPassword([]byte("bcpw"), bcrypt.MinCost)
	ht := filepath.Join(dir, "htpasswd")
	// $apr1$ and $1$ lines made with `openssl passwd -apr1 -salt abcdefgh
	// secret` and `openssl passwd -1 -salt xyz secret`.
	os.WriteFile(ht, []byte("bcuser:"+string(bc)+"\napr:$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/\nmd5:$1$xyz$Qia9Wq6FxQkYcwNWMk/RM0\nsha:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=\n"), 0o600)
	dig := filepath.Join(dir, "htdigest")
	ds := md5hex("dan:realm1:dpw")
	os.WriteFile(dig, []byte("dan:realm1:"+ds+"\n"), 0o600)

	fileOpts := func(section map[string]any) func(string) (any, bool) {
		return optsOf(map[string]any{"external_auth": map[string]any{"file": section}})
	}
	tests := []struct {
		name, backend, user, pass string
		opts                      func(string) (any, bool)
		want                      bool
	}{
		{"auto", "auto", "x", "y", optsOf(nil), true},
		{"sharedsecret ok", "sharedsecret", "anyone", "topsecret", optsOf(map[string]any{"sharedsecret": "topsecret"}), true},
		{"sharedsecret bad", "sharedsecret", "anyone", "nope", optsOf(map[string]any{"sharedsecret": "topsecret"}), false},
		{"sharedsecret unset", "sharedsecret", "anyone", "", optsOf(nil), false},
		{"text plaintext", "file", "fred", "plainpw", fileOpts(map[string]any{"^filename": text}), true},
		{"text plaintext bad", "file", "fred", "x", fileOpts(map[string]any{"^filename": text}), false},
		{"text unknown user", "file", "nobody", "plainpw", fileOpts(map[string]any{"^filename": text}), false},
		{"text sha256", "file", "bob", "s3cret", fileOpts(map[string]any{"^filename": text, "^hashtype": "sha256"}), true},
		{"text fields", "file", "ann", "pw2", fileOpts(map[string]any{"^filename": csv, "^field_separator": "|", "^username_field": 2, "^password_field": 3}), true},
		{"no filename", "file", "fred", "plainpw", fileOpts(map[string]any{}), false},
		{"htpasswd bcrypt", "file", "bcuser", "bcpw", fileOpts(map[string]any{"^filename": ht, "^filetype": "htpasswd"}), true},
		{"htpasswd bcrypt bad", "file", "bcuser", "x", fileOpts(map[string]any{"^filename": ht, "^filetype": "htpasswd"}), false},
		{"htpasswd apr1", "file", "apr", "secret", fileOpts(map[string]any{"^filename": ht, "^filetype": "htpasswd"}), true},
		{"htpasswd md5crypt", "file", "md5", "secret", fileOpts(map[string]any{"^filename": ht, "^filetype": "htpasswd"}), true},
		{"htpasswd sha", "file", "sha", "secret", fileOpts(map[string]any{"^filename": ht, "^filetype": "htpasswd"}), true},
		{"htpasswd apr1 bad", "file", "apr", "secreT", fileOpts(map[string]any{"^filename": ht, "^filetype": "htpasswd"}), false},
		{"htdigest", "file", "dan", "dpw", fileOpts(map[string]any{"^filename": dig, "^filetype": "htdigest", "^realm": "realm1"}), true},
		{"htdigest no realm", "file", "dan", "dpw", fileOpts(map[string]any{"^filename": dig, "^filetype": "htdigest"}), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := NewBackend(tc.backend, Env{Opts: tc.opts})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := b.Auth(tc.user, tc.pass)
			if got != tc.want {
				t.Errorf("Auth(%q, %q) = %v, want %v", tc.user, tc.pass, got, tc.want)
			}
		})
	}
}

func TestTokensExpireAndSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_700_000_000, 0)
	opts := map[string]any{
		"external_auth":              map[string]any{"auto": map[string]any{"fred": []any{"test.*"}}},
		"token_expire":               int64(60),
		"token_expire_user_override": map[string]any{"auto": []any{"fred"}},
	}
	a := New(Options{Opts: optsOf(opts), TokenDir: dir, MinFailDelay: time.Millisecond})
	a.tokens.Now = func() time.Time { return now }
	td := a.MkToken(payload.NewMap("eauth", "auto", "username", "fred", "password", "x", "token_expire", int64(600)))
	if td == nil {
		t.Fatal("MkToken failed")
	}
	tok := td.Str("token")
	if len(tok) != 64 {
		t.Fatalf("token %q", tok)
	}
	if got, _ := asFloat(mustGet(td, "expire")); got != float64(now.Unix())+600 {
		t.Errorf("expire = %v (token_expire_user_override)", got)
	}
	// A second Auth on the same directory (a restarted master) sees it.
	b := New(Options{Opts: optsOf(opts), TokenDir: dir})
	b.tokens.Now = func() time.Time { return now.Add(10 * time.Second) }
	if g := b.GetToken(tok); g == nil || g.Str("name") != "fred" || g.Str("eauth") != "auto" {
		t.Fatalf("GetToken after restart = %v", g)
	}
	r := b.Check(payload.NewMap("token", tok), "token")
	if r.Err != nil || r.Username != "fred" || len(r.AuthList) != 1 {
		t.Fatalf("Check token = %+v", r)
	}
	b.tokens.Now = func() time.Time { return now.Add(601 * time.Second) }
	if g := b.GetToken(tok); g != nil {
		t.Fatal("expired token still valid")
	}
	if _, err := os.Stat(filepath.Join(dir, tok)); !os.IsNotExist(err) {
		t.Fatal("expired token file not removed")
	}
	r = b.Check(payload.NewMap("token", tok), "token")
	if r.Err == nil || r.Err.Message != `Authentication failure of type "token" occurred.` {
		t.Fatalf("expired token: %+v", r)
	}
	// Without the override the requested expiry is ignored.
	opts["token_expire_user_override"] = false
	td = a.MkToken(payload.NewMap("eauth", "auto", "username", "fred", "password", "x", "token_expire", int64(600)))
	if got, _ := asFloat(mustGet(td, "expire")); got != float64(now.Unix())+60 {
		t.Errorf("expire = %v without override", got)
	}
	for _, bad := range []string{"", "..", "../x", "a/b"} {
		if a.GetToken(bad) != nil {
			t.Errorf("GetToken(%q) accepted", bad)
		}
	}
}

func TestCheckEauthRefusals(t *testing.T) {
	dir := t.TempDir()
	opts := map[string]any{
		"external_auth": map[string]any{"sharedsecret": map[string]any{"fred": []any{"test.*"}}},
		"sharedsecret":  "pw",
		"token_expire":  int64(60),
	}
	a := New(Options{Opts: optsOf(opts), TokenDir: dir, MinFailDelay: 20 * time.Millisecond})
	tests := []struct {
		name string
		load *payload.Map
		err  string
		acl  int
	}{
		{"good", payload.NewMap("eauth", "sharedsecret", "username", "fred", "password", "pw"), "", 1},
		{"good, no acl", payload.NewMap("eauth", "sharedsecret", "username", "joe", "password", "pw"), "", 0},
		{"wrong password", payload.NewMap("eauth", "sharedsecret", "username", "fred", "password", "no"), `Authentication failure of type "eauth" occurred for user fred.`, 0},
		{"not enabled", payload.NewMap("eauth", "auto", "username", "fred", "password", "pw"), `Authentication failure of type "eauth" occurred for user fred.`, 0},
		{"unknown backend", payload.NewMap("eauth", "nope", "password", "pw"), `Authentication failure of type "eauth" occurred for user UNKNOWN.`, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := a.Check(tc.load, "eauth")
			if tc.err == "" {
				if r.Err != nil || len(r.AuthList) != tc.acl {
					t.Fatalf("got %+v", r)
				}
				return
			}
			if r.Err == nil || r.Err.Name != "EauthAuthenticationError" || r.Err.Message != tc.err {
				t.Fatalf("got %+v", r)
			}
			// Salt equalises only the backend call; unknown systems fail at once.
			if tc.name == "wrong password" && time.Since(start) < 15*time.Millisecond {
				t.Errorf("failure answered in %v: time_auth equalisation missing", time.Since(start))
			}
		})
	}
	if td := a.MkToken(payload.NewMap("eauth", "sharedsecret", "username", "fred", "password", "no")); td != nil {
		t.Fatal("MkToken with a wrong password")
	}
}

func TestBlacklistAndPublisherACL(t *testing.T) {
	bl := map[string]any{"users": []any{"root", "^bad.*"}, "modules": []any{"cmd.*"}}
	if !Blacklisted(bl, "root", []string{"test.ping"}) || !Blacklisted(bl, "badguy", []string{"test.ping"}) {
		t.Error("users blacklist")
	}
	if !Blacklisted(bl, "fred", []string{"test.ping", "cmd.run"}) || Blacklisted(bl, "fred", []string{"test.ping"}) {
		t.Error("modules blacklist")
	}
	acl := map[string]any{"fred": []any{"test.*"}, "dev.*": []any{"pkg.*"}}
	if got := ValuesOfMatchingKeys(acl, "devjoe"); len(got) != 1 || got[0] != "pkg.*" {
		t.Errorf("publisher_acl regex user: %v", got)
	}
}

func md5hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

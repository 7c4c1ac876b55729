package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWarnings(t *testing.T) {
	dir := t.TempDir()
	srv := filepath.Join(dir, "srv")
	os.MkdirAll(srv, 0o755)
	conf := "root_dir: " + dir + "\nauto_acept: True\nmy_custom_thing: 1\nmysql.host: db\nauto.accept: 1\nmetrics_port: 9100\n" +
		"file_roots:\n  base: [" + srv + ", " + dir + "/missing]\npillar_roots:\n  base: [" + dir + "/nopillar]\n"
	if err := os.WriteFile(filepath.Join(dir, "master"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadMaster(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(m.Opts.Warnings(), "\n")
	for _, want := range []string{
		`unknown option "auto_acept" in the master configuration (did you mean "auto_accept"?)`,
		`unknown option "my_custom_thing" in the master configuration` + "\n",
		"file_roots: directory " + dir + `/missing of saltenv "base" does not exist`,
		"pillar_roots: directory " + dir + `/nopillar of saltenv "base" does not exist`,
	} {
		if !strings.Contains(got+"\n", want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"mysql.host", "metrics_port", srv + " "} {
		if strings.Contains(got, not) {
			t.Errorf("warnings mention %q:\n%s", not, got)
		}
	}
	if strings.Contains(got, "my_custom_thing\" in the master configuration (did you mean") {
		t.Errorf("a far-off key got a suggestion:\n%s", got)
	}
	// Unknown lists every option Salt does not know; gsalt's own and
	// module options are no misspellings and get no suggestion (none is
	// searched for: a gsalt-proxy loads the configuration per device),
	// even one a single edit from a Salt option (auto_accept).
	want := map[string]string{"auto_acept": "auto_accept", "my_custom_thing": "", "mysql.host": "", "auto.accept": "", "metrics_port": ""}
	for _, u := range m.Opts.Unknown() {
		if sug, ok := want[u.Key]; !ok || sug != u.Suggestion {
			t.Errorf("Unknown() has %+v, want suggestion %q (listed: %v)", u, sug, ok)
		}
		delete(want, u.Key)
	}
	if len(want) > 0 {
		t.Errorf("Unknown() lacks %v", want)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"auto_acept", "auto_accept", 1}, {"log_levle", "log_level", 2}} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

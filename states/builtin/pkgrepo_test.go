package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestPkgrepoGolden compares pkgrepo.managed and pkgrepo.absent (and
// test=True) and the pkg.*_repo functions under them with Salt 3006
// (testdata/golden/pkgrepo.json) on a temporary apt directory (the
// option aptpkg.etc_dir, apt's Dir::Etc for Salt): new and existing
// repositories in sources.list and sources.list.d, comps,
// architectures, signed-by and key_url from salt://, errors. refresh is
// off (no apt-get update) and aptkey False (this machine's keyring is
// never touched); the files written are compared.
func TestPkgrepoGolden(t *testing.T) {
	etc := "{dir}/etc/apt/"
	line := "deb [signed-by={dir}/keyrings/r.gpg] file:///srv/repo stable main"
	list := "{dir}/etc/apt/sources.list.d/r.list"
	main := "# main list\ndeb http://deb.example.org/debian bookworm main\n\n# deb-src http://deb.example.org/debian bookworm main\n"
	withR := map[string]string{"etc/apt/sources.list": main, "etc/apt/sources.list.d/r.list": line + "\n", "etc/apt/sources.list.d/README": "x\n", "keyrings/README": "keys\n"}
	base := map[string]string{"etc/apt/sources.list": main, "etc/apt/sources.list.d/README": "x\n", "keyrings/README": "keys\n"}
	m := func(name string, test bool, files map[string]string, kw ...any) salttest.Call {
		c := single(name, "pkgrepo.managed", test, kw...)
		c.Files, c.Opts = files, []any{"aptpkg.etc_dir", etc}
		return c
	}
	ab := func(name string, test bool, files map[string]string, kw ...any) salttest.Call {
		c := single(name, "pkgrepo.absent", test, kw...)
		c.Files, c.Opts = files, []any{"aptpkg.etc_dir", etc}
		return c
	}
	fn := func(name, fun string, files map[string]string, args []any, kw ...any) salttest.Call {
		return salttest.Call{Name: name, Fun: fun, Args: args, Kwargs: kw, Files: files, Opts: []any{"aptpkg.etc_dir", etc}}
	}
	std := []any{"refresh", false, "aptkey", false}
	calls := []salttest.Call{
		m("new", false, base, append([]any{"name", line, "file", list}, std...)...),
		m("new test", true, base, append([]any{"name", line, "file", list}, std...)...),
		m("present", false, withR, append([]any{"name", line, "file", list}, std...)...),
		m("present test", true, withR, append([]any{"name", line, "file", list}, std...)...),
		m("more comps", false, withR, append([]any{"name", line, "file", list, "comps", "main,contrib"}, std...)...),
		m("more comps test", true, withR, append([]any{"name", line, "file", list, "comps", "main,contrib"}, std...)...),
		m("architectures", false, base, append([]any{"name", "deb [arch=amd64,arm64 signed-by={dir}/keyrings/r.gpg] file:///srv/repo stable main", "file", list}, std...)...),
		m("into sources.list", false, base, append([]any{"name", "deb [signed-by={dir}/keyrings/r.gpg] http://other.example.org/debian bookworm contrib"}, std...)...),
		m("existing main entry", false, base, append([]any{"name", "deb [signed-by={dir}/keyrings/r.gpg] http://deb.example.org/debian bookworm main"}, std...)...),
		m("no signed-by", false, base, append([]any{"name", "deb file:///srv/repo stable main", "file", list}, std...)...),
		m("no signed-by test", true, base, append([]any{"name", "deb file:///srv/repo stable main", "file", list}, std...)...),
		m("key_url", false, base, append([]any{"name", line, "file", list, "key_url", "salt://keys/r.gpg"}, std...)...),
		m("key_url missing keyring dir", false, map[string]string{"etc/apt/sources.list": main}, append([]any{"name", line, "file", list, "key_url", "salt://keys/r.gpg"}, std...)...),
		m("repo argument", false, base, append([]any{"name", line, "repo", line}, std...)...),
		m("enabled and disabled", false, base, append([]any{"name", line, "enabled", true, "disabled", true}, std...)...),
		m("disabled on Debian", false, withR, append([]any{"name", line, "file", list, "disabled", true}, std...)...),
		m("key_url and keyid", false, withR, append([]any{"name", line, "file", list, "key_url", "salt://keys/r.gpg", "keyid", "ABC", "keyserver", "k"}, std...)...),
		m("clean_file", false, map[string]string{"etc/apt/sources.list": main, "etc/apt/sources.list.d/r.list": "deb http://old.example.org/x y z\n", "keyrings/README": "keys\n"},
			append([]any{"name", line, "file", list, "clean_file", true}, std...)...),
		ab("absent", false, withR, "name", line, "refresh", false),
		ab("absent test", true, withR, "name", line),
		ab("absent missing", false, base, "name", line),
		ab("absent main entry", false, base, "name", "deb http://deb.example.org/debian/ bookworm main", "refresh", false),
		fn("list_repos", "pkg.list_repos", withR, nil),
		fn("get_repo", "pkg.get_repo", withR, []any{"deb file:///srv/repo stable main"}),
		fn("get_repo none", "pkg.get_repo", withR, []any{"deb file:///srv/repo stable contrib"}),
		fn("del_repo", "pkg.del_repo", withR, []any{line}, "refresh", false),
		fn("del_repo missing", "pkg.del_repo", base, []any{"deb http://nope/ x y"}),
		fn("mod_repo", "pkg.mod_repo", base, []any{line}, "file", list, "refresh", false, "aptkey", false, "comps", "main,non-free"),
	}
	srv := map[string]string{"keys/r.gpg": "\x99binary key bytes\n"}
	runStateSuite(t, salttest.Suite{Name: "pkgrepo", Calls: calls, Srv: srv, Grains: payloadDebianGrains()})
}

// payloadDebianGrains are Debian 12 grains (os_family Debian).
func payloadDebianGrains() *payload.Map {
	g := payloadLinuxGrains()
	g.Set("oscodename", "bookworm")
	g.Set("os_family", "Debian")
	return g
}

package builtin

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules/salttest"
)

// TestArchiveExtractedGolden compares archive.extracted (and test=True)
// with Salt 3006 (testdata/golden/archive_state.json): local, file:// and
// salt:// sources, tar (gzip, bzip2, xz, plain), zip (with and without a
// password), the "already extracted" checks, enforce_toplevel, if_missing,
// source_hash, force/clean on wrong-typed paths, options through the tar
// binary, trim_output, and the argument errors. The extracted files are
// compared too.
func TestArchiveExtractedGolden(t *testing.T) {
	srv := testutil.ArchiveSrv(t)
	simple := string(testutil.GzipBytes(t, testutil.TarBytes(t, []testutil.ArchiveEntry{
		{Name: "app/", Dir: true, Mode: 0o755}, {Name: "app/a.txt", Body: "alpha\n", Mode: 0o644},
		{Name: "app/sub/", Dir: true, Mode: 0o755}, {Name: "app/sub/b.txt", Body: "beta\n", Mode: 0o644}})))
	srv["simple.tar.gz"] = simple
	present := map[string]string{"dest/app/a.txt": "old alpha\n", "dest/app/sub/b.txt": "old beta\n"}
	partial := map[string]string{"dest/app/a.txt": "old alpha\n"}
	wrongType := map[string]string{"dest/app/a.txt/inner": "x\n", "dest/app/sub/b.txt": "old beta\n"}
	const sha = "sha256=0000000000000000000000000000000000000000000000000000000000000000"
	d := "{dir}/dest"
	ex := func(name string, test bool, files map[string]string, kw ...any) salttest.Call {
		c := single(name, "archive.extracted", test, kw...)
		c.Files = files
		if c.Files == nil {
			c.Files = map[string]string{}
		}
		return c
	}
	calls := []salttest.Call{
		ex("tar.gz", false, nil, "name", d, "source", "{srv}/app.tar.gz"),
		ex("tar.gz test", true, nil, "name", d, "source", "{srv}/app.tar.gz"),
		ex("tar", false, nil, "name", d, "source", "{srv}/app.tar"),
		ex("tar.bz2", false, nil, "name", d, "source", "{srv}/app.tar.bz2"),
		ex("tar.xz", false, nil, "name", d, "source", "{srv}/app.tar.xz"),
		ex("file url", false, nil, "name", d, "source", "file://{srv}/simple.tar.gz"),
		ex("salt url", false, nil, "name", d, "source", "salt://simple.tar.gz"),
		ex("salt url test", true, nil, "name", d, "source", "salt://simple.tar.gz"),
		ex("salt url keep_source false", false, nil, "name", d, "source", "salt://simple.tar.gz", "keep_source", false),
		ex("salt url keep and keep_source", false, nil, "name", d, "source", "salt://simple.tar.gz", "keep_source", true, "keep", false),
		ex("salt url missing", false, nil, "name", d, "source", "salt://nope.tar.gz"),
		ex("source list", false, nil, "name", d, "source", []any{"salt://nope.tar.gz", "salt://simple.tar.gz"}),
		ex("already present", false, present, "name", d, "source", "{srv}/simple.tar.gz"),
		ex("already present test", true, present, "name", d, "source", "{srv}/simple.tar.gz"),
		ex("already present overwrite", false, present, "name", d, "source", "{srv}/simple.tar.gz", "overwrite", true),
		ex("partial", false, partial, "name", d, "source", "{srv}/simple.tar.gz"),
		ex("partial test", true, partial, "name", d, "source", "{srv}/simple.tar.gz"),
		ex("wrong type", false, wrongType, "name", d, "source", "{srv}/simple.tar.gz"),
		ex("wrong type test clean", true, wrongType, "name", d, "source", "{srv}/simple.tar.gz", "clean", true),
		ex("wrong type test clean_parent", true, wrongType, "name", d, "source", "{srv}/simple.tar.gz", "clean_parent", true),
		ex("wrong type force", false, wrongType, "name", d, "source", "{srv}/simple.tar.gz", "force", true),
		ex("wrong type clean", false, wrongType, "name", d, "source", "{srv}/simple.tar.gz", "clean", true),
		ex("clean present", false, present, "name", d, "source", "{srv}/simple.tar.gz", "clean", true, "overwrite", true),
		ex("clean_parent present", false, present, "name", d, "source", "{srv}/simple.tar.gz", "clean_parent", true, "overwrite", true),
		ex("clean and clean_parent", false, nil, "name", d, "source", "{srv}/simple.tar.gz", "clean", true, "clean_parent", true),
		ex("flat enforce_toplevel", false, nil, "name", d, "source", "{srv}/flat.tgz"),
		ex("flat no enforce_toplevel", false, nil, "name", d, "source", "{srv}/flat.tgz", "enforce_toplevel", false),
		ex("if_missing exists", false, map[string]string{"marker": "m"}, "name", d, "source", "{srv}/simple.tar.gz", "if_missing", "{dir}/marker"),
		ex("if_missing absent", false, nil, "name", d, "source", "{srv}/simple.tar.gz", "if_missing", "{dir}/marker"),
		ex("if_missing relative", false, nil, "name", d, "source", "{srv}/simple.tar.gz", "if_missing", "marker"),
		ex("source_hash ok", false, nil, "name", d, "source", "{srv}/flat.zip", "enforce_toplevel", false, "source_hash", "{srv}/flat.zip.sha256"),
		ex("source_hash wrong", false, nil, "name", d, "source", "{srv}/simple.tar.gz", "source_hash", sha),
		ex("source_hash wrong test", true, nil, "name", d, "source", "{srv}/simple.tar.gz", "source_hash", sha),
		ex("source_hash skip_verify", false, nil, "name", d, "source", "{srv}/simple.tar.gz", "source_hash", sha, "skip_verify", true),
		ex("source_hash unreachable url", false, nil, "name", d, "source", "{srv}/simple.tar.gz", "source_hash", "http://127.0.0.1:1/simple.tar.gz.sha256"),
		ex("source_hash unreachable url test", true, nil, "name", d, "source", "{srv}/simple.tar.gz", "source_hash", "http://127.0.0.1:1/simple.tar.gz.sha256"),
		ex("source_hash bad", false, nil, "name", d, "source", "{srv}/simple.tar.gz", "source_hash", "md5=xyz"),
		ex("skip both", false, nil, "name", d, "source", "{srv}/simple.tar.gz", "skip_verify", true, "skip_files_list_verify", true),
		ex("zip", false, nil, "name", d, "source", "{srv}/app.zip"),
		ex("zip test", true, nil, "name", d, "source", "{srv}/app.zip"),
		ex("zip no dir entries", false, nil, "name", d, "source", "{srv}/nodirs.zip"),
		ex("zip trim_output", false, nil, "name", d, "source", "{srv}/app.zip", "trim_output", 2),
		ex("zip encrypted no password", false, nil, "name", d, "source", "{srv}/enc.zip"),
		ex("zip encrypted password", false, nil, "name", d, "source", "{srv}/enc.zip", "password", "pw123"),
		ex("zip encrypted password cmd_unzip", false, nil, "name", d, "source", "{srv}/enc.zip", "password", "pw123", "use_cmd_unzip", true),
		ex("zip options", false, nil, "name", d, "source", "{srv}/flat.zip", "options", "-q", "enforce_toplevel", false),
		ex("zip options no cmd_unzip", false, nil, "name", d, "source", "{srv}/flat.zip", "options", "-q", "use_cmd_unzip", false),
		ex("tar options strip", false, nil, "name", d, "source", "{srv}/simple.tar.gz", "options", "--strip-components=1", "enforce_toplevel", false),
		ex("tar options z", false, nil, "name", d, "source", "{srv}/simple.tar.gz", "options", "z"),
		ex("tar trim_output", false, nil, "name", d, "source", "{srv}/app.tar.gz", "trim_output", 3),
		ex("tar trim_output true", false, nil, "name", d, "source", "{srv}/simple.tar.gz", "trim_output", true),
		ex("garbage tar", false, nil, "name", d, "source", "{srv}/garbage.tgz"),
		ex("garbage tar user", false, nil, "name", d, "source", "{srv}/garbage.tgz", "user", "root"),
		ex("garbage zip", false, nil, "name", d, "source", "{srv}/garbage.zip"),
		ex("format given", false, nil, "name", d, "source", "{srv}/app.bin", "archive_format", "TAR"),
		ex("format unguessable", false, nil, "name", d, "source", "{srv}/app.bin"),
		ex("format invalid", false, nil, "name", d, "source", "{srv}/app.bin", "archive_format", "7z"),
		ex("password tar", false, nil, "name", d, "source", "{srv}/app.tar", "password", "x"),
		ex("rar", false, nil, "name", d, "source", "{srv}/x.rar"),
		ex("relative name", false, nil, "name", "dest", "source", "{srv}/app.tar"),
		ex("name is file", false, map[string]string{"dest": "f"}, "name", d, "source", "{srv}/app.tar"),
		ex("missing source", false, nil, "name", d, "source", "{srv}/nope.tar.gz"),
		ex("user missing", false, nil, "name", d, "source", "{srv}/app.tar", "user", "nosuchuser-gsalt"),
		ex("group missing", false, nil, "name", d, "source", "{srv}/app.tar", "group", "nosuchgroup-gsalt"),
		ex("enforce_ownership_on outside", false, nil, "name", d, "source", "{srv}/app.tar", "enforce_ownership_on", "/elsewhere"),
		ex("source_hash_update no hash", false, nil, "name", d, "source", "{srv}/simple.tar.gz", "source_hash_update", true),
	}
	srv["x.rar"] = "not really\n"
	srv["flat.zip.sha256"] = ""
	srv["flat.zip.sha256"] = sha256Hex(srv["flat.zip"]) + "  flat.zip\n"
	runStateSuite(t, salttest.Suite{Name: "archive_state", Srv: srv, Calls: calls, Grains: payloadLinuxGrains(), FilesUnder: "dest"})
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

package builtin_test

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/wire/payload"
)

// cfnCheck runs fun and compares its return (or the prefix of an error
// string) and retcode.
func cfnCheck(t *testing.T, fun string, args []any, want any, retcode int) {
	t.Helper()
	res := cfnRun(t, nil, fun, args, nil)
	if res.Retcode != retcode {
		t.Fatalf("%s%v: retcode %d, want %d (return %#v)", fun, args, res.Retcode, retcode, res.Return)
	}
	if p, ok := want.(cfnPrefix); ok {
		s, _ := res.Return.(string)
		if !strings.HasPrefix(s, string(p)) {
			t.Fatalf("%s%v: return %q, want prefix %q", fun, args, s, p)
		}
		return
	}
	if d := vectors.Equal(res.Return, want); d != "" {
		t.Fatalf("%s%v: return %#v: %s", fun, args, res.Return, d)
	}
}

// cfnPrefix marks an expected error text by its beginning.
type cfnPrefix string

func TestFileWriteReadAppend(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f.txt")
	cfnCheck(t, "file.write", []any{f, "one", int64(2), true}, `Wrote 3 lines to "`+f+`"`, 0)
	cfnCheck(t, "file.read", []any{f}, "one\n2\nTrue\n", 0)
	cfnCheck(t, "file.write", []any{f, kw("args", "a=b")}, `Wrote 1 lines to "`+f+`"`, 0)
	cfnCheck(t, "file.read", []any{f}, "a=b\n", 0)
	cfnCheck(t, "file.write", []any{f, kw("args", []any{"x", "y"})}, `Wrote 2 lines to "`+f+`"`, 0)
	cfnCheck(t, "file.read", []any{f, kw("binary", true)}, []byte("x\ny\n"), 0)

	// append adds the missing final newline first
	if err := os.WriteFile(f, []byte("no newline"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfnCheck(t, "file.append", []any{f, "l1", "l2"}, `Wrote 2 lines to "`+f+`"`, 0)
	cfnCheck(t, "file.read", []any{f}, "no newline\nl1\nl2\n", 0)
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfnCheck(t, "file.append", []any{empty, "x"}, `Wrote 1 lines to "`+empty+`"`, 0)
	cfnCheck(t, "file.read", []any{empty}, "x\n", 0)
	cfnCheck(t, "file.append", []any{filepath.Join(dir, "missing"), "x"},
		cfnPrefix("The minion function caused an exception: FileNotFoundError: [Errno 2] No such file or directory: '"+filepath.Join(dir, "missing")+"'"), 1)

	cfnCheck(t, "file.prepend", []any{f, "p1"}, `Prepended 1 lines to "`+f+`"`, 0)
	cfnCheck(t, "file.read", []any{f}, "p1\nno newline\nl1\nl2\n", 0)
	newf := filepath.Join(dir, "new")
	cfnCheck(t, "file.prepend", []any{newf, "first"}, `Prepended 1 lines to "`+newf+`"`, 0)
	cfnCheck(t, "file.read", []any{newf}, "first\n", 0)

	cfnCheck(t, "file.read", []any{filepath.Join(dir, "nope")},
		cfnPrefix("The minion function caused an exception: FileNotFoundError: [Errno 2] No such file or directory:"), 1)
	cfnCheck(t, "file.read", []any{dir}, cfnPrefix("The minion function caused an exception: IsADirectoryError: [Errno 21] Is a directory:"), 1)
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, []byte{'o', 'k', 0xff}, 0o644); err != nil {
		t.Fatal(err)
	}
	cfnCheck(t, "file.read", []any{bin}, "The minion function caused an exception: UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 2: invalid start byte", 1)
	cfnCheck(t, "file.read", []any{bin, kw("binary", true)}, []byte{'o', 'k', 0xff}, 0)
}

func TestFileTouchAndStats(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "t")
	cfnCheck(t, "file.touch", []any{f}, true, 0)
	cfnCheck(t, "file.touch", []any{f, kw("atime", int64(1000), "mtime", "2000")}, true, 0)
	cfnCheck(t, "file.touch", []any{f, kw("atime", "soon")}, "ERROR executing 'file.touch': atime and mtime must be integers", 1)
	cfnCheck(t, "file.touch", []any{filepath.Join(dir, "no", "x")}, "ERROR: No such file or directory", 1)

	res := cfnRun(t, nil, "file.stats", []any{f, kw("hash_type", "md5")}, nil)
	st, ok := res.Return.(*payload.Map)
	if !ok {
		t.Fatalf("stats %#v", res.Return)
	}
	if got := strings.Join(st.Keys(), ","); got != "inode,uid,gid,group,user,atime,mtime,ctime,size,mode,sum,type,target" {
		t.Fatalf("keys %s", got)
	}
	var raw syscall.Stat_t
	if err := syscall.Stat(f, &raw); err != nil {
		t.Fatal(err)
	}
	me, _ := user.Current()
	want := map[string]any{
		"inode": int64(raw.Ino), "uid": int64(raw.Uid), "gid": int64(raw.Gid), "user": me.Username,
		"atime": 1000.0, "mtime": 2000.0, "size": int64(0), "sum": "d41d8cd98f00b204e9800998ecf8427e",
		"type": "file", "target": f,
	}
	for k, v := range want {
		got, _ := st.Get(k)
		if d := vectors.Equal(got, v); d != "" {
			t.Errorf("stats[%s] = %#v, want %#v", k, got, v)
		}
	}
	mode := strconv.FormatUint(uint64(raw.Mode&0o7777), 8)
	for len(mode) < 4 {
		mode = "0" + mode
	}
	if st.Str("mode") != mode {
		t.Errorf("mode %q, want %q", st.Str("mode"), mode)
	}

	// types
	link := filepath.Join(dir, "link")
	if err := os.Symlink(f, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	broken := filepath.Join(dir, "broken")
	if err := os.Symlink(filepath.Join(dir, "gone"), broken); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path   string
		follow bool
		typ    string
		target string
	}{
		{dir, true, "dir", dir},
		{link, true, "file", f},
		{link, false, "link", f},
		{fifo, true, "pipe", fifo},
		{sock, true, "socket", sock},
		{"/dev/null", true, "char", "/dev/null"},
		{broken, true, "link", filepath.Join(dir, "gone")},
	} {
		res := cfnRun(t, nil, "file.stats", []any{tc.path, kw("follow_symlinks", tc.follow)}, nil)
		m, ok := res.Return.(*payload.Map)
		if !ok || m.Str("type") != tc.typ || m.Str("target") != tc.target {
			t.Errorf("stats %s follow=%v: %#v", tc.path, tc.follow, res.Return)
		}
	}
	cfnCheck(t, "file.stats", []any{filepath.Join(dir, "none")}, "ERROR: Path not found: "+filepath.Join(dir, "none"), 1)

	cfnCheck(t, "file.get_mode", []any{f}, mode, 0)
	cfnCheck(t, "file.get_user", []any{f}, me.Username, 0)
	cfnCheck(t, "file.get_uid", []any{f}, int64(raw.Uid), 0)
	cfnCheck(t, "file.get_gid", []any{f}, int64(raw.Gid), 0)
	cfnCheck(t, "file.get_mode", []any{filepath.Join(dir, "none")}, "ERROR: Path not found: "+filepath.Join(dir, "none"), 1)
	cfnCheck(t, "file.set_mode", []any{f, "0750"}, "0750", 0)
	cfnCheck(t, "file.set_mode", []any{f, int64(4711)}, "4711", 0)
	cfnCheck(t, "file.set_mode", []any{f, "0o600"}, "0600", 0)
	cfnCheck(t, "file.set_mode", []any{f, "9"}, "Invalid Mode 9", 0)
	cfnCheck(t, "file.set_mode", []any{filepath.Join(dir, "none"), "644"}, "ERROR: "+filepath.Join(dir, "none")+": File not found", 1)
	cfnCheck(t, "file.lstat", []any{"rel"}, "ERROR executing 'file.lstat': Path to file must be absolute.", 1)
	res = cfnRun(t, nil, "file.lstat", []any{link}, nil)
	if m := res.Return.(*payload.Map); strings.Join(m.Keys(), ",") != "st_atime,st_ctime,st_gid,st_mode,st_mtime,st_nlink,st_size,st_uid" {
		t.Fatalf("lstat %v", m.Keys())
	} else if mode, _ := m.Int("st_mode"); mode&syscall.S_IFMT != syscall.S_IFLNK {
		t.Fatalf("lstat followed the link: %o", mode)
	}
	cfnCheck(t, "file.lstat", []any{filepath.Join(dir, "none")}, payload.NewMap(), 0)
}

func TestFileHashes(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "h")
	data := []byte(strings.Repeat("gsalt hashes\n", 10000))
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s256 := sha256.Sum256(data)
	m5 := md5.Sum(data)
	cfnCheck(t, "file.get_hash", []any{f}, hex.EncodeToString(s256[:]), 0)
	cfnCheck(t, "file.get_hash", []any{f, "md5"}, hex.EncodeToString(m5[:]), 0)
	cfnCheck(t, "file.get_sum", []any{f, "md5"}, hex.EncodeToString(m5[:]), 0)
	cfnCheck(t, "file.get_sum", []any{dir}, "File not found", 0)
	cfnCheck(t, "file.get_hash", []any{f, "nope"}, "The minion function caused an exception: ValueError: Invalid hash type: nope", 1)
	// the other hashlib names, checked against Python when it is there
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to cross-check sha3/blake2")
	}
	for _, form := range []string{"sha1", "sha224", "sha384", "sha512", "sha3_224", "sha3_256", "sha3_384", "sha3_512", "blake2b", "blake2s"} {
		out, err := exec.Command(py, "-c", "import hashlib,sys; print(hashlib.new(sys.argv[1], open(sys.argv[2],'rb').read()).hexdigest())", form, f).Output()
		if err != nil {
			t.Fatal(err)
		}
		cfnCheck(t, "file.get_hash", []any{f, form}, strings.TrimSpace(string(out)), 0)
	}
}

func TestFileContains(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "c")
	// the needle straddles the 256 KiB read boundary
	data := strings.Repeat("x", 256<<10-3) + "needle" + strings.Repeat("y", 10)
	if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfnCheck(t, "file.contains", []any{f, "  needle\n"}, true, 0)
	cfnCheck(t, "file.contains", []any{f, "haystack"}, false, 0)
	cfnCheck(t, "file.contains", []any{filepath.Join(dir, "none"), "x"}, false, 0)
}

func TestFileCopyRenameRemove(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, []byte("data"), 0o640); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "dst")
	cfnCheck(t, "file.copy", []any{src, dst}, true, 0)
	if b, _ := os.ReadFile(dst); string(b) != "data" {
		t.Fatalf("copy content %q", b)
	}
	if fi, _ := os.Stat(dst); fi.Mode().Perm() != 0o640 {
		t.Fatalf("copy mode %v", fi.Mode())
	}
	cfnCheck(t, "file.copy", []any{"rel", dst}, "ERROR executing 'file.copy': File path must be absolute.", 1)
	cfnCheck(t, "file.copy", []any{filepath.Join(dir, "none"), dst}, "ERROR: No such file or directory '"+filepath.Join(dir, "none")+"'", 1)

	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(filepath.Join(tree, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "sub", "a"), []byte("A"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cfnCheck(t, "file.copy", []any{tree, out}, "ERROR executing 'file.copy': Cannot copy overwriting a directory without recurse flag set to true!", 1)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "keep"), []byte("K"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfnCheck(t, "file.copy", []any{tree, out, kw("recurse", true)}, true, 0)
	if b, _ := os.ReadFile(filepath.Join(out, "sub", "a")); string(b) != "A" {
		t.Fatal("recursive copy missed a file")
	}
	if _, err := os.Stat(filepath.Join(out, "keep")); err != nil {
		t.Fatal("recursive copy removed an existing file")
	}
	cfnCheck(t, "file.copy", []any{tree, out, kw("recurse", true, "remove_existing", true)}, true, 0)
	if _, err := os.Stat(filepath.Join(out, "keep")); err == nil {
		t.Fatal("remove_existing kept an old file")
	}

	moved := filepath.Join(dir, "moved")
	cfnCheck(t, "file.rename", []any{dst, moved}, true, 0)
	cfnCheck(t, "file.rename", []any{dst, moved}, "ERROR: Could not rename '"+dst+"' to '"+moved+"'", 1)
	cfnCheck(t, "file.rename", []any{"rel", moved}, "ERROR executing 'file.rename': File path must be absolute.", 1)

	cfnCheck(t, "file.file_exists", []any{moved}, true, 0)
	cfnCheck(t, "file.file_exists", []any{dir}, false, 0)
	cfnCheck(t, "file.directory_exists", []any{dir}, true, 0)
	cfnCheck(t, "file.directory_exists", []any{moved}, false, 0)
	cfnCheck(t, "file.remove", []any{moved}, true, 0)
	cfnCheck(t, "file.remove", []any{moved}, false, 0)
	cfnCheck(t, "file.remove", []any{out}, true, 0)
	cfnCheck(t, "file.directory_exists", []any{out}, false, 0)
	cfnCheck(t, "file.remove", []any{"rel/x"}, "ERROR executing 'file.remove': File path must be absolute: rel/x", 1)
	ln := filepath.Join(dir, "ln")
	if err := os.Symlink(tree, ln); err != nil {
		t.Fatal(err)
	}
	cfnCheck(t, "file.remove", []any{ln}, true, 0)
	if _, err := os.Stat(filepath.Join(tree, "sub", "a")); err != nil {
		t.Fatal("removing a link removed its target")
	}
}

func TestFileSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("t"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	cfnCheck(t, "file.symlink", []any{target, link}, true, 0)
	cfnCheck(t, "file.symlink", []any{target + "/", link}, true, 0) // same target after normpath
	cfnCheck(t, "file.symlink", []any{"/elsewhere", link}, "ERROR: Found existing symlink: "+link, 1)
	cfnCheck(t, "file.symlink", []any{"/elsewhere", link, kw("force", true)}, true, 0)
	cfnCheck(t, "file.readlink", []any{link}, "/elsewhere", 0)
	cfnCheck(t, "file.symlink", []any{target, link, kw("atomic", true)}, true, 0)
	cfnCheck(t, "file.readlink", []any{link}, target, 0)
	cfnCheck(t, "file.symlink", []any{link, target}, "ERROR: Existing path is not a symlink: "+target, 1)
	cfnCheck(t, "file.symlink", []any{target, "rel"}, "ERROR executing 'file.symlink': Link path must be absolute: rel", 1)
	cfnCheck(t, "file.is_link", []any{link}, true, 0)
	cfnCheck(t, "file.is_link", []any{target}, false, 0)

	t.Setenv("GSALT_LINKDIR", dir)
	cfnCheck(t, "file.readlink", []any{"$GSALT_LINKDIR/link"}, target, 0)
	cfnCheck(t, "file.readlink", []any{target}, "ERROR executing 'file.readlink': A valid link was not specified: "+target, 1)
	cfnCheck(t, "file.readlink", []any{"rel"}, "ERROR executing 'file.readlink': Path to link must be absolute: rel", 1)

	// realpath semantics (canonicalize, stats target) against Python's
	chain := filepath.Join(dir, "chain")
	if err := os.Symlink("link", chain); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	up := filepath.Join(sub, "up")
	if err := os.Symlink("..", up); err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	cfnCheck(t, "file.readlink", []any{chain, kw("canonicalize", true)}, target, 0)
	py, err := exec.LookPath("python3")
	if err != nil {
		return
	}
	for _, p := range []string{chain, up + "/chain", up + "/../sub/up/missing/x", loop + "/x", sub + "/./up/sub/../target"} {
		out, err := exec.Command(py, "-c", "import os,sys; print(os.path.realpath(sys.argv[1]))", p).Output()
		if err != nil {
			t.Fatal(err)
		}
		// readlink needs a link: canonicalize a fresh link to p
		probe := filepath.Join(t.TempDir(), "probe")
		if err := os.Symlink(p, probe); err != nil {
			t.Fatal(err)
		}
		got := cfnRun(t, nil, "file.readlink", []any{probe, kw("canonicalize", true)}, nil).Return
		if got != strings.TrimSpace(string(out)) {
			t.Errorf("realpath(%s) = %#v, Python says %q", p, got, strings.TrimSpace(string(out)))
		}
	}
}

func TestFileDirs(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "a", "b", "c")
	cfnCheck(t, "file.mkdir", []any{deep, kw("mode", "750")}, true, 0)
	for _, p := range []string{filepath.Join(dir, "a"), filepath.Join(dir, "a", "b"), deep} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o750 {
			t.Fatalf("%s: %v %v", p, fi.Mode(), err)
		}
	}
	cfnCheck(t, "file.mkdir", []any{deep}, true, 0)
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfnCheck(t, "file.mkdir", []any{file}, cfnPrefix("The minion function caused an exception: FileExistsError: [Errno 17] File exists: '"+file+"'"), 1)

	cfnCheck(t, "file.makedirs", []any{filepath.Join(dir, "m", "n", "leaf")}, nil, 0)
	cfnCheck(t, "file.directory_exists", []any{filepath.Join(dir, "m", "n")}, true, 0)
	cfnCheck(t, "file.directory_exists", []any{filepath.Join(dir, "m", "n", "leaf")}, false, 0)
	cfnCheck(t, "file.makedirs", []any{filepath.Join(dir, "m", "n", "leaf") + "/"}, nil, 0)
	cfnCheck(t, "file.directory_exists", []any{filepath.Join(dir, "m", "n", "leaf")}, true, 0)
	cfnCheck(t, "file.makedirs", []any{filepath.Join(dir, "m", "x")}, "Directory '"+filepath.Join(dir, "m")+"' already exists", 0)
	cfnCheck(t, "file.makedirs", []any{file + "/x"}, "The path '"+file+"' already exists and is not a directory", 0)
	cfnCheck(t, "file.makedirs", []any{"gsalt_no_dir_here/y/"}, "ERROR executing 'file.makedirs': Recursive creation for path '' would result in an infinite loop. Please use an absolute path.", 1)

	res := cfnRun(t, nil, "file.readdir", []any{filepath.Join(dir, "m")}, nil)
	if d := vectors.Equal(res.Return, []any{".", "..", "n"}); d != "" {
		t.Fatalf("readdir %#v", res.Return)
	}
	cfnCheck(t, "file.readdir", []any{file}, "ERROR executing 'file.readdir': A valid directory was not specified.", 1)
	cfnCheck(t, "file.readdir", []any{"rel"}, "ERROR executing 'file.readdir': Dir path must be absolute.", 1)
	cfnCheck(t, "file.access", []any{file, "f"}, true, 0)
	cfnCheck(t, "file.access", []any{filepath.Join(dir, "none"), "f"}, false, 0)
	cfnCheck(t, "file.access", []any{file, "z"}, "ERROR executing 'file.access': Invalid mode specified.", 1)
}

func TestFileOwners(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "o")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfnCheck(t, "file.user_to_uid", []any{"root"}, int64(0), 0)
	cfnCheck(t, "file.user_to_uid", []any{"gsalt_no_such_user"}, "", 0)
	cfnCheck(t, "file.uid_to_user", []any{int64(0)}, "root", 0)
	cfnCheck(t, "file.uid_to_user", []any{int64(987654)}, int64(987654), 0)
	cfnCheck(t, "file.group_to_gid", []any{"gsalt_no_such_group"}, "", 0)
	cfnCheck(t, "file.group_to_gid", []any{nil}, "", 0)
	cfnCheck(t, "file.gid_to_group", []any{int64(0)}, "root", 0)
	cfnCheck(t, "file.gid_to_group", []any{"root"}, "root", 0)

	cfnCheck(t, "file.chown", []any{f, "gsalt_no_such_user", "gsalt_no_such_group"}, "User does not exist\nGroup does not exist\n", 0)
	cfnCheck(t, "file.chown", []any{filepath.Join(dir, "none"), nil, nil}, "File not found", 0)
	if os.Geteuid() != 0 {
		return
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		return
	}
	cfnCheck(t, "file.chown", []any{f, "nobody", nil}, nil, 0)
	cfnCheck(t, "file.get_user", []any{f}, "nobody", 0)
	uid, _ := strconv.ParseInt(nobody.Uid, 10, 64)
	cfnCheck(t, "file.get_uid", []any{f}, uid, 0)
	cfnCheck(t, "file.chgrp", []any{f, "root"}, nil, 0)
	cfnCheck(t, "file.get_group", []any{f}, "root", 0)
	cfnCheck(t, "file.get_user", []any{f}, "nobody", 0)
	// a broken link is chowned itself
	broken := filepath.Join(dir, "broken")
	if err := os.Symlink("/gsalt/none", broken); err != nil {
		t.Fatal(err)
	}
	cfnCheck(t, "file.chown", []any{broken, "nobody", "root"}, nil, 0)
	var st syscall.Stat_t
	if err := syscall.Lstat(broken, &st); err != nil || int64(st.Uid) != uid {
		t.Fatalf("lchown: uid %d", st.Uid)
	}
}

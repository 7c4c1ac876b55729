package testutil

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ArchiveEntry is one member of a test archive: a directory (Dir), a
// symlink (Link) or a regular file (Body), with Unix permission bits.
type ArchiveEntry struct {
	Name, Body, Link string
	Mode             int64
	Dir              bool
}

// ArchiveTime is the modification time of every test archive member.
var ArchiveTime = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// AppEntries is an archive with a single top-level directory, app/.
var AppEntries = []ArchiveEntry{
	{Name: "app/", Dir: true, Mode: 0o755},
	{Name: "app/a.txt", Body: "alpha\n", Mode: 0o644},
	{Name: "app/run.sh", Body: "#!/bin/sh\necho hi\n", Mode: 0o755},
	{Name: "app/sub/", Dir: true, Mode: 0o750},
	{Name: "app/sub/b.txt", Body: "beta\n", Mode: 0o600},
	{Name: "app/link", Link: "a.txt", Mode: 0o777},
}

// FlatEntries has files at the top level.
var FlatEntries = []ArchiveEntry{
	{Name: "x.txt", Body: "x\n", Mode: 0o644},
	{Name: "y/", Dir: true, Mode: 0o755},
	{Name: "y/z.txt", Body: "z\n", Mode: 0o644},
}

// TarBytes builds a GNU tar archive (deterministic bytes).
func TarBytes(t testing.TB, entries []ArchiveEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Mode: e.Mode, ModTime: ArchiveTime, Uname: "root", Gname: "root", Format: tar.FormatGNU}
		switch {
		case e.Dir:
			h.Typeflag = tar.TypeDir
		case e.Link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.Link
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.Body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// GzipBytes gzips in (deterministic bytes).
func GzipBytes(t testing.TB, in []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.ModTime = ArchiveTime
	if _, err := zw.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// PipeBytes runs a compressor binary (argv) over in.
func PipeBytes(t testing.TB, in []byte, argv ...string) []byte {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	return out
}

// ZipBytes builds a zip archive with Unix modes; skipDirs leaves out the
// directory entries below the top level (as zip tools on Windows do).
func ZipBytes(t testing.TB, entries []ArchiveEntry, skipDirs bool) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		if skipDirs && e.Dir && filepath.Dir(filepath.Clean(e.Name)) != "." {
			continue
		}
		h := &zip.FileHeader{Name: e.Name, Method: zip.Deflate, Modified: ArchiveTime}
		h.CreatorVersion = 3 << 8
		mode := uint32(e.Mode)
		switch {
		case e.Dir:
			mode |= 0o040000
			h.Method = zip.Store
		case e.Link != "":
			mode |= 0o120000
		default:
			mode |= 0o100000
		}
		h.ExternalAttrs = mode << 16
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		body := e.Body
		if e.Link != "" {
			body = e.Link
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// EncryptedZip makes a PKWARE-encrypted zip (member sec/s.txt, password
// pw123) with the zip binary, one whose header check rejects the password
// "wrong".
func EncryptedZip(t testing.TB) []byte {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sec"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sec", "s.txt"), []byte("secret text\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	// The 12-byte encryption header is random, and a wrong password passes
	// its one check byte once in 256 (then Python's zipfile, like gsalt,
	// reports a bad CRC instead of a bad password): make the archive again
	// until Python's zipfile (Salt's unzip) rejects the password "wrong"
	// at the check; the unzip binary's verdict is used without python3.
	// (The unzip binary alone once let a bad-CRC archive through.)
	for try := 0; ; try++ {
		_ = os.Remove(filepath.Join(dir, "enc.zip"))
		cmd := exec.Command("zip", "-q", "-r", "-P", "pw123", "enc.zip", "sec")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("zip: %v %s", err, out)
		}
		if try >= 20 || rejectsWrongPassword(dir) {
			break
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "enc.zip"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ArchiveSrv is a file_roots tree of test archives: app.tar (.gz, .bz2,
// .xz), flat.tgz, app.zip, nodirs.zip, flat.zip, enc.zip, garbage.tgz,
// garbage.zip and app.bin (a tar without extension). It skips t when the
// zip, xz or bzip2 binaries are missing.
func ArchiveSrv(t testing.TB) map[string]string {
	t.Helper()
	for _, b := range []string{"zip", "xz", "bzip2"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("needs %s", b)
		}
	}
	appTar := TarBytes(t, AppEntries)
	return map[string]string{
		"app.tar":      string(appTar),
		"app.tar.gz":   string(GzipBytes(t, appTar)),
		"app.tar.bz2":  string(PipeBytes(t, appTar, "bzip2", "-c")),
		"app.tar.xz":   string(PipeBytes(t, appTar, "xz", "-c")),
		"flat.tgz":     string(GzipBytes(t, TarBytes(t, FlatEntries))),
		"app.zip":      string(ZipBytes(t, AppEntries, false)),
		"nodirs.zip":   string(ZipBytes(t, AppEntries, true)),
		"flat.zip":     string(ZipBytes(t, FlatEntries, false)),
		"enc.zip":      string(EncryptedZip(t)),
		"garbage.tgz":  "this is not an archive\n",
		"garbage.zip":  "this is not an archive\n",
		"app.bin":      string(appTar),
		"plain.txt":    "plain text\n",
		"sub/deep.txt": "deep\n",
	}
}

// rejectsWrongPassword reports whether dir/enc.zip's header check rejects
// the password "wrong": by Python's zipfile when /usr/bin/python3 is
// there, else by the unzip binary.
func rejectsWrongPassword(dir string) bool {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		const prog = "import zipfile,sys\ntry:\n    zipfile.ZipFile('enc.zip').open('sec/s.txt', pwd=b'wrong').read()\nexcept RuntimeError as e:\n    sys.exit(0 if 'Bad password' in str(e) else 1)\nexcept Exception:\n    sys.exit(1)\nsys.exit(1)\n"
		py := exec.Command("/usr/bin/python3", "-c", prog)
		py.Dir = dir
		return py.Run() == nil
	}
	check := exec.Command("unzip", "-P", "wrong", "-qt", "enc.zip")
	check.Dir = dir
	out, _ := check.CombinedOutput()
	return strings.Contains(string(out), "incorrect password")
}

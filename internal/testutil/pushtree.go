package testutil

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
)

// PushTree writes the files the cp.push interop tests push under root and
// returns their contents by relative path: big.bin (1.5 MiB of random
// bytes, six of a minion's 256 KiB chunks), small.txt, conf/ (two *.conf
// files, one in a subfolder, and c.txt), gone.txt (for remove_source) and
// huge.bin (2.5 MiB, beyond a file_recv_max_size of 2).
func PushTree(t testing.TB, root string) map[string][]byte {
	t.Helper()
	big := make([]byte, 3<<19)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"big.bin": big, "small.txt": []byte("small\n"), "conf/a.conf": []byte("a\n"),
		"conf/sub/b.conf": []byte("b\n"), "conf/c.txt": []byte("c\n"), "gone.txt": []byte("gone\n"),
		"huge.bin": bytes.Repeat([]byte{7}, 5<<19)}
	for p, b := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// SameFile fails the test (without stopping it) unless path holds want.
func SameFile(t testing.TB, what, path string, want []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(b, want) {
		t.Errorf("%s: %s holds %d bytes (%v), want %d equal bytes", what, path, len(b), err, len(want))
	}
}

package fileserver

import (
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"syscall"

	"github.com/gsalt/gsalt/internal/pyhash"
)

// NewHash returns the hashlib algorithm Salt's hash_type names: md5, sha1,
// sha224, sha256, sha384, sha512, sha3_224, sha3_256, sha3_384, sha3_512,
// blake2b or blake2s (with hashlib's default digest sizes). Other names
// wrap ErrHashType.
func NewHash(name string) (hash.Hash, error) {
	if h, ok := pyhash.New(name); ok {
		return h, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrHashType, name)
}

// HashFile returns the hex digest of the file at p with algorithm name.
func HashFile(p, name string) (string, error) {
	h, err := NewHash(name)
	if err != nil {
		return "", err
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fileSig identifies a version of a file or directory for the caches.
type fileSig struct {
	exists       bool
	mode         os.FileMode
	size         int64
	mtime, ctime int64
	ino, dev     uint64
}

func sigOf(fi os.FileInfo) fileSig {
	s := fileSig{exists: true, mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ctime = st.Ctim.Nano()
		s.ino = uint64(st.Ino)
		s.dev = uint64(st.Dev)
	}
	return s
}

// statSig stats p (links followed); a missing path has the zero sig.
func statSig(p string) fileSig {
	fi, err := os.Stat(p)
	if err != nil {
		return fileSig{}
	}
	return sigOf(fi)
}

type hashEntry struct {
	sig      fileSig
	hashType string
	hsum     string
}

// Hash returns the hex digest (with HashType's algorithm) of a found file,
// as roots' file_hash reports it in "hsum"; it is cached while the file
// does not change.
func (r *Roots) Hash(f File) (string, error) {
	sig := statSig(f.Path)
	r.mu.Lock()
	e, ok := r.hashes[f.Path]
	r.mu.Unlock()
	if ok && e.sig == sig && e.hashType == r.hashType {
		return e.hsum, nil
	}
	sum, err := HashFile(f.Path, r.hashType)
	if err != nil {
		return "", err
	}
	// Only cache when the file did not change while it was read.
	if after := statSig(f.Path); after == sig && sig.exists {
		r.mu.Lock()
		if len(r.hashes) >= maxCachedHashes {
			clear(r.hashes)
		}
		r.hashes[f.Path] = hashEntry{sig: sig, hashType: r.hashType, hsum: sum}
		r.mu.Unlock()
	}
	return sum, nil
}

// statList is list(os.stat(path)) as Salt sends it: mode, ino, dev, nlink,
// uid, gid, size, atime, mtime, ctime (integers).
func statList(fi os.FileInfo) []any {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		mt := fi.ModTime().Unix()
		return []any{int64(fi.Mode().Perm()) | 0o100000, int64(0), int64(0), int64(1), int64(0), int64(0), fi.Size(), mt, mt, mt}
	}
	return []any{int64(st.Mode), int64(st.Ino), int64(st.Dev), int64(st.Nlink), int64(st.Uid), int64(st.Gid),
		st.Size, st.Atim.Sec, st.Mtim.Sec, st.Ctim.Sec}
}

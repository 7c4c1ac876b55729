package master

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// Salt's LocalClient (the Python salt CLI, and salt-api) checks that a
// published jid exists by reading the master's local_cache job directory
// (local_cache.get_load) before it waits for returns, and gives up with
// "jid does not exist" otherwise. The job cache proper is the bbolt store;
// this mirror writes just what get_load reads, in Salt's layout:
//
//	cachedir/jobs/<H[0:2]>/<H[2:]>/jid         the jid (no newline)
//	cachedir/jobs/<H[0:2]>/<H[2:]>/.load.p     msgpack of the clear load
//	cachedir/jobs/<H[0:2]>/<H[2:]>/.minions.p  msgpack list of minions
//
// where H = hash_type(jid) in hex (SALT-WIRE §7.3).

// jobDir returns the local_cache directory of jid.
func (m *Master) jobDir(jid string) string {
	h, ok := newHash(m.cfg.HashType)
	if !ok {
		h, _ = newHash("sha256")
	}
	h.Write([]byte(jid))
	sum := hex.EncodeToString(h.Sum(nil))
	return filepath.Join(m.cfg.CacheDir, "jobs", sum[:2], sum[2:])
}

// mirrorLoad writes the local_cache files of a published job.
func (m *Master) mirrorLoad(jid string, load *payload.Map, minions []string) error {
	dir := m.jobDir(jid)
	// One mkdir for a new jid; the parents only when they are missing.
	if err := os.Mkdir(dir, 0o755); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	} else if err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "jid"), []byte(jid), 0o644); err != nil {
		return err
	}
	if err := writeMirrorFile(filepath.Join(dir, ".minions.p"), strAny(minions)); err != nil {
		return err
	}
	return writeMirrorFile(filepath.Join(dir, ".load.p"), load)
}

// writeMirrorFile writes one local_cache file as msgpack through a
// temporary file renamed into place (readers never see half a file), but
// without fsync: Salt's local_cache does not sync these files either, and
// the job cache proper (bbolt) is what survives a crash. An fsync per
// publish was the largest cost of a reactor publishing jobs.
func writeMirrorFile(path string, v any) error {
	b, err := payload.MarshalBin(v)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// mirrorGrace is how old a local_cache job directory without a jid file
// must be before pruneMirror removes it.
const mirrorGrace = time.Minute

// pruneMirror removes local_cache job directories older than
// keep_jobs_seconds (by the jid file's mtime), and directories without a
// jid file older than mirrorGrace, like Salt's clean_old_jobs.
func (m *Master) pruneMirror(now time.Time) error {
	keep := time.Duration(m.cfg.KeepJobsSeconds) * time.Second
	if keep <= 0 {
		return nil
	}
	root := filepath.Join(m.cfg.CacheDir, "jobs")
	tops, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, top := range tops {
		if !top.IsDir() {
			continue
		}
		subs, err := os.ReadDir(filepath.Join(root, top.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, s := range subs {
			dir := filepath.Join(root, top.Name(), s.Name())
			fi, err := os.Stat(filepath.Join(dir, "jid"))
			if err == nil && now.Sub(fi.ModTime()) < keep {
				continue
			}
			if err != nil {
				// No jid file: a job being written right now (mirrorLoad
				// makes the directory first) is left alone; Salt removes
				// it at once, and the publish then failed to write its
				// load under load.
				if di, derr := s.Info(); derr == nil && now.Sub(di.ModTime()) < mirrorGrace {
					continue
				}
			}
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, err)
			}
		}
		if left, err := os.ReadDir(filepath.Join(root, top.Name())); err == nil && len(left) == 0 {
			os.Remove(filepath.Join(root, top.Name()))
		}
	}
	return errors.Join(errs...)
}

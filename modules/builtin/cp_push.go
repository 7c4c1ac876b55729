package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// cpPushDefaultBuffer is the minion's file_buffer_size default: the
// size of one _file_recv chunk.
const cpPushDefaultBuffer = 262144

// cpPushFunctions are cp.push and cp.push_dir (salt/modules/cp.py): files
// sent to the master's cachedir/minions/<id>/files in _file_recv chunks,
// accepted only when the master has file_recv on.
func cpPushFunctions() []modules.Function {
	return []modules.Function{
		{Name: "cp.push", Spec: modules.Spec{Params: []modules.Param{req("path"), opt("keep_symlinks", false), opt("upload_path", nil), opt("remove_source", false)}},
			Doc: "WARNING Files pushed to the master will have global read permissions..\n\nPush a file from the minion up to the master, the file will be saved to\nthe salt master in the master's minion files cachedir\n(defaults to ``/var/cache/salt/master/minions/minion-id/files``)\n\nThe master refuses it unless ``file_recv`` is ``True`` in its configuration.\n\nCLI Example:\n\n    salt '*' cp.push /etc/fstab\n    salt '*' cp.push /etc/system-release keep_symlinks=True\n    salt '*' cp.push /etc/fstab upload_path='/new/path/fstab'\n    salt '*' cp.push /tmp/filename remove_source=True",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return cpPush(ctx, c, payload.Text(c.Args.Get("path")), payload.Truthy(c.Args.Get("keep_symlinks")),
					payload.Text(c.Args.Get("upload_path")), payload.Truthy(c.Args.Get("remove_source")))
			}},
		{Name: "cp.push_dir", Spec: modules.Spec{Params: []modules.Param{req("path"), opt("glob", nil), opt("upload_path", nil)}},
			Doc: "Push a directory from the minion up to the master, the files will be saved\nto the salt master in the master's minion files cachedir (defaults to\n``/var/cache/salt/master/minions/minion-id/files``).  It also has a glob\nfor matching specific files using globbing.\n\nCLI Example:\n\n    salt '*' cp.push /usr/lib/mysql\n    salt '*' cp.push /usr/lib/mysql upload_path='/newmysql/path'\n    salt '*' cp.push_dir /etc/modprobe.d/ glob='*.conf'",
			Fn:  cpPushDir},
	}
}

// cpPushBadPath is Salt's check of a path given to push: it must be
// absolute and hold no "../".
func cpPushBadPath(p string) bool { return strings.Contains(p, "../") || !strings.HasPrefix(p, "/") }

// cpPush is cp.push: True once every chunk was accepted, False for a bad
// or missing file, else the master's falsy answer to the refused chunk.
func cpPush(ctx context.Context, c *modules.Call, path string, keepSymlinks bool, uploadPath string, removeSource bool) (any, error) {
	log := c.Log()
	log.Debug(fmt.Sprintf("Trying to copy '%s' to master", path))
	if cpPushBadPath(path) {
		log.Debug("Path must be absolute, returning False")
		return false, nil
	}
	if !keepSymlinks {
		path = fileRealpath(path)
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		log.Debug("Path failed os.path.isfile check, returning False")
		return false, nil
	}
	ch, ok := modules.Service[MasterChannel](c.Env, masterServiceName)
	if !ok {
		return nil, fmt.Errorf("%w: cp.push needs a master connection", modules.ErrExecution)
	}
	loadPath := path
	if uploadPath != "" {
		if strings.Contains(uploadPath, "../") {
			log.Debug("Path must be absolute, returning False")
			log.Debug(fmt.Sprintf("Bad path: %s", uploadPath))
			return false, nil
		}
		loadPath = uploadPath
	}
	var parts []any
	for _, p := range strings.Split(py.Normpath(strings.TrimLeft(loadPath, "/")), "/") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if parts == nil {
		parts = []any{}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	size := cpPushDefaultBuffer
	if v, ok := optGet(c, "file_buffer_size"); ok {
		if n, ok := payload.AsInt(v); ok && n > 0 {
			size = int(n)
		}
	}
	buf := make([]byte, size)
	var loc int64
	for sent := false; ; sent = true {
		n, err := io.ReadFull(f, buf)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		if n == 0 && sent {
			break
		}
		load := payload.NewMap("cmd", "_file_recv", "id", c.Env.ID, "path", parts, "size", st.Size(), "tok", nil,
			"loc", loc, "data", append([]byte(nil), buf[:n]...))
		ret, err := ch.SendMaster(ctx, load)
		if err != nil {
			return nil, fmt.Errorf("%w: cp.push: %w", modules.ErrExecution, err)
		}
		if !payload.Truthy(ret) {
			log.Error("cp.push Failed transfer failed. Ensure master has 'file_recv' set to 'True' and that the file " +
				"is not larger than the 'file_recv_size_max' setting on the master.")
			return ret, nil
		}
		loc += int64(n)
	}
	if removeSource {
		if err := os.RemoveAll(path); err != nil {
			log.Error(fmt.Sprintf("cp.push failed to remove file '%s'", path))
			return false, nil
		}
		log.Debug(fmt.Sprintf("Removing source file '%s'", path))
	}
	return true, nil
}

// cpPushDir is cp.push_dir: every file under path (or those whose base
// name matches glob) pushed, stopping at the first refusal.
func cpPushDir(ctx context.Context, c *modules.Call) (any, error) {
	path := payload.Text(c.Args.Get("path"))
	glob, hasGlob := c.Args.Get("glob"), c.Args.Get("glob") != nil
	uploadPath := payload.Text(c.Args.Get("upload_path"))
	if cpPushBadPath(path) {
		return false, nil
	}
	path = fileRealpath(path)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		return cpPush(ctx, c, path, false, uploadPath, false)
	}
	var files []string
	// os.walk: errors are skipped, links to folders are not followed.
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != path {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				return nil // os.walk lists a link to a folder as a folder
			}
		}
		if !d.IsDir() {
			if !hasGlob || py.Fnmatch(filepath.Base(p), payload.Text(glob)) {
				files = append(files, p)
			}
		}
		return nil
	})
	if len(files) == 0 {
		return false, nil
	}
	for _, f := range files {
		up := uploadPath
		if uploadPath != "" && strings.HasPrefix(f, path) {
			up = "/" + strings.Trim(uploadPath, "/") + "/" + strings.Trim(strings.ReplaceAll(f, path, ""), "/")
		}
		ret, err := cpPush(ctx, c, f, false, up, false)
		if err != nil || !payload.Truthy(ret) {
			return ret, err
		}
	}
	return true, nil
}

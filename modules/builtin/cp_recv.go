package builtin

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// cpRecvMaxChunk bounds one uncompressed salt-cp chunk (salt-cp sends
// file_buffer_size chunks, 1 MiB by default).
const cpRecvMaxChunk = 256 << 20

// cpRecv is cp.recv: salt-cp's small-file copy, files being
// {source path: content}.
func cpRecv(_ context.Context, c *modules.Call) (any, error) {
	dest := c.Args.Str("dest")
	files, ok := c.Args.Get("files").(*payload.Map)
	if !ok {
		return nil, &modules.PyException{Class: "AttributeError", Message: fmt.Sprintf("'%s' object has no attribute 'items'", payload.TypeName(c.Args.Get("files")))}
	}
	isDir := func(p string) bool { st, err := os.Stat(p); return err == nil && st.IsDir() }
	ret := &payload.Map{}
	for _, it := range files.Items() {
		p := payload.KeyString(it.Key)
		var final string
		switch {
		case filepath.Base(p) == filepath.Base(dest) && !isDir(dest):
			final = dest
		case isDir(dest):
			final = filepath.Join(dest, filepath.Base(p))
		case isDir(filepath.Dir(dest)):
			final = dest
		default:
			return "Destination unavailable", nil
		}
		var data []byte
		switch d := it.Value.(type) {
		case string:
			data = []byte(d)
		case []byte:
			data = d
		default:
			return nil, &modules.PyException{Class: "TypeError", Message: fmt.Sprintf("write() argument must be str, not %s", payload.TypeName(it.Value))}
		}
		ret.Set(final, os.WriteFile(final, data, 0o666) == nil)
	}
	return ret, nil
}

// pyMakedirs is Python's os.makedirs (exist_ok false): the error names
// the directory that could not be made, as Python's does.
func pyMakedirs(name string) error {
	head, tail := filepath.Split(name)
	if tail == "" {
		head, tail = filepath.Split(filepath.Clean(head))
	}
	head = filepath.Clean(head)
	if head != "" && tail != "" {
		// os.path.exists: any stat error counts as missing.
		if _, err := os.Stat(head); err != nil {
			if err := pyMakedirs(head); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
		}
	}
	return os.Mkdir(name, 0o777)
}

// cpRecvChunked is cp.recv_chunked: one chunk of a salt-cp copy (base64,
// gzipped when compressed), appended or starting the file; a nil chunk
// makes the directory dest. Failures are returned as text with retcode 1.
func cpRecvChunked(_ context.Context, c *modules.Call) (any, error) {
	dest := c.Args.Str("dest")
	fail := func(msg string) (any, error) {
		c.Retcode = 1
		return msg, nil
	}
	chunkArg := c.Args.Get("chunk")
	if chunkArg == nil {
		if err := pyMakedirs(dest); err != nil {
			if errors.Is(err, fs.ErrExist) {
				if st, err := os.Stat(dest); err == nil && st.Mode().IsRegular() {
					return "Path exists and is a file", nil
				}
				return true, nil
			}
			return fail(pyOSErrorText(err))
		}
		return true, nil
	}
	var raw []byte
	switch x := chunkArg.(type) {
	case string:
		raw = []byte(x)
	case []byte:
		raw = x
	default:
		return nil, &modules.PyException{Class: "TypeError", Message: fmt.Sprintf("argument should be a bytes-like object or ASCII string, not '%s'", payload.TypeName(chunkArg))}
	}
	chunk := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
	n, err := base64.StdEncoding.Decode(chunk, bytes.TrimSpace(raw))
	if err != nil {
		return nil, &modules.PyException{Class: "binascii.Error", Message: "Incorrect padding"}
	}
	chunk = chunk[:n]
	appendMode := payload.Truthy(c.Args.Get("append"))
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendMode {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	fh, err := os.OpenFile(dest, flags, 0o666)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return fail(pyOSErrorText(err))
		}
		if err := pyMakedirs(filepath.Dir(dest)); err != nil {
			return fail(pyOSErrorText(err))
		}
		if fh, err = os.OpenFile(dest, flags, 0o666); err != nil {
			return nil, fmt.Errorf("%w: %s", modules.ErrExecution, pyOSErrorText(err))
		}
	}
	defer fh.Close()
	if payload.Truthy(c.Args.Get("compressed")) {
		if len(chunk) < 2 || chunk[0] != 0x1f || chunk[1] != 0x8b {
			// Python's gzip.BadGzipFile text, with the first two bytes.
			return fail("Not a gzipped file (" + pyfmt.Repr(chunk[:min(2, len(chunk))]) + ")")
		}
		zr, err := gzip.NewReader(bytes.NewReader(chunk))
		if err != nil {
			return fail(err.Error())
		}
		if chunk, err = io.ReadAll(io.LimitReader(zr, cpRecvMaxChunk)); err != nil {
			return fail(err.Error())
		}
	}
	if _, err := fh.Write(chunk); err != nil {
		return fail(pyOSErrorText(err))
	}
	if m := c.Args.Get("mode"); !appendMode && m != nil {
		mode, err := c.Args.Int("mode")
		if err != nil {
			return nil, &modules.PyException{Class: "TypeError", Message: fmt.Sprintf("'%s' object cannot be interpreted as an integer", payload.TypeName(m))}
		}
		if err := os.Chmod(dest, fs.FileMode(mode&0o7777)); err != nil {
			return fail(pyOSErrorText(err))
		}
	}
	return true, nil
}

// cpRecvFunctions are the salt-cp receivers of the cp module.
func cpRecvFunctions() []modules.Function {
	return []modules.Function{
		{Name: "cp.recv", Spec: modules.Spec{Params: []modules.Param{req("files"), req("dest")}},
			Doc: "Used with salt-cp, pass the files dict, and the destination.\n\nThis function receives small fast copy files from the master via salt-cp.\nIt does not work via the CLI.\n\nCLI Example:\n\n    salt '*' cp.recv",
			Fn:  cpRecv},
		{Name: "cp.recv_chunked", Spec: modules.Spec{Params: []modules.Param{req("dest"), req("chunk"), opt("append", false), opt("compressed", true), opt("mode", nil)}},
			Doc: "This function receives files copied to the minion using ``salt-cp`` and is\nnot intended to be used directly on the CLI.\n\nCLI Example:\n\n    salt '*' cp.recv_chunked",
			Fn:  cpRecvChunked},
	}
}

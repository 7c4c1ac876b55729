package master

import (
	"context"
	"hash"
	"log/slog"
	"sync"
	"unsafe"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/fileserver"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// fileServer is the master's file server: package fileserver's roots
// backend built from the master configuration.
type fileServer struct {
	*fileserver.Roots
}

func newFileServer(cfg *config.Master, log *slog.Logger) *fileServer {
	o := fileserver.OptionsFrom(cfg.Opts)
	o.Roots = cfg.FileRoots
	o.Backends = cfg.FileserverBackend
	if cfg.HashType != "" {
		o.HashType = cfg.HashType
	}
	o.Logger = log
	return &fileServer{fileserver.New(o)}
}

// envs returns the file server's saltenvs, sorted.
func (fs *fileServer) envs() []string { return fs.Envs() }

// newHash returns the hash_type algorithm name (localcache uses it).
func newHash(name string) (hash.Hash, bool) {
	h, err := fileserver.NewHash(name)
	return h, err == nil
}

// The AES file server commands: each answers like Salt's AESFuncs, an
// error becoming "" (run_func's answer to an exception).

func (m *Master) aesFileEnvs(ctx context.Context, load *payload.Map) (any, error) {
	return m.fs.Handle(ctx, "_file_envs", load)
}

func (m *Master) aesFileList(ctx context.Context, load *payload.Map) (any, error) {
	return m.fs.Handle(ctx, "_file_list", load)
}

func (m *Master) aesFileListEmptyDirs(ctx context.Context, load *payload.Map) (any, error) {
	return m.fs.Handle(ctx, "_file_list_emptydirs", load)
}

func (m *Master) aesDirList(ctx context.Context, load *payload.Map) (any, error) {
	return m.fs.Handle(ctx, "_dir_list", load)
}

func (m *Master) aesSymlinkList(ctx context.Context, load *payload.Map) (any, error) {
	return m.fs.Handle(ctx, "_symlink_list", load)
}

func (m *Master) aesFileFind(ctx context.Context, load *payload.Map) (any, error) {
	return m.fs.Handle(ctx, "_file_find", load)
}

func (m *Master) aesFileHash(ctx context.Context, load *payload.Map) (any, error) {
	return m.fs.Handle(ctx, "_file_hash", load)
}

func (m *Master) aesFileHashAndStat(ctx context.Context, load *payload.Map) (any, error) {
	return m.fs.Handle(ctx, "_file_hash_and_stat", load)
}

func (m *Master) aesServeFile(ctx context.Context, load *payload.Map) (any, error) {
	return m.fs.Handle(ctx, "_serve_file", load)
}

// serveFileReply encodes a _serve_file answer into a recycled buffer and
// hands the chunk's read buffer back to the file server: a 1 MiB chunk
// then costs no fresh memory on either side (the reply is byte for byte
// what EncodeSendReply gives). The buffer comes back through
// ReleaseReply once the transport has written the reply.
func (m *Master) serveFileReply(s *session, ret any, nonce string) ([]byte, bool) {
	var scratch []byte
	recycle := m.recycle.Load()
	if recycle {
		scratch = m.replyBufs.get()
	}
	out, err := message.EncodeSendReplyTo(s.c, ret, nonce, scratch)
	m.fs.ReleaseChunk(ret)
	if err != nil {
		m.log.Error("cannot encode a reply", "cmd", "_serve_file", "err", err)
		if out, err = message.EncodeSendReply(s.c, "", nonce); err != nil {
			return clearReply(message.HandlerErrorText), true
		}
		return out, true
	}
	switch {
	case !recycle:
	case within(out, scratch):
		m.lent.Store(unsafe.SliceData(out), &scratch)
	default:
		if cap(scratch) > 0 {
			m.replyBufs.put(scratch) // too small this time, or unused
		}
		if len(out) >= minPooledReply {
			buf := out[:0:cap(out)]
			m.lent.Store(unsafe.SliceData(out), &buf)
		}
	}
	return out, true
}

// ReplyRelease turns on the recycling of file chunk reply buffers and
// returns the function the request transport must call with every reply
// HandleRequest returned, once written (transport.ReqOptions.Release).
// Without it each reply has a buffer of its own.
func (m *Master) ReplyRelease() func(reply []byte) {
	m.recycle.Store(true)
	return m.releaseReply
}

func (m *Master) releaseReply(reply []byte) {
	if len(reply) == 0 {
		return
	}
	if p, ok := m.lent.LoadAndDelete(unsafe.SliceData(reply)); ok {
		m.replyBufs.put(*p.(*[]byte))
	}
}

// minPooledReply is the smallest reply buffer worth keeping for a later
// chunk.
const minPooledReply = 64 << 10

// within reports whether b starts inside arr's array.
func within(b, arr []byte) bool {
	if len(b) == 0 || cap(arr) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	a := uintptr(unsafe.Pointer(unsafe.SliceData(arr[:1])))
	return p >= a && p < a+uintptr(cap(arr))
}

// maxFreeReplies bounds the idle chunk reply buffers kept (each is about
// file_buffer_size bytes).
const maxFreeReplies = 8

// bufList is a small bounded free list of reply buffers.
type bufList struct {
	mu   sync.Mutex
	bufs [][]byte
}

func (l *bufList) get() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.bufs); n > 0 {
		b := l.bufs[n-1]
		l.bufs[n-1] = nil
		l.bufs = l.bufs[:n-1]
		return b
	}
	return nil
}

func (l *bufList) put(b []byte) {
	if cap(b) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.bufs) < maxFreeReplies {
		l.bufs = append(l.bufs, b[:0])
	}
}

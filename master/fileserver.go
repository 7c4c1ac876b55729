package master

import (
	"context"
	"hash"
	"log/slog"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/fileserver"
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

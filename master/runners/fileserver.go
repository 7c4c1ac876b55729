package runners

import (
	"context"
	"errors"
	"sort"

	"github.com/gsalt/gsalt/wire/payload"
)

// FileServerEnv is the part of the master the fileserver runners need
// besides Env: its file server, asked like a minion's file client asks it.
type FileServerEnv interface {
	// FileServer answers one file server command ("_file_envs",
	// "_file_list", "_dir_list", "_file_list_emptydirs", "_symlink_list")
	// for load, like the master's AES file server commands do.
	FileServer(ctx context.Context, cmd string, load *payload.Map) (any, error)
}

// ErrNoFileServer is returned when the master offers no file server.
var ErrNoFileServer = errors.New("runners: the master has no file server")

var fsListParams = []Param{{Name: "saltenv", Default: "base"}, {Name: "backend"}}

// fileserverRunners is Salt's fileserver runner (salt/runners/fileserver.py),
// over the master's roots file server.
func fileserverRunners() []Runner {
	return []Runner{
		{Name: "fileserver.envs", Fn: fsEnvs, Params: []Param{{Name: "backend"}, {Name: "sources", Default: false}},
			Doc: "Return the available fileserver environments. If no backend is provided,\nthen the environments for all configured backends will be returned.\n\nCLI Example:\n\n    salt-run fileserver.envs\n    salt-run fileserver.envs backend=roots,git"},
		{Name: "fileserver.file_list", Fn: fsList("_file_list"), Params: fsListParams,
			Doc: "Return a list of files from the salt fileserver.\n\nCLI Examples:\n\n    salt-run fileserver.file_list\n    salt-run fileserver.file_list saltenv=prod\n    salt-run fileserver.file_list saltenv=dev backend=git"},
		{Name: "fileserver.dir_list", Fn: fsList("_dir_list"), Params: fsListParams,
			Doc: "Return a list of directories in the given environment.\n\nCLI Example:\n\n    salt-run fileserver.dir_list\n    salt-run fileserver.dir_list saltenv=prod"},
		{Name: "fileserver.empty_dir_list", Fn: fsList("_file_list_emptydirs"), Params: fsListParams,
			Doc: "Return a list of empty directories in the given environment.\n\nCLI Example:\n\n    salt-run fileserver.empty_dir_list\n    salt-run fileserver.empty_dir_list saltenv=prod"},
		{Name: "fileserver.symlink_list", Fn: fsList("_symlink_list"), Params: fsListParams,
			Doc: "Return a list of symlinked files and dirs.\n\nCLI Example:\n\n    salt-run fileserver.symlink_list\n    salt-run fileserver.symlink_list saltenv=prod"},
	}
}

func fileServer(c *Call) (FileServerEnv, error) {
	fe, ok := c.Env.(FileServerEnv)
	if !ok {
		return nil, ErrNoFileServer
	}
	return fe, nil
}

// fsEnvs is fileserver.envs: sorted(Fileserver.envs(back, sources)); with
// sources the backends' map is sorted into the list of its keys, as
// Python's sorted() does with a dict.
func fsEnvs(ctx context.Context, c *Call) (any, error) {
	fe, err := fileServer(c)
	if err != nil {
		return nil, err
	}
	load := payload.NewMap("back", c.Args["backend"], "sources", c.Args["sources"])
	v, err := fe.FileServer(ctx, "_file_envs", load)
	if err != nil {
		return nil, err
	}
	var out []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			out = append(out, payload.Text(e))
		}
	case *payload.Map:
		out = x.Keys()
	}
	sort.Strings(out)
	return strAny(out), nil
}

// fsList runs one of the list commands with {saltenv, fsbackend}.
func fsList(cmd string) Func {
	return func(ctx context.Context, c *Call) (any, error) {
		fe, err := fileServer(c)
		if err != nil {
			return nil, err
		}
		return fe.FileServer(ctx, cmd, payload.NewMap("saltenv", c.Args["saltenv"], "fsbackend", c.Args["backend"]))
	}
}

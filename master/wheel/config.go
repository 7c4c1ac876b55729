package wheel

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/wire/payload"
)

// ErrNoConfFile means the master options name no configuration file to
// read back.
var ErrNoConfFile = errors.New("wheel: the master has no conf_file")

// configFunctions is the reading part of Salt's config wheel module
// (salt/wheel/config.py).
func configFunctions() []Function {
	return []Function{
		{Name: "config.values", Fn: configValues,
			Doc: "\n    Return the raw values of the config file\n    "},
	}
}

// configValues is config.values: the master configuration read again from
// its file, with every default filled in, as salt.config.master_config
// returns it (keys sorted here; Salt's follow its defaults table).
func configValues(_ context.Context, c *Call) (any, error) {
	path, _ := c.opt("conf_file").(string)
	if path == "" {
		return nil, ErrNoConfFile
	}
	cfg, err := config.LoadMaster(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("wheel: config.values: %w", err)
	}
	return payload.FromGo(cfg.Opts.Snapshot()), nil
}

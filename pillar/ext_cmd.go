package pillar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/render"
)

// maxCmdOutput bounds what an ext_pillar command may print.
const maxCmdOutput = 64 << 20

// extCmdTimeout bounds one ext_pillar command (Salt has none; a hung
// command would hold the minion's pillar request forever).
const extCmdTimeout = 10 * time.Minute

// runExtCmd is cmd.run as an ext_pillar module calls it on the master:
// with shell the command runs under $SHELL (else /bin/sh) -c; without a shell the command is split like shlex.split (python_shell
// defaults to False for calls from modules); with stderr, stderr is
// merged into the output (cmd.run) or dropped (cmd.run_stdout). The output
// has its trailing whitespace removed. A command that cannot start is an
// error; a non-zero exit is not.
func runExtCmd(ctx context.Context, command string, shell, stderr bool) (string, error) {
	var argv []string
	if shell {
		// Salt's default shell: $SHELL, else /bin/sh.
		sh := os.Getenv("SHELL")
		if sh == "" {
			sh = "/bin/sh"
		}
		argv = []string{sh, "-c", command}
	} else {
		var err error
		if argv, err = py.ShlexSplit(command); err != nil {
			return "", err
		}
		if len(argv) == 0 {
			return "", errors.New("empty command")
		}
	}
	ctx, cancel := context.WithTimeout(ctx, extCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if home, err := os.UserHomeDir(); err == nil {
		cmd.Dir = home
	}
	var out limitedBuffer
	cmd.Stdout = &out
	if stderr {
		cmd.Stderr = &out
	}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return "", fmt.Errorf("Unable to run command '%s': %w", command, err)
		}
	}
	if out.over {
		return "", fmt.Errorf("output of '%s' exceeds %d bytes", command, maxCmdOutput)
	}
	return strings.TrimRight(out.b.String(), " \t\r\n\v\f"), nil
}

type limitedBuffer struct {
	b    bytes.Buffer
	over bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if l.b.Len()+len(p) > maxCmdOutput {
		l.over = true
		return len(p), nil
	}
	return l.b.Write(p)
}

var commandParam = []ExtParam{{Name: "command", Required: true}}

// extCmdJSON is salt/pillar/cmd_json.py: the output of the command
// ("%s" replaced by the minion id) parsed as JSON; any failure is logged
// and gives {}.
func extCmdJSON() ExtModule {
	return ExtModule{Name: "cmd_json", Params: commandParam, Fn: func(ctx context.Context, c *ExtCall) (any, error) {
		command, ok := c.Args["command"].(string)
		if !ok {
			c.Log.Error(fmt.Sprintf("JSON data from %s failed to parse", c.Str("command")))
			return emptyResult(), nil
		}
		command = strings.ReplaceAll(command, "%s", c.MinionID)
		out, err := runExtCmd(ctx, command, false, true)
		var v any
		if err == nil {
			v, err = render.DecodeJSON([]byte(out))
			if err == nil && v == nil && strings.TrimSpace(out) == "" {
				err = errors.New("Expecting value")
			}
		}
		if err != nil {
			c.Log.Error(fmt.Sprintf("JSON data from %s failed to parse", command))
			return emptyResult(), nil
		}
		return v, nil
	}}
}

// extCmdYAML is salt/pillar/cmd_yaml.py: the command's stdout, run
// through a shell, parsed as YAML.
func extCmdYAML() ExtModule {
	return ExtModule{Name: "cmd_yaml", Params: commandParam, Fn: func(ctx context.Context, c *ExtCall) (any, error) {
		return cmdYAML(ctx, c, true)
	}}
}

// extCmdYAMLEx is salt/pillar/cmd_yamlex.py: the command's output parsed
// with the yamlex serializer (render.DecodeYAMLEx: !aggregate, !reset,
// repeated keys merged).
func extCmdYAMLEx() ExtModule {
	return ExtModule{Name: "cmd_yamlex", Params: commandParam, Fn: func(ctx context.Context, c *ExtCall) (any, error) {
		return cmdYAML(ctx, c, false)
	}}
}

func cmdYAML(ctx context.Context, c *ExtCall, plain bool) (any, error) {
	command, ok := c.Args["command"].(string)
	fail := func(command, out string) (any, error) {
		if plain {
			c.Log.Error(fmt.Sprintf("YAML data from '%s' failed to parse. Command output:\n%s", command, out))
		} else {
			c.Log.Error(fmt.Sprintf("YAML data from %s failed to parse", command))
		}
		return emptyResult(), nil
	}
	if !ok {
		return fail(c.Str("command"), "")
	}
	command = strings.ReplaceAll(command, "%s", c.MinionID)
	out, err := runExtCmd(ctx, command, plain, !plain)
	if err != nil {
		return fail(command, out)
	}
	var v any
	if plain {
		v, err = config.DecodeYAMLPayload([]byte(out))
	} else {
		v, err = render.DecodeYAMLExMarked([]byte(out), c.r.marks)
	}
	if err != nil {
		return fail(command, out)
	}
	return v, nil
}

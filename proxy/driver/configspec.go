package driver

import (
	"context"
	"regexp"
	"strings"
)

// cliConfigSpec is how a CLI platform without a candidate reads its
// configurations (NAPALM ios and nxos_ssh get_config): the commands, the
// lines the device adds to them (dropped, and the text trimmed), the
// order of the reads and the sanitizing patterns.
type cliConfigSpec struct {
	running, startup string
	full             string         // appended to running for full=True
	added            *regexp.Regexp // the device's header lines, dropped
	runningFirst     bool           // read running before startup
	sanitize         []SanitizeFilter
}

// getCLIConfig implements ConfigGetter by spec.
func getCLIConfig(ctx context.Context, s *session, spec *cliConfigSpec, co ConfigOptions) (Config, error) {
	var c Config
	retrieve := co.Retrieve
	if err := checkRetrieve(retrieve); err != nil {
		return c, err
	}
	read := func(o runner, cmd string, into *string) error {
		out, err := o.show(cmd)
		if err != nil {
			return err
		}
		*into = strings.TrimSpace(spec.added.ReplaceAllString(out, ""))
		return nil
	}
	err := s.query(ctx, func(o runner) error {
		running := spec.running
		if co.Full {
			running += spec.full
		}
		type step struct {
			cmd  string
			into *string
			want bool
		}
		steps := []step{
			{spec.startup, &c.Startup, retrieve == "startup" || retrieve == "all"},
			{running, &c.Running, retrieve == "running" || retrieve == "all"},
		}
		if spec.runningFirst {
			steps[0], steps[1] = steps[1], steps[0]
		}
		for _, st := range steps {
			if !st.want {
				continue
			}
			if err := read(o, st.cmd, st.into); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && co.Sanitized {
		c = SanitizeConfigs(c, spec.sanitize)
	}
	return c, err
}

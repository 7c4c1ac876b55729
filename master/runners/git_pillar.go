package runners

import (
	"context"

	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/wire/payload"
)

// gitPillarRunners is Salt's git_pillar runner (salt/runners/git_pillar.py):
// git_pillar.update fetches the master's git ext_pillar remotes
// (pillar.GitPillarUpdate).
func gitPillarRunners() []Runner {
	return []Runner{
		{Name: "git_pillar.update", Fn: gitPillarUpdate, Params: []Param{{Name: "branch"}, {Name: "repo"}},
			Doc: "Fetch one or all configured git_pillar remotes.\n\nThe return for each remote is ``True`` when new commits were fetched,\n``None`` when nothing changed and ``False`` when the fetch failed.\nThe repo parameter matches the remote's URL or its ``name``.\n\nCLI Example:\n\n    salt-run git_pillar.update branch='branch' repo='https://foo.com/bar.git'\n    salt-run git_pillar.update repo=myrepo\n    salt-run git_pillar.update"},
	}
}

// gitPillarUpdate is git_pillar.update; Salt's SaltRunnerError texts are
// the errors when nothing matched.
func gitPillarUpdate(ctx context.Context, c *Call) (any, error) {
	arg := func(name string) *string {
		v, ok := c.Args[name]
		if !ok || v == nil {
			return nil
		}
		s := payload.Text(v)
		return &s
	}
	ret, err := pillar.GitPillarUpdate(ctx, pillar.GetterFunc(c.Env.Opt), arg("branch"), arg("repo"), c.Log)
	if err != nil {
		return nil, err
	}
	return ret, nil
}

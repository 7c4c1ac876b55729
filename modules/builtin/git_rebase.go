package builtin

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
)

// gitRebaseFunctions is git.rebase: git-rebase(1) in a checkout, refusing
// interactive rebases (nothing could answer the editor).
func gitRebaseFunctions() []modules.Function {
	return []modules.Function{
		{Name: "git.rebase", Spec: modules.Spec{Params: gitParams([]modules.Param{req("cwd"), opt("rev", "master")},
			"opts", "git_opts", "user", "password", "ignore_retcode", "output_encoding")},
			Doc: "Run git-rebase(1) in the checkout cwd, rebasing the current branch onto\n" +
				"rev (default master; several words, as 'origin main', are split like a\n" +
				"shell would). opts are extra rebase options and git_opts options for git\n" +
				"itself, each one string. -i/--interactive is refused. Returns git's\n" +
				"standard output.\n\nCLI Example:\n\n    salt myminion git.rebase /path/to/repo main\n" +
				"    salt myminion git.rebase /path/to/repo origin/main opts='--onto newbranch'",
			Fn: gitRebase},
	}
}

func gitRebase(ctx context.Context, c *modules.Call) (any, error) {
	cwd := gitExpandPath(c, c.Args.Get("cwd"))
	opts, err := gitFormatOpts(c.Args.Get("opts"))
	if err != nil {
		return nil, &modules.PyException{Class: "ValueError", Message: err.Error()}
	}
	for _, o := range opts {
		if o == "-i" || o == "--interactive" {
			return nil, fmt.Errorf("%w: Interactive rebases are not supported", modules.ErrInvocation)
		}
	}
	argv, err := gitCmd(c, "rebase")
	if err != nil {
		return nil, err
	}
	argv = append(argv, opts...)
	rev, err := py.ShlexSplit(pyfmt.Str(c.Args.Get("rev")))
	if err != nil {
		return nil, &modules.PyException{Class: "ValueError", Message: err.Error()}
	}
	argv = append(argv, rev...)
	return gitStdout(ctx, c, argv, gitRunOpts{cwd: cwd})
}

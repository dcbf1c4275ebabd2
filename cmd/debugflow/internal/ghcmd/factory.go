package ghcmd

import (
	"context"
	"io"
	"net/http"
	"sync"

	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
)

// Factory is the factory of debugflow's GitHub commands (dispatch, watch, download, and the
// GitHub side of experiment and bisect): the shared factory (streams, environment, clock,
// working folder) and what only they use, the HTTP client among them. Every field may be nil (see ghrun.Env for each).
type Factory struct {
	*factory.Factory

	// Workflow is the debug workflow: its file and its inputs (debugflow: from the spec).
	Workflow func() (ghrun.Workflow, error)
	// Report writes the verdict of an extracted artifact folder.
	Report func(dir string, w io.Writer) error
	// TokenFromGH is asked for a host's token when the environment has none.
	TokenFromGH ghrun.TokenSource
	// GitRemote is the current repository's origin remote; GitBranch its current branch.
	GitRemote func(ctx context.Context) (string, error)
	GitBranch func(ctx context.Context) (string, error)
	// Preflight checks here what dispatch can check before any request.
	Preflight func(ctx context.Context, ref string, fromBranch bool) error
	// HTTPClient talks to GitHub (nil: a default client). It is here, not in the shared
	// factory, so that debugflow-step, whose gate has a client of its own, links net/http
	// only there.
	HTTPClient *http.Client

	once sync.Once
	env  *ghrun.Env
}

// NewFactory returns f with the GitHub side wired to this process: gh for a token, git in the
// current folder. Workflow, Report and Preflight are the caller's.
func NewFactory(f *factory.Factory) *Factory {
	git := ghrun.Git{Dir: f.WorkDir}
	return &Factory{Factory: f, TokenFromGH: ghrun.GHCLI{}.Token, GitRemote: git.Origin, GitBranch: git.Branch}
}

// GitHub is the GitHub side's environment, built from the factory's fields at the first call
// and the same afterwards: the tokens it learns to mask stay learnt for the command's life.
// Set the fields before the first command is built.
func (f *Factory) GitHub() *ghrun.Env {
	f.once.Do(func() {
		f.env = &ghrun.Env{
			Workflow:    f.Workflow,
			Report:      f.Report,
			Getenv:      f.Env,
			HTTPClient:  f.HTTPClient,
			Stdin:       f.IO.In,
			StdinIsTTY:  f.IO.StdinIsTTY,
			Stdout:      f.Stdout(),
			Stderr:      f.Stderr(),
			IsTTY:       f.IO.IsTTY,
			TokenFromGH: f.TokenFromGH,
			GitRemote:   f.GitRemote,
			GitBranch:   f.GitBranch,
			Preflight:   f.Preflight,
			Sleep:       f.Sleep,
			Now:         f.Now,
		}
	})
	return f.env
}

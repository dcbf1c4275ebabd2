package ghrun

import (
	"context"
	"io"

	"github.com/spf13/pflag"
)

// RepoFlags are -R and --hostname for GitHub commands built outside this package (debugflow
// experiment), declared and resolved exactly as dispatch, watch and download do.
type RepoFlags struct{ flags repoFlags }

// AddFlags declares -R and --hostname.
func (r *RepoFlags) AddFlags(fl *pflag.FlagSet) { r.flags.addFlags(fl) }

// UseRecorded names the repository an earlier run wrote down in file (the bisection state),
// for when -R is not given. A file does not name hosts: its repository is accepted only on
// github.com, the configured host (--hostname, GH_HOST) or GITHUB_API_URL's host.
func (r *RepoFlags) UseRecorded(repo, file string) { r.flags.Recorded, r.flags.RecordedIn = repo, file }

// Connect resolves the repository (-R, else the origin remote; the host from --hostname, -R,
// GH_HOST or the remote) and returns an API client for it, as dispatch does; log receives
// retry notices. Configuration problems are usage errors.
func (f *Factory) Connect(ctx context.Context, r RepoFlags, log io.Writer) (Repo, *Client, error) {
	repo, host, err := f.resolve(ctx, r.flags)
	if err != nil {
		return Repo{}, nil, err
	}
	c, err := f.client(ctx, host, log)
	if err != nil {
		return Repo{}, nil, err
	}
	return repo, c, nil
}

// Streams returns stdout and stderr with the tokens masked.
func (f *Factory) Streams() (stdout, stderr io.Writer) { return f.streams() }

// Finish masks the tokens in err and makes sure it carries an exit code (nil stays nil).
func (f *Factory) Finish(err error) error { return finish(f, err) }

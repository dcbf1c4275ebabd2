package ghrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Factory carries what the commands need from the outside world, so tests
// replace each piece (cli/cli style). The lead fills Workflow from the spec
// and Report from the report package.
type Factory struct {
	// Workflow returns the debug workflow: its file name and declared inputs.
	Workflow func() (Workflow, error)
	// Report writes the verdict for an extracted artifact folder.
	Report func(dir string, w io.Writer) error

	Getenv     func(string) string // nil: os.Getenv
	HTTPClient *http.Client        // nil: a default client
	Stdout     io.Writer
	Stderr     io.Writer
	IsTTY      bool // draw updating displays instead of plain lines

	// GitRemote returns the URL of the current repository's origin remote.
	GitRemote func(ctx context.Context) (string, error)
	// GitBranch returns the current branch.
	GitBranch func(ctx context.Context) (string, error)

	// Sleep and Now are optional test seams for retries, polling and elapsed times.
	Sleep func(context.Context, time.Duration) error
	Now   func() time.Time
}

// NewFactory returns a Factory wired to this process: environment, standard
// streams (a terminal gets updating displays), git in the current directory.
func NewFactory(workflow func() (Workflow, error), report func(dir string, w io.Writer) error) *Factory {
	git := Git{}
	return &Factory{
		Workflow:  workflow,
		Report:    report,
		Getenv:    os.Getenv,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		IsTTY:     isTerminal(os.Stdout) && isTerminal(os.Stderr) && os.Getenv("TERM") != "dumb",
		GitRemote: git.Origin,
		GitBranch: git.Branch,
	}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Git answers the two questions the commands ask git. Run is the seam: nil
// runs the git binary in Dir.
type Git struct {
	Dir string
	Run func(ctx context.Context, dir string, args ...string) ([]byte, error)
}

func (g Git) run(ctx context.Context, args ...string) (string, error) {
	run := g.Run
	if run == nil {
		run = execGit
	}
	out, err := run(ctx, g.Dir, args...)
	return strings.TrimSpace(string(out)), err
}

func execGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return out, fmt.Errorf("git %s: %s", strings.Join(args, " "), redactUserinfo(msg))
	}
	return out, nil
}

// Origin returns the URL of the origin remote.
func (g Git) Origin(ctx context.Context) (string, error) {
	out, err := g.run(ctx, "remote", "get-url", "origin")
	if err != nil {
		return "", err
	}
	if out == "" {
		return "", errors.New("git remote get-url origin: empty answer")
	}
	return out, nil
}

// Branch returns the checked-out branch; a detached HEAD is an error.
func (g Git) Branch(ctx context.Context) (string, error) {
	out, err := g.run(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil || out == "" {
		return "", fmt.Errorf("HEAD is not on a branch (detached HEAD or not a git repository): %v", err)
	}
	return out, nil
}

func (f *Factory) getenv(k string) string {
	if f.Getenv == nil {
		return os.Getenv(k)
	}
	return f.Getenv(k)
}

func (f *Factory) stdout() io.Writer { return orDiscard(f.Stdout) }
func (f *Factory) stderr() io.Writer { return orDiscard(f.Stderr) }

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// secrets are the token values the commands must never print.
func (f *Factory) secrets() []string {
	return []string{strings.TrimSpace(f.getenv(EnvGHToken)), strings.TrimSpace(f.getenv(EnvGitHubToken))}
}

// streams returns stdout and stderr with the tokens masked.
func (f *Factory) streams() (io.Writer, io.Writer) {
	s := f.secrets()
	return &redactWriter{w: f.stdout(), secrets: s}, &redactWriter{w: f.stderr(), secrets: s}
}

// repoFlags are the flags every command shares to say where the repository is.
type repoFlags struct {
	Repo     string // -R [HOST/]OWNER/REPO
	Hostname string // --hostname
}

// addFlags declares -R and --hostname, the same for every command.
func (r *repoFlags) addFlags(fl *pflag.FlagSet) {
	fl.StringVarP(&r.Repo, "repo", "R", "", "repository as [HOST/]OWNER/REPO (default: the origin remote)")
	fl.StringVar(&r.Hostname, "hostname", "", "GitHub Enterprise Server host (default: $GH_HOST, else github.com)")
}

// resolve finds the repository (from -R, else the origin remote) and the host
// the client talks to: --hostname, else the host in -R, else GH_HOST, else
// the host of the origin remote. GITHUB_API_URL, read by NewClient, overrides all.
func (f *Factory) resolve(ctx context.Context, flags repoFlags) (Repo, string, error) {
	var repo Repo
	fromFlag := flags.Repo != ""
	if fromFlag {
		r, err := ParseRepo(flags.Repo)
		if err != nil {
			return Repo{}, "", usageError(err)
		}
		repo = r
	} else {
		if f.GitRemote == nil {
			return Repo{}, "", usageError(errors.New("no repository: pass -R OWNER/REPO"))
		}
		remote, err := f.GitRemote(ctx)
		if err != nil {
			return Repo{}, "", usageError(fmt.Errorf("no -R and no usable origin remote (%v): pass -R OWNER/REPO", err))
		}
		r, err := RepoFromRemote(remote)
		if err != nil {
			return Repo{}, "", usageError(fmt.Errorf("%w: pass -R OWNER/REPO", err))
		}
		repo = r
	}
	host := strings.ToLower(strings.TrimSpace(flags.Hostname))
	if host == "" && fromFlag {
		host = repo.Host
	}
	if host == "" {
		host = strings.ToLower(strings.TrimSpace(f.getenv(EnvGHHost)))
	}
	if host == "" {
		host = repo.Host
	}
	repo.Host = host
	return repo, host, nil
}

// client builds the API client; configuration problems are usage errors.
func (f *Factory) client(host string, log io.Writer) (*Client, error) {
	c, err := NewClient(ClientOptions{
		Host:       host,
		HTTPClient: f.HTTPClient,
		Getenv:     f.getenv,
		Sleep:      f.Sleep,
		Now:        f.Now,
		Log:        log,
	})
	if err != nil {
		return nil, usageError(err)
	}
	return c, nil
}

func (f *Factory) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// runURLPath matches the path of a run page: /OWNER/REPO/actions/runs/ID[/...].
var runURLPath = regexp.MustCompile(`^/([^/]+)/([^/]+)/actions/runs/([0-9]+)(?:/.*)?$`)

// ParseRunArg accepts a run id or a run URL (https://HOST/OWNER/REPO/actions/runs/ID,
// as printed by dispatch and the Actions tab). A URL also names the repository.
func ParseRunArg(s string) (int64, *Repo, error) {
	s = strings.TrimSpace(s)
	if id, err := strconv.ParseInt(s, 10, 64); err == nil && id > 0 {
		return id, nil, nil
	}
	if u, err := url.Parse(s); err == nil && (u.Scheme == "https" || u.Scheme == "http") {
		if m := runURLPath.FindStringSubmatch(u.Path); m != nil {
			id, err := strconv.ParseInt(m[3], 10, 64)
			if err == nil && id > 0 {
				r := Repo{Host: strings.ToLower(u.Host), Owner: m[1], Name: m[2]}
				if r.check() == nil {
					return id, &r, nil
				}
			}
		}
	}
	return 0, nil, fmt.Errorf("%q is not a run id or a run URL (https://github.com/OWNER/REPO/actions/runs/ID)", s)
}

package ghrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Env is what the GitHub commands (dispatch, watch, download, and the GitHub side of
// experiment and bisect) need from the outside world, so tests replace each piece. The CLI
// builds it from its factory (ghcmd.Factory, cmd/debugflow/internal/ghcmd): Workflow from
// the spec, Report from the report package.
type Env struct {
	// Workflow returns the debug workflow: its file name and declared inputs.
	Workflow func() (Workflow, error)
	// Report writes the verdict for an extracted artifact folder.
	Report func(dir string, w io.Writer) error

	Getenv     func(string) string // nil: os.Getenv
	HTTPClient *http.Client        // nil: a default client
	Stdin      io.Reader           // dispatch reads inputs as JSON from it (nil: the command's stdin)
	StdinIsTTY bool                // stdin is a terminal: never read inputs from it (an *os.File is checked too)
	Stdout     io.Writer
	Stderr     io.Writer
	IsTTY      bool // draw updating displays instead of plain lines

	// TokenFromGH is asked for the host's token when the environment has
	// none: `gh auth token --hostname HOST` (nil: not asked).
	TokenFromGH TokenSource

	// GitRemote returns the URL of the current repository's origin remote.
	GitRemote func(ctx context.Context) (string, error)
	// GitBranch returns the current branch.
	GitBranch func(ctx context.Context) (string, error)
	// Preflight checks what dispatch can check here before any request (the committed
	// workflow against the spec, a pushed branch); fromBranch: ref is the current branch.
	// nil: no local checks.
	Preflight func(ctx context.Context, ref string, fromBranch bool) error

	// Sleep and Now are optional test seams for retries, polling and elapsed times.
	Sleep func(context.Context, time.Duration) error
	Now   func() time.Time

	secretsOnce sync.Once
	secretList  *secretSet
}

// isTerminalReader reports a reader that is a terminal (only an *os.File can be).
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isTerminal(f)
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

func (f *Env) getenv(k string) string {
	if f.Getenv == nil {
		return os.Getenv(k)
	}
	return f.Getenv(k)
}

func (f *Env) stdout() io.Writer { return orDiscard(f.Stdout) }
func (f *Env) stderr() io.Writer { return orDiscard(f.Stderr) }

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// secrets is what the commands must never print: every token variable's
// value, credentials in GH_HOST, the secret parts of GITHUB_API_URL, and
// whatever the commands add (a token from gh, credentials in -R or a remote).
func (f *Env) secrets() *secretSet {
	f.secretsOnce.Do(func() {
		f.secretList = &secretSet{}
		for _, name := range tokenEnvs {
			f.secretList.add(f.getenv(name))
		}
		f.secretList.add(userinfoSecrets(f.getenv(EnvGHHost))...)
		if api := f.getenv(EnvAPIURL); strings.TrimSpace(api) != "" {
			f.secretList.add(apiURLSecrets(api)...)
		}
	})
	return f.secretList
}

// streams returns stdout and stderr with the secrets masked.
func (f *Env) streams() (io.Writer, io.Writer) {
	s := f.secrets()
	return newRedactWriter(f.stdout(), s), newRedactWriter(f.stderr(), s)
}

// RepoFlags are where the repository is, as every GitHub command takes it (-R, --hostname:
// the cobra wiring declares them in cmd/debugflow/internal/ghcmd).
type RepoFlags struct {
	Repo     string // -R [HOST/]OWNER/REPO
	Hostname string // --hostname
	// Recorded is a repository written down by an earlier run (the bisection state), used
	// without -R. A file decides it, not the user, so like the origin remote its host must be
	// github.com, the configured host or GITHUB_API_URL's: it cannot send a token elsewhere.
	Recorded, RecordedIn string
}

// resolve finds the repository and the GitHub host whose API the client
// talks to (GITHUB_API_URL, read by NewClient, overrides that API's URL).
//
// As in gh: -R [HOST/]OWNER/REPO names it (OWNER/REPO is on --hostname, else
// GH_HOST, else github.com). Otherwise the origin remote does, but only when
// it is on github.com, on the configured host (--hostname or GH_HOST), or on
// the host of GITHUB_API_URL: a remote anywhere else (GitLab, a mirror, an
// unknown server) is refused, because the token would go to it.
func (f *Env) resolve(ctx context.Context, flags RepoFlags) (Repo, string, error) {
	configured, source := strings.TrimSpace(flags.Hostname), "--hostname"
	if configured == "" {
		configured, source = strings.TrimSpace(f.getenv(EnvGHHost)), EnvGHHost
	}
	f.secrets().add(userinfoSecrets(configured)...)
	if configured != "" && !hostPattern.MatchString(configured) {
		return Repo{}, "", usageError(fmt.Errorf("%s=%q is not a host name: give the bare name, like ghe.example.com "+
			"(credentials never go in a host name: put the token in %s)", source, redactHost(configured), EnvGHEnterpriseToken))
	}
	if flags.Repo != "" {
		f.secrets().add(userinfoSecrets(flags.Repo)...)
		r, err := ParseRepo(flags.Repo)
		if err != nil {
			return Repo{}, "", usageError(err)
		}
		named := r.Host != "" || configured != ""
		switch {
		case r.Host == "":
			r.Host = NormalizeHost(configured)
		case flags.Hostname != "" && !sameHost(r.Host, flags.Hostname):
			return Repo{}, "", usageError(fmt.Errorf("-R names host %s but --hostname says %s: give one of them", r.Host, flags.Hostname))
		default:
			r.Host = NormalizeHost(r.Host)
		}
		if err := f.checkAPIServes(r.Host, named); err != nil {
			return Repo{}, "", err
		}
		return r, r.Host, nil
	}
	if flags.Recorded != "" {
		return f.resolveRecorded(flags, configured, source)
	}
	if f.GitRemote == nil {
		return Repo{}, "", usageError(errors.New("no repository: pass -R OWNER/REPO"))
	}
	remote, err := f.GitRemote(ctx)
	if err != nil {
		return Repo{}, "", usageError(fmt.Errorf("no -R and no usable origin remote (%v): pass -R OWNER/REPO", err))
	}
	f.secrets().add(userinfoSecrets(remote)...)
	r, err := RepoFromRemote(remote)
	if err != nil {
		return Repo{}, "", usageError(fmt.Errorf("%w: pass -R OWNER/REPO", err))
	}
	r.Host = NormalizeHost(r.Host)
	switch {
	case configured != "":
		if !sameHost(r.Host, configured) {
			return Repo{}, "", usageError(fmt.Errorf("the origin remote is on %s, not on %s=%s: name the repository with "+
				"-R %s/OWNER/REPO (or -R OWNER/REPO for github.com, with %s unset)", r.Host, source, configured, configured, source))
		}
		r.Host = NormalizeHost(configured) // keeps a port the ssh remote does not show
	case r.Host == defaultHost:
	case f.apiHostIs(r.Host):
	default:
		return Repo{}, "", usageError(fmt.Errorf("the origin remote (%s) is on %s, which is not github.com; debugflow sends "+
			"a token only to the GitHub host it belongs to, so it does not guess. If %s is a GitHub Enterprise Server, "+
			"set %s=%s (its token goes in %s); if the repository is on github.com (origin is a mirror), name it with -R OWNER/REPO",
			redactRemote(remote), r.Host, r.Host, EnvGHHost, r.Host, EnvGHEnterpriseToken))
	}
	if err := f.checkAPIServes(r.Host, configured != ""); err != nil {
		return Repo{}, "", err
	}
	return r, r.Host, nil
}

// resolveRecorded resolves flags.Recorded: OWNER/REPO is on the configured host (else
// github.com); HOST/OWNER/REPO only when HOST is github.com, the configured host or
// GITHUB_API_URL's.
func (f *Env) resolveRecorded(flags RepoFlags, configured, source string) (Repo, string, error) {
	f.secrets().add(userinfoSecrets(flags.Recorded)...)
	r, err := ParseRepo(flags.Recorded)
	if err != nil {
		return Repo{}, "", usageError(fmt.Errorf("%s: %w: pass -R OWNER/REPO", flags.RecordedIn, err))
	}
	switch {
	case r.Host == "":
		r.Host = NormalizeHost(configured)
		return r, r.Host, nil
	case configured != "" && sameHost(r.Host, configured):
		r.Host = NormalizeHost(configured)
		return r, r.Host, nil
	case configured == "" && NormalizeHost(r.Host) == defaultHost, f.apiHostIs(r.Host):
		r.Host = NormalizeHost(r.Host)
		return r, r.Host, nil
	}
	where := "github.com"
	if configured != "" {
		where = source + "=" + configured
	}
	return Repo{}, "", usageError(fmt.Errorf("%s names the repository %s, on %s, which is not %s; debugflow sends a token only "+
		"to a host you name: if that is the repository, pass -R %s (and %s=%s for a GitHub Enterprise Server)",
		flags.RecordedIn, redactRemote(flags.Recorded), NormalizeHost(r.Host), where, redactRemote(flags.Recorded), EnvGHHost, NormalizeHost(r.Host)))
}

// checkAPIServes refuses a host the user named (-R HOST/OWNER/REPO, a run URL, --hostname,
// GH_HOST) when GITHUB_API_URL is set for another host: every request goes to that URL, so
// the named host would be silently ignored and its token sent elsewhere (an Actions runner of
// a GitHub Enterprise Server sets GITHUB_API_URL; -R github.com/OWNER/REPO there must not send
// a github.com token to it). An API URL on this machine (a local proxy) serves any host.
func (f *Env) checkAPIServes(host string, named bool) error {
	api := strings.TrimSpace(f.getenv(EnvAPIURL))
	if !named || api == "" {
		return nil
	}
	u, err := parseAPIURL(api)
	if err != nil || sameHost(apiWebHost(u), host) || isLoopbackIP(u.Hostname()) {
		return nil // a bad GITHUB_API_URL is reported when the client is made
	}
	return usageError(fmt.Errorf("the repository is on %s, but %s=%s sends every request to %s: unset %s "+
		"to reach %s, or name a repository on %s", host, EnvAPIURL, redactAPIURL(api), apiWebHost(u), EnvAPIURL, host, apiWebHost(u)))
}

// apiHostIs reports whether GITHUB_API_URL is set and serves host.
func (f *Env) apiHostIs(host string) bool {
	api := strings.TrimSpace(f.getenv(EnvAPIURL))
	if api == "" {
		return false
	}
	u, err := parseAPIURL(api)
	return err == nil && sameHost(apiWebHost(u), host)
}

// sameHost compares two host names as gh does, ignoring ports.
func sameHost(a, b string) bool {
	strip := func(h string) string {
		h = NormalizeHost(h)
		if i := strings.LastIndex(h, ":"); i >= 0 && !strings.Contains(h[i:], "]") {
			h = h[:i]
		}
		return h
	}
	return strip(a) == strip(b)
}

// userinfoSecrets extracts what may be credentials from a URL, an scp-like
// remote or a host given with user info: the user name and the password.
func userinfoSecrets(s string) []string {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil {
			if u.User == nil {
				return nil
			}
			out := []string{u.User.Username()}
			if p, ok := u.User.Password(); ok {
				out = append(out, p)
			}
			return out
		}
		s = s[strings.Index(s, "://")+3:]
	}
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return nil
	}
	info := s[:at]
	if slash := strings.LastIndex(info, "/"); slash >= 0 {
		info = info[slash+1:]
	}
	user, pass, _ := strings.Cut(info, ":")
	if user == "git" && pass == "" {
		return nil // git@host:owner/repo names the ssh user, nothing secret
	}
	return []string{user, pass}
}

// client builds the API client for host; a missing token or a bad host or
// API URL is a usage error. The client's secrets join the factory's.
func (f *Env) client(ctx context.Context, host string, log io.Writer) (*Client, error) {
	c, err := NewClient(ClientOptions{
		Host:        host,
		HTTPClient:  f.HTTPClient,
		Getenv:      f.getenv,
		TokenFromGH: f.TokenFromGH,
		Context:     ctx,
		Sleep:       f.Sleep,
		Now:         f.Now,
		Log:         log,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, usageError(err)
	}
	f.secrets().add(c.Secrets()...)
	return c, nil
}

func (f *Env) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// runURLPath matches the path of a run page: /OWNER/REPO/actions/runs/ID[/...].
var runURLPath = lazyre.New(`^/([^/]+)/([^/]+)/actions/runs/([0-9]+)(?:/.*)?$`)

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
	return 0, nil, fmt.Errorf("%q is not a run id or a run URL (https://github.com/OWNER/REPO/actions/runs/ID)", redactRemote(s))
}

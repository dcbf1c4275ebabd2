package ghrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Environment variables, with gh's meaning (cli/go-gh pkg/auth).
const (
	EnvGHToken               = "GH_TOKEN"                // token for github.com (and *.ghe.com)
	EnvGitHubToken           = "GITHUB_TOKEN"            // same, second choice
	EnvGHEnterpriseToken     = "GH_ENTERPRISE_TOKEN"     // token for a GitHub Enterprise Server host
	EnvGitHubEnterpriseToken = "GITHUB_ENTERPRISE_TOKEN" // same, second choice
	EnvGHHost                = "GH_HOST"                 // the GitHub host to use
	EnvAPIURL                = "GITHUB_API_URL"          // a full API base URL (set by Actions runners)
	EnvGHPath                = "GH_PATH"                 // the gh binary to ask for a token (default: gh on PATH)
)

// tokenEnvs are every variable that may hold a token: their values are never printed.
var tokenEnvs = []string{EnvGHToken, EnvGitHubToken, EnvGHEnterpriseToken, EnvGitHubEnterpriseToken}

const (
	defaultHost   = "github.com"
	localhostHost = "github.localhost" // gh's development host
	tenancySuffix = ".ghe.com"         // GitHub Enterprise Cloud with data residency
)

// ErrNoToken is returned (wrapped in a message naming the host and the
// variables to set) when no token is found for the host.
var ErrNoToken = errors.New("no GitHub token")

// NormalizeHost lowercases a host and folds the names gh treats as one:
// any *.github.com is github.com, the default https port is dropped, and so
// is one trailing dot (the DNS root: github.com. is github.com, and must not
// be taken for an Enterprise Server and sent GH_ENTERPRISE_TOKEN).
func NormalizeHost(host string) string {
	h := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), "/")
	h = strings.TrimSuffix(h, ":443")
	h = strings.TrimSuffix(h, ".")
	switch {
	case h == "" || h == defaultHost || strings.HasSuffix(h, "."+defaultHost):
		return defaultHost
	case strings.HasSuffix(h, "."+localhostHost):
		return localhostHost
	}
	return h
}

// IsEnterprise reports a GitHub Enterprise Server host: neither github.com, a
// *.ghe.com tenancy, nor github.localhost. Its token comes from
// GH_ENTERPRISE_TOKEN, never from GH_TOKEN (gh's rule).
func IsEnterprise(host string) bool {
	h := NormalizeHost(host)
	return h != defaultHost && h != localhostHost && !strings.HasSuffix(h, tenancySuffix)
}

// endpoint is where API requests go and which host their token belongs to.
type endpoint struct {
	base *url.URL // API base URL, with a trailing slash
	// host is the GitHub host the token is for: github.com, ghe.example.com,
	// octo.ghe.com; for an explicit GITHUB_API_URL, that URL's host.
	host string
	// explicit is true when GITHUB_API_URL set the URL: its token is GH_TOKEN
	// (or GITHUB_TOKEN), as in an Actions job, whatever the host.
	explicit bool
}

// resolveEndpoint picks the API URL: apiURL (GITHUB_API_URL) when set, else
// the API of host.
func resolveEndpoint(host, apiURL string) (endpoint, error) {
	if strings.TrimSpace(apiURL) != "" {
		base, err := parseAPIURL(apiURL)
		if err != nil {
			return endpoint{}, err
		}
		return endpoint{base: base, host: apiWebHost(base), explicit: true}, nil
	}
	s, err := APIBaseURL(host, "")
	if err != nil {
		return endpoint{}, err
	}
	base, _ := url.Parse(s)
	return endpoint{base: base, host: NormalizeHost(host)}, nil
}

// parseAPIURL checks an explicit API URL. Plain http is only for a server on
// this machine: a token must not cross a network in clear text.
func parseAPIURL(apiURL string) (*url.URL, error) {
	shown := redactAPIURL(apiURL)
	u, err := url.Parse(strings.TrimSpace(apiURL))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%s=%s is not an http(s) URL like https://ghe.example.com/api/v3", EnvAPIURL, shown)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%s=%s must not carry credentials: put the token in %s", EnvAPIURL, shown, EnvGHToken)
	}
	if u.Scheme == "http" && !isLoopbackIP(u.Hostname()) {
		return nil, fmt.Errorf("%s=%s uses plain http to a host that is not a literal loopback address (127.0.0.1, ::1), "+
			"which could send the token in clear text over a network or a proxy: use https", EnvAPIURL, shown)
	}
	u.RawQuery, u.Fragment, u.ForceQuery = "", "", false
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	u.RawPath = ""
	return u, nil
}

// isLoopbackIP reports a literal loopback address (127.0.0.0/8, ::1), the
// only host a token may reach over plain http. A name never qualifies, not
// even localhost or *.localhost: a resolver, /etc/hosts or a proxy decides
// where a name goes.
func isLoopbackIP(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// apiWebHost is the host `gh auth token --hostname` knows an API URL by:
// api.github.com is github.com, api.X.ghe.com is X.ghe.com, a GHES
// https://HOST/api/v3 is HOST.
func apiWebHost(u *url.URL) string {
	h := strings.ToLower(u.Host)
	switch {
	case h == "api.github.com":
		return defaultHost
	case strings.HasPrefix(h, "api.") && strings.HasSuffix(h, tenancySuffix):
		return strings.TrimPrefix(h, "api.")
	}
	return h
}

// APIBaseURL resolves the REST API base URL. apiURL (GITHUB_API_URL: a full
// base URL, http allowed for a server on this machine) wins; otherwise host
// selects github.com (https://api.github.com/), GHE.com data residency
// (https://api.SUB.ghe.com/) or GitHub Enterprise Server (https://HOST/api/v3/).
func APIBaseURL(host, apiURL string) (string, error) {
	if strings.TrimSpace(apiURL) != "" {
		u, err := parseAPIURL(apiURL)
		if err != nil {
			return "", err
		}
		return u.String(), nil
	}
	raw := strings.TrimSuffix(strings.TrimSpace(host), "/")
	if raw != "" && !hostPattern.MatchString(raw) {
		return "", fmt.Errorf("host %q is not a host name (give the bare name, like ghe.example.com)", redactHost(raw))
	}
	h := NormalizeHost(raw)
	switch {
	case h == defaultHost:
		return "https://api.github.com/", nil
	case h == localhostHost:
		// gh uses http here; a name is never trusted with plain http (isLoopbackIP).
		return "https://api.github.localhost/", nil
	case strings.HasSuffix(h, tenancySuffix):
		return "https://api." + h + "/", nil
	default:
		return "https://" + h + "/api/v3/", nil
	}
}

// TokenSource asks an outside helper for host's token; "" with a nil error
// means it has none. GHAuthToken is the real one.
type TokenSource func(ctx context.Context, host string) (string, error)

// chooseToken finds the token for ep, following gh: GH_TOKEN, then
// GITHUB_TOKEN for github.com, *.ghe.com and an explicit GITHUB_API_URL;
// GH_ENTERPRISE_TOKEN, then GITHUB_ENTERPRISE_TOKEN for an Enterprise Server
// host; then `gh auth token --hostname HOST` through fromGH (nil: skipped).
// It returns the token and where it came from. A token is never chosen for a
// host it does not belong to: GH_TOKEN never goes to an Enterprise host.
func chooseToken(ctx context.Context, ep endpoint, getenv func(string) string, fromGH TokenSource) (string, string, error) {
	enterprise := IsEnterprise(ep.host)
	var names []string
	if ep.explicit || !enterprise {
		names = append(names, EnvGHToken, EnvGitHubToken)
	}
	if enterprise {
		names = append(names, EnvGHEnterpriseToken, EnvGitHubEnterpriseToken)
	}
	for _, name := range names {
		if t := strings.TrimSpace(getenv(name)); t != "" {
			return t, name, nil
		}
	}
	var ghErr error
	if fromGH != nil {
		t, err := fromGH(ctx, ep.host)
		if err == nil && t != "" {
			return t, "gh auth token --hostname " + ep.host, nil
		}
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		ghErr = err
	}
	return "", "", noTokenError(ep, names, getenv, fromGH != nil, ghErr)
}

// noTokenError says which variables were looked at for this host, why a
// token that is set was not used, and what gh said.
func noTokenError(ep endpoint, names []string, getenv func(string) string, askedGH bool, ghErr error) error {
	var b strings.Builder
	where := ep.host
	if ep.explicit {
		where = "the API at " + EnvAPIURL + " (" + ep.host + ")"
	}
	fmt.Fprintf(&b, "no GitHub token for %s: set %s (or %s) to a token that can use Actions on the repository "+
		"(actions: write to dispatch, actions: read to watch and download)", where, names[0], names[1])
	if IsEnterprise(ep.host) && !ep.explicit &&
		(strings.TrimSpace(getenv(EnvGHToken)) != "" || strings.TrimSpace(getenv(EnvGitHubToken)) != "") {
		fmt.Fprintf(&b, "; %s and %s are only sent to github.com, never to an Enterprise Server host (gh's rule)", EnvGHToken, EnvGitHubToken)
	}
	switch {
	case !askedGH:
	case ghErr != nil:
		fmt.Fprintf(&b, "; `gh auth token --hostname %s` gave none either (%v): log in with `gh auth login --hostname %s`",
			ep.host, ghErr, ep.host)
	default:
		fmt.Fprintf(&b, "; or install gh and log in with `gh auth login --hostname %s`", ep.host)
	}
	return &redactedError{msg: b.String(), err: ErrNoToken}
}

// Bounds on asking gh for a token: it answers in well under a second.
const (
	ghTokenTimeout = 15 * time.Second
	ghTokenMax     = 4 << 10
)

// GHCLI reaches the gh CLI, the way gh extensions do: GH_PATH, else gh on PATH.
type GHCLI struct {
	Getenv   func(string) string                                                    // nil: os.Getenv
	LookPath func(string) (string, error)                                           // nil: exec.LookPath
	Run      func(ctx context.Context, path string, args ...string) ([]byte, error) // nil: run it, stdout only
}

// Token runs `gh auth token --hostname HOST`. No gh installed is ("", nil);
// gh without a token for the host (not logged in) is an error with what gh
// said on stderr.
func (g GHCLI) Token(ctx context.Context, host string) (string, error) {
	getenv, lookPath, run := g.Getenv, g.LookPath, g.Run
	if getenv == nil {
		getenv = os.Getenv
	}
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	if run == nil {
		run = runBounded
	}
	path := strings.TrimSpace(getenv(EnvGHPath))
	if path == "" {
		p, err := lookPath("gh")
		if err != nil {
			return "", nil // gh is not installed: nothing to ask
		}
		path = p
	}
	ctx, cancel := context.WithTimeout(ctx, ghTokenTimeout)
	defer cancel()
	out, err := run(ctx, path, "auth", "token", "--hostname", host)
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("%s: %w", path, ctx.Err())
		}
		return "", fmt.Errorf("%s: %w", path, err)
	}
	token := strings.TrimSpace(string(out))
	if token == "" {
		return "", fmt.Errorf("%s printed nothing", path)
	}
	for _, c := range token {
		if c <= ' ' || c > '~' {
			return "", fmt.Errorf("%s printed something that is not a token", path)
		}
	}
	return token, nil
}

// runBounded runs a program with no input and returns at most ghTokenMax
// bytes of its stdout; its stderr is kept for the error (it never holds the token).
func runBounded(ctx context.Context, path string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = nil
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = ghTokenMax, 1<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if msg := oneLine(stderr.String()); msg != "" {
			return nil, fmt.Errorf("%w: %s", err, msg)
		}
		return nil, err
	}
	if stdout.over {
		return nil, fmt.Errorf("printed more than %d bytes", ghTokenMax)
	}
	return stdout.Bytes(), nil
}

// limitedBuffer keeps the first max bytes written and drops the rest. (It
// does not embed bytes.Buffer, whose ReadFrom io.Copy would use instead.)
type limitedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room < len(p) {
		b.over = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *limitedBuffer) Bytes() []byte  { return b.buf.Bytes() }
func (b *limitedBuffer) String() string { return b.buf.String() }

// authTransport adds the token to requests for the API's own scheme and host,
// and to nothing else: not to the artifact blob store a download is
// redirected to, not to any other host a redirect or a server answer names.
// It removes an Authorization header bound for anywhere else.
type authTransport struct {
	base   http.RoundTripper
	scheme string
	host   string // as in URL.Host, lowercase, default port dropped
	token  string
}

func newAuthTransport(base http.RoundTripper, api *url.URL, token string) *authTransport {
	return &authTransport{base: base, scheme: api.Scheme, host: originHost(api), token: token}
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Del("Authorization")
	if t.token != "" && req.URL.Scheme == t.scheme && originHost(req.URL) == t.host &&
		(req.URL.Scheme == "https" || isLoopbackIP(req.URL.Hostname())) {
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	return t.base.RoundTrip(r)
}

// originHost is u's host in lowercase without the scheme's default port.
func originHost(u *url.URL) string {
	h := strings.ToLower(u.Host)
	switch {
	case u.Scheme == "https":
		h = strings.TrimSuffix(h, ":443")
	case u.Scheme == "http":
		h = strings.TrimSuffix(h, ":80")
	}
	return h
}

package ghrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// Environment variables the client reads, with gh's meaning.
const (
	EnvGHToken     = "GH_TOKEN"
	EnvGitHubToken = "GITHUB_TOKEN"
	EnvGHHost      = "GH_HOST"
	EnvAPIURL      = "GITHUB_API_URL"
)

// ErrNoToken is returned when neither GH_TOKEN nor GITHUB_TOKEN is set.
var ErrNoToken = errors.New("no GitHub token: set GH_TOKEN (or GITHUB_TOKEN) to a token that can use Actions " +
	"on the repository (actions: write to dispatch, actions: read to watch and download), " +
	"for example: export GH_TOKEN=$(gh auth token)")

// ClientOptions configure NewClient. Every field is optional except a token,
// which may come from the environment.
type ClientOptions struct {
	// Token is the GitHub token; empty means GH_TOKEN, then GITHUB_TOKEN.
	Token string
	// Host selects GitHub Enterprise Server (API https://HOST/api/v3/); empty
	// means GH_HOST, then github.com.
	Host string
	// APIURL is a full API base URL; empty means GITHUB_API_URL. It overrides Host.
	APIURL string
	// HTTPClient is the client whose Transport carries every request (nil: default).
	HTTPClient *http.Client
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
	// Sleep waits between retries and polls (nil: a timer that honours ctx).
	Sleep func(context.Context, time.Duration) error
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Log receives one line per retry so a long wait is never silent (nil: discard).
	Log io.Writer
	// MaxAttempts bounds the attempts per request, retries included (0: 5).
	MaxAttempts int
	// FindRunAttempts bounds how many times dispatch lists runs while looking
	// for the run it created by correlation (0: 10, about a minute with backoff).
	FindRunAttempts int
}

// Client is a thin layer over *github.Client for the Actions endpoints
// debugflow uses. Create it with NewClient.
type Client struct {
	gh        *github.Client
	blob      *http.Client // unauthenticated: artifact blob URLs are pre-signed
	token     string
	sleep     func(context.Context, time.Duration) error
	now       func() time.Time
	log       io.Writer
	findTries int
}

// NewClient builds a client from options and the environment. It fails with
// ErrNoToken when no token is available and with a clear message when the host
// or API URL is malformed. The token is never part of any error.
func NewClient(opts ClientOptions) (*Client, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	token := strings.TrimSpace(opts.Token)
	if token == "" {
		token = strings.TrimSpace(getenv(EnvGHToken))
	}
	if token == "" {
		token = strings.TrimSpace(getenv(EnvGitHubToken))
	}
	if token == "" {
		return nil, ErrNoToken
	}
	apiURL := opts.APIURL
	if apiURL == "" {
		apiURL = getenv(EnvAPIURL)
	}
	host := opts.Host
	if host == "" {
		host = getenv(EnvGHHost)
	}
	base, err := APIBaseURL(host, apiURL)
	if err != nil {
		return nil, err
	}
	baseURL, _ := url.Parse(base) // APIBaseURL returns a parsed-and-checked URL

	c := &Client{
		token:     token,
		sleep:     opts.Sleep,
		now:       opts.Now,
		log:       opts.Log,
		findTries: opts.FindRunAttempts,
	}
	if c.sleep == nil {
		c.sleep = sleepContext
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = io.Discard
	}
	c.log = &redactWriter{w: c.log, secrets: []string{token}}
	if c.findTries <= 0 {
		c.findTries = 10
	}

	var hc http.Client
	if opts.HTTPClient != nil {
		hc = *opts.HTTPClient
	}
	baseRT := hc.Transport
	if baseRT == nil {
		baseRT = http.DefaultTransport
	}
	rt := &retryTransport{
		base:        baseRT,
		sleep:       c.sleep,
		now:         c.now,
		log:         c.log,
		maxAttempts: opts.MaxAttempts,
	}
	hc.Transport = rt
	c.blob = &http.Client{Transport: rt, CheckRedirect: hc.CheckRedirect}
	gh := github.NewClient(&hc).WithAuthToken(token)
	gh.BaseURL = baseURL
	gh.UserAgent = "debugflow"
	c.gh = gh
	return c, nil
}

// BaseURL returns the API base URL the client talks to.
func (c *Client) BaseURL() string { return c.gh.BaseURL.String() }

// APIBaseURL resolves the REST API base URL. apiURL (GITHUB_API_URL: a full
// base URL, http allowed for a local server) wins; otherwise host selects
// github.com (https://api.github.com/), GHE.com data residency
// (https://api.SUB.ghe.com/) or GitHub Enterprise Server (https://HOST/api/v3/).
func APIBaseURL(host, apiURL string) (string, error) {
	if apiURL = strings.TrimSpace(apiURL); apiURL != "" {
		u, err := url.Parse(apiURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return "", fmt.Errorf("%s=%q is not an http(s) URL like https://ghe.example.com/api/v3", EnvAPIURL, redactURLString(apiURL))
		}
		if u.User != nil {
			return "", fmt.Errorf("%s must not carry credentials: put the token in %s", EnvAPIURL, EnvGHToken)
		}
		u.RawQuery, u.Fragment = "", ""
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		return u.String(), nil
	}
	host = strings.ToLower(strings.TrimSpace(host))
	host = strings.TrimSuffix(host, "/")
	switch {
	case host == "" || host == defaultHost || host == "api.github.com":
		return "https://api.github.com/", nil
	case !hostPattern.MatchString(host):
		return "", fmt.Errorf("host %q is not a host name (give the bare name, like ghe.example.com)", host)
	case strings.HasSuffix(host, ".ghe.com"):
		return "https://api." + host + "/", nil
	default:
		return "https://" + host + "/api/v3/", nil
	}
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// redactWriter replaces secrets in every Write. Callers write whole lines, so a
// secret is never split across two writes.
type redactWriter struct {
	w       io.Writer
	secrets []string
}

func (r *redactWriter) Write(p []byte) (int, error) {
	s := redact(string(p), r.secrets)
	if _, err := io.WriteString(r.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redact replaces every non-empty secret in s by "***".
func redact(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "***")
		}
	}
	return s
}

// redactedError carries a message with the secrets removed while keeping the
// original chain for errors.Is and errors.As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactErr returns err with every secret removed from its message.
func redactErr(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := redact(msg, secrets)
	if clean == msg {
		return err
	}
	var exit *ExitError
	if errors.As(err, &exit) && exit == err {
		return &ExitError{Code: exit.Code, Err: &redactedError{msg: clean, err: exit.Err}}
	}
	return &redactedError{msg: clean, err: err}
}

// scrub removes the client's token from an error; every exported method ends with it.
func (c *Client) scrub(err error) error { return redactErr(err, c.token) }

package ghrun

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// ClientOptions configure NewClient. Every field is optional except a token,
// which may come from the environment.
type ClientOptions struct {
	// Token is the GitHub token for the API this client talks to; empty
	// means the environment, by gh's rules (see chooseToken): GH_TOKEN or
	// GITHUB_TOKEN for github.com, GH_ENTERPRISE_TOKEN or
	// GITHUB_ENTERPRISE_TOKEN for an Enterprise Server host, then TokenFromGH.
	Token string
	// Host selects GitHub Enterprise Server (API https://HOST/api/v3/); empty
	// means GH_HOST, then github.com.
	Host string
	// APIURL is a full API base URL; empty means GITHUB_API_URL. It overrides Host.
	APIURL string
	// TokenFromGH is asked for a token when the environment has none
	// (`gh auth token --hostname HOST`); nil: not asked.
	TokenFromGH TokenSource
	// Context bounds asking TokenFromGH (nil: context.Background()).
	Context context.Context
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
	// APIIdleTimeout ends an API request attempt that receives nothing for
	// this long, waiting for the answer included (0: DefaultAPIIdleTimeout).
	APIIdleTimeout time.Duration
}

// Client is a thin layer over *github.Client for the Actions endpoints
// debugflow uses. Create it with NewClient.
type Client struct {
	gh        *github.Client
	blob      *http.Client // unauthenticated: artifact blob URLs are pre-signed
	token     string
	host      string     // the GitHub host the token belongs to
	secrets   *secretSet // the token and any secret part of the API URL
	sleep     func(context.Context, time.Duration) error
	now       func() time.Time
	log       io.Writer
	findTries int
}

// NewClient builds a client from options and the environment. It fails with
// an error wrapping ErrNoToken when no token belongs to the API's host, and
// with a clear message when the host or API URL is malformed. The token is
// sent only to the API's own scheme and host (see authTransport) and is never
// part of any error or log line.
func NewClient(opts ClientOptions) (*Client, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	apiURL := opts.APIURL
	if apiURL == "" {
		apiURL = getenv(EnvAPIURL)
	}
	host := opts.Host
	if host == "" {
		host = getenv(EnvGHHost)
	}
	ep, err := resolveEndpoint(host, apiURL)
	if err != nil {
		return nil, err
	}
	token := strings.TrimSpace(opts.Token)
	if token == "" {
		if token, _, err = chooseToken(ctx, ep, getenv, opts.TokenFromGH); err != nil {
			return nil, err
		}
	}

	c := &Client{
		token:     token,
		host:      ep.host,
		secrets:   &secretSet{},
		sleep:     opts.Sleep,
		now:       opts.Now,
		log:       opts.Log,
		findTries: opts.FindRunAttempts,
	}
	c.secrets.add(token)
	if ep.explicit {
		c.secrets.add(apiURLSecrets(apiURL)...)
	}
	if c.sleep == nil {
		c.sleep = sleepContext
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.log = newRedactWriter(c.log, c.secrets)
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
	if ep.base.Scheme == "http" {
		baseRT = withoutProxy(baseRT)
	}
	retry := func(base http.RoundTripper) *retryTransport {
		return &retryTransport{base: base, sleep: c.sleep, now: c.now, log: c.log, maxAttempts: opts.MaxAttempts}
	}
	// The blob client gets the same guard with no token: it strips any
	// Authorization header, whoever set it. Its idle timeout is the download's.
	c.blob = &http.Client{Transport: newAuthTransport(retry(baseRT), ep.base, ""), CheckRedirect: hc.CheckRedirect}
	// API answers are small: each attempt gets an idle timeout and a size bound,
	// so a server that stalls or streams forever cannot hang or exhaust us, and a
	// successful answer that is not JSON is said as such (jsonGuard).
	idle := opts.APIIdleTimeout
	if idle <= 0 {
		idle = DefaultAPIIdleTimeout
	}
	hc.Transport = newAuthTransport(retry(&jsonGuard{base: &apiGuard{base: baseRT, idle: idle, maxBody: maxAPIBody}, secrets: c.secrets}), ep.base, token)
	gh := github.NewClient(&hc)
	gh.BaseURL = ep.base
	gh.UserAgent = "debugflow"
	c.gh = gh
	return c, nil
}

// withoutProxy is rt without a proxy, for an API on plain http: that is only
// ever a literal loopback address (parseAPIURL), and a proxy would see the
// token in clear text. A transport that is not an *http.Transport (a test's
// double) is kept as it is.
func withoutProxy(rt http.RoundTripper) http.RoundTripper {
	t, ok := rt.(*http.Transport)
	if !ok || t.Proxy == nil {
		return rt
	}
	t = t.Clone()
	t.Proxy = nil
	return t
}

// Host returns the GitHub host the client's token belongs to.
func (c *Client) Host() string { return c.host }

// Secrets returns the values the client's output must never show: its token
// and any secret part of an explicit API URL.
func (c *Client) Secrets() []string { return c.secrets.all() }

// BaseURL returns the API base URL the client talks to.
func (c *Client) BaseURL() string { return c.gh.BaseURL.String() }

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

// scrub removes the client's token from an error; every exported method ends with it.
func (c *Client) scrub(err error) error { return redactErr(err, c.secrets.all()...) }

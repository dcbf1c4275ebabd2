package tmate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/textsafe"
)

// maxKeyPages bounds the pagination of the keys listing (100 keys a page).
const maxKeyPages = 10

// loginPattern is a GitHub login: alphanumerics and single hyphens, at most 39
// characters. Bots ("name[bot]") have no SSH keys and are rejected with a
// clear message instead of a 404.
var loginPattern = lazyre.New(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)

// maxKeysPage bounds one page of the keys listing: 100 keys of a few KiB at most.
const maxKeysPage = 4 << 20

// keysClient reads the one GitHub API endpoint the gate needs, a user's public SSH keys,
// with net/http: go-github, the debugflow side's client, is not linked into debugflow-step
// for one GET (it doubled the step binary's start-up work).
type keysClient struct {
	http *http.Client
	// BaseURL is the API root, ending in a slash.
	BaseURL *url.URL
}

// newGitHubClient builds the keys client for apiURL (GITHUB_API_URL; for
// GitHub Enterprise Server it is https://HOST/api/v3). The keys it fetches decide
// who may log in to the runner, so the URL must be https (plain http only for a
// server on this machine) and carry no credentials. The token, when not empty,
// is sent as a bearer token to that scheme and host only (not to a host a
// redirect names) and never printed.
func newGitHubClient(httpClient *http.Client, apiURL, token string) (*keysClient, error) {
	base, err := url.Parse(strings.TrimSpace(apiURL))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("%w: GITHUB_API_URL %q is not an absolute URL", ErrInvalidInput, redactURL(apiURL))
	}
	switch {
	case base.User != nil:
		return nil, fmt.Errorf("%w: GITHUB_API_URL %q must not carry credentials (the token goes in GITHUB_TOKEN)", ErrInvalidInput, redactURL(apiURL))
	case base.Scheme != "https" && base.Scheme != "http":
		return nil, fmt.Errorf("%w: GITHUB_API_URL %q is not an http(s) URL", ErrInvalidInput, apiURL)
	case base.Scheme == "http" && !isLoopback(base.Hostname()):
		return nil, fmt.Errorf("%w: GITHUB_API_URL %q uses plain http to another machine: the SSH keys that open the session (and the token) would cross the network unprotected; use https", ErrInvalidInput, apiURL)
	}
	base.RawQuery, base.Fragment = "", ""
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	hc := *httpClient
	hc.Transport = &apiTransport{base: hc.Transport, scheme: base.Scheme, host: originHost(base), token: token}
	return &keysClient{http: &hc, BaseURL: base}, nil
}

// apiError is an answer of the API other than 200.
type apiError struct {
	URL     string
	Status  int
	Message string
	// RateLimitReset is when an exhausted rate limit resets (zero when it is not that).
	RateLimitReset time.Time
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("GET %s: %d %s", e.URL, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// listKeys reads one page (from 1) of the keys of actor, 100 a page, and the number of the
// next page (0 on the last).
func (c *keysClient) listKeys(ctx context.Context, actor string, page int) (keys []string, next int, err error) {
	u := c.BaseURL.JoinPath("users", actor, "keys")
	u.RawQuery = url.Values{"per_page": {"100"}, "page": {strconv.Itoa(page)}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "debugflow-step")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body) // bounded by apiTransport
	if err != nil {
		return nil, 0, fmt.Errorf("reading GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		e := &apiError{URL: u.String(), Status: resp.StatusCode}
		var answer struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body, &answer) == nil {
			e.Message = textsafe.Visible(answer.Message)
		}
		// GitHub answers an exhausted rate limit with 403 or 429 and no requests left.
		if (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests) &&
			resp.Header.Get("X-RateLimit-Remaining") == "0" {
			if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
				e.RateLimitReset = time.Unix(reset, 0)
			}
		}
		return nil, 0, e
	}
	var got []struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		return nil, 0, fmt.Errorf("GET %s: the answer is not a list of keys: %w", u, err)
	}
	for _, k := range got {
		keys = append(keys, k.Key)
	}
	return keys, nextPage(resp.Header.Get("Link")), nil
}

// nextPage is the page number of the rel="next" link of a Link header, 0 when there is none.
func nextPage(link string) int {
	for _, part := range strings.Split(link, ",") {
		target, params, ok := strings.Cut(part, ";")
		if !ok || !strings.Contains(params, `rel="next"`) {
			continue
		}
		u, err := url.Parse(strings.Trim(strings.TrimSpace(target), "<>"))
		if err != nil {
			return 0
		}
		n, err := strconv.Atoi(u.Query().Get("page"))
		if err != nil || n < 1 {
			return 0
		}
		return n
	}
	return 0
}

// apiTransport adds the token to requests for the API's own scheme and host and
// to nothing else (go-github's WithAuthToken would add it to a redirect to any
// host), and bounds every answer's body.
type apiTransport struct {
	base         http.RoundTripper
	scheme, host string
	token        string
}

func (t *apiTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Del("Authorization")
	if t.token != "" && req.URL.Scheme == t.scheme && originHost(req.URL) == t.host {
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: maxKeysPage}
	return resp, nil
}

// boundedBody fails a body that goes past its limit instead of reading it all.
type boundedBody struct {
	io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the limit: only the end of the body is acceptable now.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 || err == nil {
			return 0, fmt.Errorf("the GitHub API answer is larger than %d MiB", maxKeysPage>>20)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// originHost is u's host in lowercase without the scheme's default port.
func originHost(u *url.URL) string {
	h := strings.ToLower(u.Host)
	switch u.Scheme {
	case "https":
		h = strings.TrimSuffix(h, ":443")
	case "http":
		h = strings.TrimSuffix(h, ":80")
	}
	return h
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redactURL hides the user info of a URL that failed to parse or carries one.
func redactURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		rest = "***" + rest[at:]
	}
	return scheme + "://" + rest
}

// fetchActorKeys returns the public SSH keys of a GitHub user, one
// authorized_keys line each. A user without keys is an error that says how to
// add one.
func fetchActorKeys(ctx context.Context, c *keysClient, actor string) ([]string, error) {
	if actor == "" {
		return nil, fmt.Errorf("%w: GITHUB_ACTOR is not set, so access cannot be limited to the actor's SSH keys (set limit_to_actor: false in the spec to allow anyone with the link)", ErrInvalidInput)
	}
	if strings.HasSuffix(actor, "[bot]") {
		return nil, fmt.Errorf("%w: the run was started by the bot %q, which has no SSH keys: dispatch the workflow yourself, or set limit_to_actor: false in the spec to allow anyone with the link", ErrInvalidInput, actor)
	}
	if !loginPattern.MatchString(actor) {
		return nil, fmt.Errorf("%w: GITHUB_ACTOR %q is not a GitHub login", ErrInvalidInput, actor)
	}
	var keys []string
	for page, fetched := 1, 0; page > 0 && fetched < maxKeyPages; fetched++ {
		got, next, err := c.listKeys(ctx, actor, page)
		if err != nil {
			return nil, describeKeysError(c, actor, err)
		}
		for _, k := range got {
			line := strings.TrimSpace(k)
			if line == "" || strings.ContainsAny(line, "\r\n") {
				continue
			}
			keys = append(keys, line)
		}
		if next <= page {
			break
		}
		page = next
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("GitHub user %q has no public SSH keys: add one at %s (or set limit_to_actor: false in the spec to allow anyone with the link)", actor, keysSettingsURL(c))
	}
	return keys, nil
}

// keysSettingsURL is where the user adds an SSH key: github.com, or the
// Enterprise host behind an /api/v3 API URL.
func keysSettingsURL(c *keysClient) string {
	u := *c.BaseURL
	if u.Host == "api.github.com" {
		return "https://github.com/settings/keys"
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v3") + "/settings/keys"
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// describeKeysError turns the API errors a user can act on into sentences.
func describeKeysError(c *keysClient, actor string, err error) error {
	var ae *apiError
	switch {
	case errors.As(err, &ae) && !ae.RateLimitReset.IsZero():
		return fmt.Errorf("fetching the public SSH keys of GitHub user %q: the GitHub API rate limit is exhausted until %s (pass GITHUB_TOKEN to the step): %w", actor, ae.RateLimitReset.UTC().Format("15:04:05 UTC"), err)
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		return fmt.Errorf("GitHub user %q not found at %s (check GITHUB_ACTOR and GITHUB_API_URL): %w", actor, c.BaseURL, err)
	case errors.As(err, &ae) && ae.Status == http.StatusUnauthorized:
		return fmt.Errorf("fetching the public SSH keys of GitHub user %q: the GitHub API at %s rejected the token in GITHUB_TOKEN (401 Unauthorized); pass a valid token or none (the keys are public): %w", actor, c.BaseURL, err)
	}
	return fmt.Errorf("fetching the public SSH keys of GitHub user %q from %s: %w", actor, c.BaseURL, err)
}

// writeAuthorizedKeys writes keys in authorized_keys format, readable by the
// owner only, each with a comment naming where it came from.
func writeAuthorizedKeys(path, actor string, keys []string) error {
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s github:%s\n", k, actor)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("writing authorized keys: %w", err)
	}
	return nil
}

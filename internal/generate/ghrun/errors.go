package ghrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/debugflow/debugflow/internal/exitcode"
)

// Exit codes of the commands. The lead's main maps an *ExitError to os.Exit.
const (
	ExitOK          = 0
	ExitFailure     = 1   // the run failed, or a GitHub/network/IO error
	ExitUsage       = 2   // bad flags or inputs, missing token or repo
	ExitInterrupted = 130 // Ctrl-C: stopped cleanly, the run continues on GitHub
	// ExitAPIUnavailable: GitHub's API stayed unavailable (5xx, network errors) or rate
	// limited while watching or downloading a run, or it called the run completed without
	// a conclusion, so nothing is known of how it ended; the
	// run goes on and the message gives the commands that pick it up again. 75 is sysexits.h's
	// EX_TEMPFAIL ("try again later"), clear of 0/1/2, pytest's 3-5, setup failed 6, 124 and 130.
	ExitAPIUnavailable = 75
)

// ExitError is an error that carries the process exit code (shared by every debugflow command).
type ExitError = exitcode.Error

// ExitCode returns the exit code for err: 0 for nil, the code of an *ExitError,
// ExitInterrupted for a cancelled context, ExitFailure otherwise.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *ExitError
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	return ExitFailure
}

func usageError(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// APIError is a GitHub error explained: what was attempted, what GitHub said,
// and what to do next.
type APIError struct {
	Op      string // what was attempted, e.g. `dispatch debug.yml on o/r@main`
	Status  int    // HTTP status, 0 when unknown
	Message string // GitHub's message
	Hint    string // what to do next
	Err     error  // the go-github error
}

// Error says what was attempted, what GitHub answered, and on the next line what to do.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(": ")
	if e.Status != 0 {
		fmt.Fprintf(&b, "GitHub answered %d %s", e.Status, http.StatusText(e.Status))
		if e.Message != "" && !strings.EqualFold(e.Message, http.StatusText(e.Status)) {
			fmt.Fprintf(&b, " (%s)", oneLine(e.Message))
		}
	} else if e.Message != "" {
		b.WriteString(oneLine(e.Message))
	}
	if e.Hint != "" {
		b.WriteString("\n")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap returns the go-github error.
func (e *APIError) Unwrap() error { return e.Err }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// access says which permission an operation needs, for 401/403 hints.
type access int

const (
	readAccess access = iota
	writeAccess
)

func (a access) hint(repo Repo) string {
	if a == writeAccess {
		return fmt.Sprintf("the token needs permission to run workflows on %s: a fine-grained token needs "+
			"\"Actions: Read and write\" (actions: write); a classic token needs the repo scope (and workflow)", repo)
	}
	return fmt.Sprintf("the token needs read access to Actions on %s: a fine-grained token needs "+
		"\"Actions: Read\" (actions: read); a classic token needs the repo scope for a private repository", repo)
}

// explain turns a go-github error into an *APIError. Errors it does not know
// (network, context) are wrapped with op and returned.
func explain(err error, op string, need access, repo Repo, notFound string, now time.Time) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	var rl *github.RateLimitError
	if errors.As(err, &rl) {
		reset := "later"
		if at, _, ok := retryAt(headerOf(rl.Response), now); ok {
			reset = when(at, now)
		} else if !rl.Rate.Reset.IsZero() {
			reset = when(rl.Rate.Reset.Time, now)
		}
		return &APIError{Op: op, Status: statusOf(rl.Response), Message: rl.Message, Err: err,
			Hint: fmt.Sprintf("the API rate limit of this token is used up; it resets %s. Wait, or use another token.", reset)}
	}
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &abuse) {
		hint := "GitHub's secondary rate limit is still active after retries: wait a few minutes before trying again."
		if at, header, ok := retryAt(headerOf(abuse.Response), now); ok {
			hint = fmt.Sprintf("GitHub's secondary rate limit is still active after retries: try again %s.", whenFrom(at, now, header))
		} else if abuse.RetryAfter != nil {
			hint = fmt.Sprintf("GitHub's secondary rate limit is still active after retries: try again %s.", when(now.Add(*abuse.RetryAfter), now))
		}
		return &APIError{Op: op, Status: statusOf(abuse.Response), Message: abuse.Message, Err: err, Hint: hint}
	}
	var bad *BadAnswerError
	if errors.As(err, &bad) {
		// Without the url.Error around it: "Get "https://...": " says nothing more.
		return fmt.Errorf("%s: %w", op, bad)
	}
	var shape *json.UnmarshalTypeError
	if errors.As(err, &shape) {
		return fmt.Errorf("%s: GitHub answered with JSON of an unexpected shape (%s where %s was expected at %q): "+
			"a proxy or a wrong %s may be answering instead of GitHub's API: %w", op, shape.Value, shape.Type, shape.Field, EnvAPIURL, err)
	}
	var er *github.ErrorResponse
	if !errors.As(err, &er) {
		return fmt.Errorf("%s: %w", op, err)
	}
	status := statusOf(er.Response)
	ae := &APIError{Op: op, Status: status, Message: er.Message, Err: err}
	switch {
	case status == http.StatusUnauthorized:
		ae.Hint = rejectedTokenHint
	case status == http.StatusTooManyRequests || (status == http.StatusForbidden && rateLimitedAnswer(er)):
		ae.Hint = rateLimitHint(er.Response.Header, status, now)
	case status == http.StatusForbidden:
		ae.Hint = need.hint(repo)
		if sso := er.Response.Header.Get("X-GitHub-SSO"); strings.HasPrefix(sso, "required") {
			ae.Hint = "the organization enforces SAML single sign-on: authorize the token for it (" +
				strings.TrimPrefix(strings.TrimPrefix(sso, "required;"), " url=") + "), then try again."
		}
	case status == http.StatusNotFound:
		ae.Hint = notFound
	case status >= 500:
		ae.Hint = "GitHub had a server error and retries did not help: try again in a few minutes (see https://www.githubstatus.com)."
	}
	return ae
}

// rejectedTokenHint answers a 401: which variable holds the token for which host.
const rejectedTokenHint = "the token was rejected: check that it is valid and unexpired for this host " +
	"(GH_TOKEN or GITHUB_TOKEN for github.com, GH_ENTERPRISE_TOKEN or GITHUB_ENTERPRISE_TOKEN for an Enterprise Server; " +
	"without them, the token of `gh auth token --hostname HOST`)."

// rateLimitedAnswer tells a 403 that is a rate limit go-github did not recognise (a secondary
// limit whose documentation_url it does not know) from a permission error (rateLimited403).
func rateLimitedAnswer(er *github.ErrorResponse) bool {
	return rateLimited403(er.Response.Header, er.Message, er.DocumentationURL)
}

// rateLimitHint says when to try again after a rate limit, from Retry-After (seconds or an
// HTTP date) or X-RateLimit-Reset (epoch seconds), as GitHub documents them.
func rateLimitHint(h http.Header, status int, now time.Time) string {
	if at, header, ok := retryAt(h, now); ok {
		return fmt.Sprintf("GitHub is rate limiting this token (HTTP %d) and the retries did not outlast it: try again %s, "+
			"or use another token.", status, whenFrom(at, now, header))
	}
	return fmt.Sprintf("GitHub is rate limiting this token (HTTP %d) and gave no time to retry at: wait a few minutes, "+
		"or use another token.", status)
}

// retryAt is when GitHub says to try again: Retry-After, else X-RateLimit-Reset; the header's name.
func retryAt(h http.Header, now time.Time) (time.Time, string, bool) {
	if h == nil {
		return time.Time{}, "", false
	}
	if d, ok := retryAfter(h, now); ok {
		return now.Add(d), "Retry-After", true
	}
	if at, ok := rateLimitReset(h); ok {
		return at, "X-RateLimit-Reset", true
	}
	return time.Time{}, "", false
}

// when renders a time to retry at as "at 15:04:05 (in 2m30s)", in the local zone.
func when(at, now time.Time) string {
	return fmt.Sprintf("at %s (in %s)", at.Local().Format("15:04:05"), max(at.Sub(now), 0).Round(time.Second))
}

// whenFrom is when, naming the header that said it: "at 15:04:05 (in 2m30s, from its Retry-After header)".
func whenFrom(at, now time.Time, header string) string {
	return fmt.Sprintf("at %s (in %s, from its %s header)", at.Local().Format("15:04:05"), max(at.Sub(now), 0).Round(time.Second), header)
}

func headerOf(resp *http.Response) http.Header {
	if resp == nil {
		return nil
	}
	return resp.Header
}

func statusOf(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

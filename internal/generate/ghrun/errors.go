package ghrun

import (
	"context"
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
		if !rl.Rate.Reset.IsZero() {
			reset = fmt.Sprintf("at %s (in %s)", rl.Rate.Reset.Local().Format("15:04:05"), rl.Rate.Reset.Sub(now).Round(time.Second))
		}
		return &APIError{Op: op, Status: statusOf(rl.Response), Message: rl.Message, Err: err,
			Hint: fmt.Sprintf("the API rate limit of this token is used up; it resets %s. Wait, or use another token.", reset)}
	}
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &abuse) {
		return &APIError{Op: op, Status: statusOf(abuse.Response), Message: abuse.Message, Err: err,
			Hint: "GitHub's secondary rate limit is still active after retries: wait a few minutes before trying again."}
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

func statusOf(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

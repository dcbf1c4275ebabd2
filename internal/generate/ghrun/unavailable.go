package ghrun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/debugflow/debugflow/internal/textsafe"
)

// DefaultOutageWindow is how long watching a run rides out GitHub's API being unavailable
// (5xx answers, network errors) before it gives up with ExitAPIUnavailable. Each poll's
// requests are first retried by the transport (about 15 s); then the watch waits with
// backoff (outageBackoff) and polls again, saying so each time.
const DefaultOutageWindow = 5 * time.Minute

// Watch's waits while the API is unavailable: 5 s, 10 s, 20 s, 40 s, then every minute.
const (
	outageFirstWait = 5 * time.Second
	outageMaxWait   = time.Minute
)

// outageRecoverPolls is how many polls in a row must get through to end an outage: until
// then a failure continues it (its window, its backoff) instead of starting a new one.
const outageRecoverPolls = 3

func outageBackoff(try int) time.Duration { return doubling(outageFirstWait, outageMaxWait, try) }

// transient says whether a request's error (go-github's, before explain) is GitHub's API being
// unavailable for a while, worth waiting out: a 5xx answer or a network error. It returns the
// cause as the notice shows it ("HTTP 502", "connection refused").
func transient(err error) (string, bool) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || badAnswer(err) {
		return "", false
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) {
		if s := statusOf(er.Response); s >= 500 {
			return fmt.Sprintf("HTTP %d", s), true
		}
		return "", false
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return textsafe.Visible(shortNetErr(ue)), true
	}
	return "", false
}

// APIUnavailableError is GitHub's API unavailable for longer than the watch waits.
type APIUnavailableError struct {
	Op    string        // what was attempted
	Cause string        // the last failure, "HTTP 502" or a network error
	For   time.Duration // how long it lasted
	Tries int           // the polls that failed
	Err   error         // the last error, explained
}

func (e *APIUnavailableError) Error() string {
	return fmt.Sprintf("%s: GitHub's API was unavailable for %s (%s, %d polls failed); gave up waiting, "+
		"the run itself goes on (GitHub's status: https://www.githubstatus.com)", e.Op, e.For.Round(time.Second), e.Cause, e.Tries)
}

// Unwrap returns the last error.
func (e *APIUnavailableError) Unwrap() error { return e.Err }

// apiUnavailable reports an error that is GitHub's API failing, not the run or the request:
// a watch that gave up on an outage, a 5xx or 429 answer, a rate limit, a network error.
func apiUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || badAnswer(err) {
		return false
	}
	var gone *APIUnavailableError
	var ae *APIError
	var rl *github.RateLimitError
	var abuse *github.AbuseRateLimitError
	var ue *url.Error
	switch {
	case errors.As(err, &gone), errors.As(err, &rl), errors.As(err, &abuse):
		return true
	case errors.As(err, &ae):
		var er *github.ErrorResponse
		return ae.Status >= 500 || ae.Status == http.StatusTooManyRequests ||
			(ae.Status == http.StatusForbidden && errors.As(err, &er) && er.Response != nil && rateLimitedAnswer(er))
	case errors.As(err, &ue):
		return true
	}
	return false
}

// unavailableExit gives an error that is GitHub's API failing the exit code
// ExitAPIUnavailable, with the resume advice after it; other errors are returned as they are.
func unavailableExit(err error, advice string) error {
	if !apiUnavailable(err) {
		return err
	}
	if advice != "" {
		err = fmt.Errorf("%w\n%s", err, advice)
	}
	return &ExitError{Code: ExitAPIUnavailable, Err: err}
}

// resume is what picks a run up again: watching it and downloading its evidence.
type resume struct {
	repo    Repo
	runID   int64
	watch   bool     // offer debugflow watch (the run may not have ended)
	dir     string   // -D for download; "" for its default folder
	selects []string // download's -n/-p flags, as given
}

// String renders the commands, one per line, each word quoted for a POSIX shell.
func (r resume) String() string {
	repo := "-R " + shellQuote(r.repo.String())
	var b strings.Builder
	if r.watch {
		fmt.Fprintf(&b, "pick it up again with:\n  debugflow watch %d %s\n", r.runID, repo)
	} else {
		b.WriteString("download it again with:\n")
	}
	fmt.Fprintf(&b, "  debugflow download %d %s", r.runID, repo)
	for _, s := range r.selects {
		b.WriteString(" " + s)
	}
	if dir := r.dir; dir != "" {
		if strings.HasPrefix(dir, "-") {
			dir = "./" + dir // not a flag
		}
		b.WriteString(" -D " + shellQuote(dir))
	}
	return b.String()
}

// withKept points the download at a fresh folder when dir keeps artifacts extracted in full
// (download refuses a target that is not empty).
func (r resume) withKept(kept []string) resume {
	if len(kept) > 0 {
		base := r.dir
		if base == "" {
			base = DefaultDownloadDir(r.runID)
		}
		r.dir = strings.TrimRight(base, `/`) + "-rest"
	}
	return r
}

// findAdvice says how to find the run of a dispatch GitHub accepted when dispatch could not.
func findAdvice(repo Repo, file, ref, dispatchID string) string {
	repoFlag := "-R " + shellQuote(repo.String())
	name := ""
	if dispatchID != "" {
		name = fmt.Sprintf(" (its name contains dispatch_id %s)", dispatchID)
	}
	return fmt.Sprintf("find its run%s with:\n  debugflow watch --latest -b %s %s\n  gh run list --workflow %s --branch %s %s",
		name, shellQuote(ref), repoFlag, shellQuote(file), shellQuote(ref), repoFlag)
}

// shellQuote is textsafe.ShellWord of s with its control characters escaped for the terminal
// (the word is then not exact, but nothing printed drives the terminal).
func shellQuote(s string) string { return textsafe.ShellWord(textsafe.Visible(s)) }

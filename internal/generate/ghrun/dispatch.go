package ghrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// How dispatch found the run it created.
const (
	FoundRunDetails  = "run-details" // the dispatch endpoint returned the run id
	FoundCorrelation = "correlation" // found by listing runs and matching the dispatch id
)

// RunRef identifies a workflow run.
type RunRef struct {
	ID      int64
	HTMLURL string
	// Found is FoundRunDetails or FoundCorrelation (empty for a run not dispatched by us).
	Found string
	// DispatchID is the dispatch_id input sent, empty when the workflow does not declare it.
	DispatchID string
}

// dispatchRequest is the body of POST .../actions/workflows/FILE/dispatches.
// go-github v60 predates return_run_details, hence our own type.
type dispatchRequest struct {
	Ref              string         `json:"ref"`
	Inputs           map[string]any `json:"inputs,omitempty"`
	ReturnRunDetails bool           `json:"return_run_details,omitempty"`
}

// dispatchRunDetails is the 200 answer to a dispatch with return_run_details.
type dispatchRunDetails struct {
	WorkflowRunID int64  `json:"workflow_run_id"`
	RunURL        string `json:"run_url"`
	HTMLURL       string `json:"html_url"`
}

// correlationMargin is how far before the dispatch we look for the new run,
// to absorb clock skew between GitHub's servers.
const correlationMargin = time.Minute

// Dispatch validates inputs against wf, dispatches wf.File on ref and returns
// the run it created. It asks GitHub for the run details first; when the
// server answers 204 or rejects return_run_details, it finds the run by
// listing the workflow's recent runs for the dispatch_id it sent (when the
// workflow declares that input) or for the one new run (when it does not).
// Validation problems come back as an *ExitError with ExitUsage before any
// request is made.
func (c *Client) Dispatch(ctx context.Context, repo Repo, wf Workflow, ref string, inputs map[string]string) (RunRef, error) {
	return c.DispatchNotify(ctx, repo, wf, ref, inputs, nil)
}

// DispatchAccepted is a dispatch GitHub accepted without saying which run it created: the
// run is still to be found.
type DispatchAccepted struct {
	Status     int    // the answer's HTTP status, 204
	DispatchID string // the dispatch_id input sent, "" when the workflow does not declare it
}

// notSentError is an error of DispatchNotify before its POST: nothing reached GitHub, so
// nothing can have started.
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }
func (e *notSentError) Unwrap() error { return e.err }

// DispatchNotify is Dispatch, telling accepted (when not nil) as soon as GitHub accepted the
// dispatch without the run's details, before it looks for the run: from then on the dispatch
// was sent, whatever happens next.
func (c *Client) DispatchNotify(ctx context.Context, repo Repo, wf Workflow, ref string, inputs map[string]string, accepted func(DispatchAccepted)) (RunRef, error) {
	ref = strings.TrimSpace(ref)
	switch {
	case wf.File == "":
		return RunRef{}, usageError(errors.New("dispatch: the workflow file name is empty"))
	case ref == "":
		return RunRef{}, usageError(errors.New("dispatch: no ref: pass --ref BRANCH"))
	}
	body, err := ValidateInputs(wf, inputs)
	if err != nil {
		return RunRef{}, usageError(err)
	}
	dispatchID := inputs[DispatchIDInput]
	if _, declared := wf.Input(DispatchIDInput); declared && dispatchID == "" {
		dispatchID, err = newDispatchID()
		if err != nil {
			return RunRef{}, err
		}
		body[DispatchIDInput] = dispatchID
	}
	op := fmt.Sprintf("dispatch %s on %s@%s", wf.File, repo, ref)

	// Without a dispatch id, remember the runs that exist now: the new run is
	// the one that was not there before.
	var known map[int64]bool
	if dispatchID == "" {
		if known, err = c.recentRunIDs(ctx, repo, wf.File, ref); err != nil {
			return RunRef{}, &notSentError{c.scrub(err)}
		}
	}
	if err := ctx.Err(); err != nil {
		return RunRef{}, &notSentError{err}
	}

	start := c.now()
	details, status, date, err := c.postDispatch(ctx, repo, wf.File, ref, body, true)
	if err != nil && rejectsRunDetails(err) {
		details, status, date, err = c.postDispatch(ctx, repo, wf.File, ref, body, false)
	}
	if err != nil {
		return RunRef{}, c.scrub(c.explainDispatch(ctx, err, op, repo, wf.File, ref))
	}
	if status == http.StatusOK && details.WorkflowRunID != 0 {
		run := RunRef{ID: details.WorkflowRunID, HTMLURL: details.HTMLURL, Found: FoundRunDetails, DispatchID: dispatchID}
		if run.HTMLURL == "" {
			// Older answers may carry only run_url: ask the run for its page.
			if r, _, err := c.gh.Actions.GetWorkflowRunByID(ctx, repo.Owner, repo.Name, run.ID); err == nil {
				run.HTMLURL = r.GetHTMLURL()
			}
		}
		return run, nil
	}
	if accepted != nil {
		accepted(DispatchAccepted{Status: status, DispatchID: dispatchID})
	}
	since := start
	if !date.IsZero() {
		since = date // the server's clock, the one run created_at uses
	}
	run, err := c.findRun(ctx, repo, wf.File, ref, dispatchID, since.Add(-correlationMargin), known)
	return run, c.scrub(err)
}

func (c *Client) postDispatch(ctx context.Context, repo Repo, file, ref string, inputs map[string]any, runDetails bool) (dispatchRunDetails, int, time.Time, error) {
	u := fmt.Sprintf("repos/%s/%s/actions/workflows/%s/dispatches", repo.Owner, repo.Name, url.PathEscape(file))
	req, err := c.gh.NewRequest(http.MethodPost, u, &dispatchRequest{Ref: ref, Inputs: inputs, ReturnRunDetails: runDetails})
	if err != nil {
		return dispatchRunDetails{}, 0, time.Time{}, err
	}
	var details dispatchRunDetails
	resp, err := c.gh.Do(ctx, req, &details)
	if err != nil {
		return dispatchRunDetails{}, 0, time.Time{}, err
	}
	date, _ := http.ParseTime(resp.Header.Get("Date"))
	return details, resp.StatusCode, date, nil
}

// rejectsRunDetails reports whether the server refused the return_run_details
// field (a server that predates it answers 400 or 422 naming the field).
func rejectsRunDetails(err error) bool {
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil {
		return false
	}
	if s := er.Response.StatusCode; s != http.StatusBadRequest && s != http.StatusUnprocessableEntity {
		return false
	}
	const field = "return_run_details"
	if strings.Contains(er.Message, field) {
		return true
	}
	for _, e := range er.Errors {
		if strings.Contains(e.Field, field) || strings.Contains(e.Message, field) {
			return true
		}
	}
	return false
}

// explainDispatch says, for each failure GitHub gives a dispatch, what happened and what to do.
func (c *Client) explainDispatch(ctx context.Context, err error, op string, repo Repo, file, ref string) error {
	notRegistered := fmt.Sprintf("GitHub does not know workflow %s in %s. It only dispatches workflows that are on the "+
		"default branch or have run at least once, so a workflow that exists only on a new debug branch is not found: "+
		"push the branch and open a pull request (its pull_request trigger runs the workflow once and registers it), "+
		"then dispatch again. Also check -R and that the token can see the repository.", file, repo)
	disabled := fmt.Sprintf("workflow %s is disabled in %s: enable it (gh workflow enable %s, or the \"Enable workflow\" "+
		"button in the Actions tab), then dispatch again.", file, repo, file)
	e := explain(err, op, writeAccess, repo, notRegistered, c.now())
	var ae *APIError
	if !errors.As(e, &ae) {
		var bad *BadAnswerError
		if errors.As(e, &bad) {
			return fmt.Errorf("%w\nthe dispatch may have been accepted: check the Actions tab (or debugflow watch --latest) before dispatching again", e)
		}
		return e
	}
	msg := strings.ToLower(ae.Message)
	switch {
	case ae.Status >= 500:
		ae.Hint = "GitHub failed while dispatching; the run may or may not have started, so dispatch is not retried " +
			"automatically: check the Actions tab (or debugflow watch --latest) before dispatching again."
	case ae.Status == http.StatusNotFound:
		if c.workflowDisabled(ctx, repo, file) {
			ae.Hint = disabled
		}
	case ae.Status == http.StatusUnprocessableEntity || ae.Status == http.StatusBadRequest:
		switch {
		case strings.Contains(msg, "unexpected input"):
			ae.Hint = fmt.Sprintf("the workflow file on %s does not declare every input sent: the pushed workflow and the "+
				"spec differ. Regenerate it (debugflow generate), commit and push it to %s, or drop the extra -f.", ref, ref)
		case strings.Contains(msg, "no ref found") || (strings.Contains(msg, "ref") && (strings.Contains(msg, "not found") || strings.Contains(msg, "does not exist"))):
			ae.Hint = fmt.Sprintf("branch or tag %q does not exist on GitHub: push it (git push -u origin %s) or pass --ref with a pushed branch.", ref, shellQuote(ref))
		case strings.Contains(msg, "disabled"):
			ae.Hint = disabled
		case strings.Contains(msg, "workflow_dispatch"):
			ae.Hint = fmt.Sprintf("the version of %s on %s has no workflow_dispatch trigger: regenerate it, commit and push, then dispatch again.", file, ref)
		case strings.Contains(msg, "required input"):
			ae.Hint = fmt.Sprintf("the workflow on %s requires an input the spec does not: pass it with -f, or regenerate and push the workflow.", ref)
		case c.workflowDisabled(ctx, repo, file):
			ae.Hint = disabled
		}
	}
	return ae
}

// workflowDisabled asks whether the workflow exists and is disabled; any error means "not known to be".
func (c *Client) workflowDisabled(ctx context.Context, repo Repo, file string) bool {
	w, _, err := c.gh.Actions.GetWorkflowByFileName(ctx, repo.Owner, repo.Name, file)
	return err == nil && strings.HasPrefix(w.GetState(), "disabled")
}

// recentRunIDs lists the newest workflow_dispatch runs of file on branch.
func (c *Client) recentRunIDs(ctx context.Context, repo Repo, file, branch string) (map[int64]bool, error) {
	runs, _, err := c.gh.Actions.ListWorkflowRunsByFileName(ctx, repo.Owner, repo.Name, file, &github.ListWorkflowRunsOptions{
		Event: "workflow_dispatch", Branch: branch, ListOptions: github.ListOptions{PerPage: 50},
	})
	if err != nil {
		return nil, explain(err, fmt.Sprintf("list runs of %s in %s", file, repo), readAccess, repo,
			fmt.Sprintf("workflow %s is not known in %s", file, repo), c.now())
	}
	known := make(map[int64]bool, len(runs.WorkflowRuns))
	for _, r := range runs.WorkflowRuns {
		known[r.GetID()] = true
	}
	return known, nil
}

// Correlation polling: wait, list, back off; about a minute in all by default.
const (
	findFirstWait = time.Second
	findMaxWait   = 8 * time.Second
)

// findRun polls the workflow's runs created since `since` for the run the
// dispatch created: the one whose name or display title (the run-name)
// contains dispatchID, or, without an id, the single run not in known.
func (c *Client) findRun(ctx context.Context, repo Repo, file, branch, dispatchID string, since time.Time, known map[int64]bool) (RunRef, error) {
	opts := &github.ListWorkflowRunsOptions{
		Event:       "workflow_dispatch",
		Branch:      branch,
		Created:     ">=" + since.UTC().Format(time.RFC3339),
		ListOptions: github.ListOptions{PerPage: 50},
	}
	op := fmt.Sprintf("find the run of %s on %s@%s", file, repo, branch)
	wait, waited := findFirstWait, time.Duration(0)
	var fresh []*github.WorkflowRun // new runs seen so far (without a dispatch_id)
	seen := map[int64]bool{}
	for attempt := 1; attempt <= c.findTries; attempt++ {
		if err := c.sleep(ctx, wait); err != nil {
			return RunRef{}, fmt.Errorf("%s: %w", op, err)
		}
		waited += wait
		wait = min(wait*2, findMaxWait)
		runs, _, err := c.gh.Actions.ListWorkflowRunsByFileName(ctx, repo.Owner, repo.Name, file, opts)
		if err != nil {
			return RunRef{}, explain(err, op, readAccess, repo, fmt.Sprintf("workflow %s is not known in %s", file, repo), c.now())
		}
		settled := len(fresh) > 0 // the poll before this one already saw a new run
		for _, r := range runs.WorkflowRuns {
			if dispatchID != "" {
				if strings.Contains(r.GetDisplayTitle(), dispatchID) || strings.Contains(r.GetName(), dispatchID) {
					return RunRef{ID: r.GetID(), HTMLURL: r.GetHTMLURL(), Found: FoundCorrelation, DispatchID: dispatchID}, nil
				}
				continue
			}
			if !known[r.GetID()] && !seen[r.GetID()] {
				seen[r.GetID()] = true
				fresh = append(fresh, r)
			}
		}
		switch {
		case len(fresh) > 1:
			return RunRef{}, ambiguousRuns(op, repo, fresh)
		case len(fresh) == 1 && (settled || attempt == c.findTries):
			return RunRef{ID: fresh[0].GetID(), HTMLURL: fresh[0].GetHTMLURL(), Found: FoundCorrelation}, nil
		}
		// Without a dispatch_id, one new run is ours only if no other appears in the next poll
		// too: another dispatch a moment apart would make it a guess.
	}
	what := "a new run"
	if dispatchID != "" {
		what = fmt.Sprintf("a run whose name contains dispatch_id %s (the workflow must echo it in run-name)", dispatchID)
	}
	return RunRef{}, fmt.Errorf("%s: the dispatch was accepted, but %s did not appear within %s: "+
		"it may still be queued; look in the repository's Actions tab or try debugflow watch --latest", op, what, waited)
}

// ambiguousRuns is the error of a dispatch whose run cannot be told from other new runs: the
// workflow has no dispatch_id input, and more than one run appeared. It does not guess: the
// run is not known yet (exit 75), and the dispatch was sent.
func ambiguousRuns(op string, repo Repo, runs []*github.WorkflowRun) error {
	var b strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&b, "\n  run %d %q created %s: %s", r.GetID(), runTitle(r), r.GetCreatedAt().UTC().Format(time.RFC3339), shown(r.GetHTMLURL()))
	}
	return &ExitError{Code: ExitAPIUnavailable, Err: fmt.Errorf("%s: the dispatch was accepted, but %d new runs appeared and debugflow "+
		"cannot tell which one it started (another dispatch close to this one?):%s\n"+
		"watch the right one with debugflow watch RUN_ID -R %s; add a %s input to the workflow, echoed in its run-name, "+
		"so that each dispatch finds its own run (workflows debugflow generates have it)",
		op, len(runs), b.String(), repo, DispatchIDInput)}
}

// LatestRun returns the newest run of the workflow file, on branch when branch is not empty.
func (c *Client) LatestRun(ctx context.Context, repo Repo, file, branch string) (RunRef, error) {
	runs, _, err := c.gh.Actions.ListWorkflowRunsByFileName(ctx, repo.Owner, repo.Name, file, &github.ListWorkflowRunsOptions{
		Branch: branch, ListOptions: github.ListOptions{PerPage: 1},
	})
	op := fmt.Sprintf("find the latest run of %s in %s", file, repo)
	if err != nil {
		return RunRef{}, c.scrub(explain(err, op, readAccess, repo,
			fmt.Sprintf("workflow %s is not known in %s: check -R, and push the workflow first", file, repo), c.now()))
	}
	if len(runs.WorkflowRuns) == 0 {
		where := ""
		if branch != "" {
			where = " on branch " + branch
		}
		return RunRef{}, fmt.Errorf("%s: workflow %s has no runs%s yet: dispatch it with debugflow dispatch", op, file, where)
	}
	r := runs.WorkflowRuns[0]
	return RunRef{ID: r.GetID(), HTMLURL: r.GetHTMLURL()}, nil
}

func newDispatchID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate dispatch id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

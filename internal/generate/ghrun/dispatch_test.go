package ghrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
	"github.com/google/go-cmp/cmp"
)

// dispatchBodies returns the JSON bodies of the dispatch requests the server saw.
func dispatchBodies(t *testing.T, srv *ghtest.Server) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range srv.Requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/dispatches") {
			var m map[string]any
			if err := json.Unmarshal(r.Body, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}

func TestDispatchFindsTheRun(t *testing.T) {
	tests := []struct {
		name       string
		mode       ghtest.DispatchMode
		lag        int // list calls before the run shows
		wantFound  string
		wantPosts  int
		wantFields []bool // return_run_details present, per POST
	}{
		{name: "run details in a 200 answer", mode: ghtest.DispatchRunDetails, wantFound: FoundRunDetails, wantPosts: 1, wantFields: []bool{true}},
		{name: "204 falls back to correlation", mode: ghtest.DispatchNoContent, wantFound: FoundCorrelation, wantPosts: 1, wantFields: []bool{true}},
		{name: "204 and the run shows late", mode: ghtest.DispatchNoContent, lag: 3, wantFound: FoundCorrelation, wantPosts: 1, wantFields: []bool{true}},
		{name: "400 on the field: dispatch again without it", mode: ghtest.DispatchRejectField400, wantFound: FoundCorrelation, wantPosts: 2, wantFields: []bool{true, false}},
		{name: "422 on the field: dispatch again without it", mode: ghtest.DispatchRejectField422, wantFound: FoundCorrelation, wantPosts: 2, wantFields: []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Mode = tt.mode
			srv.AddWorkflow(ghtest.Workflow{File: wfFile, Name: "Debug CUDA repro", Inputs: inputNames(testWorkflow()),
				RunName: "debug CUDA repro [{dispatch_id}]", VisibleAfterLists: tt.lag})
			// An older run of the same workflow must not be mistaken for ours.
			srv.AddRun(ghtestRun(wfFile, "debug/t4"))
			c, sl := newTestClient(t, srv)

			run, err := c.Dispatch(context.Background(), testRepo, testWorkflow(), "debug/t4",
				map[string]string{"reproduce_count": "200", "open_tmate": "True"})
			if err != nil {
				t.Fatal(err)
			}
			runs := srv.Runs()
			created := runs[len(runs)-1]
			if run.ID != created.ID || run.Found != tt.wantFound {
				t.Errorf("got run %d found by %q, want %d by %q", run.ID, run.Found, created.ID, tt.wantFound)
			}
			if want := "https://github.com/acme/kernels/actions/runs/" + itoa64(created.ID); run.HTMLURL != want {
				t.Errorf("HTMLURL = %q, want %q", run.HTMLURL, want)
			}
			if len(run.DispatchID) != 16 || !strings.Contains(created.DisplayTitle, run.DispatchID) {
				t.Errorf("dispatch id %q not in run-name %q", run.DispatchID, created.DisplayTitle)
			}
			posts := dispatchBodies(t, srv)
			if len(posts) != tt.wantPosts {
				t.Fatalf("%d dispatch requests, want %d", len(posts), tt.wantPosts)
			}
			for i, p := range posts {
				_, has := p["return_run_details"]
				if has != tt.wantFields[i] {
					t.Errorf("POST %d: return_run_details present = %v, want %v", i+1, has, tt.wantFields[i])
				}
				want := map[string]any{"reproduce_count": "200", "open_tmate": "true", DispatchIDInput: run.DispatchID}
				if diff := cmp.Diff(want, p["inputs"]); diff != "" {
					t.Errorf("POST %d inputs (-want +got), defaults must not be sent:\n%s", i+1, diff)
				}
				if p["ref"] != "debug/t4" {
					t.Errorf("ref = %v", p["ref"])
				}
			}
			if tt.wantFound == FoundCorrelation {
				if got := len(sl.Waits()); got != tt.lag+1 {
					t.Errorf("polled %d times, want %d", got, tt.lag+1)
				}
				for i, w := range sl.Waits() {
					if want := min(time.Second<<i, findMaxWait); w != want {
						t.Errorf("wait %d = %s, want %s (backoff)", i, w, want)
					}
				}
				assertListQuery(t, srv)
			}
		})
	}
}

// assertListQuery checks correlation asks for the right slice of runs.
func assertListQuery(t *testing.T, srv *ghtest.Server) {
	t.Helper()
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/runs") {
			for _, want := range []string{"event=workflow_dispatch", "branch=debug%2Ft4", "created=%3E%3D"} {
				if !strings.Contains(r.Query, want) {
					t.Errorf("list query %q lacks %q", r.Query, want)
				}
			}
			return
		}
	}
	t.Error("no run list request")
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func TestDispatchWithoutDispatchIDInput(t *testing.T) {
	wf := Workflow{File: "plain.yml", Inputs: []InputDef{{Name: "count", Type: InputNumber, Default: "5"}}}
	t.Run("the one new run", func(t *testing.T) {
		srv := newServer(t)
		srv.Mode = ghtest.DispatchNoContent
		srv.AddWorkflow(ghtest.Workflow{File: "plain.yml", Name: "Plain", Inputs: []string{"count"}})
		old := srv.AddRun(ghtest.Run{WorkflowFile: "plain.yml", Branch: "main", Frames: ghtest.DefaultFrames(fixedNow, "success")})
		c, _ := newTestClient(t, srv)
		run, err := c.Dispatch(context.Background(), testRepo, wf, "main", nil)
		if err != nil {
			t.Fatal(err)
		}
		if run.ID == old || run.Found != FoundCorrelation || run.DispatchID != "" {
			t.Fatalf("got %+v (old run %d)", run, old)
		}
		if in := dispatchBodies(t, srv)[0]["inputs"]; in != nil {
			t.Errorf("sent inputs %v; nothing given, nothing (not even dispatch_id) must be sent", in)
		}
	})
	// Someone else dispatches at about the same moment: a second run appears, hidden from the
	// list taken before the dispatch (1 list), or also from the first poll after it (2 lists:
	// before, the one new run of that poll was taken, maybe the other invocation's).
	for _, hidden := range []int{1, 2} {
		t.Run(fmt.Sprintf("two new runs are ambiguous, the other hidden from %d lists", hidden), func(t *testing.T) {
			srv := newServer(t)
			srv.Mode = ghtest.DispatchNoContent
			srv.AddWorkflow(ghtest.Workflow{File: "plain.yml", Name: "Plain", Inputs: []string{"count"}})
			c, _ := newTestClient(t, srv)
			other := srv.AddRun(ghtest.Run{WorkflowFile: "plain.yml", Branch: "main", VisibleAfterLists: hidden})
			run, err := c.Dispatch(context.Background(), testRepo, wf, "main", nil)
			if err == nil {
				t.Fatalf("took run %d (the other invocation's is %d): a guess", run.ID, other)
			}
			if !strings.Contains(err.Error(), "2 new runs") || !strings.Contains(err.Error(), "cannot tell") ||
				!strings.Contains(err.Error(), itoa64(other)) || !strings.Contains(err.Error(), "add a dispatch_id input") {
				t.Errorf("err = %v", err)
			}
			if ExitCode(err) != ExitAPIUnavailable {
				t.Errorf("exit %d, want %d (the run is not known yet)", ExitCode(err), ExitAPIUnavailable)
			}
		})
	}
}

// TestDispatchStoppedBeforeThePOST: a Ctrl-C while the runs that exist are listed, before the
// dispatch is sent, is known not to have dispatched anything: the error says so (not "may have
// been sent"), and no run starts.
func TestDispatchStoppedBeforeThePOST(t *testing.T) {
	srv := newServer(t)
	srv.Mode = ghtest.DispatchNoContent
	srv.AddWorkflow(ghtest.Workflow{File: "plain.yml", Name: "Plain", Inputs: []string{"count"}})
	c, _ := newTestClient(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wf := Workflow{File: "plain.yml", Inputs: []InputDef{{Name: "count", Type: InputNumber, Default: "5"}}}
	_, err := c.DispatchNotify(ctx, testRepo, wf, "main", nil, func(DispatchAccepted) { t.Error("accepted") })
	var notSent *notSentError
	if !errors.As(err, &notSent) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a not-sent cancel", err)
	}
	if n := len(srv.Runs()); n != 0 {
		t.Errorf("%d runs started", n)
	}
	if got := interrupted(ctx, err, "nothing was dispatched"); ExitCode(got) != ExitInterrupted || !strings.Contains(got.Error(), "nothing was dispatched") {
		t.Errorf("as the command says it: %v", got)
	}
}

func TestDispatchRunNeverAppears(t *testing.T) {
	srv := newServer(t)
	srv.Mode = ghtest.DispatchNoContent
	srv.AddWorkflow(ghtest.Workflow{File: wfFile, Name: "Debug", Inputs: inputNames(testWorkflow()), VisibleAfterLists: 1000})
	c, sl := newTestClient(t, srv)
	c.findTries = 4
	_, err := c.Dispatch(context.Background(), testRepo, testWorkflow(), "main", nil)
	if err == nil || !strings.Contains(err.Error(), "the dispatch was accepted") || !strings.Contains(err.Error(), "did not appear within 15s") {
		t.Fatalf("err = %v", err)
	}
	if got := len(sl.Waits()); got != 4 {
		t.Errorf("polled %d times, want the bound of 4", got)
	}
}

func TestDispatchValidatesBeforeAnyRequest(t *testing.T) {
	srv := newServer(t)
	c, _ := newTestClient(t, srv)
	_, err := c.Dispatch(context.Background(), testRepo, testWorkflow(), "main", map[string]string{"nope": "1", "reproduce_count": "many"})
	if ExitCode(err) != ExitUsage {
		t.Fatalf("exit code %d, want %d: %v", ExitCode(err), ExitUsage, err)
	}
	for _, want := range []string{`unknown input "nope"`, `"reproduce_count" must be a number`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests were made before validation failed", n)
	}
	if _, err := c.Dispatch(context.Background(), testRepo, testWorkflow(), " ", nil); ExitCode(err) != ExitUsage {
		t.Errorf("empty ref: %v", err)
	}
}

func TestDispatchErrors(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(*ghtest.Server)
		wf     Workflow
		ref    string
		status int
		hint   []string
	}{
		{
			name:   "404: workflow only on a new branch",
			setup:  func(s *ghtest.Server) { s.AddWorkflow(ghtest.Workflow{File: wfFile, Unregistered: true}) },
			status: 404,
			hint:   []string{"only dispatches workflows that are on the default branch or have run at least once", "open a pull request"},
		},
		{
			name: "422: an input the pushed workflow does not declare",
			setup: func(s *ghtest.Server) {
				s.AddWorkflow(ghtest.Workflow{File: wfFile, Inputs: []string{"quadrants_ref", "dispatch_id"}})
			},
			status: 422,
			hint:   []string{"Unexpected inputs provided", "the pushed workflow and the spec differ", "debugflow generate"},
		},
		{
			name:   "422: the ref is not on GitHub",
			ref:    "debug/not-pushed",
			status: 422,
			hint:   []string{"No ref found for: debug/not-pushed", "git push -u origin debug/not-pushed"},
		},
		{
			// git allows $, (, ), ; and backquotes in a branch name: the command to paste
			// quotes it, or pasting it would run what the name holds.
			name:   "422: a ref with shell syntax is quoted in the command to paste",
			ref:    "debug/x$(touch pwned);`id`",
			status: 422,
			hint:   []string{"git push -u origin 'debug/x$(touch pwned);`id`'"},
		},
		{
			name:   "422: disabled workflow",
			setup:  func(s *ghtest.Server) { s.SetWorkflowState(wfFile, "disabled_manually") },
			status: 422,
			hint:   []string{"is disabled", "gh workflow enable " + wfFile},
		},
		{
			name: "401: bad token",
			setup: func(s *ghtest.Server) {
				s.Fail(ghtest.Fault{Path: "/dispatches", Status: 401, Body: `{"message":"Bad credentials"}`})
			},
			status: 401,
			hint:   []string{"the token was rejected", "GH_TOKEN"},
		},
		{
			name: "403: token without actions: write",
			setup: func(s *ghtest.Server) {
				s.Fail(ghtest.Fault{Path: "/dispatches", Status: 403, Body: `{"message":"Resource not accessible by personal access token"}`})
			},
			status: 403,
			hint:   []string{"actions: write", "Actions: Read and write"},
		},
		{
			name: "403: SAML SSO",
			setup: func(s *ghtest.Server) {
				s.Fail(ghtest.Fault{Path: "/dispatches", Status: 403, Header: map[string]string{"X-GitHub-SSO": "required; url=https://github.com/orgs/acme/sso?authorization_request=X"},
					Body: `{"message":"Resource protected by organization SAML enforcement."}`})
			},
			status: 403,
			hint:   []string{"single sign-on", "https://github.com/orgs/acme/sso"},
		},
		{
			name: "502 on dispatch: not retried, says to look first",
			setup: func(s *ghtest.Server) {
				s.Fail(ghtest.Fault{Path: "/dispatches", Status: 502, Body: `{"message":"Server Error"}`})
			},
			status: 502,
			hint:   []string{"may or may not have started", "before dispatching again"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			if tt.setup != nil {
				tt.setup(srv)
			}
			ref := tt.ref
			if ref == "" {
				ref = "debug/t4"
			}
			c, _ := newTestClient(t, srv)
			_, err := c.Dispatch(context.Background(), testRepo, testWorkflow(), ref, map[string]string{"reproduce_count": "3"})
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("want *APIError, got %T %v", err, err)
			}
			if ae.Status != tt.status {
				t.Errorf("status %d, want %d", ae.Status, tt.status)
			}
			for _, h := range tt.hint {
				if !strings.Contains(err.Error(), h) {
					t.Errorf("error lacks %q:\n%v", h, err)
				}
			}
			if len(srv.Runs()) != 0 {
				t.Errorf("a run was created")
			}
			if n := len(dispatchBodies(t, srv)); n != 1 {
				t.Errorf("%d dispatch requests, want exactly 1 (never retried)", n)
			}
			if ExitCode(err) != ExitFailure {
				t.Errorf("exit code %d", ExitCode(err))
			}
		})
	}
}

func TestDispatchRateLimitIsRetried(t *testing.T) {
	srv := newServer(t)
	srv.Fail(ghtest.Fault{Path: "/dispatches", Status: 429, Header: map[string]string{"Retry-After": "2"}, Body: `{"message":"slow down"}`})
	c, sl := newTestClient(t, srv)
	run, err := c.Dispatch(context.Background(), testRepo, testWorkflow(), "debug/t4", nil)
	if err != nil || run.Found != FoundRunDetails {
		t.Fatalf("run %+v, err %v", run, err)
	}
	if diff := cmp.Diff([]time.Duration{2 * time.Second}, sl.Waits()); diff != "" {
		t.Errorf("waits:\n%s", diff)
	}
	if len(srv.Runs()) != 1 {
		t.Errorf("%d runs, want 1", len(srv.Runs()))
	}
}

func TestLatestRun(t *testing.T) {
	srv := newServer(t)
	c, _ := newTestClient(t, srv)
	if _, err := c.LatestRun(context.Background(), testRepo, wfFile, ""); err == nil || !strings.Contains(err.Error(), "has no runs") {
		t.Fatalf("err = %v", err)
	}
	srv.AddRun(ghtestRun(wfFile, "main"))
	newer := srv.AddRun(ghtestRun(wfFile, "debug/t4"))
	onMain := srv.AddRun(ghtestRun(wfFile, "main"))
	got, err := c.LatestRun(context.Background(), testRepo, wfFile, "")
	if err != nil || got.ID != onMain {
		t.Fatalf("latest = %+v, %v; want %d", got, err, onMain)
	}
	got, err = c.LatestRun(context.Background(), testRepo, wfFile, "debug/t4")
	if err != nil || got.ID != newer {
		t.Fatalf("latest on debug/t4 = %+v, %v; want %d", got, err, newer)
	}
}

func TestRateLimitsExhausted(t *testing.T) {
	t.Run("primary limit resetting in an hour is reported, not waited for", func(t *testing.T) {
		srv := newServer(t)
		reset := strconv.FormatInt(fixedNow.Add(time.Hour).Unix(), 10)
		srv.Fail(ghtest.Fault{Path: "/actions/runs/", Status: 403, Times: 10, Body: `{"message":"API rate limit exceeded for user ID 1."}`,
			Header: map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset, "X-RateLimit-Limit": "5000"}})
		c, sl := newTestClient(t, srv)
		_, err := c.Watch(context.Background(), testRepo, 1, WatchOptions{})
		if err == nil || !strings.Contains(err.Error(), "rate limit of this token is used up; it resets at") || !strings.Contains(err.Error(), "(in 1h0m0s)") {
			t.Fatalf("err = %v", err)
		}
		if len(sl.Waits()) != 0 {
			t.Errorf("waited %v for a reset an hour away", sl.Waits())
		}
	})
	t.Run("secondary limit that outlasts the retries", func(t *testing.T) {
		srv := newServer(t)
		srv.Fail(ghtest.Fault{Path: "/actions/runs/", Status: 403, Times: 10, Header: map[string]string{"Retry-After": "1"},
			Body: `{"message":"You have exceeded a secondary rate limit.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`})
		c, sl := newTestClient(t, srv)
		_, err := c.Watch(context.Background(), testRepo, 1, WatchOptions{})
		if err == nil || !strings.Contains(err.Error(), "secondary rate limit is still active") {
			t.Fatalf("err = %v", err)
		}
		if got := len(sl.Waits()); got != defaultMaxAttempts-1 {
			t.Errorf("%d waits, want %d (bounded)", got, defaultMaxAttempts-1)
		}
	})
}

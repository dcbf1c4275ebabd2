// Package ghtest is an in-process GitHub REST API for the Actions endpoints
// debugflow uses: workflow dispatch (with and without run details), workflow
// runs and their jobs, artifacts with the 302 redirect to a separate blob
// server. Paths, methods, status codes and JSON bodies follow GitHub's REST
// documentation. Runs advance through scripted frames (queued, in_progress,
// completed) as they are polled, and faults (5xx, rate limits, any status) can
// be injected in front of any endpoint.
package ghtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DispatchMode selects how the dispatch endpoint treats return_run_details.
type DispatchMode int

const (
	// DispatchRunDetails answers 200 with the run id when asked (today's GitHub).
	DispatchRunDetails DispatchMode = iota
	// DispatchNoContent ignores the field and answers 204 (older GitHub).
	DispatchNoContent
	// DispatchRejectField400 refuses the field with 400 (a server that validates keys).
	DispatchRejectField400
	// DispatchRejectField422 refuses the field with 422.
	DispatchRejectField422
)

// Workflow is a workflow file known to the server.
type Workflow struct {
	ID   int64
	File string // e.g. debug_cuda_repro.yml
	Name string
	// State is "active" (default), "disabled_manually" or "disabled_inactivity".
	State string
	// Unregistered models a workflow that exists only on a new branch: GitHub answers 404.
	Unregistered bool
	// Inputs are the declared input names; others are refused with 422. Required ones must be sent.
	Inputs   []string
	Required []string
	// RunName is the run-name template; "{dispatch_id}" is replaced by that input.
	RunName string
	// Frames script each dispatched run; nil means DefaultFrames(time.Now(), "success").
	Frames []Frame
	// Artifacts are uploaded by each dispatched run.
	Artifacts []ArtifactFile
	// ArtifactsFor, when set, makes the artifacts of each dispatched run from the run itself
	// (its inputs), after Artifacts: a matrix whose legs depend on an input.
	ArtifactsFor func(Run) []ArtifactFile
	// VisibleAfterLists hides a dispatched run from run lists for this many list calls.
	VisibleAfterLists int
	// Content is the file the contents API serves at every existing branch; nil: a
	// workflow_dispatch workflow declaring Inputs.
	Content []byte
}

// ArtifactFile is an artifact's name and zip content.
type ArtifactFile struct {
	Name    string
	Zip     []byte
	Expired bool
}

// Frame is a run's state at one poll.
type Frame struct {
	Status     string // queued, in_progress, completed
	Conclusion string // with completed: success, failure, cancelled, ...
	Jobs       []Job
}

// Job is a job of a run.
type Job struct {
	ID          int64
	Name        string
	Status      string
	Conclusion  string
	RunnerName  string
	Labels      []string
	StartedAt   time.Time
	CompletedAt time.Time
	Steps       []Step
}

// Step is a step of a job.
type Step struct {
	Number      int64
	Name        string
	Status      string
	Conclusion  string
	StartedAt   time.Time
	CompletedAt time.Time
}

// Run is a workflow run.
type Run struct {
	ID           int64
	WorkflowFile string
	Branch       string
	Event        string
	Name         string // the workflow's name
	DisplayTitle string // the evaluated run-name
	Inputs       map[string]any
	CreatedAt    time.Time
	Frames       []Frame
	// VisibleAfterLists hides the run from run lists for this many list calls.
	VisibleAfterLists int

	polls, lists int
}

// Fault answers matching requests with a fixed response instead of the endpoint.
type Fault struct {
	Method string // empty: any
	Path   string // substring of the URL path; empty: any
	Status int
	Header map[string]string // a Content-Type here replaces the JSON one a Body gets
	Body   string
	Times  int // requests answered; 0 means 1
}

// Request is a request the server received.
type Request struct {
	Method  string
	Path    string
	Query   string
	Body    []byte
	HasAuth bool // an Authorization header was present
	Blob    bool // served by the blob server
}

// Server is the fake GitHub. Create it with New.
type Server struct {
	API      *httptest.Server
	BlobSrv  *httptest.Server
	Token    string
	Owner    string
	Repo     string
	HTMLBase string
	Mode     DispatchMode
	Now      func() time.Time
	// BlobBase is the blob store's base URL in artifact redirects (default:
	// BlobSrv.URL); a test that routes host names sets a foreign-looking one.
	BlobBase string

	mu        sync.Mutex
	workflows map[string]*Workflow
	branches  map[string]bool
	runs      map[int64]*Run
	artifacts map[int64]*artifact
	faults    []*Fault
	requests  []Request
	nextID    int64
}

type artifact struct {
	ID      int64
	RunID   int64
	Name    string
	Zip     []byte
	Expired bool
	Created time.Time
}

const blobSignature = "sv=2024&sig=SIGNED"

// Cleaner is what New needs from a test: *testing.T, *testing.B and *testing.F are Cleaners.
type Cleaner interface{ Cleanup(func()) }

// New starts a server for owner/repo that accepts token, with branch main.
// It is closed when the test ends.
func New(t Cleaner, owner, repo, token string) *Server {
	s := &Server{
		Token:     token,
		Owner:     owner,
		Repo:      repo,
		HTMLBase:  "https://github.com",
		Now:       time.Now,
		workflows: map[string]*Workflow{},
		branches:  map[string]bool{"main": true},
		runs:      map[int64]*Run{},
		artifacts: map[int64]*artifact{},
		nextID:    1000,
	}
	s.API = httptest.NewServer(http.HandlerFunc(s.serveAPI))
	s.BlobSrv = httptest.NewServer(http.HandlerFunc(s.serveBlob))
	t.Cleanup(func() {
		s.API.Close()
		s.BlobSrv.Close()
	})
	return s
}

// URL is the API base URL to give the client (GITHUB_API_URL).
func (s *Server) URL() string { return s.API.URL + "/" }

// AddWorkflow registers a workflow file.
func (s *Server) AddWorkflow(w Workflow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.ID == 0 {
		w.ID = s.id()
	}
	if w.State == "" {
		w.State = "active"
	}
	if w.Name == "" {
		w.Name = w.File
	}
	s.workflows[w.File] = &w
}

// SetWorkflowState changes a workflow's state (active, disabled_manually, ...).
func (s *Server) SetWorkflowState(file, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.workflows[file].State = state
}

// AddBranch makes refs exist.
func (s *Server) AddBranch(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		s.branches[n] = true
	}
}

// AddRun adds a run (not from a dispatch) and returns its id.
func (s *Server) AddRun(r Run) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.ID == 0 {
		r.ID = s.id()
	}
	if r.Event == "" {
		r.Event = "workflow_dispatch"
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = s.Now()
	}
	s.runs[r.ID] = &r
	return r.ID
}

// AddArtifact attaches an artifact to a run and returns its id.
func (s *Server) AddArtifact(runID int64, f ArtifactFile) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addArtifact(runID, f)
}

func (s *Server) addArtifact(runID int64, f ArtifactFile) int64 {
	a := &artifact{ID: s.id(), RunID: runID, Name: f.Name, Zip: f.Zip, Expired: f.Expired, Created: s.Now()}
	s.artifacts[a.ID] = a
	return a.ID
}

// Fail queues a fault.
func (s *Server) Fail(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Times == 0 {
		f.Times = 1
	}
	s.faults = append(s.faults, &f)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Runs returns a copy of every run, oldest first.
func (s *Server) Runs() []Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Run
	for _, r := range s.runs {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}

var (
	reDispatch  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/actions/workflows/([^/]+)/dispatches$`)
	reWorkflow  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/actions/workflows/([^/]+)$`)
	reWfRuns    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/actions/workflows/([^/]+)/runs$`)
	reRun       = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/actions/runs/([0-9]+)$`)
	reJobs      = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/actions/runs/([0-9]+)/jobs$`)
	reArtifacts = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/actions/runs/([0-9]+)/artifacts$`)
	reZip       = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/actions/artifacts/([0-9]+)/zip$`)
	reContents  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/contents/\.github/workflows/([^/]+)$`)
)

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	path := strings.TrimPrefix(r.URL.Path, "/api/v3") // GHES layout works too
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: path, Query: r.URL.RawQuery, Body: body,
		HasAuth: r.Header.Get("Authorization") != ""})

	if s.fault(w, r.Method, path) {
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
		return
	}
	w.Header().Set("X-RateLimit-Limit", "5000")
	w.Header().Set("X-RateLimit-Remaining", "4999")

	route := func(re *regexp.Regexp, method string) []string {
		if r.Method != method {
			return nil
		}
		m := re.FindStringSubmatch(path)
		if m == nil || m[1] != s.Owner || m[2] != s.Repo {
			return nil
		}
		return m
	}
	if m := route(reDispatch, http.MethodPost); m != nil {
		s.dispatch(w, m[3], body)
	} else if m := route(reWfRuns, http.MethodGet); m != nil {
		s.listRuns(w, r, m[3])
	} else if m := route(reWorkflow, http.MethodGet); m != nil {
		s.getWorkflow(w, m[3])
	} else if m := route(reRun, http.MethodGet); m != nil {
		s.getRun(w, atoi(m[3]))
	} else if m := route(reJobs, http.MethodGet); m != nil {
		s.listJobs(w, r, atoi(m[3]))
	} else if m := route(reArtifacts, http.MethodGet); m != nil {
		s.listArtifacts(w, r, atoi(m[3]))
	} else if m := route(reZip, http.MethodGet); m != nil {
		s.artifactZip(w, atoi(m[3]))
	} else if m := route(reContents, http.MethodGet); m != nil {
		s.workflowContents(w, r.URL.Query().Get("ref"), m[3])
	} else {
		notFound(w)
	}
}

func (s *Server) fault(w http.ResponseWriter, method, path string) bool {
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == method) && strings.Contains(path, f.Path) {
			f.Times--
			if f.Times <= 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			for k, v := range f.Header {
				w.Header().Set(k, v)
			}
			if f.Body != "" && w.Header().Get("Content-Type") == "" {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
			}
			w.WriteHeader(f.Status)
			io.WriteString(w, f.Body)
			return true
		}
	}
	return false
}

func (s *Server) dispatch(w http.ResponseWriter, file string, body []byte) {
	wf, ok := s.workflows[file]
	if !ok || wf.Unregistered {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found",
			"documentation_url": "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event"})
		return
	}
	var req struct {
		Ref              string          `json:"ref"`
		Inputs           map[string]any  `json:"inputs"`
		ReturnRunDetails json.RawMessage `json:"return_run_details"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	asked := len(req.ReturnRunDetails) > 0 && string(req.ReturnRunDetails) == "true"
	if len(req.ReturnRunDetails) > 0 && (s.Mode == DispatchRejectField400 || s.Mode == DispatchRejectField422) {
		status := http.StatusBadRequest
		if s.Mode == DispatchRejectField422 {
			status = http.StatusUnprocessableEntity
		}
		writeJSON(w, status, map[string]any{"message": "Invalid request.\n\n\"return_run_details\" is not a permitted key.",
			"documentation_url": "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event"})
		return
	}
	unprocessable := func(msg string) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": msg,
			"documentation_url": "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event"})
	}
	if strings.HasPrefix(wf.State, "disabled") {
		unprocessable("Cannot trigger a 'workflow_dispatch' on a disabled workflow")
		return
	}
	if req.Ref == "" {
		unprocessable("Invalid request.\n\n\"ref\" wasn't supplied.")
		return
	}
	if !s.branches[strings.TrimPrefix(req.Ref, "refs/heads/")] {
		unprocessable("No ref found for: " + req.Ref)
		return
	}
	var unexpected []string
	for name, v := range req.Inputs {
		if !contains(wf.Inputs, name) {
			unexpected = append(unexpected, name)
		}
		if _, ok := v.(string); !ok {
			unprocessable(fmt.Sprintf("Invalid request.\n\nFor 'properties/%s', %v is not a string.", name, v))
			return
		}
	}
	if len(unexpected) > 0 {
		sort.Strings(unexpected)
		q, _ := json.Marshal(unexpected)
		unprocessable("Unexpected inputs provided: " + string(q))
		return
	}
	for _, name := range wf.Required {
		if _, ok := req.Inputs[name]; !ok {
			unprocessable(fmt.Sprintf("Required input '%s' not provided", name))
			return
		}
	}
	run := &Run{
		ID: s.id(), WorkflowFile: file, Branch: strings.TrimPrefix(req.Ref, "refs/heads/"), Event: "workflow_dispatch",
		Name: wf.Name, Inputs: req.Inputs, CreatedAt: s.Now(), Frames: wf.Frames, VisibleAfterLists: wf.VisibleAfterLists,
	}
	run.DisplayTitle = wf.Name
	if wf.RunName != "" {
		id, _ := req.Inputs["dispatch_id"].(string)
		run.DisplayTitle = strings.ReplaceAll(wf.RunName, "{dispatch_id}", id)
	}
	if run.Frames == nil {
		run.Frames = DefaultFrames(run.CreatedAt, "success")
	}
	s.runs[run.ID] = run
	for _, a := range wf.Artifacts {
		s.addArtifact(run.ID, a)
	}
	if wf.ArtifactsFor != nil {
		for _, a := range wf.ArtifactsFor(*run) {
			s.addArtifact(run.ID, a)
		}
	}
	if asked && s.Mode == DispatchRunDetails {
		writeJSON(w, http.StatusOK, map[string]any{
			"workflow_run_id": run.ID,
			"run_url":         fmt.Sprintf("%s/repos/%s/%s/actions/runs/%d", s.API.URL, s.Owner, s.Repo, run.ID),
			"html_url":        s.runHTML(run.ID),
		})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) getWorkflow(w http.ResponseWriter, file string) {
	wf, ok := s.workflows[file]
	if !ok || wf.Unregistered {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": wf.ID, "name": wf.Name, "path": ".github/workflows/" + wf.File, "state": wf.State,
		"html_url": fmt.Sprintf("%s/%s/%s/blob/main/.github/workflows/%s", s.HTMLBase, s.Owner, s.Repo, wf.File),
	})
}

// workflowContents serves a registered workflow's file as the contents API does, at any
// branch that exists (the fake keeps one version of each file).
func (s *Server) workflowContents(w http.ResponseWriter, ref, file string) {
	wf, ok := s.workflows[file]
	if !ok || (ref != "" && !s.branches[strings.TrimPrefix(ref, "refs/heads/")]) {
		notFound(w)
		return
	}
	content := wf.Content
	if content == nil {
		var b strings.Builder
		b.WriteString("name: " + wf.Name + "\non:\n  workflow_dispatch:\n    inputs:\n")
		for _, in := range wf.Inputs {
			fmt.Fprintf(&b, "      %s:\n        type: string\n", in)
		}
		b.WriteString("jobs: {}\n")
		content = []byte(b.String())
	}
	path := ".github/workflows/" + file
	writeJSON(w, http.StatusOK, map[string]any{"type": "file", "encoding": "base64", "name": file, "path": path,
		"size": len(content), "content": base64.StdEncoding.EncodeToString(content)})
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request, file string) {
	if wf, ok := s.workflows[file]; !ok || wf.Unregistered {
		notFound(w)
		return
	}
	q := r.URL.Query()
	var since time.Time
	if c := q.Get("created"); c != "" {
		t, err := time.Parse(time.RFC3339, strings.TrimPrefix(c, ">="))
		if err != nil || !strings.HasPrefix(c, ">=") {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed: created " + c})
			return
		}
		since = t
	}
	var matched []*Run
	for _, run := range s.runs {
		if run.WorkflowFile != file {
			continue
		}
		if run.lists < run.VisibleAfterLists {
			run.lists++
			continue
		}
		if b := q.Get("branch"); b != "" && run.Branch != b {
			continue
		}
		if e := q.Get("event"); e != "" && run.Event != e {
			continue
		}
		if !since.IsZero() && run.CreatedAt.Before(since) {
			continue
		}
		matched = append(matched, run)
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].ID > matched[j].ID }) // newest first
	page, per := pageParams(q)
	items := make([]any, 0)
	for _, run := range paginate(matched, page, per) {
		items = append(items, s.runJSON(run))
	}
	setLink(w, r, page, per, len(matched))
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(matched), "workflow_runs": items})
}

func (s *Server) frame(run *Run) Frame {
	i := max(run.polls-1, 0)
	if i >= len(run.Frames) {
		i = len(run.Frames) - 1
	}
	if i < 0 {
		return Frame{Status: "queued"}
	}
	return run.Frames[i]
}

func (s *Server) getRun(w http.ResponseWriter, id int64) {
	run, ok := s.runs[id]
	if !ok {
		notFound(w)
		return
	}
	run.polls++
	writeJSON(w, http.StatusOK, s.runJSON(run))
}

func (s *Server) runJSON(run *Run) map[string]any {
	f := s.frame(run)
	api := fmt.Sprintf("%s/repos/%s/%s/actions/runs/%d", s.API.URL, s.Owner, s.Repo, run.ID)
	wfID := int64(0)
	if wf, ok := s.workflows[run.WorkflowFile]; ok {
		wfID = wf.ID
	}
	return map[string]any{
		"id": run.ID, "name": run.Name, "display_title": run.DisplayTitle, "head_branch": run.Branch,
		"event": run.Event, "status": f.Status, "conclusion": nullable(f.Conclusion), "workflow_id": wfID,
		"run_number": run.ID - 1000, "run_attempt": 1, "url": api, "html_url": s.runHTML(run.ID),
		"jobs_url": api + "/jobs", "artifacts_url": api + "/artifacts",
		"created_at": ts(run.CreatedAt), "updated_at": ts(s.Now()), "run_started_at": ts(run.CreatedAt),
		"path": ".github/workflows/" + run.WorkflowFile,
	}
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request, id int64) {
	run, ok := s.runs[id]
	if !ok {
		notFound(w)
		return
	}
	f := s.frame(run)
	page, per := pageParams(r.URL.Query())
	jobs := make([]any, 0)
	for _, j := range paginate(f.Jobs, page, per) {
		steps := make([]any, 0, len(j.Steps))
		for _, st := range j.Steps {
			steps = append(steps, map[string]any{"name": st.Name, "status": st.Status, "conclusion": nullable(st.Conclusion),
				"number": st.Number, "started_at": ts(st.StartedAt), "completed_at": ts(st.CompletedAt)})
		}
		labels := j.Labels
		if labels == nil {
			labels = []string{}
		}
		jobs = append(jobs, map[string]any{
			"id": j.ID, "run_id": run.ID, "name": j.Name, "status": j.Status, "conclusion": nullable(j.Conclusion),
			"started_at": ts(j.StartedAt), "completed_at": ts(j.CompletedAt), "runner_name": nullable(j.RunnerName),
			"labels": labels, "steps": steps, "head_branch": run.Branch, "workflow_name": run.Name,
			"html_url": fmt.Sprintf("%s/job/%d", s.runHTML(run.ID), j.ID),
		})
	}
	setLink(w, r, page, per, len(f.Jobs))
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(f.Jobs), "jobs": jobs})
}

func (s *Server) listArtifacts(w http.ResponseWriter, r *http.Request, runID int64) {
	run, ok := s.runs[runID]
	if !ok {
		notFound(w)
		return
	}
	var list []*artifact
	for _, a := range s.artifacts {
		if a.RunID == runID {
			list = append(list, a)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	page, per := pageParams(r.URL.Query())
	items := make([]any, 0)
	for _, a := range paginate(list, page, per) {
		api := fmt.Sprintf("%s/repos/%s/%s/actions/artifacts/%d", s.API.URL, s.Owner, s.Repo, a.ID)
		items = append(items, map[string]any{
			"id": a.ID, "node_id": fmt.Sprintf("MDg6QXJ0aWZhY3Q%d", a.ID), "name": a.Name,
			"size_in_bytes": len(a.Zip), "url": api, "archive_download_url": api + "/zip", "expired": a.Expired,
			"created_at": ts(a.Created), "updated_at": ts(a.Created), "expires_at": ts(a.Created.Add(90 * 24 * time.Hour)),
			"workflow_run": map[string]any{"id": run.ID, "head_branch": run.Branch},
		})
	}
	setLink(w, r, page, per, len(list))
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(list), "artifacts": items})
}

func (s *Server) artifactZip(w http.ResponseWriter, id int64) {
	a, ok := s.artifacts[id]
	if !ok {
		notFound(w)
		return
	}
	if a.Expired {
		writeJSON(w, http.StatusGone, map[string]any{"message": "Artifact has expired"})
		return
	}
	base := s.BlobBase
	if base == "" {
		base = s.BlobSrv.URL
	}
	w.Header().Set("Location", fmt.Sprintf("%s/artifacts/%d.zip?%s", base, id, blobSignature))
	w.WriteHeader(http.StatusFound)
}

// serveBlob plays the blob store behind the redirect: the link is pre-signed,
// and like Azure it refuses a request that also carries an Authorization header.
func (s *Server) serveBlob(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		HasAuth: r.Header.Get("Authorization") != "", Blob: true})
	if s.fault(w, r.Method, "blob:"+r.URL.Path) {
		return
	}
	if r.Header.Get("Authorization") != "" {
		http.Error(w, "AuthenticationFailed: both a signature and an Authorization header", http.StatusBadRequest)
		return
	}
	var id int64
	if _, err := fmt.Sscanf(r.URL.Path, "/artifacts/%d.zip", &id); err != nil || r.URL.RawQuery != blobSignature {
		http.Error(w, "AuthenticationFailed", http.StatusForbidden)
		return
	}
	a, ok := s.artifacts[id]
	if !ok {
		http.Error(w, "BlobNotFound", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Length", strconv.Itoa(len(a.Zip)))
	w.Write(a.Zip)
}

func (s *Server) runHTML(id int64) string {
	return fmt.Sprintf("%s/%s/%s/actions/runs/%d", s.HTMLBase, s.Owner, s.Repo, id)
}

// DefaultFrames scripts a debug run: queued, then the reproducer running,
// then the tmate gate open, then completed with conclusion.
func DefaultFrames(start time.Time, conclusion string) []Frame {
	at := func(sec int) time.Time { return start.Add(time.Duration(sec) * time.Second) }
	names := []string{"Set up job", "Checkout", "Run reproducer", "Open tmate gate", "Upload artifacts"}
	steps := func(done int, current int, final string) []Step {
		var out []Step
		for i, n := range names {
			st := Step{Number: int64(i + 1), Name: n, Status: "queued"}
			switch {
			case i < done:
				st.Status, st.Conclusion = "completed", "success"
				if n == "Run reproducer" && final == "failure" {
					st.Conclusion = "failure"
				}
				st.StartedAt, st.CompletedAt = at(10*i), at(10*i+9)
			case i == current:
				st.Status, st.StartedAt = "in_progress", at(10*i)
			}
			out = append(out, st)
		}
		return out
	}
	job := func(status, concl string, st []Step) Job {
		j := Job{ID: 5001, Name: "debug (T4)", Status: status, Conclusion: concl, Labels: []string{"gpu-t4-4-core"}, Steps: st}
		if status != "queued" {
			j.RunnerName, j.StartedAt = "gpu-t4-4-core_abc", at(0)
		}
		if status == "completed" {
			j.CompletedAt = at(60)
		}
		return j
	}
	return []Frame{
		{Status: "queued", Jobs: []Job{job("queued", "", nil)}},
		{Status: "in_progress", Jobs: []Job{job("in_progress", "", steps(2, 2, conclusion))}},
		{Status: "in_progress", Jobs: []Job{job("in_progress", "", steps(3, 3, conclusion))}},
		{Status: "completed", Conclusion: conclusion, Jobs: []Job{job("completed", conclusion, steps(5, -1, conclusion))}},
	}
}

func pageParams(q map[string][]string) (int, int) {
	get := func(k string, def int) int {
		if v, ok := q[k]; ok && len(v) > 0 {
			if n, err := strconv.Atoi(v[0]); err == nil && n > 0 {
				return n
			}
		}
		return def
	}
	return get("page", 1), min(get("per_page", 30), 100)
}

func paginate[T any](xs []T, page, per int) []T {
	start := (page - 1) * per
	if start >= len(xs) {
		return nil
	}
	return xs[start:min(start+per, len(xs))]
}

// setLink writes the Link header go-github reads for NextPage.
func setLink(w http.ResponseWriter, r *http.Request, page, per, total int) {
	if page*per >= total {
		return
	}
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	q := u.Query()
	q.Set("page", strconv.Itoa(page+1))
	q.Set("per_page", strconv.Itoa(per))
	u.RawQuery = q.Encode()
	w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, u.String()))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
}

func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

package ghrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// fakeReport stands in for report.Load + WriteText: it reads the reproducer
// summary, so a report proves the artifact was really extracted.
func fakeReport(dir string, w io.Writer) error {
	b, err := os.ReadFile(filepath.Join(dir, "reproducer_summary.json"))
	if err != nil {
		return fmt.Errorf("no reproducer summary: %w", err)
	}
	var s struct {
		Reproduced bool `json:"reproduced"`
		Failed     int  `json:"failed"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	fmt.Fprintf(w, "verdict for %s: reproduced=%v failed=%d\n", filepath.Base(dir), s.Reproduced, s.Failed)
	return nil
}

type harness struct {
	f        *Factory
	env      map[string]string
	out, err bytes.Buffer
	sleeper  *sleeper
}

func newHarness(t *testing.T, srv *ghtest.Server) *harness {
	h := &harness{env: map[string]string{EnvGHToken: testToken, EnvAPIURL: srv.URL()}, sleeper: &sleeper{}}
	h.f = &Factory{
		Workflow:  func() (Workflow, error) { return testWorkflow(), nil },
		Report:    fakeReport,
		Getenv:    func(k string) string { return h.env[k] },
		Stdout:    &h.out,
		Stderr:    &h.err,
		GitRemote: func(context.Context) (string, error) { return "git@github.com:acme/kernels.git", nil },
		GitBranch: func(context.Context) (string, error) { return "debug/t4", nil },
		Sleep:     h.sleeper.Sleep,
		Now:       func() time.Time { return fixedNow },
	}
	return h
}

// run executes a command the way the lead's main will.
func (h *harness) run(newCmd func(*Factory) interface {
	SetArgs([]string)
	ExecuteContext(context.Context) error
}, args ...string) error {
	cmd := newCmd(h.f)
	cmd.SetArgs(args)
	return cmd.ExecuteContext(context.Background())
}

func dispatchCmd(f *Factory) interface {
	SetArgs([]string)
	ExecuteContext(context.Context) error
} {
	c := NewCmdDispatch(f)
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	return c
}

func watchCmd(f *Factory) interface {
	SetArgs([]string)
	ExecuteContext(context.Context) error
} {
	c := NewCmdWatch(f)
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	return c
}

func downloadCmd(f *Factory) interface {
	SetArgs([]string)
	ExecuteContext(context.Context) error
} {
	c := NewCmdDownload(f)
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	return c
}

// TestEndToEnd dispatches, finds the run (both ways), watches it to
// completion, downloads its artifact and prints the report.
func TestEndToEnd(t *testing.T) {
	for _, tt := range []struct {
		mode ghtest.DispatchMode
		how  string
	}{
		{ghtest.DispatchRunDetails, "found from the dispatch answer"},
		{ghtest.DispatchNoContent, "found by its dispatch_id"},
	} {
		t.Run(tt.how, func(t *testing.T) {
			srv := ghtest.New(t, "acme", "kernels", testToken)
			srv.Mode = tt.mode
			srv.AddBranch("debug/t4")
			srv.AddWorkflow(ghtest.Workflow{File: wfFile, Name: "Debug CUDA repro", Inputs: inputNames(testWorkflow()),
				RunName: "debug CUDA repro [{dispatch_id}]", VisibleAfterLists: 1,
				Frames:    ghtest.DefaultFrames(fixedNow.Add(-time.Minute), "failure"),
				Artifacts: []ghtest.ArtifactFile{{Name: "debug_cuda_repro_artifacts", Zip: evidenceZip(t, 7)}}})
			h := newHarness(t, srv)
			dir := filepath.Join(t.TempDir(), "evidence")

			err := h.run(dispatchCmd, "-f", "reproduce_count=100", "--download", dir, "--interval", "2s")

			if ExitCode(err) != ExitFailure || !strings.Contains(fmt.Sprint(err), "concluded failure") {
				t.Fatalf("err = %v (code %d), want the run's failure", err, ExitCode(err))
			}
			runs := srv.Runs()
			if len(runs) != 1 {
				t.Fatalf("%d runs", len(runs))
			}
			run := runs[0]
			url := "https://github.com/acme/kernels/actions/runs/" + itoa64(run.ID)
			if run.Branch != "debug/t4" || run.Inputs["reproduce_count"] != "100" {
				t.Errorf("dispatched %+v", run)
			}
			stdout, stderr := h.out.String(), h.err.String()
			for _, want := range []string{url + "\n", "TMATE GATE OPEN", `step 3 "Run reproducer" failure`,
				"run " + itoa64(run.ID) + " completed: failure", "verdict for evidence: reproduced=true failed=7"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			for _, want := range []string{"dispatched " + wfFile + " on acme/kernels@debug/t4: run " + itoa64(run.ID) + " (" + tt.how + ")",
				`downloaded "debug_cuda_repro_artifacts"`} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if strings.Index(stdout, "completed: failure") > strings.Index(stdout, "verdict for") {
				t.Error("the report came before the run completed")
			}
		})
	}
}

func TestDispatchJSON(t *testing.T) {
	srv := newServer(t)
	h := newHarness(t, srv)
	if err := h.run(dispatchCmd, "--json", "--watch", "--interval", "1s"); err != nil {
		t.Fatal(err)
	}
	id := srv.Runs()[0].ID
	want := fmt.Sprintf(`{"run_id":%d,"html_url":"https://github.com/acme/kernels/actions/runs/%d"}`+"\n", id, id)
	if h.out.String() != want {
		t.Errorf("stdout = %q, want exactly %q (watch progress belongs on stderr)", h.out.String(), want)
	}
	if !strings.Contains(h.err.String(), "completed: success") {
		t.Errorf("stderr lacks the watch:\n%s", h.err.String())
	}
}

func TestDispatchUsageErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		env    map[string]string // overrides; "" deletes
		modify func(*Factory)
		want   string
	}{
		{name: "unknown input", args: []string{"-f", "count=5", "-f", "open_tmate=maybe"}, want: `unknown input "count"`},
		{name: "bad -f", args: []string{"-f", "reproduce_count"}, want: "expected name=value"},
		{name: "unknown flag", args: []string{"--nope"}, want: "unknown flag: --nope"},
		{name: "positional argument", args: []string{"reproduce_count=5"}, want: "inputs go in -f name=value"},
		{name: "no token", env: map[string]string{EnvGHToken: ""}, want: "no GitHub token for the API at GITHUB_API_URL"},
		{name: "bad API URL", env: map[string]string{EnvAPIURL: "ghe.example.com"}, want: "GITHUB_API_URL"},
		{name: "no remote", modify: func(f *Factory) {
			f.GitRemote = func(context.Context) (string, error) { return "", errors.New("not a git repository") }
		}, want: "pass -R OWNER/REPO"},
		{name: "bad -R", args: []string{"-R", "acme"}, want: "expected OWNER/REPO"},
		{name: "detached HEAD", modify: func(f *Factory) {
			f.GitBranch = func(context.Context) (string, error) { return "", errors.New("HEAD is not on a branch") }
		}, want: "pass --ref BRANCH"},
		{name: "spec does not load", modify: func(f *Factory) {
			f.Workflow = func() (Workflow, error) { return Workflow{}, errors.New("debugflow.yaml:3:1: unknown field") }
		}, want: "load the debug spec: debugflow.yaml:3:1"},
		{name: "bad interval", args: []string{"--watch", "--interval", "0s"}, want: `invalid argument "0s" for "--interval" flag: "0s": the interval must be positive`},
		{name: "unknown --json field", args: []string{"--json", "runId,bogus"}, want: "--json: unknown field \"bogus\"; the fields are:\n  dispatchId\n  foundBy"},
		{name: "bad stdin JSON", modify: func(f *Factory) { f.Stdin = strings.NewReader("reproduce_count=5") },
			want: "stdin: not a JSON object (with no -f or -F, the inputs are read from stdin as a JSON object"},
		{name: "stdin JSON checked against the spec", modify: func(f *Factory) { f.Stdin = strings.NewReader(`{"reproduce_count": "lots", "repro_count": 1}`) },
			want: `input "reproduce_count" must be a number`},
		{name: "-F file missing", args: []string{"-F", "quadrants_ref=@/nonexistent/ref.txt"}, want: "-F quadrants_ref=@/nonexistent/ref.txt: open /nonexistent/ref.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			h := newHarness(t, srv)
			for k, v := range tt.env {
				h.env[k] = v
			}
			if tt.modify != nil {
				tt.modify(h.f)
			}
			err := h.run(dispatchCmd, tt.args...)
			if ExitCode(err) != ExitUsage || !strings.Contains(fmt.Sprint(err), tt.want) {
				t.Fatalf("err = %v (code %d), want code 2 and %q", err, ExitCode(err), tt.want)
			}
			var ee *ExitError
			if !errors.As(err, &ee) {
				t.Errorf("%T is not an *ExitError", err)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests despite the usage error", n)
			}
		})
	}
}

func TestResolveRepoAndHost(t *testing.T) {
	tests := []struct {
		name       string
		flags      repoFlags
		remote     string
		ghHost     string
		apiURL     string
		wantRepo   string
		wantHost   string
		wantAPIURL string
		wantErr    []string
	}{
		{name: "remote on github.com", remote: "https://github.com/acme/kernels.git", wantRepo: "acme/kernels", wantHost: "github.com", wantAPIURL: "https://api.github.com/"},
		{name: "remote on www.github.com", remote: "https://WWW.GitHub.com/acme/kernels.git", wantRepo: "acme/kernels", wantHost: "github.com", wantAPIURL: "https://api.github.com/"},
		{name: "remote on GHES named by GH_HOST", remote: "git@ghe.corp.example:gpu/kernels.git", ghHost: "GHE.corp.example", wantRepo: "ghe.corp.example/gpu/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "GH_HOST keeps its port over an ssh remote", remote: "ssh://git@ghe.corp.example:2222/gpu/kernels.git", ghHost: "ghe.corp.example:8443", wantRepo: "ghe.corp.example:8443/gpu/kernels", wantHost: "ghe.corp.example:8443", wantAPIURL: "https://ghe.corp.example:8443/api/v3/"},
		{name: "remote on GHES named by --hostname", flags: repoFlags{Hostname: "ghe.corp.example"}, remote: "https://ghe.corp.example/gpu/kernels", wantRepo: "ghe.corp.example/gpu/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "remote on the host of GITHUB_API_URL", remote: "https://ghe.corp.example/gpu/kernels", apiURL: "https://ghe.corp.example/api/v3", wantRepo: "ghe.corp.example/gpu/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "-R HOST/OWNER/REPO beats GH_HOST", flags: repoFlags{Repo: "ghe.one.example/a/b"}, ghHost: "ghe.corp.example", wantRepo: "ghe.one.example/a/b", wantHost: "ghe.one.example", wantAPIURL: "https://ghe.one.example/api/v3/"},
		{name: "--hostname with -R OWNER/REPO", flags: repoFlags{Repo: "a/b", Hostname: "GHE.two.example"}, ghHost: "x.example", wantRepo: "ghe.two.example/a/b", wantHost: "ghe.two.example", wantAPIURL: "https://ghe.two.example/api/v3/"},
		{name: "-R OWNER/REPO takes GH_HOST", flags: repoFlags{Repo: "a/b"}, ghHost: "ghe.corp.example", wantRepo: "ghe.corp.example/a/b", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "-R without host and no GH_HOST is github.com", flags: repoFlags{Repo: "a/b"}, remote: "git@gitlab.example:x/y.git", wantRepo: "a/b", wantHost: "github.com", wantAPIURL: "https://api.github.com/"},
		{name: "-R as a URL with credentials", flags: repoFlags{Repo: "https://u:hunter2secret@github.com/acme/kernels.git"}, wantRepo: "acme/kernels", wantHost: "github.com", wantAPIURL: "https://api.github.com/"},
		{name: "-R USER:TOKEN@HOST/OWNER/REPO", flags: repoFlags{Repo: "u:hunter2secret@ghe.corp.example/acme/kernels"}, wantRepo: "ghe.corp.example/acme/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "-R as an scp-like remote", flags: repoFlags{Repo: "git@github.com:acme/kernels.git"}, wantRepo: "acme/kernels", wantHost: "github.com", wantAPIURL: "https://api.github.com/"},

		{name: "GitLab origin is refused", remote: "https://gitlab.example/acme/kernels.git",
			wantErr: []string{"the origin remote (https://gitlab.example/acme/kernels.git) is on gitlab.example, which is not github.com",
				"set GH_HOST=gitlab.example", "GH_ENTERPRISE_TOKEN", "-R OWNER/REPO"}},
		{name: "ssh origin on another host is refused", remote: "git@mirror.example:acme/kernels.git",
			wantErr: []string{"is on mirror.example, which is not github.com"}},
		{name: "origin credentials are not shown", remote: "https://oauth2:hunter2secret@gitlab.example/acme/kernels.git",
			wantErr: []string{"https://***@gitlab.example/acme/kernels.git"}},
		{name: "origin not on GH_HOST", remote: "git@github.com:acme/kernels.git", ghHost: "ghe.corp.example",
			wantErr: []string{"the origin remote is on github.com, not on GH_HOST=ghe.corp.example", "-R ghe.corp.example/OWNER/REPO"}},
		{name: "-R host and --hostname disagree", flags: repoFlags{Repo: "ghe.one.example/a/b", Hostname: "ghe.two.example"},
			wantErr: []string{"-R names host ghe.one.example but --hostname says ghe.two.example"}},
		{name: "GH_HOST with credentials", remote: "git@github.com:acme/kernels.git", ghHost: "u:hunter2secret@ghe.corp.example",
			wantErr: []string{`GH_HOST="***@ghe.corp.example" is not a host name`}},
		{name: "-R URL with credentials and a bad path", flags: repoFlags{Repo: "https://u:hunter2secret@github.com/acme"},
			wantErr: []string{"https://***@github.com/acme", "expected a path OWNER/REPO"}},
		{name: "-R with credentials, no scheme and a bad name", flags: repoFlags{Repo: "u:hunter2secret@ghe.corp.example/acme/.."},
			wantErr: []string{"***@ghe.corp.example", "not a valid repository name"}},

		// A repository a file recorded (the bisection state) is not one the user named: its
		// host must be github.com, the configured host or GITHUB_API_URL's.
		{name: "recorded OWNER/REPO", flags: repoFlags{Recorded: "acme/kernels", RecordedIn: "bisect.json"}, remote: "https://gitlab.example/x/y", wantRepo: "acme/kernels", wantHost: "github.com", wantAPIURL: "https://api.github.com/"},
		{name: "recorded OWNER/REPO on GH_HOST", flags: repoFlags{Recorded: "acme/kernels", RecordedIn: "bisect.json"}, ghHost: "ghe.corp.example", wantRepo: "ghe.corp.example/acme/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "recorded on GH_HOST", flags: repoFlags{Recorded: "ghe.corp.example/acme/kernels", RecordedIn: "bisect.json"}, ghHost: "ghe.corp.example", wantRepo: "ghe.corp.example/acme/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "recorded on the host of GITHUB_API_URL", flags: repoFlags{Recorded: "ghe.corp.example/acme/kernels", RecordedIn: "bisect.json"}, apiURL: "https://ghe.corp.example/api/v3", wantRepo: "ghe.corp.example/acme/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "-R beats the recorded repository", flags: repoFlags{Repo: "ghe.one.example/a/b", Recorded: "evil.example/a/b", RecordedIn: "bisect.json"}, wantRepo: "ghe.one.example/a/b", wantHost: "ghe.one.example", wantAPIURL: "https://ghe.one.example/api/v3/"},
		{name: "recorded on another host is refused", flags: repoFlags{Recorded: "evil.example/acme/kernels", RecordedIn: ".debugflow/bisect.json"},
			wantErr: []string{".debugflow/bisect.json names the repository evil.example/acme/kernels, on evil.example, which is not github.com", "pass -R evil.example/acme/kernels", "GH_HOST=evil.example"}},
		{name: "recorded on another host than GH_HOST is refused", flags: repoFlags{Recorded: "evil.example/acme/kernels", RecordedIn: "bisect.json"}, ghHost: "ghe.corp.example",
			wantErr: []string{"on evil.example, which is not GH_HOST=ghe.corp.example"}},
		{name: "recorded with credentials", flags: repoFlags{Recorded: "u:hunter2secret@evil.example/acme/kernels", RecordedIn: "bisect.json"},
			wantErr: []string{"***@evil.example/acme/kernels"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{EnvGHHost: tt.ghHost, EnvAPIURL: tt.apiURL}
			f := &Factory{
				Getenv:    func(k string) string { return env[k] },
				GitRemote: func(context.Context) (string, error) { return tt.remote, nil },
			}
			repo, host, err := f.resolve(context.Background(), tt.flags)
			if tt.wantErr != nil {
				if ExitCode(err) != ExitUsage {
					t.Fatalf("err = %v (code %d), want a usage error", err, ExitCode(err))
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				if strings.Contains(err.Error(), "hunter2secret") {
					t.Errorf("credentials shown: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			api, _ := APIBaseURL(host, tt.apiURL)
			if repo.String() != tt.wantRepo || host != tt.wantHost || api != tt.wantAPIURL {
				t.Errorf("got %s host %q api %s; want %s host %q api %s", repo, host, api, tt.wantRepo, tt.wantHost, tt.wantAPIURL)
			}
		})
	}
}

func TestWatchCommand(t *testing.T) {
	tests := []struct {
		name       string
		conclusion string
		args       func(id int64) []string
		wantCode   int
	}{
		{name: "success by id", conclusion: "success", args: func(id int64) []string { return []string{itoa64(id)} }, wantCode: 0},
		{name: "failure by URL", conclusion: "failure", args: func(id int64) []string {
			return []string{"https://github.com/acme/kernels/actions/runs/" + itoa64(id)}
		}, wantCode: 1},
		{name: "cancelled, latest", conclusion: "cancelled", args: func(int64) []string { return []string{"--latest"} }, wantCode: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			id := srv.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "debug/t4", Frames: ghtest.DefaultFrames(fixedNow, tt.conclusion)})
			h := newHarness(t, srv)
			h.f.GitRemote = nil // the repo must come from the URL or be found without git
			args := tt.args(id)
			if args[0] != "https://github.com/acme/kernels/actions/runs/"+itoa64(id) {
				args = append(args, "-R", "acme/kernels")
			}
			err := h.run(watchCmd, append(args, "-i", "1s")...)
			if ExitCode(err) != tt.wantCode {
				t.Fatalf("err = %v (code %d), want code %d", err, ExitCode(err), tt.wantCode)
			}
			if !strings.Contains(h.out.String(), "completed: "+tt.conclusion) {
				t.Errorf("stdout:\n%s", h.out.String())
			}
		})
	}
	for _, args := range [][]string{{}, {"1", "--latest"}, {"1", "2"}, {"abc"}, {"1", "--interval", "-1s"}} {
		srv := newServer(t)
		h := newHarness(t, srv)
		if err := h.run(watchCmd, args...); ExitCode(err) != ExitUsage {
			t.Errorf("watch %q: err = %v (code %d), want a usage error", args, err, ExitCode(err))
		}
	}
}

func TestDownloadCommand(t *testing.T) {
	srv := newServer(t)
	id := srv.AddRun(ghtestRun(wfFile, "debug/t4"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence-t4", Zip: evidenceZip(t, 5)})
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence-a10g", Zip: makeZip(t, zipEntry{Name: "system_identity.txt", Body: "A10G"})})
	h := newHarness(t, srv)
	dir := t.TempDir()
	err := h.run(downloadCmd, "--latest", "-D", dir)
	// One report fails (no reproducer summary in the a10g artifact), the other still prints.
	if ExitCode(err) != ExitFailure || !strings.Contains(fmt.Sprint(err), "evidence-a10g") {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"== " + filepath.Join(dir, "evidence-a10g") + " ==", "== " + filepath.Join(dir, "evidence-t4") + " ==",
		"verdict for evidence-t4: reproduced=true failed=5"} {
		if !strings.Contains(h.out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, h.out.String())
		}
	}
	if !strings.Contains(h.err.String(), "latest run of "+wfFile+": "+itoa64(id)) {
		t.Errorf("stderr:\n%s", h.err.String())
	}

	for _, args := range [][]string{{"1", "--max-size", "lots"}, {"1", "--max-files", "0"}, {}} {
		h := newHarness(t, srv)
		if err := h.run(downloadCmd, args...); ExitCode(err) != ExitUsage {
			t.Errorf("download %q: err = %v, want a usage error", args, err)
		}
	}
}

// TestTokenNeverPrinted drives every command through success and failure,
// with servers that echo the token back, and checks no output shows it.
func TestTokenNeverPrinted(t *testing.T) {
	echo := `{"message":"Bad credentials: Bearer ` + testToken + `"}`
	tests := []struct {
		name  string
		setup func(*ghtest.Server, *harness)
		cmd   func(*Factory) interface {
			SetArgs([]string)
			ExecuteContext(context.Context) error
		}
		args     []string
		wantEcho bool // the server echoed the token, so *** must show where it was
	}{
		{name: "dispatch --json succeeds", cmd: dispatchCmd, args: []string{"--json", "--watch", "--download", "DIR"}},
		{name: "dispatch 401 echo", cmd: dispatchCmd, wantEcho: true,
			setup: func(s *ghtest.Server, _ *harness) { s.Fail(ghtest.Fault{Path: "/dispatches", Status: 401, Body: echo}) }},
		{name: "dispatch 403 echo", cmd: dispatchCmd, wantEcho: true,
			setup: func(s *ghtest.Server, _ *harness) { s.Fail(ghtest.Fault{Path: "/dispatches", Status: 403, Body: echo}) }},
		{name: "dispatch 422 echo", cmd: dispatchCmd, args: []string{"--json"}, wantEcho: true,
			setup: func(s *ghtest.Server, _ *harness) { s.Fail(ghtest.Fault{Path: "/dispatches", Status: 422, Body: echo}) }},
		{name: "watch with the token in step names", cmd: watchCmd, args: []string{"--latest"}, wantEcho: true,
			setup: func(s *ghtest.Server, _ *harness) {
				s.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "main", DisplayTitle: "run " + testToken, Frames: []ghtest.Frame{{Status: "completed", Conclusion: "failure",
					Jobs: []ghtest.Job{{ID: 1, Name: "job " + testToken, Status: "completed", Conclusion: "failure",
						Steps: []ghtest.Step{{Number: 1, Name: "tmate " + testToken, Status: "in_progress"}}}}}}})
			}},
		{name: "watch on a terminal", cmd: watchCmd, args: []string{"--latest"}, wantEcho: true,
			setup: func(s *ghtest.Server, h *harness) {
				h.f.IsTTY = true
				s.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "main", DisplayTitle: "run " + testToken, Frames: ghtest.DefaultFrames(fixedNow, "success")})
			}},
		{name: "watch 404 echo", cmd: watchCmd, args: []string{"77"}, wantEcho: true,
			setup: func(s *ghtest.Server, _ *harness) { s.Fail(ghtest.Fault{Path: "/runs/77", Status: 404, Body: echo}) }},
		{name: "download with retries and an echo", cmd: downloadCmd, args: []string{"--latest", "-D", "DIR"},
			setup: func(s *ghtest.Server, _ *harness) {
				id := s.AddRun(ghtestRun(wfFile, "main"))
				s.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1)})
				s.Fail(ghtest.Fault{Path: "/artifacts", Status: 503, Times: 2})
				s.Fail(ghtest.Fault{Path: "/zip", Status: 403, Body: echo})
			}},
		{name: "token in GITHUB_API_URL", cmd: downloadCmd, args: []string{"1"},
			setup: func(s *ghtest.Server, h *harness) { h.env[EnvAPIURL] = "http://x:" + testToken + "@127.0.0.1:1/" }},
		{name: "token only in GITHUB_TOKEN", cmd: dispatchCmd, wantEcho: true,
			setup: func(s *ghtest.Server, h *harness) {
				h.env[EnvGHToken] = ""
				h.env[EnvGitHubToken] = testToken
				s.Fail(ghtest.Fault{Path: "/dispatches", Status: 401, Body: echo})
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1)})
			h := newHarness(t, srv)
			if tt.setup != nil {
				tt.setup(srv, h)
			}
			args := append([]string(nil), tt.args...)
			for i, a := range args {
				if a == "DIR" {
					args[i] = filepath.Join(t.TempDir(), "out")
				}
			}
			err := h.run(tt.cmd, args...)
			all := h.out.String() + h.err.String() + fmt.Sprint(err)
			if strings.Contains(all, testToken) {
				t.Fatalf("the token was printed:\nstdout: %s\nstderr: %s\nerr: %v", h.out.String(), h.err.String(), err)
			}
			if tt.wantEcho && !strings.Contains(all, "***") {
				t.Errorf("the echoed token was not masked (or not echoed):\n%s", all)
			}
			if len(all) < 20 {
				t.Errorf("suspiciously little output: %q", all)
			}
		})
	}
}

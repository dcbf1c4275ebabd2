package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd/ghcmdtest"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

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
			srv := ghtest.New(t, "acme", "kernels", ghcmdtest.Token)
			srv.Mode = tt.mode
			srv.AddBranch("debug/t4")
			srv.AddWorkflow(ghtest.Workflow{File: ghcmdtest.WorkflowFile, Name: "Debug CUDA repro", Inputs: ghcmdtest.InputNames(ghcmdtest.Workflow()),
				RunName: "debug CUDA repro [{dispatch_id}]", VisibleAfterLists: 1,
				Frames:    ghtest.DefaultFrames(ghcmdtest.FixedNow.Add(-time.Minute), "failure"),
				Artifacts: []ghtest.ArtifactFile{{Name: "debug_cuda_repro_artifacts", Zip: ghcmdtest.EvidenceZip(t, 7)}}})
			h := ghcmdtest.NewHarness(t, srv)
			dir := filepath.Join(t.TempDir(), "evidence")

			err := h.Run(dispatchCmd, "-f", "reproduce_count=100", "--download", dir, "--interval", "2s")

			if ghrun.ExitCode(err) != ghrun.ExitFailure || !strings.Contains(fmt.Sprint(err), "concluded failure") {
				t.Fatalf("err = %v (code %d), want the run's failure", err, ghrun.ExitCode(err))
			}
			runs := srv.Runs()
			if len(runs) != 1 {
				t.Fatalf("%d runs", len(runs))
			}
			run := runs[0]
			url := "https://github.com/acme/kernels/actions/runs/" + ghcmdtest.Itoa64(run.ID)
			if run.Branch != "debug/t4" || run.Inputs["reproduce_count"] != "100" {
				t.Errorf("dispatched %+v", run)
			}
			stdout, stderr := h.Out.String(), h.Err.String()
			for _, want := range []string{url + "\n", "TMATE GATE OPEN", `step 3 "Run reproducer" failure`,
				"run " + ghcmdtest.Itoa64(run.ID) + " completed: failure", "verdict for evidence: reproduced=true failed=7"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			for _, want := range []string{"dispatched " + ghcmdtest.WorkflowFile + " on acme/kernels@debug/t4: run " + ghcmdtest.Itoa64(run.ID) + " (" + tt.how + ")",
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
	srv := ghcmdtest.NewServer(t)
	h := ghcmdtest.NewHarness(t, srv)
	if err := h.Run(dispatchCmd, "--json", "--watch", "--interval", "1s"); err != nil {
		t.Fatal(err)
	}
	id := srv.Runs()[0].ID
	want := fmt.Sprintf(`{"run_id":%d,"html_url":"https://github.com/acme/kernels/actions/runs/%d"}`+"\n", id, id)
	if h.Out.String() != want {
		t.Errorf("stdout = %q, want exactly %q (watch progress belongs on stderr)", h.Out.String(), want)
	}
	if !strings.Contains(h.Err.String(), "completed: success") {
		t.Errorf("stderr lacks the watch:\n%s", h.Err.String())
	}
}

func TestDispatchUsageErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		env    map[string]string // overrides; "" deletes
		modify func(*ghcmd.Factory)
		want   string
	}{
		{name: "unknown input", args: []string{"-f", "count=5", "-f", "open_tmate=maybe"}, want: `unknown input "count"`},
		{name: "bad -f", args: []string{"-f", "reproduce_count"}, want: "expected name=value"},
		{name: "unknown flag", args: []string{"--nope"}, want: "unknown flag: --nope"},
		{name: "positional argument", args: []string{"reproduce_count=5"}, want: "inputs go in -f name=value"},
		{name: "no token", env: map[string]string{ghrun.EnvGHToken: ""}, want: "no GitHub token for the API at GITHUB_API_URL"},
		{name: "bad API URL", env: map[string]string{ghrun.EnvAPIURL: "ghe.example.com"}, want: "GITHUB_API_URL"},
		{name: "no remote", modify: func(f *ghcmd.Factory) {
			f.GitRemote = func(context.Context) (string, error) { return "", errors.New("not a git repository") }
		}, want: "pass -R OWNER/REPO"},
		{name: "bad -R", args: []string{"-R", "acme"}, want: "expected OWNER/REPO"},
		{name: "detached HEAD", modify: func(f *ghcmd.Factory) {
			f.GitBranch = func(context.Context) (string, error) { return "", errors.New("HEAD is not on a branch") }
		}, want: "pass --ref BRANCH"},
		{name: "spec does not load", modify: func(f *ghcmd.Factory) {
			f.Workflow = func() (ghrun.Workflow, error) {
				return ghrun.Workflow{}, errors.New("debugflow.yaml:3:1: unknown field")
			}
		}, want: "load the debug spec: debugflow.yaml:3:1"},
		{name: "bad interval", args: []string{"--watch", "--interval", "0s"}, want: `invalid argument "0s" for "--interval" flag: "0s": the interval must be positive`},
		{name: "unknown --json field", args: []string{"--json", "runId,bogus"}, want: "--json: unknown field \"bogus\"; the fields are:\n  dispatchId\n  foundBy"},
		{name: "bad stdin JSON", modify: func(f *ghcmd.Factory) { f.IO.In = strings.NewReader("reproduce_count=5") },
			want: "stdin: not a JSON object (with no -f or -F, the inputs are read from stdin as a JSON object"},
		{name: "stdin JSON checked against the spec", modify: func(f *ghcmd.Factory) { f.IO.In = strings.NewReader(`{"reproduce_count": "lots", "repro_count": 1}`) },
			want: `input "reproduce_count" must be a number`},
		{name: "-F file missing", args: []string{"-F", "quadrants_ref=@/nonexistent/ref.txt"}, want: "-F quadrants_ref=@/nonexistent/ref.txt: open /nonexistent/ref.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := ghcmdtest.NewServer(t)
			h := ghcmdtest.NewHarness(t, srv)
			for k, v := range tt.env {
				h.Env[k] = v
			}
			if tt.modify != nil {
				tt.modify(h.F)
			}
			err := h.Run(dispatchCmd, tt.args...)
			if ghrun.ExitCode(err) != ghrun.ExitUsage || !strings.Contains(fmt.Sprint(err), tt.want) {
				t.Fatalf("err = %v (code %d), want code 2 and %q", err, ghrun.ExitCode(err), tt.want)
			}
			var ee *ghrun.ExitError
			if !errors.As(err, &ee) {
				t.Errorf("%T is not an *ghrun.ExitError", err)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests despite the usage error", n)
			}
		})
	}
}

// The inputs of the one run dispatched so far, without the dispatch_id.
func dispatchedInputs(t *testing.T, srv *ghtest.Server) map[string]any {
	t.Helper()
	runs := srv.Runs()
	if len(runs) != 1 {
		t.Fatalf("%d runs dispatched, want 1", len(runs))
	}
	in := map[string]any{}
	for k, v := range runs[0].Inputs {
		if k != ghrun.DispatchIDInput {
			in[k] = v
		}
	}
	return in
}

func TestDispatchInputSources(t *testing.T) {
	dir := t.TempDir()
	refFile := filepath.Join(dir, "ref.txt")
	os.WriteFile(refFile, []byte("v1.2.3"), 0o644)
	tests := []struct {
		name     string
		stdin    io.Reader
		stdinTTY bool
		args     []string
		want     map[string]any
	}{
		{name: "JSON on stdin, typed values", stdin: strings.NewReader(`{"reproduce_count": 200, "open_tmate": false, "sanitizer_tool": "racecheck"}`),
			want: map[string]any{"reproduce_count": "200", "open_tmate": "false", "sanitizer_tool": "racecheck"}},
		{name: "-f wins over stdin, which is not read", stdin: strings.NewReader("not JSON at all"), args: []string{"-f", "reproduce_count=7"},
			want: map[string]any{"reproduce_count": "7"}},
		{name: "a terminal is never read", stdin: strings.NewReader("not JSON at all"), stdinTTY: true, want: map[string]any{}},
		{name: "empty stdin sends the defaults", stdin: strings.NewReader(""), want: map[string]any{}},
		{name: "-F @FILE", args: []string{"-F", "quadrants_ref=@" + refFile, "-F", "open_tmate=TRUE"},
			want: map[string]any{"quadrants_ref": "v1.2.3", "open_tmate": "true"}},
		{name: "-F @- reads stdin", stdin: strings.NewReader("main"), args: []string{"-F", "quadrants_ref=@-"},
			want: map[string]any{"quadrants_ref": "main"}},
		{name: "-f @ is literal", args: []string{"-f", "quadrants_ref=@" + refFile}, want: map[string]any{"quadrants_ref": "@" + refFile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := ghcmdtest.NewServer(t)
			h := ghcmdtest.NewHarness(t, srv)
			h.F.IO.In, h.F.IO.StdinIsTTY = tt.stdin, tt.stdinTTY
			if err := h.Run(dispatchCmd, tt.args...); err != nil {
				t.Fatalf("%v\n%s", err, h.Err.String())
			}
			got := dispatchedInputs(t, srv)
			if len(got) != len(tt.want) {
				t.Errorf("inputs %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("input %s = %v, want %v (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}

// cancelOnWrite cancels a context as soon as anything is written to it.
type cancelOnWrite struct {
	mu     sync.Mutex
	buf    strings.Builder
	cancel context.CancelFunc
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	c.cancel()
	return len(p), nil
}

// A stdin that stays open and silent gets a hint, and Ctrl-C still works:
// nothing is dispatched.
func TestDispatchWaitingOnStdin(t *testing.T) {
	srv := ghcmdtest.NewServer(t)
	h := ghcmdtest.NewHarness(t, srv)
	r, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelOnWrite{cancel: cancel} // "Ctrl-C" right after the hint
	h.F.IO.In, h.F.IO.ErrOut = r, stderr
	cmd := NewCmdDispatch(h.F, nil)
	cmd.SetArgs(nil)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.ExecuteContext(ctx)
	if ghrun.ExitCode(err) != ghrun.ExitInterrupted || !strings.Contains(err.Error(), "no inputs were read; nothing was dispatched") {
		t.Fatalf("err = %v (code %d)", err, ghrun.ExitCode(err))
	}
	if !strings.Contains(stderr.buf.String(), "waiting for the inputs as a JSON object on stdin") || !strings.Contains(stderr.buf.String(), "</dev/null") {
		t.Errorf("hint = %q", stderr.buf.String())
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}

func TestDispatchJSONFields(t *testing.T) {
	srv := ghcmdtest.NewServer(t)
	h := ghcmdtest.NewHarness(t, srv)
	if err := h.Run(dispatchCmd, "--json", "runId,url,workflow,ref,repository,dispatchId,foundBy", "--watch", "-r", "main"); err != nil {
		t.Fatal(err)
	}
	run := srv.Runs()[0]
	var got map[string]any
	if err := json.Unmarshal([]byte(h.Out.String()), &got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, h.Out.String())
	}
	want := map[string]any{"runId": float64(run.ID), "url": "https://github.com/acme/kernels/actions/runs/" + ghcmdtest.Itoa64(run.ID),
		"workflow": ghcmdtest.WorkflowFile, "ref": "main", "repository": "acme/kernels", "dispatchId": run.Inputs[ghrun.DispatchIDInput], "foundBy": ghrun.FoundRunDetails}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("fields %v", got)
	}
	if !strings.HasPrefix(h.Out.String(), `{"runId":`) {
		t.Errorf("fields not in the order asked: %s", h.Out.String())
	}

	// An unknown field is refused before anything is sent.
	srv2 := ghcmdtest.NewServer(t)
	h2 := ghcmdtest.NewHarness(t, srv2)
	err := h2.Run(dispatchCmd, "--json", "id")
	if ghrun.ExitCode(err) != ghrun.ExitUsage || !strings.Contains(err.Error(), "  runId\n  run_id\n  url") || len(srv2.Requests()) != 0 {
		t.Fatalf("err = %v, %d requests", err, len(srv2.Requests()))
	}
}

// TestRunDispatchDirect calls the engine's run function without cobra, as experiment and
// bisect may.
func TestRunDispatchDirect(t *testing.T) {
	srv := ghcmdtest.NewServer(t)
	h := ghcmdtest.NewHarness(t, srv)
	err := ghrun.RunDispatch(context.Background(), h.F.GitHub(), &ghrun.DispatchOptions{RepoFlags: ghrun.RepoFlags{Repo: "acme/kernels"}, Ref: "main",
		RawFields: []string{"open_tmate=false"}, Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	runs := srv.Runs()
	if len(runs) != 1 || runs[0].Branch != "main" || runs[0].Inputs["open_tmate"] != "false" {
		t.Fatalf("runs %+v", runs)
	}
	if h.Out.String() != "https://github.com/acme/kernels/actions/runs/"+ghcmdtest.Itoa64(runs[0].ID)+"\n" {
		t.Errorf("stdout %q: want just the run URL", h.Out.String())
	}
}

// Ctrl-C while dispatch --download watches the run: exit 130, and the commands that pick the
// run up again, the download into the same folder, quoted for the shell.
func TestDispatchDownloadInterruptedSaysHowToResume(t *testing.T) {
	srv := ghcmdtest.NewServer(t)
	srv.AddWorkflow(ghtest.Workflow{File: ghcmdtest.WorkflowFile, Name: "Debug CUDA repro", Inputs: ghcmdtest.InputNames(ghcmdtest.Workflow()),
		RunName: "debug CUDA repro [{dispatch_id}]", Frames: []ghtest.Frame{{Status: "in_progress"}}})
	h := ghcmdtest.NewHarness(t, srv)
	h.F.IO.In = strings.NewReader("")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.F.Sleep = func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() } // Ctrl-C at the first poll's wait
	dir := filepath.Join(t.TempDir(), "my evidence")
	cmd := NewCmdDispatch(h.F, nil)
	cmd.SetArgs([]string{"--download", dir, "-R", "acme/kernels"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.ExecuteContext(ctx)
	if ghrun.ExitCode(err) != ghrun.ExitInterrupted {
		t.Fatalf("exit %d: %v", ghrun.ExitCode(err), err)
	}
	id := ghcmdtest.Itoa64(srv.Runs()[0].ID)
	for _, want := range []string{"interrupted: stopped watching; run " + id + " continues on GitHub: https://github.com/acme/kernels/actions/runs/" + id,
		"pick it up again with:\n  debugflow watch " + id + " -R acme/kernels\n  debugflow download " + id + " -R acme/kernels -D '" + dir + "'"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// An API outage that outlasts the watch's patience: exit 75 (not 1, "the run failed"), with
// the resume commands.
func TestDispatchDownloadAPIOutage(t *testing.T) {
	srv := ghcmdtest.NewServer(t)
	h := ghcmdtest.NewHarness(t, srv)
	h.F.IO.In = strings.NewReader("")
	srv.Fail(ghtest.Fault{Method: "GET", Path: "/actions/runs/", Status: 502, Times: 1 << 20})
	dir := filepath.Join(t.TempDir(), "ev")
	err := h.Run(dispatchCmd, "--download", dir, "-R", "acme/kernels")
	if ghrun.ExitCode(err) != ghrun.ExitAPIUnavailable || ghrun.ExitAPIUnavailable == ghrun.ExitFailure {
		t.Fatalf("exit %d, want %d: %v", ghrun.ExitCode(err), ghrun.ExitAPIUnavailable, err)
	}
	id := ghcmdtest.Itoa64(srv.Runs()[0].ID)
	if want := "  debugflow watch " + id + " -R acme/kernels\n  debugflow download " + id + " -R acme/kernels -D " + dir; !strings.Contains(err.Error(), want) {
		t.Errorf("error lacks %q:\n%v", want, err)
	}
	if !strings.Contains(h.Err.String(), "GitHub API unavailable (HTTP 502), retrying in 5s ...") {
		t.Errorf("stderr:\n%s", h.Err.String())
	}
}

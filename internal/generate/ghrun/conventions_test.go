package ghrun

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The inputs of the one run dispatched so far, without the dispatch_id.
func dispatchedInputs(t *testing.T, srv *ghtest.Server) map[string]any {
	t.Helper()
	runs := srv.Runs()
	if len(runs) != 1 {
		t.Fatalf("%d runs dispatched, want 1", len(runs))
	}
	in := map[string]any{}
	for k, v := range runs[0].Inputs {
		if k != DispatchIDInput {
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
			srv := newServer(t)
			h := newHarness(t, srv)
			h.f.Stdin, h.f.StdinIsTTY = tt.stdin, tt.stdinTTY
			if err := h.run(dispatchCmd, tt.args...); err != nil {
				t.Fatalf("%v\n%s", err, h.err.String())
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
	srv := newServer(t)
	h := newHarness(t, srv)
	r, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelOnWrite{cancel: cancel} // "Ctrl-C" right after the hint
	h.f.Stdin, h.f.Stderr = r, stderr
	cmd := NewCmdDispatch(h.f)
	cmd.SetArgs(nil)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.ExecuteContext(ctx)
	if ExitCode(err) != ExitInterrupted || !strings.Contains(err.Error(), "no inputs were read; nothing was dispatched") {
		t.Fatalf("err = %v (code %d)", err, ExitCode(err))
	}
	if !strings.Contains(stderr.buf.String(), "waiting for the inputs as a JSON object on stdin") || !strings.Contains(stderr.buf.String(), "</dev/null") {
		t.Errorf("hint = %q", stderr.buf.String())
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}

func TestDispatchJSONFields(t *testing.T) {
	srv := newServer(t)
	h := newHarness(t, srv)
	if err := h.run(dispatchCmd, "--json", "runId,url,workflow,ref,repository,dispatchId,foundBy", "--watch", "-r", "main"); err != nil {
		t.Fatal(err)
	}
	run := srv.Runs()[0]
	var got map[string]any
	if err := json.Unmarshal([]byte(h.out.String()), &got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, h.out.String())
	}
	want := map[string]any{"runId": float64(run.ID), "url": "https://github.com/acme/kernels/actions/runs/" + itoa64(run.ID),
		"workflow": wfFile, "ref": "main", "repository": "acme/kernels", "dispatchId": run.Inputs[DispatchIDInput], "foundBy": FoundRunDetails}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("fields %v", got)
	}
	if !strings.HasPrefix(h.out.String(), `{"runId":`) {
		t.Errorf("fields not in the order asked: %s", h.out.String())
	}

	// An unknown field is refused before anything is sent.
	srv2 := newServer(t)
	h2 := newHarness(t, srv2)
	err := h2.run(dispatchCmd, "--json", "id")
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "  runId\n  run_id\n  url") || len(srv2.Requests()) != 0 {
		t.Fatalf("err = %v, %d requests", err, len(srv2.Requests()))
	}
}

// watch -i 5 waits 5 seconds between polls, as gh does.
func TestWatchIntervalSeconds(t *testing.T) {
	srv := newServer(t)
	id := srv.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "main", Frames: ghtest.DefaultFrames(fixedNow, "success")})
	h := newHarness(t, srv)
	if err := h.run(watchCmd, itoa64(id), "-R", "acme/kernels", "-i", "5", "--exit-status"); err != nil {
		t.Fatal(err)
	}
	waits := h.sleeper.Waits()
	if len(waits) == 0 || slices.ContainsFunc(waits, func(d time.Duration) bool { return d != 5*time.Second }) {
		t.Errorf("waits %v, want 5s each", waits)
	}
}

func TestDownloadSelection(t *testing.T) {
	names := []string{"evidence-a10g", "evidence-t4", "evidence-t4-old", "logs"}
	tests := []struct {
		name     string
		args     []string
		want     []string // folders under DIR, or "." for DIR itself
		wantErr  string
		noDIRArg bool
	}{
		{name: "everything that has not expired", want: []string{"evidence-a10g", "evidence-t4", "logs"}},
		{name: "one -n goes into DIR", args: []string{"-n", "logs"}, want: []string{"."}},
		{name: "two -n", args: []string{"-n", "logs", "-n", "evidence-t4"}, want: []string{"evidence-t4", "logs"}},
		{name: "a pattern, even matching one, isolates", args: []string{"-p", "log*"}, want: []string{"logs"}},
		{name: "patterns skip expired matches", args: []string{"-p", "evidence-t4*"}, want: []string{"evidence-t4"}},
		{name: "names and patterns together", args: []string{"-n", "logs", "-p", "*a10g"}, want: []string{"evidence-a10g", "logs"}},
		{name: "unknown name", args: []string{"-n", "nope"}, wantErr: `has no artifact "nope"; it has: evidence-a10g, evidence-t4, evidence-t4-old, logs`},
		{name: "expired by name", args: []string{"-n", "evidence-t4-old"}, wantErr: "has expired"},
		{name: "pattern matching nothing", args: []string{"-p", "x*", "-p", "y*"}, wantErr: `matches -p "x*" -p "y*"; it has:`},
		{name: "bad pattern is refused before any request", args: []string{"-p", "[a-"}, wantErr: `-p "[a-" is not a glob pattern`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			id := srv.AddRun(ghtestRun(wfFile, "main"))
			for _, n := range names {
				srv.AddArtifact(id, ghtest.ArtifactFile{Name: n, Zip: evidenceZip(t, 1), Expired: strings.HasSuffix(n, "-old")})
			}
			h := newHarness(t, srv)
			dir := filepath.Join(t.TempDir(), "out")
			err := h.run(downloadCmd, append([]string{itoa64(id), "-D", dir}, tt.args...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(tt.name, "before any request") && len(srv.Requests()) != 0 {
					t.Errorf("%d requests", len(srv.Requests()))
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, h.err.String())
			}
			var got []string
			if _, err := os.Stat(filepath.Join(dir, "reproducer_summary.json")); err == nil {
				got = []string{"."}
			} else {
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					got = append(got, e.Name())
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("extracted %v, want %v", got, tt.want)
			}
		})
	}
}

// Without -D, the folder is debugflow-run-<RUN_ID> in the current folder, and the output says so.
func TestDownloadDefaultFolder(t *testing.T) {
	srv := newServer(t)
	id := srv.AddRun(ghtestRun(wfFile, "main"))
	srv.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1)})
	h := newHarness(t, srv)
	t.Chdir(t.TempDir())
	if err := h.run(downloadCmd, itoa64(id)); err != nil {
		t.Fatal(err)
	}
	want := "debugflow-run-" + itoa64(id)
	if _, err := os.Stat(filepath.Join(want, "reproducer_summary.json")); err != nil {
		t.Errorf("not extracted into ./%s: %v", want, err)
	}
	if !strings.Contains(h.err.String(), "downloading into "+want+" (the default for run "+itoa64(id)+"; choose another folder with -D)") {
		t.Errorf("stderr does not name the folder:\n%s", h.err.String())
	}
}

// Every flag has a usage line, and the help shows the gh conventions with examples.
func TestHelpDocumentsEveryFlag(t *testing.T) {
	for _, tt := range []struct {
		cmd  *cobra.Command
		want []string
	}{
		{NewCmdDispatch(&Factory{}), []string{"-r, --ref", "-f, --raw-field NAME=VALUE", "-F, --field NAME=VALUE", "@FILE", "@-",
			"--json FIELDS", "runId, url", "JSON object", "</dev/null", "--json runId,url", "-F quadrants_ref=@ref.txt", "| debugflow dispatch",
			"--idle-timeout", "whole seconds"}},
		{NewCmdWatch(&Factory{}), []string{"-i, --interval seconds|duration", "-i 10", "--exit-status", "always on", "exit 130"}},
		{NewCmdDownload(&Factory{}), []string{"-n, --name NAME", "-p, --pattern PATTERN", "debugflow-run-<RUN_ID> in the current folder",
			"-p 'evidence-t4*'", "--idle-timeout", "--max-size"}},
	} {
		var help strings.Builder
		tt.cmd.SetOut(&help)
		tt.cmd.SetArgs([]string{"--help"})
		if err := tt.cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(help.String(), w) {
				t.Errorf("%s --help lacks %q", tt.cmd.Name(), w)
			}
		}
		tt.cmd.Flags().VisitAll(func(fl *pflag.Flag) {
			if strings.TrimSpace(fl.Usage) == "" && fl.Name != "help" {
				t.Errorf("%s --%s has no usage text", tt.cmd.Name(), fl.Name)
			}
		})
		if !tt.cmd.HasExample() {
			t.Errorf("%s has no examples", tt.cmd.Name())
		}
	}
}

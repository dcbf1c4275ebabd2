package experiment

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
	"github.com/debugflow/debugflow/internal/testenv"
)

// Ctrl-C while the run waits for a runner (a label with no runner online: queued for ever)
// ends the experiment at once with exit 130, and its last line says which run goes on on
// GitHub and how to stop it: the run keeps its GPU hours whatever debugflow does, and an
// experiment does not resume. Before, the last line said only "interrupted before anything
// was written: no folder was kept", the run's id lost with the watch's error.
func TestExperimentGitHubInterruptedWhileQueued(t *testing.T) {
	dir := t.TempDir()
	cmdtest.GitRepo(t, dir)
	testenv.WriteFile(t, filepath.Join(dir, ".github", "workflows", "debugflow_experiment.yml"), "# the experiment workflow\n")
	specPath := filepath.Join(dir, "debugflow.yaml")
	testenv.WriteFile(t, specPath, "runners: [gpu-t4-4-core]\nreproducer:\n  paths: [t.py]\nartifact:\n  name: evidence\n")
	_, wf := cmdtest.ExperimentWorkflow(t, specPath)
	srv := ghtest.New(t, "acme", "kernels", cmdtest.TestToken)
	srv.AddBranch("debug/t4")
	queued := make([]ghtest.Frame, 100000)
	for i := range queued {
		queued[i] = ghtest.Frame{Status: "queued", Jobs: []ghtest.Job{{ID: 1, Name: "experiment", Status: "queued", Labels: []string{"gpu-t4-4-core"}}}}
	}
	srv.AddWorkflow(ghtest.Workflow{File: wf.File, Name: wf.Name, Inputs: wf.Inputs, Required: wf.Required, RunName: wf.RunName, Frames: queued})
	t.Setenv("GH_TOKEN", cmdtest.TestToken)
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GITHUB_API_URL", srv.URL())
	t.Chdir(dir)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for len(srv.Runs()) < 1 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // watching it
		cancel()
	}()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := cmdtest.Execute(ctx, commands, []string{"experiment", "--spec", specPath, "--baseline", "main", "--candidate", "fix=fix-branch",
		"--count", "5", "--out", filepath.Join(dir, "exp"), "--interval", "1ms"}, strings.NewReader(""), &stdout, &stderr)
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %s to stop", d)
	}
	runs := srv.Runs()
	if len(runs) != 1 {
		t.Fatalf("%d runs dispatched, want 1", len(runs))
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	id := fmt.Sprint(runs[0].ID)
	for _, want := range []string{"run " + id + " goes on on GitHub", "gh run cancel " + id + " -R acme/kernels"} {
		if !strings.Contains(last, want) {
			t.Errorf("last line %q lacks %q\n%s", last, want, stderr.String())
		}
	}
}

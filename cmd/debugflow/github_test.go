package main

import (
	"archive/zip"
	"bytes"
	"context"
	"github.com/debugflow/debugflow/internal/limits"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
)

// pushedDebugBranch makes dir a debug branch as the session leaves it before dispatch: the
// default workflow generated, committed and pushed (to a local bare repository standing for
// github.com/acme/kernels) with an upstream.
func pushedDebugBranch(t *testing.T, dir string) {
	t.Helper()
	cmdtest.GitRepo(t, dir)
	bare := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "-C", dir, "config", "url."+bare+".pushInsteadOf", "https://github.com/acme/kernels.git").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	if code, out := runCLI(t, dir, "generate", "--default-spec", "-o", filepath.Join(".github", "workflows", "debug_cuda_repro.yml")); code != 0 {
		t.Fatalf("generate: exit %d:\n%s", code, out)
	}
	gitCommitAll(t, dir)
	if out, err := exec.Command("git", "-C", dir, "push", "-q", "-u", "origin", "HEAD").CombinedOutput(); err != nil {
		t.Fatalf("git push: %v\n%s", err, out)
	}
}

// evidenceZip is an artifact as the debug job uploads it: a reproducer log with a crashed
// worker and a failure, and the Xid lines the run added.
func evidenceZip(t *testing.T) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	files := map[string]string{
		"reproducer.log": "[gw0] [ 25%] PASSED t.py::test_x[cuda-1-4]\n" +
			"[gw1] node down: Not properly terminated\n" +
			"[gw1] [ 50%] FAILED t.py::test_x[cuda-2-4]\n" +
			"[gw0] [ 75%] FAILED t.py::test_x[cuda-3-4]\n" +
			"[gw0] [100%] PASSED t.py::test_x[cuda-4-4]\n" +
			"========= 2 failed, 2 passed in 3.21s =========\n",
		"xid_added.log": "[Wed Dec  2 10:47:01 2026] NVRM: Xid (PCI:0001:00:00): 31, pid=37803, name=pytest, channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n",
	}
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The whole loop through the real wiring: the default spec's inputs, dispatch to a local fake
// GitHub, watch to completion, download, and the real report package's verdict.
func TestDispatchWatchDownloadReport(t *testing.T) {
	srv := ghtest.New(t, "acme", "kernels", cmdtest.TestToken)
	srv.Mode = ghtest.DispatchNoContent // the run is found through dispatch_id
	srv.AddBranch("debug/t4")
	srv.AddWorkflow(ghtest.Workflow{
		File: "debug_cuda_repro.yml", Name: "Debug CUDA T4 max-reducer hang",
		Inputs:    []string{"quadrants_ref", "tmate_timeout_minutes", "reproduce_count", "dispatch_id"},
		RunName:   "Debug CUDA T4 max-reducer hang {dispatch_id}",
		Frames:    ghtest.DefaultFrames(time.Now().Add(-time.Minute), "failure"),
		Artifacts: []ghtest.ArtifactFile{{Name: "debug_cuda_repro_artifacts", Zip: evidenceZip(t)}},
	})
	dir := t.TempDir()
	pushedDebugBranch(t, dir)
	t.Setenv("GH_TOKEN", cmdtest.TestToken)
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GITHUB_API_URL", srv.URL())
	evidence := filepath.Join(dir, "evidence")

	code, out := runCLI(t, dir, "dispatch", "-f", "reproduce_count=200", "--download", evidence, "--interval", "1s")

	if code != 1 { // the run concluded failure: the bug reproduced
		t.Errorf("exit %d, want 1:\n%s", code, out)
	}
	runs := srv.Runs()
	if len(runs) != 1 || runs[0].Inputs["reproduce_count"] != "200" || runs[0].Inputs["dispatch_id"] == "" {
		t.Fatalf("dispatched %+v", runs)
	}
	if _, sent := runs[0].Inputs["tmate_timeout_minutes"]; sent {
		t.Error("a default input was sent")
	}
	for _, want := range []string{
		"actions/runs/",       // the run URL
		"Reproduced:     yes", // the real report's verdict
		"t.py::test_x[cuda]",  // base id of the failures
		"gw1",                 // the crashed worker
		"31",                  // the Xid
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, cmdtest.TestToken) {
		t.Error("the token appears in the output")
	}
}

func TestDispatchChecksInputsAgainstTheSpec(t *testing.T) {
	dir := t.TempDir()
	cmdtest.GitRepo(t, dir)
	t.Setenv("GH_TOKEN", cmdtest.TestToken)
	t.Setenv("GITHUB_API_URL", "http://127.0.0.1:1/") // never reached: validation comes first
	code, out := runCLI(t, dir, "dispatch", "-f", "reproduce_count=lots", "-f", "repro_count=5", "-f", "tmate_timeout_minutes=999")
	if code != 2 {
		t.Errorf("exit %d, want 2:\n%s", code, out)
	}
	for _, want := range []string{`unknown input "repro_count"`, "reproduce_count", "quadrants_ref, tmate_timeout_minutes",
		`"tmate_timeout_minutes" is the tmate timeout in minutes, at most the spec's tmate.max_minutes: it must be a whole number from 1 to 120`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// On a detached HEAD, dispatch targets the spec's debug branch.
func TestDispatchFallsBackToTheSpecBranch(t *testing.T) {
	srv := ghtest.New(t, "acme", "kernels", cmdtest.TestToken)
	srv.AddBranch("debug/cuda-t4-repro") // the default spec's workflow.branch
	srv.AddWorkflow(ghtest.Workflow{File: "debug_cuda_repro.yml", Name: "Debug",
		Inputs: []string{"quadrants_ref", "tmate_timeout_minutes", "reproduce_count", "dispatch_id"}})
	dir := t.TempDir()
	cmdtest.GitRepo(t, dir)
	for _, args := range [][]string{{"commit", "-q", "--allow-empty", "-m", "x"}, {"checkout", "-q", "--detach"}} {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	t.Setenv("GH_TOKEN", cmdtest.TestToken)
	t.Setenv("GITHUB_API_URL", srv.URL())
	code, out := runCLI(t, dir, "dispatch")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if runs := srv.Runs(); len(runs) != 1 || runs[0].Branch != "debug/cuda-t4-repro" {
		t.Errorf("dispatched %+v, want the spec's branch", runs)
	}
}

// runCLIStdin is runCLI with something on stdin.
func runCLIStdin(t *testing.T, dir string, stdin io.Reader, args ...string) (int, string) {
	t.Helper()
	t.Chdir(dir)
	var out bytes.Buffer
	code := run(context.Background(), args, stdin, &out, &out)
	return code, out.String()
}

// Through the real wiring: no token in the environment, so the token comes from
// `gh auth token` (a fake gh on PATH); the inputs come as JSON on stdin; --json
// picks the fields.
func TestDispatchWithGHTokenAndStdinInputs(t *testing.T) {
	const ghToken = "gho_FROMghCLI0123456789abcdefghijklmnop"
	srv := ghtest.New(t, "acme", "kernels", ghToken)
	srv.AddBranch("debug/t4")
	srv.AddWorkflow(ghtest.Workflow{File: "debug_cuda_repro.yml", Name: "Debug",
		Inputs: []string{"quadrants_ref", "tmate_timeout_minutes", "reproduce_count", "dispatch_id"}})
	ghDir := t.TempDir()
	logFile := filepath.Join(ghDir, "args.log")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + logFile + "\n[ \"$1 $2 $3\" = \"auth token --hostname\" ] && echo " + ghToken + "\n"
	testenv.WriteExecutable(t, filepath.Join(ghDir, "gh"), []byte(script))
	dir := t.TempDir()
	pushedDebugBranch(t, dir)
	t.Setenv("PATH", ghDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("GH_PATH", "")
	t.Setenv("GH_TOKEN", "")
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GITHUB_API_URL", srv.URL())

	code, out := runCLIStdin(t, dir, strings.NewReader(`{"reproduce_count": 300}`), "dispatch", "--json", "runId,ref")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	runs := srv.Runs()
	if len(runs) != 1 || runs[0].Inputs["reproduce_count"] != "300" || runs[0].Branch != "debug/t4" {
		t.Fatalf("dispatched %+v", runs)
	}
	if !strings.Contains(out, `{"runId":`+strconv.FormatInt(runs[0].ID, 10)+`,"ref":"debug/t4"}`) {
		t.Errorf("output:\n%s", out)
	}
	host := strings.TrimPrefix(strings.TrimSuffix(srv.URL(), "/"), "http://")
	if b, _ := os.ReadFile(logFile); string(b) != "auth token --hostname "+host+"\n" {
		t.Errorf("gh was run as %q", b)
	}
	if strings.Contains(out, ghToken) {
		t.Error("the token was printed")
	}
}

// The dispatched count has the spec's bound (limits.MaxRepeatCount), checked before
// anything is sent; the runner's check-inputs refuses the same numbers.
func TestDispatchWorkflowBoundsTheCount(t *testing.T) {
	s := spec.Default()
	wf := dispatchWorkflow(s)
	in, ok := wf.Input(s.Reproducer.CountInput)
	if !ok || in.Range == nil || in.Range.Min != 1 || in.Range.Max != limits.MaxRepeatCount {
		t.Fatalf("count input %+v: want the range 1 to %d", in, limits.MaxRepeatCount)
	}
}

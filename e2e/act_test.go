package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/testenv"
)

// The generated workflows under nektos/act (github.com/nektos/act), an Actions engine that
// is not ours: every job on this machine (-P <label>=-self-hosted, no container), every
// expression, if:, needs:, matrix, output, GITHUB_ENV/GITHUB_PATH line and job summary as act
// reads them. The pinned actions come from the stand-ins of testdata/act (see its README).

// actVersion is the act release the tests run under; .ci/run installs exactly this one.
const actVersion = "0.2.89"

// actRunBudget bounds one act run in the test: a hang, not a slow machine.
const actRunBudget = 6 * time.Minute

// findAct returns the act binary: on PATH, else in $(go env GOPATH)/bin. Under CI a missing
// act or another version fails the test; elsewhere the test is skipped with the install line.
func findAct(t *testing.T) string {
	t.Helper()
	install := "GOFLAGS=-mod=mod go install github.com/nektos/act@v" + actVersion
	fail := t.Skipf
	if os.Getenv("CI") == "true" {
		fail = t.Fatalf
	}
	path, err := exec.LookPath("act")
	if err != nil {
		out, gerr := exec.Command("go", "env", "GOPATH").Output()
		candidate := filepath.Join(strings.TrimSpace(string(out)), "bin", "act")
		if _, serr := os.Stat(candidate); gerr != nil || serr != nil {
			fail("act is not installed (not on PATH, not in $(go env GOPATH)/bin): %s (.ci/run installs it)", install)
			return ""
		}
		path = candidate
	}
	out, err := exec.Command(path, "--version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "act version "+actVersion {
		fail("%s --version: %q, %v; want act version %s: %s", path, bytes.TrimSpace(out), err, actVersion, install)
		return ""
	}
	return path
}

// actLabRun is one act run of a generated workflow on this machine.
type actLabRun struct {
	// workflow is the generated YAML; branch the debug branch's tree (act's working
	// directory: the workflow's own commit, with the bundled debugflow-step).
	workflow []byte
	branch   string
	// inputs are the workflow_dispatch inputs.
	inputs map[string]string
	// labels are the runner labels mapped to this machine.
	labels []string
	// project is the git repository the checkout stand-in clones.
	project string
	// freshDirs are emptied at each project checkout, as a fresh GitHub-hosted machine has
	// them. The evidence no longer needs it (each job has a folder of its own, issue 28: the
	// matrix test runs two legs on one host without it).
	freshDirs []string
	// env is the runner's extra environment (the doubles' switches).
	env map[string]string
	// apiURL is GITHUB_API_URL (the fake GitHub serving the actor's SSH keys).
	apiURL string
	// continueFile frees a waiting tmate gate (touched once a gate waits).
	continueFile string
	// serialLegs runs a matrix's legs one after the other (max-parallel: 1, one runner that
	// takes one job at a time): concurrent legs on one host share its kernel log, so each
	// would count the other's Xid lines.
	serialLegs bool
	// pullRequestFrom, when set, makes the run a pull_request from this head repository
	// (owner/name) instead of a workflow_dispatch with inputs.
	pullRequestFrom string
	// verbose asks act for its debug lines too (a skipped job is only logged there).
	verbose bool
}

// actLab is what a run leaves: the artifacts and caches the stand-ins stored, the
// programs' call logs, and the jobs as act reported them.
type actLab struct {
	root      string
	artifacts string
	cache     string
	sudoLog   string
	guardLog  string
	jobs      []*actJob
	// log is act's whole output, for a failed test.
	log string
}

// actJob is one job, or one leg of a matrix job, as act ran it.
type actJob struct {
	ID string
	// Name is act's "workflow name/job name", the job's name evaluated for its leg.
	Name   string
	Matrix map[string]any
	// Result is act's job result: success, failure, or skipped (a false if:, logged only
	// with verbose).
	Result string
	Steps  []*actStep
	// Summary is the job summary: every step's GITHUB_STEP_SUMMARY, in order.
	Summary string
}

// actStep is one main step of a job. A step whose if: was false is not in the list.
type actStep struct {
	Name, ID string
	// Outcome is steps.<id>.outcome: success or failure (before continue-on-error).
	Outcome string
	Outputs map[string]string
	// ExitCode is the exit status of a failed run: step (act's "exit status N").
	ExitCode int
	// Log is the step's output.
	Log string
}

// actLine is one line of act --json.
type actLine struct {
	Msg        string         `json:"msg"`
	JobID      string         `json:"jobID"`
	Job        string         `json:"job"`
	Matrix     map[string]any `json:"matrix"`
	Step       string         `json:"step"`
	StepID     []string       `json:"stepID"`
	Stage      string         `json:"stage"`
	StepResult string         `json:"stepResult"`
	JobResult  string         `json:"jobResult"`
	Command    string         `json:"command"`
	Name       string         `json:"name"`
	Arg        string         `json:"arg"`
	Content    string         `json:"content"`
	RawOutput  bool           `json:"raw_output"`
}

// actStandIns maps each pinned action to its stand-in folder under testdata/act, as act's
// --local-repository wants it: owner/repo@sha (cache/restore and cache/save share the
// repository actions/cache, whose folders they are).
func actStandIns(t *testing.T) []string {
	t.Helper()
	dir, err := filepath.Abs("testdata/act")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var out []string
	for _, a := range generate.Actions() {
		parts := strings.SplitN(a.Repo, "/", 3)
		repo := parts[0] + "/" + parts[1]
		local := filepath.Join(dir, parts[1])
		if _, err := os.Stat(local); err != nil {
			continue // setup-go: not used by a bundled debugflow-step
		}
		if key := repo + "@" + a.SHA; !seen[key] {
			seen[key] = true
			out = append(out, key+"="+local)
		}
	}
	return out
}

// runAct runs the workflow's workflow_dispatch under act and returns what it did. act's own
// failure (a failed job) is not an error here: the jobs' results say it.
func runAct(t *testing.T, act string, run actLabRun) *actLab {
	t.Helper()
	root := t.TempDir()
	lab := &actLab{root: root, artifacts: filepath.Join(root, "artifacts"), cache: filepath.Join(root, "cache"),
		sudoLog: filepath.Join(root, "sudo.log"), guardLog: filepath.Join(root, "guarded_calls.log")}
	home, toolkit, standIns := filepath.Join(root, "home"), filepath.Join(root, "toolkit"), filepath.Join(root, "standins")
	for _, d := range []string{lab.artifacts, home, toolkit, standIns} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeSudo(t, standIns, toolkit)
	guards := filepath.Join(root, "guards")
	guardPrograms(t, guards, lab.guardLog, false)

	data := run.workflow
	if run.serialLegs {
		data = serialMatrix(t, data)
	}
	wfPath := filepath.Join(run.branch, ".github", "workflows", "debug.yml")
	if err := os.MkdirAll(filepath.Dir(wfPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wfPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	commitTree(t, run.branch)
	// github.repository is the origin remote's owner/name.
	gitRun(t, run.branch, "remote", "add", "origin", "https://github.com/"+simRepository+".git")
	eventName, payload := "workflow_dispatch", map[string]any{"inputs": run.inputs}
	if run.pullRequestFrom != "" {
		eventName, payload = "pull_request", map[string]any{"number": 1, "pull_request": map[string]any{
			"number": 1, "head": map[string]any{"ref": "debug", "repo": map[string]any{"full_name": run.pullRequestFrom}},
			"base": map[string]any{"ref": "main", "repo": map[string]any{"full_name": simRepository}}}}
	}
	event, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	eventFile := filepath.Join(root, "event.json")
	if err := os.WriteFile(eventFile, event, 0o644); err != nil {
		t.Fatal(err)
	}

	args := []string{eventName, "-C", run.branch, "-W", wfPath, "-e", eventFile, "--json",
		"--action-offline-mode", "--action-cache-path", filepath.Join(root, "act-cache"), "--no-cache-server",
		"-a", actor, "-s", "GITHUB_TOKEN=ghs_actDummyToken", "--env", "GITHUB_API_URL=" + run.apiURL}
	if run.verbose {
		args = append(args, "-v")
	}
	for _, l := range run.labels {
		args = append(args, "-P", l+"=-self-hosted")
	}
	for _, l := range actStandIns(t) {
		args = append(args, "--local-repository", l)
	}
	tmpDir := filepath.Join(root, "tmp")
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(act, args...)
	cmd.Dir = run.branch
	// The runner's environment: this machine's, without what GitHub or the test harness set
	// (act sets its own GITHUB_* and RUNNER_*), with a home of its own (the tmate gate's SSH
	// keys, the caches' ~ paths), the doubles first on PATH and the stand-ins' folders.
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "CI" || k == "HOME" || k == "PATH" || slices.ContainsFunc(inheritedSkip, func(p string) bool { return strings.HasPrefix(k, p) }) {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	path := strings.Join([]string{binPath(fromImage), toolkit, standIns, guards, os.Getenv("PATH")}, string(os.PathListSeparator))
	env := map[string]string{
		"HOME": home, "PATH": path, "ACT_DISABLE_VERSION_CHECK": "1",
		"E2E_ACT_PROJECT": run.project, "E2E_ACT_ARTIFACTS": lab.artifacts, "E2E_ACT_CACHE": lab.cache,
		"E2E_ACT_FRESH_DIRS": strings.Join(run.freshDirs, " "), "E2E_ACT_PYTHON": testenv.PytestPython(t),
		"E2E_ACT_SUDO_LOG": lab.sudoLog,
		// act in host mode sets no RUNNER_TEMP for run: steps, so the tmate gate's session
		// folder (socket, keys) goes to TMPDIR: the test's own, removed after it, not /tmp.
		"TMPDIR": tmpDir,
	}
	for k, v := range run.env {
		env[k] = v
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting act: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); freeWaitingGates(ctx, root, run.continueFile) }()
	var lines []actLine
	parsed := make(chan struct{})
	var stdout bytes.Buffer
	go func() {
		defer close(parsed)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			stdout.Write(sc.Bytes())
			stdout.WriteByte('\n')
			var l actLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				lines = append(lines, l)
			}
		}
		io.Copy(io.Discard, pr)
	}()
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	var runErr error
	select {
	case runErr = <-waitErr:
	case <-time.After(actRunBudget):
		cmd.Process.Kill()
		<-waitErr
		runErr = fmt.Errorf("act ran longer than %v", actRunBudget)
	}
	pw.Close()
	<-parsed
	cancel()
	wg.Wait()
	lab.log = stdout.String() + out.String()
	if dir := os.Getenv("E2E_ACT_LOG_DIR"); dir != "" {
		// act's whole output, for a look by hand: E2E_ACT_LOG_DIR=/tmp/act go test ./e2e -run Act
		os.WriteFile(filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".jsonl"), []byte(lab.log), 0o644)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("generated workflow:\n%s", data)
			t.Logf("act %s:\n%s", strings.Join(args, " "), lab.log)
		}
	})
	// act, unlike GitHub's runner, kills no orphan at the end of a job: a process a step
	// left behind (a pytest worker, a tmate session) is still here, and fails the test.
	for _, p := range processesUnder(root) {
		t.Errorf("process %d outlived the workflow run: %s", p.pid, p.cmdline)
		syscall.Kill(p.pid, syscall.SIGKILL)
	}
	lab.jobs = actJobs(lines)
	if runErr != nil && len(lab.jobs) == 0 {
		t.Fatalf("act: %v (no job ran)", runErr)
	}
	if runErr != nil && strings.Contains(runErr.Error(), "longer than") {
		t.Fatalf("act: %v", runErr)
	}
	return lab
}

// actJobs groups act's lines by job and matrix leg, in the order the legs started.
func actJobs(lines []actLine) []*actJob {
	var jobs []*actJob
	byKey := map[string]*actJob{}
	for _, l := range lines {
		if l.JobID == "" {
			continue
		}
		m, _ := json.Marshal(l.Matrix)
		key := l.JobID + " " + string(m)
		j := byKey[key]
		if j == nil {
			j = &actJob{ID: l.JobID, Name: strings.TrimSpace(l.Job), Matrix: l.Matrix}
			if len(l.Matrix) == 0 {
				j.Matrix = nil
			}
			byKey[key] = j
			jobs = append(jobs, j)
		}
		if l.JobResult != "" {
			j.Result = l.JobResult
		}
		if l.Command == "summary" {
			j.Summary += l.Content
		}
		if len(l.StepID) == 0 || l.Stage != "Main" {
			continue
		}
		var st *actStep
		for _, s := range j.Steps {
			if s.ID == l.StepID[0] {
				st = s
			}
		}
		if st == nil {
			st = &actStep{Name: l.Step, ID: l.StepID[0], Outputs: map[string]string{}}
			j.Steps = append(j.Steps, st)
		}
		switch {
		case l.RawOutput:
			st.Log += l.Msg
			if !strings.HasSuffix(l.Msg, "\n") {
				st.Log += "\n"
			}
		case l.Command == "set-output" && len(l.StepID) == 1:
			st.Outputs[l.Name] = l.Arg
		case l.StepResult != "" && len(l.StepID) == 1:
			st.Outcome = l.StepResult
		case len(l.StepID) == 1 && exitStatus.MatchString(l.Msg):
			st.ExitCode, _ = strconv.Atoi(exitStatus.FindStringSubmatch(l.Msg)[1])
		}
	}
	return jobs
}

// exitStatus is act's error line for a step's shell that exited non-zero.
var exitStatus = regexp.MustCompile(`^exit status (\d+)$`)

// job returns the one job or leg with this id whose matrix has these values (nil: any).
func (lab *actLab) job(t *testing.T, id string, matrix map[string]any) *actJob {
	t.Helper()
	var found []*actJob
	for _, j := range lab.jobs {
		if j.ID != id {
			continue
		}
		match := true
		for k, v := range matrix {
			a, _ := json.Marshal(j.Matrix[k])
			b, _ := json.Marshal(v)
			match = match && bytes.Equal(a, b)
		}
		if match {
			found = append(found, j)
		}
	}
	if len(found) != 1 {
		t.Fatalf("act ran %d legs of job %s with matrix %v, want 1", len(found), id, matrix)
	}
	return found[0]
}

// step returns the step called name (it must have run).
func (j *actJob) step(t *testing.T, name string) *actStep {
	t.Helper()
	for _, s := range j.Steps {
		if s.Name == name {
			return s
		}
	}
	var names []string
	for _, s := range j.Steps {
		names = append(names, s.Name)
	}
	t.Fatalf("job %s %v ran no step %q (it ran %q)", j.ID, j.Matrix, name, names)
	return nil
}

// stepLogging returns the first step whose log matches re.
func (j *actJob) stepLogging(t *testing.T, re string) *actStep {
	t.Helper()
	pat := regexp.MustCompile(re)
	for _, s := range j.Steps {
		if pat.MatchString(s.Log) {
			return s
		}
	}
	t.Fatalf("no step of job %s %v logged %q", j.ID, j.Matrix, re)
	return nil
}

// failed lists the steps whose outcome is failure.
func (j *actJob) failed() []string {
	var out []string
	for _, s := range j.Steps {
		if s.Outcome == "failure" {
			out = append(out, s.Name)
		}
	}
	return out
}

// writeSudo writes the runner's sudo: it records every call, runs nothing as root, and
// "installs" nvidia-cuda-toolkit by copying the compute-sanitizer and cuda-gdb doubles into
// toolkit, a folder on PATH that is empty until then. `sudo tee FILE` echoes its input.
func writeSudo(t *testing.T, dir, toolkit string) {
	t.Helper()
	script := `#!/bin/sh
echo "sudo $*" >> "$E2E_ACT_SUDO_LOG"
case " $* " in
  *" apt-get "*"install "*" nvidia-cuda-toolkit "*)
    cp ` + textsafe.ShellWord(filepath.Join(binPath(fromToolkit), "compute-sanitizer")) + ` ` + textsafe.ShellWord(filepath.Join(binPath(fromCudaGDB), "cuda-gdb")) + ` ` + textsafe.ShellWord(toolkit) + `/ ;;
  " tee "*) cat ;;
esac
exit 0
`
	testenv.WriteExecutable(t, filepath.Join(dir, "sudo"), []byte(script))
}

// serialMatrix adds max-parallel: 1 to every strategy: the legs run one after the other, as
// on one self-hosted runner, which takes one job at a time.
func serialMatrix(t *testing.T, data []byte) []byte {
	t.Helper()
	re := regexp.MustCompile(`(?m)^(\s+)strategy:\n`)
	if !re.Match(data) {
		t.Fatal("serialLegs: the workflow has no strategy")
	}
	return re.ReplaceAll(data, []byte("${1}strategy:\n${1}  max-parallel: 1\n"))
}

type leftover struct {
	pid     int
	cmdline string
}

// processesUnder lists the live processes whose working directory is under dir.
func processesUnder(dir string) []leftover {
	var out []leftover
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || (cwd != dir && !strings.HasPrefix(cwd, dir+string(os.PathSeparator))) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, leftover{pid, strings.ReplaceAll(string(cmdline), "\x00", " ")})
	}
	return out
}

// freeWaitingGates plays the user in the tmate session: whenever a debugflow-step gate
// --wait of this run (working in a workspace under root) runs, it touches the continue file,
// once per gate process.
func freeWaitingGates(ctx context.Context, root, continueFile string) {
	if continueFile == "" {
		return
	}
	freed := map[int]bool{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || freed[pid] {
				continue
			}
			cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil {
				continue
			}
			args := strings.Split(string(cmdline), "\x00")
			if len(args) < 2 || filepath.Base(args[0]) != "debugflow-step" || args[1] != "gate" || !slices.Contains(args, "--wait") {
				continue
			}
			// A gate of this run: it runs in one of its jobs' workspaces.
			if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err != nil || !strings.HasPrefix(cwd, root+string(os.PathSeparator)) {
				continue
			}
			// Give the gate a moment to record the file as it found it, then touch it.
			time.Sleep(500 * time.Millisecond)
			now := time.Now()
			if err := os.WriteFile(continueFile, nil, 0o644); err == nil {
				os.Chtimes(continueFile, now, now)
				freed[pid] = true
			}
		}
	}
}

// TestCIInstallsThisAct: .ci/run installs the act release these tests expect.
func TestCIInstallsThisAct(t *testing.T) {
	ci := readFile(t, filepath.Join("..", ".ci", "run"))
	if want := "\nact_version=" + actVersion + "\n"; !strings.Contains(ci, want) {
		t.Errorf(".ci/run does not install act %s (want a line %q)", actVersion, strings.TrimSpace(want))
	}
}

// TestActJobs reads act --json lines (the shapes act v0.2.89 writes) into jobs and steps:
// legs apart by matrix, a composite action's inner lines not taken for the step's own, the
// summary in step order, the exit status of a failed step.
func TestActJobs(t *testing.T) {
	const log = `{"jobID":"debug","job":"W/Debug on a-1","matrix":{"runner":"a"},"msg":"⭐ Run Main Check out","stage":"Main","step":"Check out","stepID":["0"]}
{"jobID":"debug","job":"W/Debug on a-1","matrix":{"runner":"a"},"msg":"inner","stage":"Main","step":"Check out","stepID":["0","clone"],"command":"set-output","name":"commit","arg":"inner"}
{"jobID":"debug","job":"W/Debug on a-1","matrix":{"runner":"a"},"msg":"  ✅  Success - Main set -e","stage":"Main","step":"Check out","stepID":["0","clone"],"stepResult":"failure"}
{"jobID":"debug","job":"W/Debug on a-1","matrix":{"runner":"a"},"msg":"  ✅  Success - Main Check out","stage":"Main","step":"Check out","stepID":["0"],"stepResult":"success"}
{"jobID":"debug","job":"W/Debug on a-1","matrix":{"runner":"a"},"msg":"::set-output:: commit=abc","stage":"Main","step":"Check out","stepID":["0"],"command":"set-output","name":"commit","arg":"abc"}
{"jobID":"debug","job":"W/Debug on b-2","matrix":{"runner":"b"},"msg":"verdict: reproduced\n","raw_output":true,"stage":"Main","step":"Verdict","stepID":["9"]}
{"jobID":"debug","job":"W/Debug on a-1","matrix":{"runner":"a"},"msg":"Summary","command":"summary","content":"## one\n","stage":"Main","step":"Check out","stepID":["0"]}
{"jobID":"debug","job":"W/Debug on b-2","matrix":{"runner":"b"},"msg":"  ❌  Failure - Main Verdict","stage":"Main","step":"Verdict","stepID":["9"],"stepResult":"failure"}
{"jobID":"debug","job":"W/Debug on b-2","matrix":{"runner":"b"},"level":"error","msg":"exit status 1","stage":"Main","step":"Verdict","stepID":["9"]}
{"jobID":"debug","job":"W/Debug on b-2","matrix":{"runner":"b"},"msg":"⭐ Run Post Verdict","stage":"Post","step":"Verdict","stepID":["9"],"stepResult":"success"}
{"jobID":"debug","job":"W/Debug on a-1","matrix":{"runner":"a"},"msg":"Summary","command":"summary","content":"## two\n","stage":"Main","step":"Job summary","stepID":["5"]}
{"jobID":"debug","job":"W/Debug on b-2","matrix":{"runner":"b"},"jobResult":"failure","msg":"🏁  Job failed"}
{"jobID":"report","job":"W/Compare runners","matrix":{},"jobResult":"skipped","msg":"Skipping job"}
not json
`
	var lines []actLine
	for _, l := range strings.Split(log, "\n") {
		var al actLine
		if json.Unmarshal([]byte(l), &al) == nil {
			lines = append(lines, al)
		}
	}
	jobs := actJobs(lines)
	if len(jobs) != 3 {
		t.Fatalf("%d jobs, want the legs a and b and the report job", len(jobs))
	}
	a, b, report := jobs[0], jobs[1], jobs[2]
	if a.Name != "W/Debug on a-1" || a.Matrix["runner"] != "a" || len(a.Steps) != 2 || a.Steps[0].Outcome != "success" ||
		a.Steps[0].Outputs["commit"] != "abc" || a.Summary != "## one\n## two\n" {
		t.Errorf("leg a = %+v, steps %+v", a, a.Steps[0])
	}
	v := b.Steps[0]
	if b.Result != "failure" || v.Name != "Verdict" || v.Outcome != "failure" || v.ExitCode != 1 || v.Log != "verdict: reproduced\n" {
		t.Errorf("leg b = %+v, verdict %+v", b, v)
	}
	if report.Result != "skipped" || report.Matrix != nil || len(report.Steps) != 0 {
		t.Errorf("report = %+v", report)
	}
}

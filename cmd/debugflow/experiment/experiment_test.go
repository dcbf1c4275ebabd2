package experiment

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdtest"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/internal/lazyflags"
	"github.com/debugflow/debugflow/cmd/internal/reportcmd"
	"github.com/debugflow/debugflow/internal/analyse/experiment"
	"github.com/debugflow/debugflow/internal/analyse/refinfo"
	"github.com/debugflow/debugflow/internal/analyse/stats"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/testenv"
)

// commands are what these tests run: experiment, and report to read its folders again.
func commands(f *ghcmd.Factory, sp *specsource.Source) []*cobra.Command {
	cmd := NewCmdExperiment(f, sp, nil)
	sp.AddFlags(cmd)
	report := reportcmd.NewCmdReport(f.Factory, nil)
	lazyflags.BindAll(report) // debugflow binds its commands' flags at once (root.go)
	return []*cobra.Command{cmd, report}
}

// runCLISplit runs one command line without changing directory and returns the exit code,
// stdout and stderr apart.
func runCLISplit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.RunSplit(t, commands, args...)
}

// runCLI runs one command line in dir and returns the exit code and the output.
func runCLI(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	return cmdtest.Run(t, commands, dir, args...)
}

func init() { cmdtest.UseFakeBuilder() }

// experimentJSON is the --json shape.
type experimentJSON struct {
	Baseline string `json:"baseline"`
	Rows     []struct {
		Ref              string     `json:"ref"`
		Runner           string     `json:"runner"`
		Trials           int        `json:"trials"`
		Failures         int        `json:"failures"`
		Rate             float64    `json:"rate"`
		CI95             [2]float64 `json:"ci95"`
		PValue           *float64   `json:"p_value"`
		Verdict          string     `json:"verdict"`
		NoChangeWithin   *string    `json:"no_change_within"`
		MoreTrialsNeeded *int       `json:"more_trials_needed"`
	} `json:"rows"`
}

// fixedSweep is the repetitions per ref a single sweep needs to decide between "no change"
// and "halved" for a 20% baseline at the same confidence: error 5%, a decision with
// probability 95%.
func fixedSweep(t *testing.T) int {
	n, err := stats.SampleSize(0.2, stats.RateAtOddsRatio(0.2, 0.5), 0.05, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var reRound = regexp.MustCompile(`round (\d+) of (\d+): (\d+) repetitions per ref`)

// The done-when, through the real command on a real git repository and real pytest:
// the baseline fails about 20% of its repetitions (one in twenty of those crash their xdist
// worker: enough crashes for the counts below to cover them; the suite's default of a
// quarter cost a third of the test's CPU in restarted workers); "fix" never fails, "noop"
// fails like the baseline. --until-decided reaches "fixed" and "no change" in fewer
// repetitions than the fixed sweep that decides at the same confidence.
func TestExperimentLocalUntilDecided(t *testing.T) {
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	const crashShare = 0.05
	testenv.FlakyRepoCrashing(t, repo, map[string]float64{"base": 0.2, "fix": 0, "noop": 0.2}, crashShare)
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, testenv.FlakySpec(py))
	for _, tc := range []struct{ candidate, verdict string }{{"fix", "fixed"}, {"noop", "no change"}} {
		t.Run(tc.candidate, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "exp")
			code, stdout, stderr := runCLISplit(t, "experiment", "--spec", specPath, "--local", "--checkout", repo,
				"--baseline", "base", "--candidate", tc.candidate, "--count", "50", "--until-decided", "--max-count", "400",
				"--out", out, "--json")
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			var got experimentJSON
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("%v\n%s", err, stdout)
			}
			if got.Baseline != "baseline" || len(got.Rows) != 2 || got.Rows[1].Ref != tc.candidate || got.Rows[1].Verdict != tc.verdict {
				t.Fatalf("rows %+v\nstderr:\n%s", got.Rows, stderr)
			}
			base := got.Rows[0]
			if base.Rate < 0.1 || base.Rate > 0.3 || base.Runner != "local" {
				t.Errorf("baseline row %+v: want about 20%%", base)
			}
			m := reRound.FindAllStringSubmatch(stderr, -1)
			if len(m) == 0 {
				t.Fatalf("no round lines:\n%s", stderr)
			}
			reps, _ := strconv.Atoi(m[len(m)-1][3])
			if want := fixedSweep(t); reps >= want {
				t.Errorf("%s after %d repetitions per ref, the fixed sweep needs %d", tc.verdict, reps, want)
			}
			// Every count is exactly what the suite drew: a trial or a failure lost between
			// pytest and the counter (a crash dump on stderr cutting a result line apart) fails
			// here, in any round of either ref.
			rates := map[string]float64{"baseline": 0.2, "fix": 0, "noop": 0.2}
			crashes := 0
			for _, row := range got.Rows {
				var want testenv.FlakyOutcome
				for round := 1; round <= reps/50; round++ {
					o := testenv.FlakyDrawsCrashing(testenv.FlakyDefaultSeed, row.Ref, strconv.Itoa(round), rates[row.Ref], crashShare, 50)
					want.Failures += o.Failures
					want.Crashes += o.Crashes
					ob, err := experiment.LoadDir(filepath.Join(out, "round-"+strconv.Itoa(round), row.Ref))
					if err != nil {
						t.Fatal(err)
					}
					for _, tt := range ob.Tests {
						wantF := 0
						if strings.Contains(tt.ID, "test_kernel") {
							wantF = o.Failures
						}
						if tt.Trials != 50 || tt.Failures != wantF {
							t.Errorf("%s round %d: %s %d/%d, the suite drew %d/50", row.Ref, round, tt.ID, tt.Failures, tt.Trials, wantF)
						}
					}
					if len(ob.Tests) != 2 {
						t.Errorf("%s round %d: tests %+v, want test_kernel[cuda] and test_ok", row.Ref, round, ob.Tests)
					}
				}
				if row.Trials != reps || row.Failures != want.Failures {
					t.Errorf("%s: %d/%d, the suite drew %d/%d (%d crashes)", row.Ref, row.Failures, row.Trials, want.Failures, reps, want.Crashes)
				}
				crashes += want.Crashes
			}
			if tc.candidate == "noop" && crashes == 0 {
				t.Error("no crash drawn: the test does not cover crashed workers")
			}
			t.Logf("%s: %s after %d repetitions per ref (fixed sweep: %d), %d crashed workers", tc.candidate, tc.verdict, reps, fixedSweep(t), crashes)
			// Every round's folders carry their ref.json; the result is kept.
			info, err := refinfo.Load(filepath.Join(out, "round-1", tc.candidate))
			if err != nil || info.Rounds != 8 || info.Round != 1 || info.Commit == "" {
				t.Errorf("round-1 ref.json %+v, %v", info, err)
			}
			for _, f := range []string{"experiment.json", "experiment.md"} {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil {
					t.Error(err)
				}
			}
			// The folders read again give the same verdict.
			dirs, _ := filepath.Glob(filepath.Join(out, "round-*", "*"))
			code, again, errOut := runCLISplit(t, append([]string{"report", "--compare", "--json", "--baseline", filepath.Join(out, "round-1", "baseline")}, dirs...)...)
			if code != 0 || !strings.Contains(again, `"verdict": "`+tc.verdict+`"`) {
				t.Errorf("report again: exit %d\n%s%s", code, again, errOut)
			}
		})
	}
}

// The command an experiment prints to read its results again must name the artifact folders
// only, as one shell word however --out is spelled: bash expands its glob, and report
// --compare refuses experiment.json and experiment.md ("not a folder", exit 1), which a single
// sweep writes next to the folders.
func TestExperimentRereadGlobMatchesFoldersOnly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "my 'exp' $HOME")
	for _, p := range []string{"baseline", "pin", "round-1/baseline", "round-2/pin"} {
		if err := os.MkdirAll(filepath.Join(out, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"experiment.json", "experiment.md", "round-1/notes.txt"} {
		testenv.WriteFile(t, filepath.Join(out, f), "{}\n")
	}
	for _, tc := range []struct {
		rounds   bool
		compared int
		want     []string
	}{
		{false, 0, []string{"baseline", "pin", "round-1", "round-2"}},
		{true, 2, []string{"round-1/baseline", "round-2/pin"}},
		// Interrupted in round 2: the comparison printed is round 1's, and so is the reread.
		{true, 1, []string{"round-1/baseline"}},
	} {
		glob := dirGlob(out, tc.rounds, tc.compared)
		got, err := exec.Command("bash", "-c", `printf '%s\n' `+glob).Output()
		if err != nil {
			t.Fatalf("%s: %v", glob, err)
		}
		var names []string
		for _, l := range strings.Split(strings.TrimSpace(string(got)), "\n") {
			rel, err := filepath.Rel(out, l)
			if err != nil || !strings.HasSuffix(l, "/") {
				t.Fatalf("%s expands to %q", glob, got)
			}
			names = append(names, rel)
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("rounds %v: %s expands to %q, want %q", tc.rounds, glob, names, tc.want)
		}
	}
}

func TestExperimentUsageErrors(t *testing.T) {
	full := t.TempDir()
	testenv.WriteFile(t, filepath.Join(full, "x"), "")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no baseline", []string{"--candidate", "a"}, "--baseline [NAME=]REF is required"},
		{"no candidate", []string{"--baseline", "main"}, "at least one --candidate"},
		{"bad name", []string{"--baseline", "main", "--candidate", "a|b=x"}, `ref name "a|b"`},
		{"option-like ref", []string{"--baseline", "main", "--candidate", "x=-oops"}, "want a branch"},
		{"same name twice", []string{"--baseline", "x=main", "--candidate", "x=dev"}, `two refs are named "x"`},
		{"count 0", []string{"--baseline", "main", "--candidate", "dev", "--count", "0"}, "--count must be at least 1"},
		{"budget without rounds", []string{"--baseline", "main", "--candidate", "dev", "--max-count", "100"}, "budgets of --until-decided"},
		{"bad confidence", []string{"--baseline", "main", "--candidate", "dev", "--confidence", "1"}, "confidence 1"},
		{"out not empty", []string{"--baseline", "main", "--candidate", "dev", "--out", full}, "is not empty"},
		{"local flag without local", []string{"--baseline", "main", "--candidate", "dev", "--python", "python3"}, "go with --local"},
		{"max-count below count", []string{"--local", "--baseline", "main", "--candidate", "dev", "--until-decided", "--count", "50", "--max-count", "10"}, "--max-count 10 is below --count 50"},
		{"same ref on GitHub", []string{"--baseline", "main", "--candidate", "again=main"}, "baseline main and candidate main (again) are the same ref: there is nothing to compare (--allow-same-commit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLISplit(t, append([]string{"experiment"}, tt.args...)...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q (stdout %q); want 2 and %q", code, stderr, stdout, tt.want)
			}
		})
	}
}

// experiment --local checks every ref, and that it has something to compare, before it sets
// anything up: a bad ref is a usage error (exit 2) that names it, with no worktree added, no
// setup run and no folder made (not even the default experiment-<time>).
func TestExperimentLocalChecksRefsFirst(t *testing.T) {
	repo := t.TempDir()
	testenv.FlakyRepo(t, repo, map[string]float64{"base": 0.2, "fix": 0})
	baseSHA := gitOut(t, repo, "rev-parse", "base")
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, testenv.FlakySpec("python3"))
	notRepo := t.TempDir()
	tests := []struct {
		name     string
		checkout string
		args     []string
		want     string
	}{
		{"unknown candidate", repo, []string{"--baseline", "base", "--candidate", "fix=nope"}, `--candidate nope (fix): "nope" is not a commit, branch or tag of`},
		{"unknown baseline", repo, []string{"--baseline", "nope", "--candidate", "fix"}, `--baseline nope: "nope" is not a commit, branch or tag of`},
		{"a blob, not a commit", repo, []string{"--baseline", "base", "--candidate", "x=base:pytest.ini"}, `--candidate base:pytest.ini (x): "base:pytest.ini" is not a commit`},
		{"same commit by name", repo, []string{"--baseline", "base", "--candidate", "again=base"},
			"baseline base and candidate base (again) resolve to the same commit " + baseSHA[:12] + ": there is nothing to compare (--allow-same-commit runs it anyway"},
		{"same commit by id", repo, []string{"--baseline", "base", "--candidate", "fix", "--candidate", "again=" + baseSHA[:9]},
			"baseline base and candidate " + baseSHA[:9] + " (again) resolve to the same commit " + baseSHA[:12]},
		{"not a git repository", notRepo, []string{"--baseline", "base", "--candidate", "fix"}, notRepo + " is not in a git repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "exp")
			code, stdout, stderr := runCLISplit(t, append([]string{"experiment", "--spec", specPath, "--local", "--checkout", tt.checkout, "--out", out}, tt.args...)...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q (stdout %q); want 2 and %q", code, stderr, stdout, tt.want)
			}
			if strings.Contains(stderr, "==>") {
				t.Errorf("a ref was checked out or set up before the check:\n%s", stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("--out %s was made", out)
			}
		})
	}
	if wt := gitOut(t, repo, "worktree", "list"); strings.Count(wt, "\n") != 0 {
		t.Errorf("worktrees left:\n%s", wt)
	}
	// Run in a folder that is not a git repository, with the default --out: nothing is made.
	code, out := runCLI(t, notRepo, "experiment", "--spec", specPath, "--local", "--baseline", "base", "--candidate", "fix")
	if code != 2 || !strings.Contains(out, "the current folder is not in a git repository") {
		t.Errorf("exit %d, want 2:\n%s", code, out)
	}
	if entries, err := os.ReadDir(notRepo); err != nil || len(entries) != 0 {
		t.Errorf("left in the folder: %v %v", entries, err)
	}
}

// --allow-same-commit runs an A/A experiment (the baseline against itself under another name),
// and the comparison says it is one. Uncommitted edits to tracked files of the checkout are in
// no ref's worktree: a warning says they are not tested and how to test them.
func TestExperimentLocalAllowSameCommitAndUncommittedEdits(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	testenv.FlakyRepo(t, repo, map[string]float64{"base": 0.2})
	// An edit the worktrees do not have: it would make every test fail.
	testenv.WriteFile(t, filepath.Join(repo, "conftest.py"), testenv.ReadFile(t, filepath.Join(repo, "conftest.py"))+"\nraise SystemExit('the uncommitted edit was tested')\n")
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, testenv.FlakySpec(py))
	out := filepath.Join(t.TempDir(), "exp")
	code, stdout, stderr := runCLISplit(t, "experiment", "--spec", specPath, "--local", "--checkout", repo,
		"--baseline", "base", "--candidate", "again=base", "--allow-same-commit", "--count", "5", "--out", out)
	if code != 0 && code != 1 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if want := "warning: uncommitted changes to 1 tracked file(s) (conftest.py) are not tested: every ref runs in a worktree checked out at its commit"; !strings.Contains(stderr, want) ||
		!strings.Contains(stderr, "commit them") {
		t.Errorf("want %q and how to test them:\n%s", want, stderr)
	}
	if strings.Index(stderr, "uncommitted changes") > strings.Index(stderr, "==>") {
		t.Errorf("the warning comes after the setup began:\n%s", stderr)
	}
	if want := "warning: again on local ran the same commit"; !strings.Contains(stdout, want) {
		t.Errorf("want %q:\n%s", want, stdout)
	}
	if !strings.Contains(stdout, "| again") && !strings.Contains(stdout, "again ") {
		t.Errorf("no row of the candidate:\n%s", stdout)
	}
}

// gitOut runs git in dir and returns its trimmed output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

func TestExperimentWorkflowCmd(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, ".github", "workflows", "debug_cuda_repro_experiment.yml")
	code, stdout, stderr := runCLISplit(t, "experiment", "workflow", "-o", out)
	if code != 0 || !strings.Contains(stdout, "wrote "+out) {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(data, []byte("ref: ${{ fromJSON(inputs.refs) }}")) {
		t.Fatalf("%v\n%s", err, data)
	}
	if code, stdout, _ := runCLISplit(t, "experiment", "workflow", "-o", out, "--check"); code != 0 || !strings.Contains(stdout, "up to date") {
		t.Errorf("--check on a fresh file: exit %d %s", code, stdout)
	}
	os.WriteFile(out, append(data, []byte("# edited\n")...), 0o644)
	if code, stdout, _ := runCLISplit(t, "experiment", "workflow", "-o", out, "--check"); code != 1 || !strings.Contains(stdout, "stale; regenerate it with: debugflow experiment workflow -o") {
		t.Errorf("--check on an edited file: exit %d %s", code, stdout)
	}
	// The report line of its report job is one the CLI accepts.
	if code, _, stderr := runCLISplit(t, "report", "--compare", "--markdown", "--baseline", "baseline", t.TempDir()); code == 2 {
		t.Errorf("the report job's flags are refused: %s", stderr)
	}
}

// A candidate that makes things worse, in one sweep: "worse" on real pytest, and a stress test
// of the trial counter. The candidate crashes its xdist worker in 15% of its repetitions (each
// crash dumps a stack on stderr while pytest prints result lines on stdout); every count must
// still be exactly what the suite drew. With stdout and stderr in one pipe a dump cut a result
// line now and then and a trial was lost: this test failed on every run.
func TestExperimentLocalWorseCountsEveryTrial(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	rates := map[string]float64{"base": 0.2, "worse": 0.6}
	testenv.FlakyRepo(t, repo, rates)
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, testenv.FlakySpec(py))
	out := filepath.Join(t.TempDir(), "exp")
	code, stdout, stderr := runCLISplit(t, "experiment", "--spec", specPath, "--local", "--checkout", repo,
		"--baseline", "base", "--candidate", "worse", "--count", "100", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var got experimentJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(got.Rows) != 2 || got.Rows[1].Verdict != "worse" {
		t.Fatalf("rows %+v, want the candidate worse\n%s", got.Rows, stderr)
	}
	crashes := 0
	for _, row := range got.Rows {
		branch := map[string]string{"baseline": "base", "worse": "worse"}[row.Ref]
		// A single sweep is round 0.
		o := testenv.FlakyDraws(testenv.FlakyDefaultSeed, row.Ref, "0", rates[branch], 100)
		if row.Trials != 100 || row.Failures != o.Failures {
			t.Errorf("%s: %d/%d, the suite drew %d/100 (%d crashes)", row.Ref, row.Failures, row.Trials, o.Failures, o.Crashes)
			if b, err := os.ReadFile(filepath.Join(out, row.Ref, "reproducer.log")); err == nil {
				lines := strings.Split(string(b), "\n")
				t.Logf("its reproducer.log ends:\n%s", strings.Join(lines[max(0, len(lines)-60):], "\n"))
			}
		}
		crashes += o.Crashes
	}
	if crashes < 15 {
		t.Errorf("%d crashes drawn: too few to stress the counter", crashes)
	}
}

// artifactZip is one experiment job's upload: a reproducer run of test_x with count
// repetitions, failing every fifth for the baseline, and the ref.json ref-info writes.
func artifactZip(t *testing.T, info refinfo.Info, count int) []byte {
	var log strings.Builder
	failed := 0
	for i := 1; i <= count; i++ {
		word := "PASSED"
		if info.Name == "baseline" && i%5 == 0 {
			word = "FAILED"
			failed++
		}
		fmt.Fprintf(&log, "[gw0] [ 50%%] %s t.py::test_x[cuda-%d-%d] \n", word, i, count)
	}
	fmt.Fprintf(&log, "===== %d failed, %d passed in 2.00s =====\n", failed, count-failed)
	sum, _ := json.Marshal(map[string]any{"count": count, "complete": true, "exit_code": min(failed, 1)})
	ref, _ := json.Marshal(info)
	return ghtest.MakeZip(t, ghtest.ZipEntry{Name: "reproducer.log", Body: log.String()},
		ghtest.ZipEntry{Name: "reproducer_summary.json", Body: string(sum)}, ghtest.ZipEntry{Name: "ref.json", Body: string(ref)})
}

// The GitHub path end to end against the fake API: one dispatch per round with the refs as a
// JSON input, a matrix of artifacts (refs x two runner labels) made from that input, the
// download, and the aggregated verdict.
func TestExperimentGitHub(t *testing.T) {
	dir := t.TempDir()
	cmdtest.GitRepo(t, dir)
	// The experiment workflow is on the branch (its content is the fake API's business).
	testenv.WriteFile(t, filepath.Join(dir, ".github", "workflows", "debugflow_experiment.yml"), "# the experiment workflow\n")
	specPath := filepath.Join(dir, "debugflow.yaml")
	testenv.WriteFile(t, specPath, `runners: [gpu-t4-4-core, gpu-a10g-4-core]
reproducer:
  paths: [t.py]
artifact:
  name: evidence
`)
	s, wf := cmdtest.ExperimentWorkflow(t, specPath)
	srv := ghtest.New(t, "acme", "kernels", cmdtest.TestToken)
	srv.AddBranch("debug/t4")
	srv.AddWorkflow(ghtest.Workflow{
		File: wf.File, Name: wf.Name, Inputs: wf.Inputs, Required: wf.Required, RunName: wf.RunName,
		Frames: ghtest.DefaultFrames(time.Now().Add(-time.Minute), "success"),
		ArtifactsFor: func(run ghtest.Run) []ghtest.ArtifactFile {
			var refs []struct{ Name, Ref string }
			if err := json.Unmarshal([]byte(run.Inputs["refs"].(string)), &refs); err != nil {
				t.Errorf("refs input %v: %v", run.Inputs["refs"], err)
				return nil
			}
			count, _ := strconv.Atoi(run.Inputs["count"].(string))
			round, _ := strconv.Atoi(run.Inputs["round"].(string))
			rounds, _ := strconv.Atoi(run.Inputs["rounds"].(string))
			var arts []ghtest.ArtifactFile
			for _, r := range refs {
				for _, runner := range s.Runners {
					info := refinfo.Info{Name: r.Name, Ref: r.Ref, Commit: "c0ffee" + r.Name, Runner: runner, Round: round, Rounds: rounds}
					arts = append(arts, ghtest.ArtifactFile{Name: generate.ExperimentArtifact(s) + "-" + r.Name + "-" + runner, Zip: artifactZip(t, info, count)})
				}
			}
			return arts
		},
	})
	t.Setenv("GH_TOKEN", cmdtest.TestToken)
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GITHUB_API_URL", srv.URL())
	out := filepath.Join(dir, "exp")

	code, stdout := runCLI(t, dir, "experiment", "--spec", specPath, "--baseline", "main", "--candidate", "fix=fix-branch",
		"--count", "25", "--until-decided", "--max-count", "200", "--out", out, "--interval", "1ms", "--json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
	// 0/75 against 15/75 per runner is the first look that excludes a halving at the level
	// of 8 planned rounds (0.60%, half of 5% to each direction): 3 rounds.
	runs := srv.Runs()
	if len(runs) != 3 {
		t.Fatalf("%d dispatches, want 3 rounds", len(runs))
	}
	for i, r := range runs {
		want := map[string]string{"refs": `[{"name":"baseline","ref":"main"},{"name":"fix","ref":"fix-branch"}]`,
			"count": "25", "round": strconv.Itoa(i + 1), "rounds": "8"}
		for k, v := range want {
			if r.Inputs[k] != v {
				t.Errorf("run %d input %s = %v, want %s", i+1, k, r.Inputs[k], v)
			}
		}
		if r.Branch != "debug/t4" || r.WorkflowFile != generate.ExperimentFile(s) {
			t.Errorf("run %d on %s of %s", i+1, r.Branch, r.WorkflowFile)
		}
	}
	if strings.Contains(stdout, cmdtest.TestToken) {
		t.Error("the token was printed")
	}
	js := stdout[strings.Index(stdout, "{\n"):]
	js = js[:strings.Index(js, "\n}\n")+3]
	var got experimentJSON
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(got.Rows) != 4 {
		t.Fatalf("rows %+v, want 2 refs x 2 runners", got.Rows)
	}
	for _, r := range got.Rows {
		switch r.Ref {
		case "baseline":
			if r.Trials != 75 || r.Failures != 15 || r.Verdict != "baseline" {
				t.Errorf("baseline row %+v", r)
			}
		case "fix":
			if r.Trials != 75 || r.Failures != 0 || r.Verdict != "fixed" || r.PValue == nil {
				t.Errorf("fix row %+v", r)
			}
		}
	}
	if _, err := refinfo.Load(filepath.Join(out, "round-3", "evidence-experiment-fix-gpu-a10g-4-core")); err != nil {
		t.Errorf("round 3 folder: %v", err)
	}
}

// The committed example experiment workflow is what the generator writes.
func TestExperimentExampleIsCurrent(t *testing.T) {
	t.Chdir(cmdtest.RepoRoot(t))
	code, out, _ := runCLISplit(t, "experiment", "workflow", "--spec", "examples/debugflow.yaml", "-o", "examples/debug_cuda_repro_experiment.yml", "--check")
	if code != 0 {
		t.Errorf("examples/debug_cuda_repro_experiment.yml is stale (run: go run ./cmd/debugflow experiment workflow --spec examples/debugflow.yaml -o examples/debug_cuda_repro_experiment.yml):\n%s", out)
	}
}

// The report job of the committed experiment example: its script, expanded by bash with the
// job's env (the glob included) in a folder laid out as download-artifact leaves it, gives
// arguments this CLI runs to a comparison with the verdicts.
func TestExperimentReportJobLineRuns(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(cmdtest.RepoRoot(t), "examples", "debug_cuda_repro_experiment.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string            `yaml:"name"`
				Env  map[string]string `yaml:"env"`
				Run  string            `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	script := ""
	for _, st := range wf.Jobs[generate.ExperimentReportJobID].Steps {
		if st.Name == "Compare refs" {
			script = st.Run
			if st.Env["BASELINE"] != "${{ fromJSON(inputs.refs)[0].name }}" {
				t.Errorf("BASELINE = %q", st.Env["BASELINE"])
			}
		}
	}
	line, _, ok := strings.Cut(strings.TrimSpace(script), ` >> "$GITHUB_STEP_SUMMARY"`)
	// exec: the command replaces the step's shell, so the runner's signals reach it.
	line = strings.TrimPrefix(line, "exec ")
	// debugflow-step report is debugflow report (report.NewCmdReport): run it with this CLI.
	if !ok || !strings.HasPrefix(line, "debugflow-step report ") {
		t.Fatalf("compare step %q", script)
	}
	s, err := spec.Load(filepath.Join(cmdtest.RepoRoot(t), "examples", "debugflow.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"baseline", "fix"} {
		for _, runner := range s.Runners {
			art := filepath.Join(dir, "artifacts", generate.ExperimentArtifact(s)+"-"+name+"-"+runner)
			z := artifactZip(t, refinfo.Info{Name: name, Ref: name, Runner: runner}, 50)
			zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range zr.File {
				rc, _ := f.Open()
				var b bytes.Buffer
				b.ReadFrom(rc)
				rc.Close()
				testenv.WriteFile(t, filepath.Join(art, f.Name), b.String())
			}
		}
	}
	cmd := exec.Command("bash", "-c", "set -- "+strings.TrimPrefix(line, "debugflow-step ")+"\nprintf '%s\\0' \"$@\"")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BASELINE=baseline")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	t.Chdir(dir)
	code, stdout, stderr := runCLISplit(t, args...)
	if code != 0 || !strings.Contains(stdout, "| fix | "+s.Runners[0]+" | 0/50 |") || !strings.Contains(stdout, "```mermaid") || !strings.Contains(stdout, "fixed") {
		t.Errorf("report job %q: exit %d\n%s%s", args, code, stdout, stderr)
	}
}

// Issue 21's run: a baseline failing 8% of its repetitions against a candidate failing 20%,
// rounds of 25. The old rule, which only excluded an improvement, said "no change" after the
// first round on these draws (3/25 against 9/25; the issue saw 4/50 against 10/50). Now "no
// change" must also exclude a doubling, so no round may say it, and the rounds end in "worse"
// (the third round: 5/75 against 18/75).
func TestExperimentLocalUntilDecidedCatchesAWorseCandidate(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	testenv.FlakyRepo(t, repo, map[string]float64{"base": 0.08, "worse": 0.2})
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, testenv.FlakySpec(py))
	out := filepath.Join(t.TempDir(), "exp")
	code, stdout, stderr := runCLISplit(t, "experiment", "--spec", specPath, "--local", "--checkout", repo,
		"--baseline", "base", "--candidate", "worse", "--count", "25", "--until-decided", "--max-count", "400",
		"--out", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var got experimentJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(got.Rows) != 2 || got.Rows[1].Verdict != "worse" {
		t.Fatalf("rows %+v, want the candidate worse\n%s", got.Rows, stderr)
	}
	rounds := reRound.FindAllStringSubmatch(stderr, -1)
	if len(rounds) < 2 || strings.Contains(stderr, "no change") {
		t.Errorf("want no \"no change\" in any of %d rounds:\n%s", len(rounds), stderr)
	}
}

// Near zero rates the absolute margin decides: a baseline and a candidate that never fail
// are "no change: within ±2 points" after a sweep of 150 repetitions (the suite's two tests,
// 300 trials per ref: the exact test's p = 0.0069 < 2.5% on both sides), with a note that the
// bug did not reproduce, and the same pair
// after 25 repetitions (50 trials) stays inconclusive, says the baseline never failed and
// how many more repetitions would show no change.
func TestExperimentLocalNoChangeWithinTheAbsoluteMargin(t *testing.T) {
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	testenv.FlakyRepo(t, repo, map[string]float64{"base": 0, "same": 0})
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, testenv.FlakySpec(py))
	for _, tc := range []struct {
		count, code        int
		verdict, cell, why string
	}{
		{150, 0, "no change", "no change: within ±2 points", "the rates are within ±2 points of each other"},
		{25, 1, "inconclusive", "inconclusive: about", "the baseline never failed in 50 trials"},
	} {
		t.Run(strconv.Itoa(tc.count), func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "exp")
			code, stdout, stderr := runCLISplit(t, "experiment", "--spec", specPath, "--local", "--checkout", repo,
				"--baseline", "base", "--candidate", "same", "--count", strconv.Itoa(tc.count), "--out", out)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.cell) || !strings.Contains(stdout, "same on local: "+tc.verdict+": "+tc.why) ||
				!strings.Contains(stdout, "or the rates within ±2 points") {
				t.Errorf("want %q and %q:\n%s", tc.cell, tc.why, stdout)
			}
			if (tc.verdict == "no change") != strings.Contains(stdout, "neither ever failed: the bug did not reproduce") {
				t.Errorf("want the note that neither failed with no change only:\n%s", stdout)
			}
			var got experimentJSON
			data, err := os.ReadFile(filepath.Join(out, "experiment.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Rows) != 2 || got.Rows[1].Verdict != tc.verdict || got.Rows[0].Failures != 0 || got.Rows[1].Failures != 0 ||
				got.Rows[1].Trials != 2*tc.count {
				t.Fatalf("rows %+v", got.Rows)
			}
			if within := got.Rows[1].NoChangeWithin; (tc.verdict == "no change") != (within != nil && *within == "absolute") {
				t.Errorf("no_change_within %v", within)
			}
			if (tc.verdict == "inconclusive") != (got.Rows[1].MoreTrialsNeeded != nil) {
				t.Errorf("more_trials_needed %v", got.Rows[1].MoreTrialsNeeded)
			}
		})
	}
}

// experiment workflow, like generate, never replaces the workflow of another spec.
func TestExperimentWorkflowNeverOverwritesAnotherSpecs(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "debugflow.yaml"), "runners: [gpu-a10g]\nreproducer: {paths: [tests]}\nworkflow: {file: debug_cuda_repro.yml}\n")
	out := filepath.Join(".github", "workflows", "debug_cuda_repro_experiment.yml")
	if code, o := runCLI(t, dir, "experiment", "workflow", "-o", out); code != 0 {
		t.Fatalf("exit %d:\n%s", code, o)
	}
	if code, o := runCLI(t, "", "experiment", "workflow", "--default-spec", "-o", out); code != 1 || !strings.Contains(o, "was generated from debugflow.yaml, not from the embedded default spec") {
		t.Errorf("exit %d, want 1:\n%s", code, o)
	}
	if code, o := runCLI(t, "", "experiment", "workflow", "--default-spec", "--force", "-o", out); code != 0 {
		t.Errorf("--force: exit %d:\n%s", code, o)
	}
}

// Without xdist (workers: 0) a test that aborts kills pytest itself: the log ends at the test's
// start line, and only the worker record (the summary's crash of worker "main") names it. That
// test is one failed trial, as a crashed xdist worker's test is; before, it was none, and a
// candidate whose every round died in the flaky test read "fixed" from the passes before each
// death (10 rounds of 40: 0/30, "fixed", against a baseline failing 30%).
func TestExperimentLocalPytestKilledWithoutXdist(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	repo := t.TempDir()
	const rate, count = 0.3, 20
	testenv.FlakyRepoCrashing(t, repo, map[string]float64{"base": rate, "crash": rate}, 1) // every failure aborts
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, strings.Replace(testenv.FlakySpec(py), "workers: 2", "workers: 0", 1))
	out := filepath.Join(t.TempDir(), "exp")
	code, stdout, stderr := runCLISplit(t, "experiment", "--spec", specPath, "--local", "--checkout", repo,
		"--baseline", "base", "--candidate", "crash", "--count", strconv.Itoa(count), "--out", out, "--json")
	if code != 0 && code != 1 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var got experimentJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(got.Rows) != 2 {
		t.Fatalf("rows %+v\n%s", got.Rows, stderr)
	}
	for _, row := range got.Rows {
		// pytest runs the repetitions in order and dies in the first that fails.
		first := 0
		for i := 1; i <= count && first == 0; i++ {
			if testenv.FlakyDraw(testenv.FlakyDefaultSeed, row.Ref, "0", fmt.Sprintf("test_kernel[cuda-%d-%d]", i, count)) < rate {
				first = i
			}
		}
		if first == 0 {
			t.Fatalf("%s: no failure drawn in %d repetitions: the test covers nothing", row.Ref, count)
		}
		if row.Trials != first || row.Failures != 1 {
			t.Errorf("%s: %d/%d, want 1/%d: pytest died in repetition %d", row.Ref, row.Failures, row.Trials, first, first)
		}
	}
	if v := got.Rows[1].Verdict; v == "fixed" || v == "improved" {
		t.Errorf("candidate %s: it fails as the baseline does", v)
	}
	if md := testenv.ReadFile(t, filepath.Join(out, "experiment.md")); !strings.Contains(md, "pytest was killed (aborted) in test") {
		t.Errorf("experiment.md has no warning naming the test pytest died in:\n%s", md)
	}
}

// Ctrl-C before anything was written (here while the first worktree is checked out: a
// post-checkout hook that waits) says so and keeps no folder, rather than pointing at an
// --out folder that does not exist; no worktree stays registered.
func TestExperimentLocalInterruptedBeforeAnythingWasWritten(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	testenv.FlakyRepo(t, repo, map[string]float64{"base": 0.2, "fix": 0})
	started := filepath.Join(t.TempDir(), "hook-started")
	testenv.WriteFile(t, filepath.Join(repo, ".git", "hooks", "post-checkout"), "#!/bin/sh\ntouch '"+started+"'\nexec sleep 60\n")
	if err := os.Chmod(filepath.Join(repo, ".git", "hooks", "post-checkout"), 0o755); err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(t.TempDir(), "flaky.yaml")
	testenv.WriteFile(t, specPath, testenv.FlakySpec("python3"))
	out := filepath.Join(t.TempDir(), "exp")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(started); err == nil {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var stdout, stderr bytes.Buffer
	code := cmdtest.Execute(ctx, commands, []string{"experiment", "--spec", specPath, "--local", "--checkout", repo,
		"--baseline", "base", "--candidate", "fix", "--count", "2", "--out", out}, nil, &stdout, &stderr)
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), "what ran so far is in") {
		t.Errorf("points at a folder that holds nothing:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted before anything was written") {
		t.Errorf("does not say nothing was written:\n%s", stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out %s kept (%v)", out, err)
	}
	if wt := gitOut(t, repo, "worktree", "list"); strings.Count(wt, "\n") != 0 {
		t.Errorf("worktrees left:\n%s", wt)
	}
}

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/spec"
)

// hangingSuite replaces the flaky suite with one whose test_hang never ends: the reproducer
// is still sweeping when the runner stops its step. test_grad stays for the staged
// standalone repro.
var hangingSuite = map[string]string{suiteFile: `import time


def test_grad():
    pass


def test_hang():
    time.sleep(600)
`}

// markedTimeout is the reproducer's timeout-minutes in the spec, a number no other step
// uses, so the test can shorten it in the workflow to seconds.
const markedTimeout = 89

// TestStoppedReproduceLeavesItsEvidence stops the Reproduce step the way the Actions runner
// does (SIGINT to the step's shell, SIGTERM 7.5 s later, SIGKILL 2.5 s after that; issue 20):
// once at its timeout-minutes and once by cancelling the run. The step's debugflow-step gets
// the signal (the step execs it), ends pytest's tree, and leaves reproducer_summary.json with
// status "stopped", its outputs and a verdict that says the run was stopped.
func TestStoppedReproduceLeavesItsEvidence(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		how  run
	}{
		{"timeout", run{
			mutate: func(s *spec.Spec) { s.Reproducer.TimeoutMinutes = markedTimeout },
			editWorkflow: func(b []byte) []byte {
				return []byte(strings.Replace(string(b), "timeout-minutes: 89\n", "timeout-minutes: 0.2\n", 1))
			},
		}},
		{"cancel", run{cancelStep: "Reproduce", cancelAfter: 12 * time.Second}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			how := tt.how
			how.checkoutFiles = hangingSuite
			sim := simulate(t, how)
			job := sim.job
			repro := job.byID(t, generate.ReproduceStepID)
			if repro.Stopped != tt.name || repro.Outcome != outcomeFailure {
				t.Fatalf("reproduce step %s (stopped %q), want stopped by the %s", repro.Outcome, repro.Stopped, tt.name)
			}
			// SIGINT was enough: it ended before the runner's SIGTERM.
			limit := 12 * time.Second
			if tt.name == "timeout" {
				limit = repro.Timeout
			}
			if over := repro.Duration - limit; over > runnerSigintGrace {
				t.Errorf("the step ended %s after the runner's SIGINT, want within %s", over, runnerSigintGrace)
			}
			wantOutput(t, repro, "exit_code", "130")
			wantOutput(t, repro, "reproduced", "false")
			var sum struct {
				Status     string `json:"status"`
				StopSignal string `json:"stop_signal"`
				Cancelled  bool   `json:"cancelled"`
				Passed     int    `json:"passed"`
			}
			dir := sim.evidenceDir(t)
			if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "reproducer_summary.json"))), &sum); err != nil {
				t.Fatal(err)
			}
			if sum.Status != "stopped" || sum.StopSignal != "SIGINT" || !sum.Cancelled {
				t.Errorf("reproducer_summary.json %+v, want status stopped by SIGINT", sum)
			}
			if _, err := os.Stat(filepath.Join(dir, "reproducer.log")); err != nil {
				t.Error(err)
			}
			verdict := job.byVerb(t, "verdict")
			if verdict.ExitCode != 130 || !strings.Contains(verdict.Output, "the reproducer was stopped by SIGINT") {
				t.Errorf("verdict exit %d:\n%s", verdict.ExitCode, verdict.Output)
			}
			if md := readFile(t, sim.summary); !strings.Contains(md, "stopped by SIGINT") {
				t.Errorf("the job summary does not say the run was stopped:\n%s", md)
			}
			for _, name := range []string{"Runner health after the run", "dmesg and Xid summary", "Job summary", "Upload artifacts", "Verdict"} {
				if got := job.step(t, name).Outcome; got != outcomeSuccess && !(name == "Verdict" && got == outcomeFailure) {
					t.Errorf("step %q: %s after the stop", name, got)
				}
			}
			if got := job.byVerb(t, "sanitize").Outcome; got != outcomeSkipped {
				t.Errorf("sanitizer %s after a stopped sweep that reproduced nothing", got)
			}
			// A cancel frees the runner: no session at the end. A timed-out step does not
			// cancel the run: the session still opens for a look at what ran.
			wait := job.step(t, "Wait in the tmate session").Outcome
			if want := map[string]string{"cancel": outcomeSkipped, "timeout": outcomeSuccess}[tt.name]; wait != want {
				t.Errorf("the tmate wait after a %s: %s, want %s", tt.name, wait, want)
			}
		})
	}
}

// TestTwoJobsOnOneHostKeepTheirEvidence runs two jobs at once on one host, as two runner
// agents of a GPU machine do (one per GPU): each agent has its own RUNNER_TEMP, the host's /tmp
// (and /tmp/repro in it) is shared. One job reproduces (its sanitizer runs), one passes. Each
// job's evidence, summary and verdict are its own (issue 28: the fix leg of an experiment
// reported the baseline leg's crash as its own).
func TestTwoJobsOnOneHostKeepTheirEvidence(t *testing.T) {
	t.Parallel()
	link := filepath.Join(t.TempDir(), "repro")
	dirs := make([]string, 2) // each leg sets its own element
	t.Run("host", func(t *testing.T) {
		for i, leg := range []struct {
			name, selectExpr string
			reproduces       bool
		}{{"reproducing", "", true}, {"passing", "cpu", false}} {
			t.Run(leg.name, func(t *testing.T) {
				t.Parallel()
				sim := simulate(t, run{selectExpr: leg.selectExpr, artifactDir: link})
				dir := sim.evidenceDir(t)
				dirs[i] = dir
				// Each job's uploads are its own folder, whatever the shared link points at last.
				for _, up := range sim.job.byAction(t, "actions/upload-artifact") {
					if up.With["path"] != dir {
						t.Errorf("%s uploaded %q, want %s", up.Name, up.With["path"], dir)
					}
				}
				verdict := sim.job.byVerb(t, "verdict")
				_, err := os.Stat(filepath.Join(dir, "sanitizer.log"))
				md := readFile(t, sim.summary)
				if !leg.reproduces {
					if verdict.ExitCode != 0 || !strings.Contains(verdict.Output, "bug not reproduced") {
						t.Errorf("verdict exit %d:\n%s", verdict.ExitCode, verdict.Output)
					}
					if err == nil {
						t.Error("the passing job's folder holds a sanitizer.log")
					}
					for _, stale := range []string{"memcheck", "Crashed", "Xid 31", "test_grad[cuda", "left by an earlier job"} {
						if strings.Contains(md, stale) {
							t.Errorf("the passing job's summary mentions %q:\n%s", stale, md)
						}
					}
					return
				}
				if verdict.ExitCode != 1 || err != nil || !strings.Contains(md, "memcheck") {
					t.Errorf("the reproducing job: verdict exit %d, sanitizer.log %v, summary:\n%s", verdict.ExitCode, err, md)
				}
			})
		}
	})
	if dirs[0] == "" || dirs[0] == dirs[1] {
		t.Errorf("evidence folders %q", dirs)
	}
}

// TestPullRequestRunOpensNoSession runs the default workflow as a push to the pull request
// starts it: nobody waits on such a run, so no tmate session opens (tmate.on_pull_request is
// false by default) and the runner is free as soon as the evidence is uploaded.
func TestPullRequestRunOpensNoSession(t *testing.T) {
	t.Parallel()
	sim := simulate(t, run{selectExpr: "cpu", noSessionOnPullRequest: true})
	for _, name := range []string{"Open the tmate session", "Wait in the tmate session"} {
		if got := sim.job.step(t, name).Outcome; got != outcomeSkipped {
			t.Errorf("step %q: %s, want skipped in a pull_request run", name, got)
		}
	}
	if tmateSessionStarted(sim.tmateLog) {
		t.Error("a tmate session was started")
	}
	if v := sim.job.byVerb(t, "verdict"); v.Outcome != outcomeSuccess || sim.job.Failed {
		t.Errorf("verdict %s, job failed %v", v.Outcome, sim.job.Failed)
	}
}

// failingThenHangingSuite fails test_grad at once and hangs in test_hang: failures are seen
// before the step's timeout stops the sweep.
var failingThenHangingSuite = map[string]string{suiteFile: `import time


def test_grad():
    assert False, "gradient mismatch"


def test_hang():
    time.sleep(600)
`}

// TestSanitizerRunsAfterAReproduceTimeoutWithFailures: the Reproduce step hits its
// timeout-minutes after tests failed (a full sweep, no stop at the first failure). The step
// failed, the run is not cancelled, and reproduced=true: the sanitizer step (!cancelled(), not
// the implicit success()) still runs over the failing test.
func TestSanitizerRunsAfterAReproduceTimeoutWithFailures(t *testing.T) {
	t.Parallel()
	sim := simulate(t, run{
		checkoutFiles: failingThenHangingSuite,
		mutate: func(s *spec.Spec) {
			s.Reproducer.TimeoutMinutes = markedTimeout
			s.Reproducer.StopOnFirstFailure = false
		},
		editWorkflow: func(b []byte) []byte {
			return []byte(strings.Replace(string(b), "timeout-minutes: 89\n", "timeout-minutes: 0.2\n", 1))
		},
	})
	repro := sim.job.byID(t, generate.ReproduceStepID)
	if repro.Stopped != "timeout" || repro.Outcome != outcomeFailure {
		t.Fatalf("reproduce step %s (stopped %q), want stopped by its timeout", repro.Outcome, repro.Stopped)
	}
	wantOutput(t, repro, "reproduced", "true")
	san := sim.job.byVerb(t, "sanitize")
	if san.Outcome == outcomeSkipped || !strings.Contains(san.Output, "test_grad") {
		t.Errorf("sanitizer %s after a timed-out sweep with failures:\n%s", san.Outcome, san.Output)
	}
}

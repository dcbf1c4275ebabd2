package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/debugflow/debugflow/internal/analyse/parse/sanitizerlog"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/testenv"
)

// sanitizeWorld is an artifact dir with a reproducer summary, the crash
// suite and the sanitizer double on PATH.
type sanitizeWorld struct {
	te       *testEnv
	out      string
	suite    string
	argvFile string
	py       string
}

func newSanitizeWorld(t *testing.T, summary *ReproducerResult, vars map[string]string) *sanitizeWorld {
	t.Helper()
	w := &sanitizeWorld{out: t.TempDir(), suite: copySuite(t, "crash"), py: testenv.PytestPython(t)}
	w.argvFile = filepath.Join(t.TempDir(), "argv.json")
	env := map[string]string{
		"PATH":                     binDir(t, "compute-sanitizer") + ":/usr/bin:/bin",
		"HOME":                     t.TempDir(),
		"FAKE_SANITIZER_ARGV_FILE": w.argvFile,
	}
	for k, v := range vars {
		env[k] = v
	}
	w.te = newTestEnv(t, env)
	w.te.Root = t.TempDir()
	if summary != nil {
		if err := writeJSON(filepath.Join(w.out, ReproducerSummary), summary); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// newSanitizeWorldOnActions is a sanitize world as on GitHub Actions, with a GITHUB_OUTPUT file
// (returned) to read the step's outputs from: the reproducer's summary names test as the one
// failing test, and the compute-sanitizer double runs in mode.
func newSanitizeWorldOnActions(t *testing.T, test, mode string) (*sanitizeWorld, string) {
	t.Helper()
	ghOut := filepath.Join(t.TempDir(), "out")
	writeFile(t, ghOut, "")
	w := newSanitizeWorld(t, &ReproducerResult{Count: 5, FailedBaseTests: []string{test}},
		map[string]string{"FAKE_SANITIZER_MODE": mode, "GITHUB_OUTPUT": ghOut, "GITHUB_ACTIONS": "true"})
	return w, ghOut
}

func (w *sanitizeWorld) opts(mut func(*SanitizeOptions)) SanitizeOptions {
	o := SanitizeOptions{
		Out:            w.out,
		SanitizerFlags: SanitizerFlags{Tool: "memcheck", PrintLimit: 100, MaxTests: 5},
		Python:         w.py, When: WhenFailed, Dir: w.suite,
	}
	if mut != nil {
		mut(&o)
	}
	return o
}

func (w *sanitizeWorld) argv(t *testing.T) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(readFile(t, w.argvFile)), &argv); err != nil {
		t.Fatalf("sanitizer argv: %v", err)
	}
	return argv
}

// pytestArgs is the part of the sanitizer argv after "-s".
func pytestArgs(argv []string) []string {
	for i, a := range argv {
		if a == "-s" {
			return argv[i+1:]
		}
	}
	return nil
}

// hungRecord is the worker record of a sweep that timed out: gw0 finished one test and was still
// in t.py::test_hang[2-5].
const hungRecord = `{"v":1,"worker":"gw0","pid":10,"phase":"session","time":1,"mono":1}
{"v":1,"worker":"gw0","pid":10,"phase":"start","nodeid":"t.py::test_ok[1-5]","time":2,"mono":2}
{"v":1,"worker":"gw0","pid":10,"phase":"finish","nodeid":"t.py::test_ok[1-5]","time":3,"mono":3}
{"v":1,"worker":"gw0","pid":10,"phase":"start","nodeid":"t.py::test_hang[2-5]","time":4,"mono":4}
`

func TestSanitizeSkips(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		summary *ReproducerResult
		record  string // the sweep's worker record ("": none)
		want    string
	}{
		{"nothing failed", &ReproducerResult{Count: 5, ExitCode: 0, Passed: 15}, "", "the reproducer found no failing test; skipping"},
		{"reproducer never ran", nil, "", "the reproducer has not run (reproducer_summary.json not found); skipping"},
		// --when always would run the selection itself; that cannot even be collected.
		{"setup failed", &ReproducerResult{Count: 5, ExitCode: ExitSetupFailed, SetupFailed: true, SetupCause: "conftest.py needs module x"}, "",
			"the reproducer's setup failed (conftest.py needs module x); skipping the sanitizer"},
		// Not "found no failing test": a test still running at the timeout may be the bug (a hang).
		{"timed out", &ReproducerResult{Count: 5, ExitCode: ExitTimedOut, Cancelled: true, TimedOut: true, Passed: 7,
			StopReason: "timed out after 30m0s (reproducer.timeout_minutes)"}, hungRecord,
			"the reproducer's sweep timed out after 30m0s (reproducer.timeout_minutes) before any test failed; still running: t.py::test_hang[2-5] (a hang?); skipping the sanitizer"},
		{"cancelled", &ReproducerResult{Count: 5, ExitCode: 130, Cancelled: true}, "",
			"the reproducer's sweep was cancelled by SIGINT (the step's timeout-minutes or a cancel) before any test failed; which tests were running is unknown (no worker record); skipping the sanitizer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newSanitizeWorld(t, tt.summary, nil)
			if tt.record != "" {
				testenv.WriteFile(t, filepath.Join(w.out, WorkerLog), tt.record)
			}
			res, err := RunSanitize(context.Background(), w.te.Env, w.opts(func(o *SanitizeOptions) {
				if tt.summary != nil && tt.summary.SetupFailed {
					o.When, o.Paths = WhenAlways, []string{"test_repro.py"}
				}
			}))
			if err != nil || res != nil {
				t.Fatalf("RunSanitize = %v, %v; want a skip", res, err)
			}
			stdout := w.te.stdout.String()
			if !strings.Contains(stdout, tt.want) {
				t.Errorf("stdout %q lacks %q", stdout, tt.want)
			}
			outs := terminalOutputs(stdout)
			if outs["skipped"] != "true" || outs["findings"] != "0" {
				t.Errorf("outputs = %v", outs)
			}
			for _, f := range []string{SanitizerLog, SanitizerSummaryText} {
				if _, err := os.Stat(filepath.Join(w.out, f)); err == nil {
					t.Errorf("%s written on skip", f)
				}
			}
			// The summary says why, for the report: the reason of the step's line, without
			// what the step does about it.
			sum, err := evidencefiles.LoadSanitizerSummary(w.out, SanitizerSummaryJSON)
			if err != nil {
				t.Fatalf("no summary of the skip: %v", err)
			}
			if sum.NotRun == "" || !strings.Contains(stdout, "sanitize: "+sum.NotRun+"; skipping the sanitizer") ||
				strings.Contains(sum.NotRun, "skipping") || sum.Command != nil || sum.Report != nil {
				t.Errorf("summary %+v: want only why it did not run, as the step line %q says", sum, stdout)
			}
			if _, err := os.Stat(w.argvFile); err == nil {
				t.Error("compute-sanitizer ran on skip")
			}
		})
	}
}

// TestSanitizeWhenAlways runs the command-line selection once when the
// reproducer found nothing.
func TestSanitizeWhenAlways(t *testing.T) {
	t.Parallel()
	// --env reaches the sanitizer and pytest: it overrides the double's mode.
	w := newSanitizeWorld(t, &ReproducerResult{Count: 5}, map[string]string{"FAKE_SANITIZER_MODE": "access-at"})
	res, err := RunSanitize(context.Background(), w.te.Env, w.opts(func(o *SanitizeOptions) {
		o.When, o.Paths, o.Select = WhenAlways, []string{"test_repro.py"}, "cpu"
		o.PytestArgs, o.Env = []string{"-p", "no:cacheprovider"}, []string{"FAKE_SANITIZER_MODE=clean"}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"test_repro.py", "-k", "cpu", "-p", "no:cacheprovider"}, pytestArgs(w.argv(t))); diff != "" {
		t.Errorf("selection (-want +got):\n%s", diff)
	}
	if res.Selection != "paths" || res.ExitCode != 0 || res.Findings != 0 {
		t.Errorf("result = %+v", res)
	}
	log := readFile(t, filepath.Join(w.out, SanitizerLog))
	if !strings.Contains(log, "test_repro.py::test_x[cpu] PASSED") || !strings.Contains(log, "1 passed, 2 deselected") {
		t.Errorf("pytest did not run the selection once (no repeat):\n%s", log)
	}

	// Without paths there is nothing to fall back to.
	w = newSanitizeWorld(t, nil, nil)
	_, err = RunSanitize(context.Background(), w.te.Env, w.opts(func(o *SanitizeOptions) { o.When = WhenAlways }))
	if ExitCodeFor(err) != ExitUsage {
		t.Errorf("--when always without PATH: %v, want a usage error", err)
	}
}

// TestSanitizeSelection checks the ids handed over: base ids in
// first-failure order, capped by --max-tests, and computed from
// failed_tests when an older summary lacks failed_base_tests.
func TestSanitizeSelection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		summary     ReproducerResult
		maxTests    int
		wantTests   []string
		wantDropped []string
	}{
		{
			"capped", ReproducerResult{Count: 5, FailedBaseTests: []string{"test_repro.py::test_y", "test_repro.py::test_x[cpu]", "test_repro.py::test_x[cuda]"}},
			2, []string{"test_repro.py::test_y", "test_repro.py::test_x[cpu]"}, []string{"test_repro.py::test_x[cuda]"},
		},
		{
			"derived from failed_tests", ReproducerResult{Count: 5, FailedTests: []string{"test_repro.py::test_x[cuda-4-5]", "test_repro.py::test_y[2-5]", "test_repro.py::test_x[cuda-1-5]"}},
			5, []string{"test_repro.py::test_x[cuda]", "test_repro.py::test_y"}, []string{},
		},
		{
			"no cap", ReproducerResult{Count: 5, FailedBaseTests: []string{"test_repro.py::test_y", "test_repro.py::test_x[cpu]"}},
			0, []string{"test_repro.py::test_y", "test_repro.py::test_x[cpu]"}, []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newSanitizeWorld(t, &tt.summary, nil)
			res, err := RunSanitize(context.Background(), w.te.Env, w.opts(func(o *SanitizeOptions) { o.MaxTests = tt.maxTests }))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantTests, pytestArgs(w.argv(t))); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantDropped, res.Dropped); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
			log := readFile(t, filepath.Join(w.out, SanitizerLog))
			if want := itoa(len(tt.wantTests)) + " passed"; !strings.Contains(log, want) {
				t.Errorf("sanitizer.log lacks %q: base ids did not select one test each:\n%s", want, log)
			}
		})
	}
}

// TestSanitizeReports runs each memcheck log style of the double and
// checks outputs, exit code and the summaries.
func TestSanitizeReports(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode             string
		wantExit         int
		wantFindings     bool
		wantInconclusive string
		wantAnnotation   string
	}{
		{"clean", 0, false, "false", ""},
		{"access-at", 99, true, "false", "::error::compute-sanitizer memcheck: Invalid __global__ write of size 4 bytes in ad_fibonacci_kernel"},
		{"address-old", 99, true, "false", "::error::compute-sanitizer memcheck: Invalid __global__ write of size 4 bytes in ad_fibonacci_kernel"},
		{"truncated", 134, true, "true", "::error::"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			w, ghOut := newSanitizeWorldOnActions(t, "test_repro.py::test_y", tt.mode)
			res, err := RunSanitize(context.Background(), w.te.Env, w.opts(nil))
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.wantExit || (res.Findings > 0) != tt.wantFindings {
				t.Errorf("exit %d findings %d; want exit %d, findings %v", res.ExitCode, res.Findings, tt.wantExit, tt.wantFindings)
			}
			outs := readOutputs(t, ghOut)
			if outs["inconclusive"] != tt.wantInconclusive || outs["skipped"] != "false" || outs["findings"] != itoa(res.Findings) {
				t.Errorf("outputs = %v", outs)
			}
			stdout := w.te.stdout.String()
			if tt.wantAnnotation == "" && strings.Contains(stdout, "::error::") {
				t.Errorf("unexpected annotation:\n%s", stdout)
			}
			if tt.wantAnnotation != "" && !strings.Contains(stdout, tt.wantAnnotation) {
				t.Errorf("stdout lacks %q:\n%s", tt.wantAnnotation, stdout)
			}
			if tt.mode == "access-at" {
				// The same run on a terminal: the finding as a plain line, no workflow command.
				tw := newSanitizeWorld(t, &ReproducerResult{Count: 5, FailedBaseTests: []string{"test_repro.py::test_y"}},
					map[string]string{"FAKE_SANITIZER_MODE": tt.mode})
				if _, err := RunSanitize(context.Background(), tw.te.Env, tw.opts(nil)); err != nil {
					t.Fatal(err)
				}
				term := tw.te.stdout.String()
				if strings.Contains(term, "::error") || !strings.Contains(term, "sanitize: first finding: "+strings.TrimPrefix(tt.wantAnnotation, "::error::")) {
					t.Errorf("terminal output: want the first finding as a plain line and no workflow command:\n%s", term)
				}
			}
			var js map[string]any
			if err := json.Unmarshal([]byte(readFile(t, filepath.Join(w.out, SanitizerSummaryJSON))), &js); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"command", "tests", "exit_code", "findings", "tool", "error_summary", "complete", "errors", "api_errors"} {
				if _, ok := js[k]; !ok {
					t.Errorf("sanitizer_summary.json lacks %q", k)
				}
			}
			if txt := readFile(t, filepath.Join(w.out, SanitizerSummaryText)); txt == "" {
				t.Error("empty sanitizer_summary.txt")
			}
		})
	}
}

func TestSanitizeMissingSanitizer(t *testing.T) {
	t.Parallel()
	w := newSanitizeWorld(t, &ReproducerResult{Count: 5, FailedBaseTests: []string{"t.py::test_x"}}, map[string]string{"PATH": t.TempDir()})
	_, err := RunSanitize(context.Background(), w.te.Env, w.opts(nil))
	if ExitCodeFor(err) != ExitFailure {
		t.Fatalf("err = %v, want exit 1", err)
	}
	for _, want := range []string{"compute-sanitizer not found", "$PATH", "/usr/local/cuda*/bin", "/usr/bin", "/usr/lib/nvidia-cuda-toolkit/bin", "apt-get install nvidia-cuda-toolkit", "--sanitizer PATH"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// The report says why there is no sanitizer log.
	text := reportText(t, w.out)
	if want := "Sanitizer:      compute-sanitizer not available on this runner (compute-sanitizer not found; searched $PATH"; !strings.Contains(text, want) {
		t.Errorf("the verdict does not say compute-sanitizer was not available:\n%s", text)
	}
}

func TestSanitizeBadFlags(t *testing.T) {
	t.Parallel()
	w := newSanitizeWorld(t, nil, nil)
	for name, mut := range map[string]func(*SanitizeOptions){
		"when":        func(o *SanitizeOptions) { o.When = "sometimes" },
		"tool":        func(o *SanitizeOptions) { o.Tool = "leakcheck" },
		"print-limit": func(o *SanitizeOptions) { o.PrintLimit = -1 },
		"max-tests":   func(o *SanitizeOptions) { o.MaxTests = -2 },
	} {
		if _, err := RunSanitize(context.Background(), w.te.Env, w.opts(mut)); ExitCodeFor(err) != ExitUsage {
			t.Errorf("%s: err %v, want usage error", name, err)
		}
	}
}

func TestFindSanitizer(t *testing.T) {
	t.Parallel()
	exe := func(t *testing.T, path string) {
		t.Helper()
		testenv.WriteExecutable(t, path, []byte("#!/bin/sh\n"))
	}
	t.Run("explicit", func(t *testing.T) {
		te := newTestEnv(t, map[string]string{"PATH": binDir(t, "compute-sanitizer")})
		p := filepath.Join(t.TempDir(), "cs")
		exe(t, p)
		if got, err := FindSanitizer(te.Env, p); err != nil || got != p {
			t.Errorf("FindSanitizer(explicit) = %q, %v", got, err)
		}
		if _, err := FindSanitizer(te.Env, p+".missing"); err == nil || !strings.Contains(err.Error(), "--sanitizer") {
			t.Errorf("missing explicit path: %v", err)
		}
	})
	t.Run("PATH first", func(t *testing.T) {
		bin := binDir(t, "compute-sanitizer")
		te := newTestEnv(t, map[string]string{"PATH": bin})
		te.Root = t.TempDir()
		exe(t, filepath.Join(te.Root, "usr/local/cuda-12.4/bin/compute-sanitizer"))
		if got, _ := FindSanitizer(te.Env, ""); got != filepath.Join(bin, "compute-sanitizer") {
			t.Errorf("got %q, want the PATH one", got)
		}
	})
	t.Run("newest cuda first", func(t *testing.T) {
		te := newTestEnv(t, map[string]string{"PATH": t.TempDir()})
		te.Root = t.TempDir()
		for _, v := range []string{"cuda-11.8", "cuda-12.10", "cuda-12.4", "cuda"} {
			exe(t, filepath.Join(te.Root, "usr/local", v, "bin/compute-sanitizer"))
		}
		if diff := cmp.Diff([]string{"/usr/local/cuda-12.10/bin", "/usr/local/cuda-12.4/bin", "/usr/local/cuda-11.8/bin", "/usr/local/cuda/bin"}, cudaBinDirs(te.Env)); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
		if got, _ := FindSanitizer(te.Env, ""); got != filepath.Join(te.Root, "usr/local/cuda-12.10/bin/compute-sanitizer") {
			t.Errorf("got %q", got)
		}
	})
	t.Run("debian toolkit", func(t *testing.T) {
		te := newTestEnv(t, map[string]string{"PATH": t.TempDir()})
		te.Root = t.TempDir()
		exe(t, filepath.Join(te.Root, "usr/lib/nvidia-cuda-toolkit/bin/compute-sanitizer"))
		if got, _ := FindSanitizer(te.Env, ""); got != filepath.Join(te.Root, "usr/lib/nvidia-cuda-toolkit/bin/compute-sanitizer") {
			t.Errorf("got %q", got)
		}
	})
}

// A test killed by SIGKILL under the sanitizer (the OOM killer) prints no crash message and no
// pytest final line; the sanitizer still prints "ERROR SUMMARY: 0 errors". That run checked
// only what ran before the kill: inconclusive, never clean.
func TestSanitizeTargetKilled(t *testing.T) {
	t.Parallel()
	w, ghOut := newSanitizeWorldOnActions(t, "test_kill.py::test_k", "clean")
	writeFile(t, filepath.Join(w.suite, "test_kill.py"),
		"import os, signal\n\ndef test_k():\n    print('launching', flush=True)\n    os.kill(os.getpid(), signal.SIGKILL)\n")
	res, err := RunSanitize(context.Background(), w.te.Env, w.opts(nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Complete || !strings.Contains(res.Report.Inconclusive, "pytest printed no final summary line") {
		t.Errorf("complete %v, inconclusive %q: a killed target's 0 errors is not clean", res.Report.Complete, res.Report.Inconclusive)
	}
	if outs := readOutputs(t, ghOut); outs["inconclusive"] != "true" || outs["ladder"] != "memcheck:inconclusive" {
		t.Errorf("outputs = %v", outs)
	}
	text := reportText(t, w.out)
	if !strings.Contains(text, "memcheck inconclusive: pytest printed no final summary line") || strings.Contains(text, "memcheck clean") {
		t.Errorf("report text:\n%s", text)
	}
}

// A compute-sanitizer that prints its banner and "ERROR SUMMARY: 0 errors" and exits 0 without
// running pytest (a broken install) checked nothing: the run is inconclusive, never clean.
func TestSanitizeTargetNeverRan(t *testing.T) {
	t.Parallel()
	w := newSanitizeWorld(t, &ReproducerResult{Count: 5, FailedBaseTests: []string{"test_repro.py::test_y"}}, nil)
	fake := filepath.Join(t.TempDir(), "compute-sanitizer")
	writeFile(t, fake, "#!/bin/sh\necho '========= COMPUTE-SANITIZER'\necho '========= ERROR SUMMARY: 0 errors'\n")
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := RunSanitize(context.Background(), w.te.Env, w.opts(func(o *SanitizeOptions) { o.Sanitizer = fake }))
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Complete || !strings.Contains(res.Report.Inconclusive, "pytest printed nothing under the sanitizer") {
		t.Errorf("complete %v, inconclusive %q: a sanitizer that never ran pytest is not clean", res.Report.Complete, res.Report.Inconclusive)
	}
	if out := w.te.stdout.String(); !strings.Contains(out, "output ladder=memcheck:inconclusive") {
		t.Errorf("stdout:\n%s", out)
	}
}

// A module that fails to import under the sanitizer (--when always over a folder) stops pytest
// at collection: no test ran, and the clean ERROR SUMMARY checked only the imports.
func TestSanitizeCollectionError(t *testing.T) {
	t.Parallel()
	w := newSanitizeWorld(t, nil, map[string]string{"FAKE_SANITIZER_MODE": "clean"})
	writeFile(t, filepath.Join(w.suite, "test_col.py"), "raise ImportError('libcuda.so.1: cannot open shared object file')\n")
	res, err := RunSanitize(context.Background(), w.te.Env, w.opts(func(o *SanitizeOptions) { o.When, o.Paths = WhenAlways, []string{"."} }))
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Complete || !strings.HasPrefix(res.Report.NoTests, "pytest: errors during collection (collected ") {
		t.Errorf("complete %v, no_tests %q: a run stopped at collection is not clean", res.Report.Complete, res.Report.NoTests)
	}
}

// A project whose pytest.ini says "addopts = -ra -qqq" cancels the sanitizer's -v (pytest
// sums them: -qq): pytest printed neither its session rule nor its final line, and the parser
// read a clean run as "pytest printed nothing under the sanitizer", and a run with errors had no
// test line to place them. The worker record's plugin raises the verbosity back, as in the sweep.
func TestSanitizeQuietAddopts(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"clean", "access-at"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			w := newSanitizeWorld(t, &ReproducerResult{Count: 5, FailedBaseTests: []string{"test_repro.py::test_y"}},
				map[string]string{"FAKE_SANITIZER_MODE": mode})
			writeFile(t, filepath.Join(w.suite, "pytest.ini"), "[pytest]\naddopts = -ra -qqq\n")
			res, err := RunSanitize(context.Background(), w.te.Env, w.opts(nil))
			if err != nil {
				t.Fatal(err)
			}
			log := readFile(t, filepath.Join(w.out, SanitizerLog))
			if !res.Report.Complete || !strings.Contains(log, "test_repro.py::test_y PASSED") {
				t.Errorf("complete %v, inconclusive %q; want a complete run whose log names the test\n%s", res.Report.Complete, res.Report.Inconclusive, log)
			}
			if wantFindings := mode != "clean"; (res.Findings > 0) != wantFindings {
				t.Errorf("findings %d, want some: %v", res.Findings, wantFindings)
			}
			// The reproducer's worker record is the sweep's: the sanitizer does not write one.
			if _, err := os.Stat(filepath.Join(w.out, WorkerLog)); err == nil {
				t.Errorf("the sanitizer wrote %s", WorkerLog)
			}
		})
	}
}

// A report in a wording the parser does not know (a newer compute-sanitizer's error, a newer
// racecheck's hazard) still counts in the tool's summary: the run found something. It read "0
// distinct finding(s)", findings=0 and inconclusive=false, which a workflow reads as clean, and
// the report said "clean" or did not say what the findings were not.
func TestSanitizeUnrecognisedReports(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, mode, tool string
		unknown          string // the first line the parser did not know
		ladder           string // the ladder output
		finding          string // "1 error" or "1 hazard"
		summaryText      string // in sanitizer_summary.txt
		reportText       string // in the report, before " (first: ...)"
	}{
		{"memcheck error", "unknown-kind", "",
			"Tensor Memory Access Violation on tcgen05.ld of size 32 bytes", "memcheck:1", "1 error",
			"ERROR SUMMARY: 1 error, 0 recognised, 1 error of a kind debugflow does not recognise",
			"memcheck: ERROR SUMMARY 1 error, 0 recognised, 1 error of a kind debugflow does not recognise"},
		{"racecheck hazard", "racecheck=unknown-hazard", "racecheck",
			"Error: Shared memory data race detected between Write access at ad_reduce_max_kernel(float *, int)+0x260 in /src/reduce.cu:31", "racecheck:1", "1 hazard",
			"RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings), 1 hazard of a kind debugflow does not recognise",
			"racecheck: 1 hazard of a kind debugflow does not recognise"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, ghOut := newSanitizeWorldOnActions(t, "test_repro.py::test_y", tt.mode)
			opts := w.opts(nil)
			if tt.tool != "" {
				opts = w.opts(func(o *SanitizeOptions) { o.Tool = tt.tool })
			}
			res, err := RunSanitize(context.Background(), w.te.Env, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Report.Unrecognised != 1 || res.Findings != 1 || !res.Report.Complete {
				t.Errorf("unrecognised %d, findings %d, complete %v; want 1, 1 and true", res.Report.Unrecognised, res.Findings, res.Report.Complete)
			}
			if outs := readOutputs(t, ghOut); outs["findings"] != "1" || outs["ladder"] != tt.ladder {
				t.Errorf("outputs = %v", outs)
			}
			tool := strings.SplitN(tt.ladder, ":", 2)[0]
			if out := w.te.stdout.String(); !strings.Contains(out, "::error::compute-sanitizer "+tool+": "+tt.finding+" of a kind debugflow does not recognise (first: \""+tt.unknown+"\") (see sanitizer_summary.txt)") {
				t.Errorf("stdout lacks the annotation of the unrecognised report:\n%s", out)
			}
			if txt := readFile(t, filepath.Join(w.out, SanitizerSummaryText)); !strings.Contains(txt, tt.summaryText) {
				t.Errorf("sanitizer_summary.txt:\n%s", txt)
			}
			text := reportText(t, w.out)
			if !strings.Contains(text, tt.reportText+" (first: \""+tt.unknown+"\")") || strings.Contains(text, tool+" clean") {
				t.Errorf("report text:\n%s", text)
			}
		})
	}
}

// The sanitizer runs each failing test once; a flaky failure may not recur under the tool.
// Its clean result said "0 distinct finding(s)" and the report "memcheck clean: ERROR SUMMARY 0
// errors" whether the test passed under the tool (the failure, and an error that comes with
// it, may not have happened) or failed (the tool saw nothing it checks): the step's line, the
// summary text and the report now say which, in the same words.
func TestSanitizeSaysWhetherTheFailureRecurred(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, test, mode string
		wantOutcome      string
		wantUnder        string
		wantReport       string
	}{
		{"clean, the test passed under the tool", "test_repro.py::test_y", "clean", "passed",
			", but the test passed under it (the failure did not recur, so an error that comes with it may not have happened)",
			"memcheck clean: ERROR SUMMARY 0 errors, but the test passed under it"},
		{"clean, the test failed under the tool", "test_fails.py::test_f", "clean", "failed",
			", with a test failing under it (memcheck saw no error of the kinds it checks)",
			// Its one test failed last: -x's "stopping after 1 failures" left no test out, so
			// the result covers it whole (no "over the tests before pytest stopped").
			"memcheck clean: ERROR SUMMARY 0 errors, with a test failing under it (memcheck saw no error of the kinds it checks)"},
		{"errors, the test passed under the tool", "test_repro.py::test_y", "access-at", "passed",
			", though the test passed under it (the errors were found all the same)",
			"memcheck: ERROR SUMMARY 2 errors, 1 distinct invalid access, though the test passed under it (the errors were found all the same)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, _ := newSanitizeWorldOnActions(t, tt.test, tt.mode)
			writeFile(t, filepath.Join(w.suite, "test_fails.py"), "def test_f():\n    assert False, 'ndarray gradient mismatch'\n")
			res, err := RunSanitize(context.Background(), w.te.Env, w.opts(nil))
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Report.Pytest.Outcome) != tt.wantOutcome || !res.Report.Complete {
				t.Errorf("pytest %+v, complete %v (%s); want outcome %s", res.Report.Pytest, res.Report.Complete, res.Report.Inconclusive, tt.wantOutcome)
			}
			if out := w.te.stdout.String(); !strings.Contains(out, "exit code "+itoa(res.ExitCode)+tt.wantUnder+"\n") {
				t.Errorf("the step's line lacks %q:\n%s", tt.wantUnder, out)
			}
			if txt := readFile(t, filepath.Join(w.out, SanitizerSummaryText)); !strings.Contains(txt, "distinct finding(s)"+tt.wantUnder+"\n") {
				t.Errorf("sanitizer_summary.txt lacks %q:\n%s", tt.wantUnder, txt)
			}
			var js struct {
				Pytest struct{ Outcome string } `json:"pytest"`
			}
			if err := json.Unmarshal([]byte(readFile(t, filepath.Join(w.out, SanitizerSummaryJSON))), &js); err != nil || js.Pytest.Outcome != tt.wantOutcome {
				t.Errorf("sanitizer_summary.json pytest %+v (%v), want outcome %s", js.Pytest, err, tt.wantOutcome)
			}
			if text := reportText(t, w.out); !strings.Contains(text, tt.wantReport) {
				t.Errorf("report text lacks %q:\n%s", tt.wantReport, text)
			}
		})
	}
}

// A log with memcheck and racecheck sessions counts the reports the parser did not recognise
// against both summaries. The report's line said "2 recognised" of them, sanitizer_summary.txt's
// RACECHECK SUMMARY line only the unrecognised error: the two now share one wording.
func TestSanitizerSummaryAgreesWithReportOnMixedLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	logName, textName, _ := SanitizerFiles("memcheck", true)
	logText, err := os.ReadFile(filepath.Join("testdata", "sanitizerlog", "mixed_memcheck_racecheck.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, logName), logText, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := parseSanitizerLog(filepath.Join(dir, logName))
	if err != nil {
		t.Fatal(err)
	}
	res := &SanitizerResult{Log: logName, Ladder: []string{"memcheck"}, Selection: "failed", Tests: []string{"t.py::test_x"},
		Findings: rep.Counted(), Report: rep}
	if err := writeSanitizerSummaries(dir, "memcheck", true, res); err != nil {
		t.Fatal(err)
	}
	const counted = ", 2 recognised, 1 error not found in the log"
	if txt := readFile(t, filepath.Join(dir, textName)); !strings.Contains(txt, "RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)"+counted) {
		t.Errorf("%s:\n%s", textName, txt)
	}
	if text := reportText(t, dir); !strings.Contains(text, "RACECHECK SUMMARY 2 hazards displayed"+counted) {
		t.Errorf("report text:\n%s", text)
	}
}

// The step's own line counts the summaries in the report's words (sanitizerlog.SummaryCounts,
// UnrecognisedCounted: one definition). Of a mixed memcheck + racecheck log it read "ERROR
// SUMMARY 1, 1 error not found in the log …": no RACECHECK SUMMARY and no "2 recognised", which
// sanitizer_summary.txt and the report say.
func TestSanitizeStepLineCountsAsReport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		log  string // under testdata/sanitizerlog
		want string // in the step's line and the report's
	}{
		{"mixed_memcheck_racecheck.log",
			"ERROR SUMMARY 1 error and RACECHECK SUMMARY 2 hazards displayed, 2 recognised, 1 error not found in the log (records debugflow does not recognise, or written elsewhere: --save, --log-file)"},
		{"unrecognised_record.log",
			`ERROR SUMMARY 3 errors, 2 recognised, 1 error of a kind debugflow does not recognise (first: "Tensor Memory Access Violation on tcgen05.ld of size 32 bytes")`},
		{"print_limit_not_printed.log", "ERROR SUMMARY 5 errors (3 not printed)"},
		// racecheck alone: no ERROR SUMMARY, its unrecognised hazards in the same words.
		{"racecheck_unrecognised.log",
			`2 hazards of a kind debugflow does not recognise (first: "Error: Shared memory data race detected between Write access at tile_transpose(float *, const float *)+0x1f0 in transpose.cu:22")`},
	}
	for _, tt := range tests {
		t.Run(tt.log, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			logText, err := os.ReadFile(filepath.Join("testdata", "sanitizerlog", tt.log))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := sanitizerlog.Parse(strings.NewReader(string(logText)))
			if err != nil {
				t.Fatal(err)
			}
			logName, _, _ := SanitizerFiles(rep.Tool, true)
			if err := os.WriteFile(filepath.Join(dir, logName), logText, 0o644); err != nil {
				t.Fatal(err)
			}
			res := &SanitizerResult{Log: logName, Ladder: []string{rep.Tool}, Selection: "failed", Tests: []string{"t.py::test_x"},
				Findings: rep.Counted(), Report: rep, ExitCode: 99}
			if err := writeSanitizerSummaries(dir, rep.Tool, true, res); err != nil {
				t.Fatal(err)
			}
			te := newTestEnv(t, nil)
			printSanitizer(te.Env, res)
			line := te.stdout.String()
			if !strings.Contains(line, fmt.Sprintf("sanitize: %s: %d distinct finding(s), ", rep.Tool, rep.Findings())) || !strings.Contains(line, tt.want+", exit code 99") {
				t.Errorf("the step's line lacks %q:\n%s", tt.want+", exit code 99", line)
			}
			if text := reportText(t, dir); !strings.Contains(text, tt.want) {
				t.Errorf("report text lacks %q:\n%s", tt.want, text)
			}
		})
	}
}

// TestSanitizeSkipKeepsAnEarlierSummary: a skip writes its reason only into a folder without a
// summary; one there (an earlier sanitize run into the same folder) describes logs still there.
func TestSanitizeSkipKeepsAnEarlierSummary(t *testing.T) {
	t.Parallel()
	w := newSanitizeWorld(t, &ReproducerResult{Count: 5, ExitCode: 0, Passed: 15}, nil)
	earlier := `{"command":["compute-sanitizer"],"log":"sanitizer.log","selection":"failed","tests":["t.py::x"]}`
	testenv.WriteFile(t, filepath.Join(w.out, SanitizerSummaryJSON), earlier)
	if res, err := RunSanitize(context.Background(), w.te.Env, w.opts(nil)); err != nil || res != nil {
		t.Fatalf("RunSanitize = %v, %v; want a skip", res, err)
	}
	if got := readFile(t, filepath.Join(w.out, SanitizerSummaryJSON)); got != earlier {
		t.Errorf("summary %q, want the earlier one kept", got)
	}
}

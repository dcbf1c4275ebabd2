package local

import (
	"bytes"
	"cmp"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/runner/jobmark"
	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/steps"
)

// TestLocalSetupFailsFast runs local mode where the reproducer cannot work: it must stop
// before the identity work and the sweep, in seconds of CPU, exit 6 (verdict's setup-failed
// code) and name the cause, with the install hint for a bare interpreter.
func TestLocalSetupFailsFast(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	bare := t.TempDir() // an interpreter without pytest: a stand-in that fails like one
	writeExec(t, filepath.Join(bare, "python3"), "#!/bin/sh\necho \"Traceback (most recent call last):\" >&2\n"+
		"echo \"ModuleNotFoundError: No module named 'pytest'\" >&2\nexit 1\n")
	tests := []struct {
		name    string
		python  string
		conftst string // tests' conftest.py ("" for none)
		sel     string
		want    []string
		// evidence is whether the run wrote a folder (the collection check did; the
		// interpreter check comes before any folder).
		evidence bool
		// brokenPlugin puts a pytest_repeat that raises when imported first on PYTHONPATH:
		// the interpreter check finds it, the collection imports it.
		brokenPlugin bool
	}{
		{name: "plugin that fails to import", python: py, brokenPlugin: true, evidence: true,
			want: []string{"pytest_repeat", "this pytest_repeat is a broken build"}},
		{name: "conftest imports a missing module", python: py, conftst: "import pytest_rerunfailures\n", sel: "cuda", evidence: true,
			want: []string{"conftest.py needs module pytest_rerunfailures", "pip install pytest-rerunfailures"}},
		{name: "-k selects nothing", python: py, sel: "rocm", evidence: true,
			want: []string{`-k "rocm" selects none of the 12 tests collected from test_ndarray.py`}},
		{name: "interpreter without pytest", python: filepath.Join(bare, "python3"),
			want: []string{"cannot import pytest", "pip install pytest pytest-xdist pytest-repeat",
				"apt-get install python3-pytest python3-pytest-xdist python3-pytest-repeat"}},
		{name: "interpreter missing", python: filepath.Join(bare, "python9"),
			want: []string{"the reproducer's interpreter " + filepath.Join(bare, "python9") + " is not found",
				"apt-get install python3-pytest python3-pytest-xdist python3-pytest-repeat"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suite := copySuite(t)
			if tt.conftst != "" {
				if err := os.WriteFile(filepath.Join(suite, "conftest.py"), []byte(tt.conftst), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s := testSpec(t, tt.python)
			s.Reproducer.Select = tt.sel
			dmesg := filepath.Join(t.TempDir(), "kern.log")
			os.WriteFile(dmesg, nil, 0o644)
			out := filepath.Join(t.TempDir(), "evidence")
			var stdout bytes.Buffer
			var extra []string
			if tt.brokenPlugin {
				shadow := t.TempDir()
				testenv.WriteFile(t, filepath.Join(shadow, "pytest_repeat.py"), "raise ImportError('this pytest_repeat is a broken build')\n")
				extra = append(extra, "PYTHONPATH="+shadow)
			}
			env := testEnv(t, dmesg, extra...)
			env.Action = githubactions.New(githubactions.WithWriter(&stdout)) // as on a terminal: one screen
			cpu0 := cpuTime(t)
			res, err := Run(context.Background(), Options{Spec: s, Out: out, Dir: suite, Env: env, Stdout: &stdout, DmesgSource: dmesg})
			cpu := cpuTime(t) - cpu0
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, stdout.String())
			}
			text := stdout.String()
			if res.ExitCode != ExitSetupFailed || !res.SetupFailed {
				t.Errorf("exit %d, setup failed %v; want %d:\n%s", res.ExitCode, res.SetupFailed, ExitSetupFailed, text)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.SetupCause, w) || !strings.Contains(text, w) {
					t.Errorf("the cause (%q) or the output lacks %q:\n%s", res.SetupCause, w, text)
				}
			}
			if !strings.Contains(text, "setup failed: ") || strings.Contains(text, "Reproduced:     no") {
				t.Errorf("the output does not say the setup failed:\n%s", text)
			}
			if strings.Contains(text, "system identity") || strings.Contains(text, "==> reproducer:") {
				t.Errorf("local did the identity or the sweep before failing:\n%s", text)
			}
			if workflowCommand.MatchString(text) {
				t.Errorf("a workflow command on a terminal:\n%s", text)
			}
			t.Logf("setup failure: %s CPU; cause: %s", cpu.Round(time.Millisecond), res.SetupCause)
			if cpu > 5*time.Second {
				t.Errorf("the setup failure used %s of CPU, want under 5s", cpu)
			}
			_, statErr := os.Stat(filepath.Join(out, "reproducer_summary.json"))
			if (statErr == nil) != tt.evidence {
				t.Errorf("reproducer_summary.json written: %v, want %v", statErr == nil, tt.evidence)
			}
			if tt.evidence {
				if res.Verdict == nil || !res.Verdict.Run.SetupFailed || !strings.Contains(text, "Reproduced:     setup failed") {
					t.Errorf("the verdict does not say the setup failed:\n%s", text)
				}
				if res.Out != out {
					t.Errorf("evidence in %q, want %q", res.Out, out)
				}
			}
		})
	}
}

// TestLocalKeepsEarlierEvidence runs local mode three times into one folder: the first run
// writes into it, the later ones into DIR/run-2 and DIR/run-3, and every run says where its
// evidence went. The broken-setup run is the quickest that writes evidence.
func TestLocalKeepsEarlierEvidence(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	suite := copySuite(t)
	s := testSpec(t, py)
	s.Reproducer.Select = "rocm" // selects nothing: the run ends after the collection check
	dmesg := filepath.Join(t.TempDir(), "kern.log")
	os.WriteFile(dmesg, nil, 0o644)
	out := filepath.Join(t.TempDir(), "evidence")
	var first []byte
	for i, want := range []string{out, filepath.Join(out, "run-2"), filepath.Join(out, "run-3")} {
		var stdout bytes.Buffer
		workers := i // -n 0, 1, 2: the --workers override reaches pytest
		res, err := Run(context.Background(), Options{Spec: s, Out: out, Workers: &workers, Dir: suite,
			Env: testEnv(t, dmesg), Stdout: &stdout, DmesgSource: dmesg})
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, stdout.String())
		}
		if res.Out != want {
			t.Errorf("run %d wrote to %s, want %s", i+1, res.Out, want)
		}
		text := stdout.String()
		if i > 0 && !strings.Contains(text, out+" holds another run's evidence: this run writes to "+want) {
			t.Errorf("run %d does not say where its evidence went:\n%s", i+1, text)
		}
		if !strings.Contains(text, "read it again with: debugflow report "+want) {
			t.Errorf("run %d does not point at its own folder:\n%s", i+1, text)
		}
		log, err := os.ReadFile(filepath.Join(want, steps.PreflightLog))
		if err != nil || !strings.Contains(string(log), " -n "+itoa(workers)+" ") {
			t.Errorf("run %d: preflight.log does not show -n %d (%v):\n%s", i+1, workers, err, log)
		}
		if i == 0 {
			first, _ = os.ReadFile(filepath.Join(out, "reproducer_summary.json"))
		}
		// A folder of its own, marked as the workflow's init step marks a job's.
		if m, err := jobmark.Load(want); err != nil || m.RunID != cmp.Or(os.Getenv("GITHUB_RUN_ID"), "local") {
			t.Errorf("run %d: job.json %+v, %v", i+1, m, err)
		}
	}
	if now, _ := os.ReadFile(filepath.Join(out, "reproducer_summary.json")); !bytes.Equal(now, first) {
		t.Error("a later run overwrote the first run's reproducer_summary.json")
	}
	if v, err := report.Load(out); err != nil || !v.Run.SetupFailed {
		t.Errorf("the first run's folder no longer reads as its own verdict: %v", err)
	}
}

func TestRunFolder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o755)
	used := filepath.Join(root, "used")
	os.MkdirAll(filepath.Join(used, "run-2"), 0o755)
	os.WriteFile(filepath.Join(used, "reproducer.log"), nil, 0o644)
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o644)
	tests := []struct {
		out, want string
		earlier   bool
		wantErr   string
	}{
		{filepath.Join(root, "new", "dir"), filepath.Join(root, "new", "dir"), false, ""},
		{empty, empty, false, ""},
		{used, filepath.Join(used, "run-3"), true, ""},
		{file, "", false, "not a directory"},
	}
	for _, tt := range tests {
		got, earlier, err := runFolder(tt.out)
		if got != tt.want || earlier != tt.earlier || (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("runFolder(%s) = %s, %v, %v; want %s, %v, error %q", tt.out, got, earlier, err, tt.want, tt.earlier, tt.wantErr)
		}
		if err == nil {
			if fi, err := os.Stat(got); err != nil || !fi.IsDir() {
				t.Errorf("runFolder(%s) did not create %s", tt.out, got)
			}
		}
	}
}

// Runs started together into a missing folder each get a folder of their own: one the folder
// itself, the others run-2, run-3, ...
func TestRunFolderClaims(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "tmp", "repro")
	const n = 8
	dirs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir, _, err := runFolder(out)
			if err != nil {
				t.Error(err)
			}
			dirs[i] = dir
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, dir := range dirs {
		if seen[dir] {
			t.Errorf("%s given to two runs: %q", dir, dirs)
		}
		seen[dir] = true
	}
	if !seen[out] {
		t.Errorf("no run got %s itself: %q", out, dirs)
	}
}

// workflowCommand matches a GitHub Actions workflow command line ("::error::...").
var workflowCommand = regexp.MustCompile(`(?m)^::[a-z-]+`)

func writeExec(t *testing.T, path, content string) {
	t.Helper()
	testenv.WriteExecutable(t, path, []byte(content))
}

// cpuTime is the user and system time of this process and of the children it waited for.
func cpuTime(t *testing.T) time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			t.Fatal(err)
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}

func itoa(n int) string { return strconv.Itoa(n) }

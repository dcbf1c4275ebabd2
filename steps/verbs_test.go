package steps

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/evidencefiles"
)

func TestVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		summary  *ReproducerResult
		wantCode int
		wantLine string
	}{
		{"never ran", nil, 1, "reproducer_summary.json not found"},
		{"passed", &ReproducerResult{ExitCode: 0, Passed: 400}, 0, "verdict: pytest passed 400 tests, bug not reproduced; exiting 0"},
		{"reproduced", &ReproducerResult{ExitCode: 1, Reproduced: true, Failed: 2, CrashedWorkers: []string{"gw3"}}, 1,
			"verdict: reproduced: pytest exited 1 (2 failed, 1 crashed worker(s): gw3)"},
		{"stopped early", &ReproducerResult{ExitCode: 1, Reproduced: true, StoppedEarly: true, StopReason: "first failure: t.py::x", Failed: 1}, 1,
			"stopped at the first failure (first failure: t.py::x); exiting 1"},
		// The flaky plugin retried a failed attempt into a pass: pytest exits 0, the bug showed.
		{"retried into a pass", &ReproducerResult{ExitCode: 0, Reproduced: true, Passed: 40}, 1,
			"verdict: reproduced: a test failed and a retry plugin ran it again into a pass, so pytest exited 0; exiting 1"},
		// Only xfails: their bodies failed where a marker expected it, which may be the bug.
		{"xfailed only", &ReproducerResult{ExitCode: 0, Passed: 36, XFailed: 4}, 0,
			"verdict: pytest passed 36 tests, but 4 xfailed: their bodies failed where an xfail marker expected it, so whether the bug showed is not known (debugflow report says unknown); exiting 0"},
		{"no tests collected", &ReproducerResult{ExitCode: 5}, 5, "pytest exited 5 without failing tests"},
		{"usage error", &ReproducerResult{ExitCode: 4}, 4, "pytest exited 4 without failing tests"},
		{"cancelled", &ReproducerResult{ExitCode: 143, Cancelled: true}, 143, "the reproducer was stopped by SIGTERM (the step's timeout or a cancel) before it finished; the counts cover the tests that ran; exiting 143"},
		{"setup failed", &ReproducerResult{ExitCode: ExitSetupFailed, SetupFailed: true, SetupCause: "conftest.py needs module pytest_rerunfailures"},
			ExitSetupFailed, "verdict: setup failed: conftest.py needs module pytest_rerunfailures; the sweep never ran, exiting 6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			if tt.summary != nil {
				if err := evidencefiles.WriteReproducerSummary(out, tt.summary); err != nil {
					t.Fatal(err)
				}
			}
			te := newTestEnv(t, nil)
			err := RunVerdict(te.Env, VerdictOptions{Out: out})
			if code := ExitCodeFor(err); code != tt.wantCode {
				t.Errorf("exit code %d, want %d (err %v)", code, tt.wantCode, err)
			}
			msg := te.stdout.String()
			if err != nil {
				msg += err.Error()
			}
			if !strings.Contains(msg, tt.wantLine) {
				t.Errorf("output %q lacks %q", msg, tt.wantLine)
			}
		})
	}
}

func TestParseTmateTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"1", 1, true}, {"60", 60, true}, {"360", 360, true}, {" 30 ", 30, true},
		{"0", 0, false}, {"361", 0, false}, {"-5", 0, false}, {"", 0, false}, {"1.5", 0, false}, {"abc", 0, false}, {"30m", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseTmateTimeout(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseTmateTimeout(%q) = %d, %v", tt.in, got, err)
		}
		if err != nil && (ExitCodeFor(err) != ExitUsage || !strings.Contains(err.Error(), "from 1 to 360")) {
			t.Errorf("ParseTmateTimeout(%q) error %q: want a usage error naming the range", tt.in, err)
		}
	}
}

func TestStage(t *testing.T) {
	t.Parallel()
	ghOut := filepath.Join(t.TempDir(), "gh_output")
	writeFile(t, ghOut, "")
	te := newTestEnv(t, map[string]string{"GITHUB_OUTPUT": ghOut})
	out := filepath.Join(t.TempDir(), "repro")
	opts := StageOptions{
		Out:                 out,
		ReproducerFlags:     ReproducerFlags{Python: "python3", Workers: 8, Count: 50, Select: "cuda", Paths: []string{"tests/python/test_ad_ndarray.py"}},
		SanitizerFlags:      SanitizerFlags{Tool: "memcheck", PrintLimit: 100, MaxTests: 5},
		StepBinary:          "debugflow-step",
		StandaloneFile:      "tests/python/test_ad_ndarray.py",
		StandaloneTest:      "test_ad_fibonacci",
		ContinueFiles:       []string{"/tmp/continue"},
		TmateTimeoutMinutes: "45",
		RebuildDir:          "_skbuild/*/cmake-build",
		Artifact:            DefaultArtifactName,
	}
	written, err := RunStage(te.Env, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"run_reproducer.sh", "run_sanitizer.sh", "repro_standalone.py", "README.md"} {
		p := filepath.Join(out, name)
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s not written: %v", name, err)
		}
		if !strings.Contains(te.stdout.String(), "stage: wrote ") || !containsPath(written, p) {
			t.Errorf("%s not reported as written (%q)", name, written)
		}
	}
	if sh := readFile(t, filepath.Join(out, "run_reproducer.sh")); !strings.Contains(sh, "reproduce") || !strings.Contains(sh, "--workers 8") {
		t.Errorf("run_reproducer.sh does not call reproduce with the flags:\n%s", sh)
	}
	if got := readOutputs(t, ghOut)["gate_timeout_minutes"]; got != "50" {
		t.Errorf("gate_timeout_minutes = %q, want 50", got)
	}

	opts.TmateTimeoutMinutes = "720"
	opts.Out = filepath.Join(t.TempDir(), "never")
	if _, err := RunStage(te.Env, opts); ExitCodeFor(err) != ExitUsage {
		t.Errorf("timeout 720: err %v, want usage error", err)
	}
	if _, err := os.Stat(opts.Out); err == nil {
		t.Error("stage wrote files despite the invalid timeout")
	}
}

func containsPath(list []string, p string) bool {
	for _, l := range list {
		if l == p || filepath.Base(l) == filepath.Base(p) {
			return true
		}
	}
	return false
}

func TestXid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "kmsg")
	boot := "[Wed Dec  2 10:45:59 2026] NVRM: GPU at PCI:0001:00:00: GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11\n" +
		"[Wed Dec  2 10:45:59 2026] NVRM: Xid (PCI:0001:00:00): 13, Graphics Exception: old, before start\n"
	writeFile(t, src, boot)
	out := filepath.Join(dir, "out")
	te := newTestEnv(t, nil)
	ctx := context.Background()
	if _, err := TakeSnapshot(ctx, te.Env, DmesgOptions{Out: out, Name: "start", Source: src}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, src, boot+
		"[Wed Dec  2 10:47:01 2026] NVRM: Xid (PCI:0001:00:00): 31, pid=37803, name=[pytest-xdist r, channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n"+
		"[Wed Dec  2 10:47:02 2026] NVRM: Xid (PCI:0001:00:00): 109, pid=37803, name=[pytest-xdist r, channel 0x00000201, errorString CTX SWITCH TIMEOUT, Info 0x3c000\n"+
		"[Wed Dec  2 10:47:03 2026] NVRM: Xid (PCI:0001:00:00): 31, pid=37804, name=python3, channel 0x00000202, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x70a2_c8001000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n")
	// An intermediate snapshot must not change what "since start" means.
	if _, err := TakeSnapshot(ctx, te.Env, DmesgOptions{Out: out, Name: "after_reproducer", Source: src}); err != nil {
		t.Fatal(err)
	}
	sum, err := RunXid(ctx, te.Env, XidOptions{Out: out, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if got := XidCounts(sum.Counts); got != "31:2,109:1" {
		t.Errorf("counts = %q, want 31:2,109:1 (the Xid 13 before start excluded)", got)
	}
	if outs := terminalOutputs(te.stdout.String()); outs["xid_counts"] != "31:2,109:1" {
		t.Errorf("outputs = %v", outs)
	}
	text := readFile(t, filepath.Join(out, XidSummary))
	if !strings.Contains(text, "since snapshot \"start\" (anchor): 3") {
		t.Errorf("xid_summary.txt header:\n%s", text)
	}
	if len(sum.Events) == 0 || sum.Events[0].GPUUUID != "GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11" {
		t.Errorf("events lack the GPU UUID logged at boot: %+v", sum.Events)
	}
	if !strings.Contains(te.stderr.String(), "NVIDIA Xid errors during this job: 31:2,109:1") {
		t.Errorf("no warning: %q", te.stderr)
	}
}

func TestXidCounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   map[int]int
		want string
	}{
		{nil, ""},
		{map[int]int{109: 1, 31: 1}, "31:1,109:1"},
		{map[int]int{13: 12, 43: 1, 45: 2}, "13:12,43:1,45:2"},
	}
	for _, tt := range tests {
		if got := XidCounts(tt.in); got != tt.want {
			t.Errorf("XidCounts(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestProgressTicker(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t, map[string]string{"CI": "true"})
	stop := startProgressTicker(te.Env, 20*time.Millisecond, func() Progress {
		return Progress{Done: 7, Total: 400, Failures: 1, Crashes: 1, Elapsed: 90 * time.Second}
	})
	waitFor(t, 5*time.Second, "a progress line", func() bool { return strings.Contains(te.stderr.String(), "progress:") })
	stop()
	want := "debugflow-step: progress: 7/400 tests, 1 failed, 1 crashed workers, 1m30s elapsed\n"
	if !strings.HasPrefix(te.stderr.String(), want) {
		t.Errorf("progress line %q, want %q", te.stderr, want)
	}
	// Outside CI nothing is printed.
	te = newTestEnv(t, nil)
	stop = startProgressTicker(te.Env, time.Millisecond, func() Progress { return Progress{} })
	time.Sleep(20 * time.Millisecond)
	stop()
	if te.stderr.String() != "" {
		t.Errorf("progress printed outside CI: %q", te.stderr)
	}
}

func TestPytestTrouble(t *testing.T) {
	t.Parallel()
	tests := []struct {
		r    ReproducerResult
		want string
	}{
		{ReproducerResult{ExitCode: 0}, ""},
		{ReproducerResult{ExitCode: 1}, ""},
		{ReproducerResult{ExitCode: 4}, "rejected its command line"},
		{ReproducerResult{ExitCode: 5}, "collected no tests"},
		{ReproducerResult{ExitCode: 2, Cancelled: true}, ""},
	}
	for _, tt := range tests {
		if got := pytestTrouble(&tt.r); !strings.Contains(got, tt.want) || (tt.want == "" && got != "") {
			t.Errorf("pytestTrouble(%+v) = %q, want %q", tt.r, got, tt.want)
		}
	}
}

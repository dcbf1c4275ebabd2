package steps

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/testenv"
)

// TestXidWithHostileEvidenceFiles: a FIFO or a link to /dev/zero in place of a file xid reads
// (dmesg_state.json) or writes (dmesg_final.log, xid_summary.txt) neither hangs the step (a
// FIFO blocked its open forever, deaf to the runner's SIGTERM) nor grows its memory without
// bound (/dev/zero read whole): the step ends, and what it writes is a file of its own.
func TestXidWithHostileEvidenceFiles(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "kern.log")
	writeFile(t, src, "[  100.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n")
	for _, name := range []string{dmesgStateFile, "dmesg_final.log", XidSummary} {
		for _, kind := range []string{"fifo", "zero"} {
			t.Run(name+"/"+kind, func(t *testing.T) {
				t.Parallel()
				out := t.TempDir()
				path := filepath.Join(out, name)
				plantHostile(t, path, kind)
				b, _ := runBounded(t, []string{"PATH=" + os.Getenv("PATH")}, "xid", "--out", out, "--source", src)
				if name == dmesgStateFile {
					// Not the job's state: said, and the snapshot taken as a first one.
					if !strings.Contains(string(b), dmesgStateFile) {
						t.Errorf("the step did not name the %s it could not read:\n%s", name, b)
					}
				} else if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
					t.Errorf("%s is not a file of the step's own after it: %v %v\n%s", name, fi.Mode(), err, b)
				}
				if fi, err := os.Lstat(filepath.Join(out, XidSummary)); err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
					t.Errorf("no %s: %v\n%s", XidSummary, err, b)
				}
			})
		}
	}
}

// TestHealthWithHostileEvidenceFiles: the same for health, whose "before" snapshot it reads and
// whose "after" files it writes.
func TestHealthWithHostileEvidenceFiles(t *testing.T) {
	t.Parallel()
	for _, name := range []string{HealthQueryFile(HealthBefore), HealthCSVFile(HealthBefore), HealthQueryFile("after"), HealthCSVFile("after")} {
		for _, kind := range []string{"fifo", "zero"} {
			t.Run(name+"/"+kind, func(t *testing.T) {
				t.Parallel()
				out := t.TempDir()
				path := filepath.Join(out, name)
				plantHostile(t, path, kind)
				b, err := runBounded(t, []string{"PATH=" + binDir(t, "nvidia-smi")}, "health", "--out", out, "--name", "after")
				if strings.Contains(name, "after") {
					if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
						t.Errorf("%s is not a file of the step's own after it: %v\n%s", name, err, b)
					}
				} else if err != nil && !strings.Contains(string(b), name) {
					t.Errorf("the step failed without naming %s:\n%s", name, b)
				}
			})
		}
	}
}

// TestVerdictOfAnAbsurdSummary: a reproducer_summary.json whose numbers no pytest run gives
// never turns the job green. An exit_code of 256 left the process with 256 & 255 = 0 under
// "pytest exited 256", and "exit_code": 0 beside 7 failed tests said "bug not reproduced".
func TestVerdictOfAnAbsurdSummary(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, summary string
		code          int
		want          string
	}{
		{"exit code 256", `{"count":5,"exit_code":256,"passed":3}`, ExitFailure, "not a process exit code"},
		{"exit code 512 with failures", `{"count":5,"exit_code":512,"failed":2,"passed":3}`, ExitFailure, "not a process exit code"},
		{"negative exit code", `{"count":5,"exit_code":-1,"passed":3}`, ExitFailure, "not a process exit code"},
		{"passed with failures", `{"count":5,"exit_code":0,"failed":7,"passed":3}`, ExitFailure, "inconsistent"},
		{"passed with errors", `{"count":5,"exit_code":0,"errors":1,"passed":3}`, ExitFailure, "inconsistent"},
		{"negative counts", `{"count":5,"exit_code":0,"failed":-7,"passed":3}`, ExitFailure, "inconsistent"},
		// What a real run writes stays as it was.
		{"a pass", `{"count":5,"exit_code":0,"passed":3}`, 0, "bug not reproduced"},
		{"a failure", `{"count":5,"exit_code":1,"failed":2,"passed":3,"reproduced":true}`, 1, "reproduced: pytest exited 1"},
		{"interrupted", `{"count":5,"exit_code":2,"passed":3}`, 2, "pytest exited 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			writeFile(t, filepath.Join(out, ReproducerSummary), c.summary)
			r := runStep(t, out, []string{"PATH=" + os.Getenv("PATH")}, "verdict", "--out", out)
			if r.code != c.code || !strings.Contains(r.stdout, c.want) {
				t.Errorf("exit %d, want %d; stdout lacks %q:\n%s%s", r.code, c.code, c.want, r.stdout, r.stderr)
			}
		})
	}
}

// TestReproduceWithHostileEvidenceFiles: FIFOs in place of the files reproduce writes as it
// goes (preflight.log, reproducer.log, workers.jsonl, xid_added.log) blocked the step's open
// for ever, and a link there was written through (truncating the file it named): each is
// replaced by a file of the step's own.
func TestReproduceWithHostileEvidenceFiles(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	out := t.TempDir()
	outside := filepath.Join(t.TempDir(), "bashrc")
	writeFile(t, outside, "export KEEP=1\n")
	names := []string{PreflightLog, ReproducerLog, WorkerLog, XidAddedLog, dmesgStateFile}
	for _, name := range names {
		if err := syscall.Mkfifo(filepath.Join(out, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(out, ReproducerLog)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(out, ReproducerLog)); err != nil {
		t.Fatal(err)
	}
	suite := t.TempDir()
	writeFile(t, filepath.Join(suite, "test_a.py"), "def test_a():\n    assert True\n")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, stepBinary(t), "reproduce", "--out", out, "--python", py, "--count", "2", "--workers", "1", "test_a.py")
	cmd.Dir, cmd.Env = suite, withPytestTempRoot([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()})
	b, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("reproduce did not end in 90 s:\n%s", b)
	}
	if err != nil {
		t.Fatalf("reproduce: %v\n%s", err, b)
	}
	for _, name := range names {
		if fi, err := os.Lstat(filepath.Join(out, name)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s is not a file of the step's own: %v", name, err)
		}
	}
	if got := readFile(t, outside); got != "export KEEP=1\n" {
		t.Errorf("the file the link named was written through: %q", got)
	}
	if r := loadSummary(t, out); r.Passed != 2 {
		t.Errorf("passed %d, want 2\n%s", r.Passed, b)
	}
}

// plantHostile puts at path what a hostile evidence folder may hold instead of a file: a FIFO
// (kind "fifo": an open blocks for ever) or a link to /dev/zero (kind "zero": endless bytes).
func plantHostile(t *testing.T, path, kind string) {
	t.Helper()
	var err error
	if kind == "fifo" {
		err = syscall.Mkfifo(path, 0o644)
	} else {
		err = os.Symlink("/dev/zero", path)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// runBounded runs the step binary with args and env, failing the test if it has not ended in
// 30 s. It returns the combined output and the exit error, if any.
func runBounded(t *testing.T, env []string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, stepBinary(t), args...)
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("debugflow-step %s did not end in 30 s:\n%s", strings.Join(args, " "), b)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return b, err
}

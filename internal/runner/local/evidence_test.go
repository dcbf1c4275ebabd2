package local

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/testenv"
	"github.com/debugflow/debugflow/steps"
)

// TestLocalEvidenceAfterTheRun: with the spec's core dump pass on, local mode reruns the crashed
// test with the driver's core dump, keeps the dump and reads it with cuda-gdb, and takes the
// health snapshot after the run, as the workflow's coredump and health steps do; without
// cuda-gdb the dump is kept unread, and on a machine without a GPU (no nvidia-smi) the pass and
// the snapshots say "not available on this machine" and the run goes on.
func TestLocalEvidenceAfterTheRun(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	tests := []struct {
		name  string
		tools []string // the doubles on PATH besides dmesg
		want  []string
		// dump: the core dump pass reran the test and kept a dump; gdb: cuda-gdb read it.
		dump, gdb bool
	}{
		{name: "with nvidia-smi and cuda-gdb", tools: []string{"nvidia-smi", "cuda-gdb"}, dump: true, gdb: true, want: []string{
			"==> GPU core dump pass\n    GPU core dump: ",
			"ad_fibonacci_kernel",
			"==> GPU health after the run\n    Tesla T4 GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11",
			"    no change since the snapshot before the run\n",
		}},
		{name: "without cuda-gdb", tools: []string{"nvidia-smi"}, dump: true, want: []string{
			"==> GPU core dump pass\n    GPU core dump: ",
			"cuda-gdb not available on this machine: cuda-gdb not found in $PATH or /usr/local/cuda*/bin; the dump cuda_coredump_",
			"\nCore dump:      cuda-gdb not available on this machine: cuda-gdb not found in $PATH or /usr/local/cuda*/bin; the dump cuda_coredump_",
			" is in the evidence folder, to open with cuda-gdb",
		}},
		{name: "without a GPU", want: []string{
			"    GPU health before the run: not available on this machine (nvidia-smi: not found)\n",
			"==> GPU core dump pass\n    skipped: not available on this machine (no NVIDIA GPU: nvidia-smi: not found)\n",
			"==> GPU health after the run\n    not available on this machine (nvidia-smi: not found)\n",
			"\nMachine:        application fault: only application-class Xid 31 fired; GPU health not available on this machine (nvidia-smi: not found)\n",
			"\nGPU:            not available on this machine (nvidia-smi: not found)\n",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			suite := copySuite(t)
			s := testSpec(t, py)
			s.Sanitizer.Enabled = new(bool)
			s.Coredump.Enabled = true
			dmesg := emptyDmesg(t)
			bare := t.TempDir()
			for _, tool := range append([]string{"dmesg"}, tt.tools...) {
				if err := os.Symlink(filepath.Join(doublesDir, tool), filepath.Join(bare, tool)); err != nil {
					t.Fatal(err)
				}
			}
			path := bare + ":/usr/bin:/bin"
			env := testEnv(t, dmesg, "PATH="+path)
			env.LookPath = func(file string) (string, error) { return steps.LookPathIn(path, file) }
			out := filepath.Join(t.TempDir(), "evidence")
			var stdout bytes.Buffer
			res, err := Run(context.Background(), Options{Spec: s, Out: out, Dir: suite, Env: env,
				Stdout: &stdout, DmesgSource: dmesg, ProgressEvery: time.Hour})
			text := stdout.String()
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, text)
			}
			if res.ExitCode != ExitReproduced {
				t.Errorf("exit %d, want %d:\n%s", res.ExitCode, ExitReproduced, text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
			if strings.Contains(text, "this runner") || strings.Contains(text, "\nRunner:") {
				t.Errorf("the local verdict speaks of a runner, not of this machine:\n%s", text)
			}
			var cd steps.CoredumpResult
			b, err := os.ReadFile(filepath.Join(out, steps.CoredumpSummary))
			if !tt.dump {
				if err == nil {
					t.Errorf("the core dump pass ran without a GPU: %s", b)
				}
			} else {
				if err == nil {
					err = json.Unmarshal(b, &cd)
				}
				if err != nil || !cd.Dumped || cd.Dump == "" || cd.Test != "test_ndarray.py::test_grad[cuda]" {
					t.Errorf("coredump summary %+v, %v: want the crashed test's dump", cd, err)
				}
				if _, err := os.Stat(filepath.Join(out, cd.Dump)); cd.Dump != "" && err != nil {
					t.Errorf("the dump is not in the evidence folder: %v", err)
				}
				if tt.gdb != (cd.CudaGDB != "") {
					t.Errorf("cuda-gdb %q read the dump, want it %v", cd.CudaGDB, tt.gdb)
				}
			}
			after, err := os.ReadFile(filepath.Join(out, steps.HealthQueryFile(steps.HealthAfter)))
			if err != nil {
				t.Fatalf("no health snapshot after the run: %v", err)
			}
			if got := strings.HasPrefix(string(after), steps.HealthNote); got == tt.dump {
				t.Errorf("gpu_health_after.txt starts %q: want nvidia-smi's output only with the tools", firstLine(string(after)))
			}
		})
	}
}

// TestLocalKernelLogNotAvailable: on a machine whose kernel log cannot be read (dmesg refused,
// no journalctl, no sudo: a developer's workstation with kernel.dmesg_restrict=1), the local
// verdict says the kernel log was not available on this machine, and why, never "Xid: none".
func TestLocalKernelLogNotAvailable(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	s := testSpec(t, py)
	s.Sanitizer.Enabled = new(bool)
	bare := t.TempDir()
	if err := os.Symlink(filepath.Join(doublesDir, "dmesg"), filepath.Join(bare, "dmesg")); err != nil {
		t.Fatal(err)
	}
	env := testEnv(t, emptyDmesg(t), "PATH="+bare, "FAKE_DMESG_DENY=1")
	env.LookPath = func(file string) (string, error) { return steps.LookPathIn(bare, file) }
	env.Geteuid = func() int { return 1000 }
	out := filepath.Join(t.TempDir(), "evidence")
	var stdout bytes.Buffer
	res, err := Run(context.Background(), Options{Spec: s, Out: out, Dir: copySuite(t), Env: env,
		Stdout: &stdout, ProgressEvery: time.Hour})
	text := stdout.String()
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, text)
	}
	const want = "\nXid:            kernel log not available on this machine (sudo: not found; dmesg --ctime: exit status 1: dmesg: read kernel buffer failed: Operation not permitted (kernel log needs root"
	if res.ExitCode != ExitReproduced || !strings.Contains(text, want) || !strings.Contains(text, "journalctl: not found)\n") {
		t.Errorf("exit %d; the verdict does not say the kernel log was not available on this machine:\n%s", res.ExitCode, text)
	}
	if res.Verdict == nil || res.Verdict.Xid != nil {
		t.Errorf("Xid section %+v, want none", res.Verdict)
	}
	if !strings.Contains(text, "\nMachine:        not available on this machine: GPU health: nvidia-smi: not found; kernel log: sudo: not found;") {
		t.Errorf("the machine verdict does not say why:\n%s", text)
	}
}

// With the core dump pass on but nothing reproduced, the pass is skipped as the workflow's step
// is (it runs only when the reproducer failed).
func TestLocalCoredumpSkippedWhenNotReproduced(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	s := testSpec(t, py)
	s.Reproducer.Select = "cpu"
	s.Coredump.Enabled = true
	dmesg := emptyDmesg(t)
	out := filepath.Join(t.TempDir(), "evidence")
	var stdout bytes.Buffer
	res, err := Run(context.Background(), Options{Spec: s, Out: out, Dir: copySuite(t), Env: testEnv(t, dmesg),
		Stdout: &stdout, DmesgSource: dmesg, ProgressEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != ExitNotReproduced || !strings.Contains(stdout.String(), "==> GPU core dump pass\n    skipped: the reproducer found no failing test\n") {
		t.Errorf("exit %d:\n%s", res.ExitCode, stdout.String())
	}
	if _, err := os.Stat(filepath.Join(out, steps.CoredumpLog)); err == nil {
		t.Error("the core dump pass reran a test")
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

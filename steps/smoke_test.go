package steps

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSmoke(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		command     string
		wantCode    int
		wantLog     string
		wantSummary []string // "" summary when it passed
	}{
		{"passes", `echo "init OK $QD_OFFLINE_CACHE"`, 0, "init OK 0\n", nil},
		// Both lines on stderr: stdout and stderr have pipes of their own, so lines written to
		// the two at once may reach the log in either order.
		{"fails with the last lines", "{ echo loading; echo 'RuntimeError: `cuInit` failed: CUDA_ERROR_NO_DEVICE'; } >&2; exit 3", ExitSetupFailed,
			"loading\nRuntimeError: `cuInit` failed: CUDA_ERROR_NO_DEVICE\n",
			[]string{"## Setup failed: the smoke test exited 3", "so the job stopped before the reproducer",
				"`cuda_init.log`", "```text\nloading\nRuntimeError: `cuInit` failed: CUDA_ERROR_NO_DEVICE\n```"}},
		{"a failing pipe fails", "false | cat", ExitSetupFailed, "", []string{"exited 1"}},
		{"killed by a signal", "echo dying; kill -SEGV $$", ExitSetupFailed, "dying\n", []string{"the smoke test was killed by segmentation fault", "dying"}},
		// A pytest smoke test that ran nothing checked nothing, even when it exits 0.
		{"a pytest run of no test", "echo 'collected 0 items'; echo '===== no tests ran in 0.01s ====='", ExitSetupFailed,
			"collected 0 items\n===== no tests ran in 0.01s =====\n", []string{"the smoke test did not run the tests (pytest: no tests ran)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			summary := filepath.Join(t.TempDir(), "summary.md")
			if err := os.WriteFile(summary, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			te := newTestEnv(t, map[string]string{"PATH": os.Getenv("PATH"), "QD_OFFLINE_CACHE": "0", "GITHUB_STEP_SUMMARY": summary, "GITHUB_ACTIONS": "true"})
			err := RunSmoke(context.Background(), te.Env, SmokeOptions{Out: out, Command: tt.command, Log: "cuda_init.log"})
			if got := ExitCodeFor(err); got != tt.wantCode {
				t.Fatalf("exit %d (%v), want %d\n%s", got, err, tt.wantCode, te.stdout.String())
			}
			log, err := os.ReadFile(filepath.Join(out, "cuda_init.log"))
			if err != nil {
				t.Fatal(err)
			}
			if string(log) != tt.wantLog {
				t.Errorf("cuda_init.log = %q, want %q", log, tt.wantLog)
			}
			if !strings.Contains(te.stdout.String(), tt.wantLog) {
				t.Errorf("the step log does not show the output:\n%s", te.stdout.String())
			}
			md, _ := os.ReadFile(summary)
			if len(tt.wantSummary) == 0 && len(md) > 0 {
				t.Errorf("a passing smoke test wrote a summary:\n%s", md)
			}
			for _, w := range tt.wantSummary {
				if !strings.Contains(string(md), w) {
					t.Errorf("summary lacks %q:\n%s", w, md)
				}
			}
			if tt.wantCode != 0 && !strings.Contains(te.stdout.String(), "::error::the smoke test") {
				t.Errorf("no error annotation:\n%s", te.stdout.String())
			}
			// A failed check is the reproducer's "setup failed": the verdict says so.
			r, err := LoadReproducerResult(out)
			switch {
			case tt.wantCode == 0 && err == nil:
				t.Errorf("a passing smoke test wrote %s", ReproducerSummary)
			case tt.wantCode != 0 && (err != nil || !r.SetupFailed || r.ExitCode != ExitSetupFailed || !strings.Contains(r.SetupCause, "the smoke test `"+tt.command+"`")):
				t.Errorf("reproducer summary after a failed smoke test: %+v, %v", r, err)
			}
		})
	}
}

// The smoke test runs in Dir (local mode: the checkout given by --dir).
func TestSmokeDir(t *testing.T) {
	t.Parallel()
	out, dir := t.TempDir(), t.TempDir()
	te := newTestEnv(t, map[string]string{"PATH": os.Getenv("PATH")})
	if err := RunSmoke(context.Background(), te.Env, SmokeOptions{Out: out, Command: "pwd", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if log, _ := os.ReadFile(filepath.Join(out, DefaultSmokeLog)); string(log) != dir+"\n" {
		t.Errorf("smoke.log = %q, want the working directory %s", log, dir)
	}
}

// A cancelled smoke step (the runner's SIGTERM) ends the whole command tree and exits 143.
func TestSmokeCancelled(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	te := newTestEnv(t, map[string]string{"PATH": os.Getenv("PATH")})
	ctx, cancel := context.WithCancelCause(context.Background())
	started := filepath.Join(out, "started")
	go func() {
		for i := 0; i < 500; i++ {
			if _, err := os.Stat(started); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel(&SignalCause{Signal: syscall.SIGTERM})
	}()
	err := RunSmoke(ctx, te.Env, SmokeOptions{Out: out, Command: "touch '" + started + "'; sleep 30 & wait"})
	if got := ExitCodeFor(err); got != 143 {
		t.Fatalf("exit %d (%v), want 143", got, err)
	}
	if !strings.Contains(te.stdout.String(), "## Setup failed: the smoke test was cancelled") {
		t.Errorf("output:\n%s", te.stdout.String())
	}
}

func TestSmokeUsage(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t, map[string]string{"PATH": os.Getenv("PATH")})
	// No command, a folder, and a name a step writes (the smoke log would overwrite it).
	for _, o := range []SmokeOptions{{Out: t.TempDir()}, {Out: t.TempDir(), Command: "true", Log: "../x.log"},
		{Out: t.TempDir(), Command: "true", Log: "workers.jsonl"}, {Out: t.TempDir(), Command: "true", Log: "reproducer_summary.json"}} {
		if err := RunSmoke(context.Background(), te.Env, o); ExitCodeFor(err) != ExitUsage {
			t.Errorf("%+v: %v, want a usage error", o, err)
		}
	}
}

func TestCheckSanitizer(t *testing.T) {
	t.Parallel()
	t.Run("found", func(t *testing.T) {
		te := newTestEnv(t, map[string]string{"PATH": binDir(t, "compute-sanitizer")})
		if err := RunCheckSanitizer(context.Background(), te.Env, CheckSanitizerOptions{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(te.stdout.String(), "Version 2025.3.1.0") {
			t.Errorf("the version is not in the log:\n%s", te.stdout.String())
		}
	})
	t.Run("missing", func(t *testing.T) {
		summary := filepath.Join(t.TempDir(), "summary.md")
		te := newTestEnv(t, map[string]string{"PATH": t.TempDir(), "GITHUB_STEP_SUMMARY": summary})
		te.Root = t.TempDir() // no /usr/local/cuda*, no /usr/bin/compute-sanitizer
		err := RunCheckSanitizer(context.Background(), te.Env, CheckSanitizerOptions{})
		if ExitCodeFor(err) != ExitFailure || !strings.Contains(err.Error(), "apt-get install nvidia-cuda-toolkit") {
			t.Fatalf("got %v, want exit 1 naming the package", err)
		}
		md, _ := os.ReadFile(summary)
		if !strings.Contains(string(md), "## Setup failed: compute-sanitizer is missing") {
			t.Errorf("summary:\n%s", md)
		}
	})
}

// A failing smoke test whose output is a few huge lines (a progress bar redrawn with \r, a
// compiler's one-line dump) keeps them whole in its log, but the step summary, the annotation,
// the error and reproducer_summary.json's cause show each line cut short: GitHub drops a step
// summary over 1 MiB whole, and with it the reason the job stopped. Before, the summary held
// the last 20 lines whole (20 MiB here) and the cause the last one (1 MiB).
func TestSmokeHugeLinesStayBounded(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	summary := filepath.Join(t.TempDir(), "summary.md")
	te := newTestEnv(t, map[string]string{"PATH": os.Getenv("PATH"), "GITHUB_STEP_SUMMARY": summary})
	const lines, width = 24, 300000
	// The last line starts with one byte, then two-byte runes: a cut at an even byte count
	// would split one.
	command := "for i in $(seq " + strconv.Itoa(lines) + "); do head -c " + strconv.Itoa(width) + " /dev/zero | tr '\\0' a; echo; done; " +
		"s=$(printf 'é%.0s' $(seq 1000)); printf x; for i in $(seq 150); do printf %s \"$s\"; done; echo; exit 1"
	err := RunSmoke(context.Background(), te.Env, SmokeOptions{Out: out, Command: command})
	if got := ExitCodeFor(err); got != ExitSetupFailed {
		t.Fatalf("exit %d (%v), want %d", got, err, ExitSetupFailed)
	}
	log, _ := os.ReadFile(filepath.Join(out, DefaultSmokeLog))
	if want := lines*(width+1) + 1 + 150000*len("é") + 1; len(log) != want {
		t.Errorf("smoke.log has %d bytes, want the whole output, %d", len(log), want)
	}
	md, _ := os.ReadFile(summary)
	if len(md) > 64<<10 || !utf8.Valid(md) {
		t.Errorf("step summary is %d bytes (valid UTF-8: %v), want at most 64 KiB", len(md), utf8.Valid(md))
	}
	for _, w := range []string{"## Setup failed: the smoke test exited 1", "aaaa… (", " more bytes in `smoke.log`)", "xéééé"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("step summary lacks %q", w)
		}
	}
	if len(err.Error()) > 8<<10 || !utf8.ValidString(err.Error()) {
		t.Errorf("the error is %d bytes (valid UTF-8: %v)", len(err.Error()), utf8.ValidString(err.Error()))
	}
	r, lerr := LoadReproducerResult(out)
	if lerr != nil || len(r.SetupCause) > 8<<10 || !utf8.ValidString(r.SetupCause) || !strings.Contains(r.SetupCause, "xéééé") {
		t.Errorf("setup cause (%d bytes, %v): %.300s", len(r.SetupCause), lerr, r.SetupCause)
	}
	// The annotation (in a terminal: the step log's last line) names the last line, not 1 MiB.
	for _, l := range strings.Split(te.stdout.String(), "\n") {
		if strings.HasPrefix(l, "::error") && len(l) > 8<<10 {
			t.Errorf("annotation of %d bytes", len(l))
		}
	}
}

// In a terminal (no GITHUB_ACTIONS) a failed smoke test prints no workflow command: the step
// runner writes them only under GitHub Actions (docs/step-runner.md). Before, "::error::" was
// printed everywhere.
func TestSmokeInATerminalPrintsNoWorkflowCommand(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t, map[string]string{"PATH": os.Getenv("PATH")})
	err := RunSmoke(context.Background(), te.Env, SmokeOptions{Out: t.TempDir(), Command: "echo no GPU; exit 1"})
	if ExitCodeFor(err) != ExitSetupFailed {
		t.Fatalf("exit %d (%v), want %d", ExitCodeFor(err), err, ExitSetupFailed)
	}
	if out := te.stdout.String(); strings.Contains(out, "::error") || !strings.Contains(out, "## Setup failed: the smoke test exited 1") {
		t.Errorf("terminal output:\n%s", out)
	}
}

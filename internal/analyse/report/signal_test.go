//go:build unix

package report

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/testenv"
)

// The report tests run `debugflow report` in a child process (this test binary, re-executed)
// when a hang must fail the test instead of hanging it, and when a real signal is sent.
const (
	childEnv     = "DEBUGFLOW_REPORT_TEST_CHILD" // the command line, one argument per line
	childHangEnv = "DEBUGFLOW_REPORT_TEST_HANG"  // reproducer.log reads hang (a stuck mount)
	hangMarker   = "reading reproducer.log: the read hangs"
)

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(childEnv); ok {
		os.Exit(reportChild(strings.Split(args, "\n")))
	}
	testenv.MinimizeBriefly()
	os.Exit(m.Run())
}

// reportChild is cmd/debugflow's main reduced to the report command: the same signal
// handling and exit codes (the command line read by parseArgs, as reportcmd would).
func reportChild(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := &Options{}
	if os.Getenv(childHangEnv) != "" {
		opts.load = func(ctx context.Context, dir string) (*Verdict, error) {
			return LoadFS(ctx, hangFS{}, dir, DefaultLimits)
		}
	}
	err := parseArgs(opts, args)
	if err == nil {
		err = RunReport(ctx, opts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "debugflow:", err)
	}
	return exitcode.Of(err)
}

// hangFS holds a reproducer.log whose reads never return, like a file on a hung network
// mount: only abandoning the read lets Ctrl-C work.
type hangFS struct{}

func (hangFS) Open(name string) (fs.File, error) {
	listing := fstest.MapFS{ReproducerLog: &fstest.MapFile{Data: []byte(smallLog), Mode: 0o644}}
	if name != ReproducerLog {
		return listing.Open(name)
	}
	st, err := fs.Stat(listing, name)
	if err != nil {
		return nil, err
	}
	return &hangFile{st: st}, nil
}

type hangFile struct{ st fs.FileInfo }

func (f *hangFile) Stat() (fs.FileInfo, error) { return f.st, nil }
func (f *hangFile) Close() error               { return nil }
func (f *hangFile) Read([]byte) (int, error) {
	fmt.Fprintln(os.Stderr, hangMarker)
	for {
		time.Sleep(time.Hour)
	}
}

// startChild starts `debugflow report args...` in a child process. Its output is collected
// without blocking the test, so a child that hangs fails the test in waitChild instead of
// hanging it.
func startChild(t *testing.T, hang bool, args ...string) (cmd *exec.Cmd, stdout, stderr *watchWriter) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+strings.Join(args, "\n"))
	if hang {
		cmd.Env = append(cmd.Env, childHangEnv+"=1")
	}
	stdout, stderr = newWatchWriter(""), newWatchWriter(hangMarker)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, stdout, stderr
}

// watchWriter collects a child's output and closes seen once marker has been written.
type watchWriter struct {
	testenv.SyncBuffer
	marker string
	seen   chan struct{}
	once   sync.Once
}

func newWatchWriter(marker string) *watchWriter {
	return &watchWriter{marker: marker, seen: make(chan struct{})}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	n, err := w.SyncBuffer.Write(p)
	if w.marker != "" && strings.Contains(w.String(), w.marker) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

// waitChild waits for the child's exit code, failing the test (and killing the child) when
// it has not exited within limit: the hangs this file tests used to last forever.
func waitChild(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("child: %v", err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("debugflow report still running after %v: it hangs", limit)
		return -1
	}
}

// A read that hangs (a stuck mount) is abandoned on Ctrl-C or SIGTERM: the process exits 130
// at once and says it was interrupted.
func TestSignalInterruptsAHungRead(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			cmd, stdout, stderr := startChild(t, true, "artifacts")
			// Wait until the child is inside the read, then signal it.
			select {
			case <-stderr.seen:
			case <-time.After(60 * time.Second):
				t.Fatalf("the child never reached the read; stderr:\n%s", stderr.String())
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := waitChild(t, cmd, 20*time.Second); code != ExitInterrupted {
				t.Errorf("exit %d after %v, want %d; stderr:\n%s", code, sig, ExitInterrupted, stderr.String())
			}
			if !strings.Contains(stderr.String(), "debugflow: interrupted") {
				t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
			}
			if stdout.String() != "" {
				t.Errorf("a verdict was printed from a read that never finished:\n%s", stdout.String())
			}
		})
	}
}

// Logs that are links to /dev/zero or /dev/urandom, a FIFO with no writer and a dangling link
// are skipped, each named with the reason, and the report finishes from the other files.
func TestSpecialFilesAreSkippedNotRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ReproducerSummary), []byte(`{"count": 2, "exit_code": 1, "reproduced": true, "failed": 1, "passed": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{ReproducerLog: "/dev/zero", SanitizerLog: "/dev/urandom",
		DmesgStartLog: filepath.Join(dir, "gone.log")} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, XidAddedLog), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "dmesg_final.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dmesg_after_reproducer.log"), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, format := range []string{"", "--json", "--markdown", "--compare"} {
		t.Run("format "+format, func(t *testing.T) {
			args := []string{dir}
			if format != "" {
				args = append(args, format)
			}
			cmd, stdout, stderr := startChild(t, false, args...)
			if code := waitChild(t, cmd, 60*time.Second); code != ExitOK {
				t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr.String())
			}
			out := stdout.String()
			if format != "" {
				if format == "--json" && !strings.Contains(out, `"reproducer": {`) {
					t.Errorf("JSON lacks the reproducer section from the summary:\n%s", out)
				}
				if format == "--json" && (!strings.Contains(out, `"name": "xid_added.log",`) ||
					!strings.Contains(out, `"reason": "not a regular file (a FIFO)"`)) {
					t.Errorf("JSON does not list the skipped xid_added.log and why:\n%s", out)
				}
				if format != "--json" && !strings.Contains(out, "reproducer.log") {
					t.Errorf("output does not name the skipped reproducer.log:\n%s", out)
				}
				return
			}
			for _, want := range []string{
				"Reproduced:     yes", // from reproducer_summary.json
				"Skipped:        reproducer.log: not a regular file (a character device)",
				"sanitizer.log: not a regular file (a character device)",
				"xid_added.log: not a regular file (a FIFO)",
				"dmesg_final.log: not a regular file (a FIFO)",
				"dmesg_after_reproducer.log: not a regular file (a directory)",
				"dmesg_start.log: dangling symbolic link to " + filepath.Join(dir, "gone.log"),
				"Sanitizer:      unknown (sanitizer.log skipped)",
				"Xid:            unknown (",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("text lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// openRecorder is dirFS that records every name opened.
type openRecorder struct {
	dirFS
	opened []string
}

func (o *openRecorder) Open(name string) (fs.File, error) {
	o.opened = append(o.opened, name)
	return o.dirFS.Open(name)
}

// A device is not even opened (opening /dev/watchdog arms it; a tape device rewinds).
func TestSpecialFilesAreNeverOpened(t *testing.T) {
	dir := writeDir(t, map[string]string{ReproducerLog: smallLog})
	if err := os.Symlink("/dev/null", filepath.Join(dir, SanitizerLog)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "dmesg_final.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := &openRecorder{dirFS: dirFS(dir)}
	v, err := LoadFS(context.Background(), fsys, dir, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range fsys.opened {
		if name == SanitizerLog || name == "dmesg_final.log" {
			t.Errorf("%s was opened", name)
		}
	}
	if len(v.Run.Skipped) != 2 {
		t.Errorf("skipped %+v, want the device and the FIFO", v.Run.Skipped)
	}
}

// --compare --baseline refuses the same special files: it finishes instead of reading
// /dev/zero or waiting on a FIFO.
func TestBaselineCompareSkipsSpecialFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	before := copyCase(t, "t4_reproduced", filepath.Join(root, "before"))
	zero := copyCase(t, "clean_run", filepath.Join(root, "zero"))
	fifo := copyCase(t, "clean_run", filepath.Join(root, "fifo"))
	os.Remove(filepath.Join(zero, ReproducerLog))
	if err := os.Symlink("/dev/zero", filepath.Join(zero, ReproducerLog)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifo, "ref.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, stdout, stderr := startChild(t, false, "--compare", "--baseline", before, zero, fifo)
	code := waitChild(t, cmd, 60*time.Second)
	if code != ExitUnreadable {
		t.Errorf("exit %d, want %d (two folders unreadable)", code, ExitUnreadable)
	}
	for _, want := range []string{"zero: cannot count trials:", "not a regular file (a character device)", "ref.json: not a regular file (a FIFO)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), "before") {
		t.Errorf("the readable folder is not compared:\n%s", stdout.String())
	}
}

// TestKernelFilesAreSkippedNotRead: a log that is a link to /proc/kmsg (stat calls it a
// regular empty file; reading it waits for the kernel's next message, and consumes it) or to
// another file of /proc is skipped, named with the reason; the report used to block on it
// until Ctrl-C. Run as root it proves the point (others cannot open /proc/kmsg at all).
func TestKernelFilesAreSkippedNotRead(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/kmsg"); err != nil {
		t.Skip("no /proc/kmsg:", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ReproducerSummary), []byte(`{"count": 2, "exit_code": 1, "reproduced": true, "failed": 1, "passed": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{ReproducerLog: "/proc/kmsg", "dmesg_final.log": "/proc/kmsg", SanitizerLog: "/proc/self/status"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	cmd, stdout, stderr := startChild(t, false, dir)
	if code := waitChild(t, cmd, 20*time.Second); code != ExitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr.String())
	}
	for _, want := range []string{"Reproduced:     yes", "reproducer.log: not a regular file (a kernel interface on procfs)",
		"dmesg_final.log: not a regular file (a kernel interface on procfs)", "sanitizer.log: not a regular file (a kernel interface on procfs)"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, stdout.String())
		}
	}
}

package tmate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/debugflow/debugflow/internal/testenv"
)

// doubleDir holds the tmate test double, built once by TestMain from
// testdata/tmatedouble and named "tmate" so PATH lookups find it.
var doubleDir string

// reexecEnv makes the test binary act as `debugflow-step gate` (see
// TestMain), so signal tests send real signals to a real child process.
const reexecEnv = "TMATE_TEST_RUN_GATE_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(reexecEnv) == "1" {
		os.Exit(runGateCLI(os.Args[1:], os.Stdout, os.Stderr))
	}
	testenv.MinimizeBriefly()
	if testenv.FuzzWorker() {
		os.Exit(m.Run()) // a fuzzing worker runs FuzzDecodeState alone: no double to build
	}
	dir, err := os.MkdirTemp("", "tmate-double-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "tmate"), "./testdata/tmatedouble")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the tmate double:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	doubleDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runGateCLI is what debugflow-step does with `gate ARGS` (cmd/internal/tmatecmd): the
// options from the command line, SIGTERM and SIGINT cancelling, RunGate, its error on stderr
// and its exit code. The command line is read by parseGateArgs, not cobra: tmatecmd's tests
// check the flag parsing and help, these the behaviour.
func runGateCLI(args []string, stdout, stderr io.Writer) int {
	o, err := parseGateArgs(args)
	if err == nil {
		o.Stdout, o.Stderr = stdout, stderr
		o.Action = githubactions.New(githubactions.WithWriter(stdout), githubactions.WithGetenv(os.Getenv))
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		err = RunGate(ctx, o)
		stop()
	}
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		var ec interface{ ExitCode() int }
		if errors.As(err, &ec) {
			return ec.ExitCode()
		}
		return 1
	}
	return 0
}

// parseGateArgs reads the gate flags the tests use, with the command's defaults.
func parseGateArgs(args []string) (Options, error) {
	o := Options{Out: DefaultOut, LimitActor: true, ContinueFiles: []string{DefaultContinueFile}}
	continueSet := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "--detach":
			o.Detach = true
			continue
		case "--wait":
			o.Wait = true
			continue
		}
		if i+1 >= len(args) {
			return o, &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("%s needs a value", a)}
		}
		v := args[i+1]
		i++
		switch a {
		case "--out":
			o.Out = v
		case "--timeout-minutes":
			o.TimeoutMinutes = v
		case "--connect-timeout-minutes":
			o.ConnectTimeoutMinutes = v
		case "--continue-file":
			if !continueSet {
				o.ContinueFiles, continueSet = nil, true
			}
			o.ContinueFiles = append(o.ContinueFiles, v)
		case "--server-host":
			o.ServerHost = v
		case "--tmate":
			o.TmatePath = v
		default:
			return o, &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("parseGateArgs does not know %s", a)}
		}
	}
	return o, nil
}

func tmateDouble() string { return filepath.Join(doubleDir, "tmate") }

// syncBuffer is shared by the gate goroutine and the test.
type syncBuffer = testenv.SyncBuffer

// harness is one gate run against the tmate double, with fast clocks.
type harness struct {
	t         *testing.T
	out       string // --out
	runnerTmp string // RUNNER_TEMP: the session directory goes here
	workspace string
	cont      string // the configured continue file
	log       string // the double's call log
	env       map[string]string
	stdout    *syncBuffer
	stderr    *syncBuffer
	// doubleEnv is passed to the double through a wrapping runner.
	doubleEnv []string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	root := t.TempDir()
	h := &harness{
		t:         t,
		out:       filepath.Join(root, "out"),
		runnerTmp: testenv.ShortTempDir(t), // as short as a runner's: the socket fits
		workspace: filepath.Join(root, "ws"),
		cont:      filepath.Join(root, "continue"),
		log:       filepath.Join(root, "tmate.calls"),
		stdout:    &syncBuffer{},
		stderr:    &syncBuffer{},
	}
	for _, d := range []string{h.runnerTmp, h.workspace} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.env = map[string]string{
		"RUNNER_TEMP":      h.runnerTmp,
		"GITHUB_WORKSPACE": h.workspace,
		"GITHUB_RUN_ID":    "42",
		"GITHUB_JOB":       "debug",
	}
	// /continue is honoured in production; tests point it at a temp file.
	old := rootContinueFile
	rootContinueFile = filepath.Join(root, "rootfs-continue")
	t.Cleanup(func() { rootContinueFile = old })
	return h
}

func (h *harness) getenv(k string) string { return h.env[k] }

// options returns gate options with a 100 ms "minute", polling every 5 ms.
func (h *harness) options() Options {
	return Options{
		Out:              h.out,
		TimeoutMinutes:   "100", // 10 s: room for a loaded machine; most tests end the gate sooner
		LimitActor:       false,
		ContinueFiles:    []string{h.cont},
		TmatePath:        tmateDouble(),
		Stdout:           h.stdout,
		Stderr:           h.stderr,
		Getenv:           h.getenv,
		Action:           githubactions.New(githubactions.WithWriter(h.stdout), githubactions.WithGetenv(h.getenv)),
		PollInterval:     5 * time.Millisecond,
		AnnounceInterval: time.Hour,
		Minute:           100 * time.Millisecond,
		Runner:           envRunner{env: &h.doubleEnv, log: h.log},
	}
}

// envRunner is ExecRunner with extra environment for the double (its call
// log and behaviour switches), so tests need not touch the process env.
type envRunner struct {
	env *[]string
	log string
}

func (r envRunner) LookPath(file string) (string, error) { return exec.LookPath(file) }

func (r envRunner) Run(ctx context.Context, stdout, stderr io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "TMATE_DOUBLE_LOG="+r.log)
	cmd.Env = append(cmd.Env, *r.env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	return cmd.Run()
}

type result struct {
	reason  EndReason
	err     error
	elapsed time.Duration
}

// start runs the gate in a goroutine.
func (h *harness) start(ctx context.Context, o Options) <-chan result {
	ch := make(chan result, 1)
	go func() {
		begin := time.Now()
		reason, err := Run(ctx, o)
		ch <- result{reason, err, time.Since(begin)}
	}()
	return ch
}

// wait returns the gate's result or fails the test after 10 s.
func (h *harness) wait(ch <-chan result) result {
	h.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		h.t.Fatalf("gate did not end within 10 s\nstdout:\n%s", h.stdout.String())
		return result{}
	}
}

// ready waits until the running gate has announced its session and returns
// the recorded state (socket path, SSH command).
func (h *harness) ready() *state {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(h.out, StateFile)); err == nil {
			if st, err := decodeState(bytes.NewReader(b)); err == nil && st.SSH != "" &&
				strings.Contains(h.stdout.String(), "::notice") {
				return st
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	h.t.Fatalf("the gate never announced a session\nstdout:\n%s\nstderr:\n%s", h.stdout.String(), h.stderr.String())
	return nil
}

// socket returns the socket the gate passed to the double.
func (h *harness) socket() string {
	h.t.Helper()
	for _, c := range h.calls() {
		if c.Socket != "" {
			return c.Socket
		}
	}
	h.t.Fatal("the gate never called tmate with -S")
	return ""
}

// calls returns the double's recorded calls, argv without the -S socket.
func (h *harness) calls() []call {
	h.t.Helper()
	f, err := os.Open(h.log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	var out []call
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			h.t.Fatalf("bad call log line %q: %v", sc.Text(), err)
		}
		if len(c.Argv) >= 2 && c.Argv[0] == "-S" {
			c.Socket = c.Argv[1]
			c.Argv = c.Argv[2:]
		}
		out = append(out, c)
	}
	return out
}

// call is one line of the double's log.
type call struct {
	Argv   []string          `json:"argv"`
	Files  map[string]string `json:"files"`
	Socket string            `json:"-"`
}

func (c call) String() string { return strings.Join(c.Argv, " ") }

// commands returns the tmate subcommand of every call, in order.
func (h *harness) commands() []string {
	var out []string
	for _, c := range h.calls() {
		out = append(out, c.String())
	}
	return out
}

func (h *harness) called(sub string) bool {
	for _, c := range h.commands() {
		if strings.Contains(c, sub) {
			return true
		}
	}
	return false
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

var readFile = testenv.ReadFile

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

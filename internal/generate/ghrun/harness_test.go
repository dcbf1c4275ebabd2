package ghrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// The tests of this package drive RunDispatch, RunWatch and RunDownload with a command line,
// as a user would type it, but without cobra: the flags are in cmd/debugflow (dispatch, watch,
// download), whose own tests check the parsing. testCmd reads the few flags the tests here use
// (-R, --hostname, -D, -i, --idle-timeout, -f) and one RUN argument, and finishes the error as
// the commands do (tokens masked, an exit code).
type testCmd struct {
	env  *Env
	run  func(context.Context, *Env, []string) error
	args []string
}

func (c *testCmd) SetArgs(args []string) { c.args = args }

func (c *testCmd) ExecuteContext(ctx context.Context) error {
	return c.env.Finish(c.run(ctx, c.env, c.args))
}

// testFlags are the parsed command line of a testCmd.
type testFlags struct {
	repo        RepoFlags
	run         RunSelector
	dir         string
	interval    time.Duration
	idleTimeout time.Duration
	raw         []string
}

func parseTestArgs(args []string) (testFlags, error) {
	fl := testFlags{interval: DefaultWatchInterval, idleTimeout: DefaultIdleTimeout}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			fl.run.Arg = a
			continue
		}
		if i+1 >= len(args) {
			return fl, usageError(fmt.Errorf("%s needs a value", a))
		}
		v := args[i+1]
		i++
		var err error
		switch a {
		case "-R":
			fl.repo.Repo = v
		case "--hostname":
			fl.repo.Hostname = v
		case "-D":
			fl.dir = v
		case "-i":
			fl.interval, err = ParseInterval(v)
		case "--idle-timeout":
			fl.idleTimeout, err = time.ParseDuration(v)
		case "-f":
			fl.raw = append(fl.raw, v)
		default:
			return fl, usageError(fmt.Errorf("testCmd does not know %s", a))
		}
		if err != nil {
			return fl, usageError(err)
		}
	}
	return fl, nil
}

func dispatchCmd(f *Env) *testCmd {
	return &testCmd{env: f, run: func(ctx context.Context, f *Env, args []string) error {
		fl, err := parseTestArgs(args)
		if err != nil {
			return err
		}
		return RunDispatch(ctx, f, &DispatchOptions{RepoFlags: fl.repo, RawFields: fl.raw, Interval: fl.interval,
			IdleTimeout: fl.idleTimeout, Stdin: strings.NewReader("")})
	}}
}

func watchCmd(f *Env) *testCmd {
	return &testCmd{env: f, run: func(ctx context.Context, f *Env, args []string) error {
		fl, err := parseTestArgs(args)
		if err != nil {
			return err
		}
		return RunWatch(ctx, f, &WatchRunOptions{RepoFlags: fl.repo, RunSelector: fl.run, Interval: fl.interval})
	}}
}

func downloadCmd(f *Env) *testCmd {
	return &testCmd{env: f, run: func(ctx context.Context, f *Env, args []string) error {
		fl, err := parseTestArgs(args)
		if err != nil {
			return err
		}
		return RunDownload(ctx, f, &DownloadRunOptions{RepoFlags: fl.repo, RunSelector: fl.run, Dir: fl.dir,
			MaxFiles: DefaultExtractLimits.MaxFiles, MaxSize: "4GiB", IdleTimeout: fl.idleTimeout})
	}}
}

// fakeReport stands in for report.Load + WriteText: it reads the reproducer
// summary, so a report proves the artifact was really extracted.
func fakeReport(dir string, w io.Writer) error {
	b, err := os.ReadFile(filepath.Join(dir, "reproducer_summary.json"))
	if err != nil {
		return fmt.Errorf("no reproducer summary: %w", err)
	}
	var s struct {
		Reproduced bool `json:"reproduced"`
		Failed     int  `json:"failed"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	fmt.Fprintf(w, "verdict for %s: reproduced=%v failed=%d\n", filepath.Base(dir), s.Reproduced, s.Failed)
	return nil
}

type harness struct {
	f        *Env
	env      map[string]string
	out, err bytes.Buffer
	sleeper  *sleeper
}

func newHarness(t *testing.T, srv *ghtest.Server) *harness {
	h := &harness{env: map[string]string{EnvGHToken: testToken, EnvAPIURL: srv.URL()}, sleeper: &sleeper{}}
	h.f = &Env{
		Workflow:  func() (Workflow, error) { return testWorkflow(), nil },
		Report:    fakeReport,
		Getenv:    func(k string) string { return h.env[k] },
		Stdout:    &h.out,
		Stderr:    &h.err,
		GitRemote: func(context.Context) (string, error) { return "git@github.com:acme/kernels.git", nil },
		GitBranch: func(context.Context) (string, error) { return "debug/t4", nil },
		Sleep:     h.sleeper.Sleep,
		Now:       func() time.Time { return fixedNow },
	}
	return h
}

// run executes a command line the way debugflow's main does.
func (h *harness) run(newCmd func(*Env) *testCmd, args ...string) error {
	cmd := newCmd(h.f)
	cmd.SetArgs(args)
	return cmd.ExecuteContext(context.Background())
}

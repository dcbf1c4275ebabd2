// Package ghcmdtest is what the tests of dispatch, watch and download share: a fake GitHub
// (package ghtest) with the debug workflow, a factory wired to it with buffers for the
// streams, a clock that stands still and a sleeper that only records, and small artifacts.
package ghcmdtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// The fakes every GitHub test shares are ghtest's (package ghrun's own tests use them too).
const (
	Token        = ghtest.Token
	WorkflowFile = ghtest.WorkflowFile
)

// FixedNow is the tests' clock.
var FixedNow = ghtest.FixedNow

// Sleeper records waits instead of sleeping, and honours cancellation.
type Sleeper = ghtest.Sleeper

// Workflow mirrors the default spec's inputs plus one of each other type.
func Workflow() ghrun.Workflow {
	return ghrun.Workflow{File: WorkflowFile, Inputs: []ghrun.InputDef{
		{Name: "quadrants_ref", Type: ghrun.InputString, Default: "main", Description: "ref to build"},
		{Name: "tmate_timeout_minutes", Type: ghrun.InputNumber, Default: "30"},
		{Name: "reproduce_count", Type: ghrun.InputNumber, Default: "50"},
		{Name: "sanitizer_tool", Type: ghrun.InputChoice, Default: "memcheck", Options: []string{"memcheck", "racecheck", "initcheck"}},
		{Name: "open_tmate", Type: ghrun.InputBoolean, Default: "true"},
		{Name: ghrun.DispatchIDInput, Type: ghrun.InputString},
	}}
}

// InputNames are the names of w's inputs.
func InputNames(w ghrun.Workflow) []string {
	var out []string
	for _, in := range w.Inputs {
		out = append(out, in.Name)
	}
	return out
}

// NewServer starts the fake GitHub with the debug workflow on branch debug/t4.
func NewServer(t *testing.T, artifacts ...ghtest.ArtifactFile) *ghtest.Server {
	t.Helper()
	srv := ghtest.New(t, "acme", "kernels", Token)
	srv.AddBranch("debug/t4")
	srv.AddWorkflow(ghtest.Workflow{
		File: WorkflowFile, Name: "Debug CUDA repro", Inputs: InputNames(Workflow()),
		RunName: "debug CUDA repro [{dispatch_id}]", Artifacts: artifacts,
	})
	return srv
}

// The artifact builders are ghtest's, shared with package ghrun's own tests.
type ZipEntry = ghtest.ZipEntry

var (
	MakeZip     = ghtest.MakeZip
	EvidenceZip = ghtest.EvidenceZip
)

// FinishedRun is a finished successful run of file on branch.
func FinishedRun(file, branch string) ghtest.Run {
	return ghtest.Run{WorkflowFile: file, Branch: branch, Name: "Debug CUDA repro", DisplayTitle: "debug CUDA repro [manual]",
		Frames: ghtest.DefaultFrames(FixedNow.Add(-2*time.Minute), "success")[3:]}
}

// Itoa64 is n in decimal.
func Itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// FakeReport stands in for report.Load + WriteText: it reads the reproducer summary, so a
// report proves the artifact was really extracted.
func FakeReport(dir string, w io.Writer) error {
	b, err := os.ReadFile(filepath.Join(dir, evidencefiles.ReproducerSummary))
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

// Harness is a factory wired to a fake GitHub: the token and the API URL in Env, stdout and
// stderr in Out and Err, the origin remote on github.com, the branch debug/t4.
type Harness struct {
	F        *ghcmd.Factory
	Env      map[string]string
	Out, Err bytes.Buffer
	Sleeper  *Sleeper
}

// NewHarness returns a Harness talking to srv. Change F's fields before Run.
func NewHarness(t *testing.T, srv *ghtest.Server) *Harness {
	h := &Harness{Env: map[string]string{ghrun.EnvGHToken: Token, ghrun.EnvAPIURL: srv.URL()}, Sleeper: &Sleeper{}}
	h.F = &ghcmd.Factory{
		Factory: &factory.Factory{
			IO:     factory.IOStreams{Out: &h.Out, ErrOut: &h.Err},
			Getenv: func(k string) string { return h.Env[k] },
			Sleep:  h.Sleeper.Sleep,
			Now:    func() time.Time { return FixedNow },
		},
		Workflow:  func() (ghrun.Workflow, error) { return Workflow(), nil },
		Report:    FakeReport,
		GitRemote: func(context.Context) (string, error) { return "git@github.com:acme/kernels.git", nil },
		GitBranch: func(context.Context) (string, error) { return "debug/t4", nil },
	}
	return h
}

// Run executes the command newCmd builds with args, the way debugflow's main does.
func (h *Harness) Run(newCmd func(*ghcmd.Factory) *cobra.Command, args ...string) error {
	cmd := newCmd(h.F)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(args)
	return cmd.ExecuteContext(context.Background())
}

// TokenCase is one command line of a command's TestTokenNeverPrinted.
type TokenCase struct {
	Name  string
	Setup func(*ghtest.Server, *Harness) // the server's faults and runs, the environment
	Cmd   func(*ghcmd.Factory) *cobra.Command
	Args  []string // "DIR" stands for a new folder
	// WantEcho: the server echoed the token, so *** must show where it was.
	WantEcho bool
}

// CheckTokenNeverPrinted runs every case against a fake GitHub holding one evidence artifact
// and fails when the token shows anywhere in the output or the error, when an echoed token is
// not masked, or when the command said almost nothing (a test that checks silence proves
// nothing).
func CheckTokenNeverPrinted(t *testing.T, cases []TokenCase) {
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			srv := NewServer(t, ghtest.ArtifactFile{Name: "evidence", Zip: EvidenceZip(t, 1)})
			h := NewHarness(t, srv)
			if tt.Setup != nil {
				tt.Setup(srv, h)
			}
			args := append([]string(nil), tt.Args...)
			for i, a := range args {
				if a == "DIR" {
					args[i] = filepath.Join(t.TempDir(), "out")
				}
			}
			err := h.Run(tt.Cmd, args...)
			all := h.Out.String() + h.Err.String() + fmt.Sprint(err)
			if strings.Contains(all, Token) {
				t.Fatalf("the token was printed:\nstdout: %s\nstderr: %s\nerr: %v", h.Out.String(), h.Err.String(), err)
			}
			if tt.WantEcho && !strings.Contains(all, "***") {
				t.Errorf("the echoed token was not masked (or not echoed):\n%s", all)
			}
			if len(all) < 20 {
				t.Errorf("suspiciously little output: %q", all)
			}
		})
	}
}

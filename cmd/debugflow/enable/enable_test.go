package enable

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/generate/siblings"
)

// execute runs the command on a factory whose stdout is a buffer.
func execute(runF func(*EnableOptions) error, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := NewCmdEnable(&factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &out}}, runF)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.Execute()
	return out.String(), err
}

// TestFlags checks the command fills siblings.Options from flags (cli/cli style: the run
// function is replaced), with the factory's stdout.
func TestFlags(t *testing.T) {
	for _, tt := range flagCases {
		t.Run(tt.name, func(t *testing.T) {
			var got *EnableOptions
			if _, err := execute(func(o *EnableOptions) error { got = o; return nil }, tt.args...); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.Options, cmpopts.IgnoreFields(siblings.Options{}, "Out"), cmpopts.IgnoreUnexported(siblings.Options{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
			if got.Out == nil {
				t.Error("Out not set from the factory")
			}
		})
	}
}

func TestRejectsArgsAndUnknownFlags(t *testing.T) {
	for _, args := range rejected {
		if _, err := execute(func(*EnableOptions) error { t.Error("ran"); return nil }, args...); err == nil {
			t.Errorf("%v: want an error", args)
		}
	}
}

// TestRuns: without runF the command renames through siblings.Enable and prints its table on the
// factory's stdout.
func TestRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wf")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	if err := os.WriteFile(filepath.Join(dir, "ci.yml"), []byte("on: push\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := execute(nil, "--dir", dir, "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, runWant) {
		t.Errorf("stdout:\n%s", out)
	}
}

var flagCases = []struct {
	name string
	args []string
	want siblings.Options
}{
	{"enable", []string{"--dir", "wf", "--dry-run"}, siblings.Options{Dir: "wf", DryRun: true}},
	{"enable --all", []string{"--all"}, siblings.Options{Dir: siblings.DefaultDir, All: true}},
}

var rejected = [][]string{{"stray"}, {"--keep", "x"}} // enable has no --keep of its own (debugflow's main adds one)

func TestHelp(t *testing.T) {
	help, err := execute(nil, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Examples:", "debugflow enable", "--dry-run", "--dir", "nothing changes", siblings.ManifestName,
		"--all", "debugflow enable --all", "left disabled (not disabled by debugflow)", "nothing to enable", "record is stale"} {
		if !strings.Contains(help, want) {
			t.Errorf("enable --help lacks %q:\n%s", want, help)
		}
	}
}

// runWant is what a dry run on a folder with ci.yml says.
const runWant = "nothing to enable"

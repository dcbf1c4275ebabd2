package local

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/exitcode"
)

// TestCommandFlags: with the run function replaced (cli/cli style), a command line fills
// LocalOptions and nothing runs; --workers is the spec's unless given (0 included), and the
// contradictions are refused before the run.
func TestCommandFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	f := &factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &errOut}}
	sp := &specsource.Source{Stderr: &errOut}
	parse := func(args ...string) (*LocalOptions, error) {
		var got *LocalOptions
		cmd := NewCmdLocal(f, sp, func(o *LocalOptions) error { got = o; return nil })
		cmd.SetArgs(args)
		cmd.SetOut(&errOut)
		cmd.SetErr(&errOut)
		return got, cmd.Execute()
	}
	d := t.TempDir()
	got, err := parse("--out", "ev", "--count", "7", "--workers", "0", "--full-sweep", "--install", "--build", "--python", "py", "--verbose", "--dir", d, "--sanitizer", "cs")
	if err != nil {
		t.Fatal(err)
	}
	if got.Out != "ev" || got.Count != 7 || got.Workers == nil || *got.Workers != 0 || !got.FullSweep || got.StopOnFirstFailure ||
		!got.Install || !got.Build || got.Python != "py" || !got.Verbose || got.Dir != d || got.Sanitizer != "cs" ||
		got.Spec != sp || got.Stdout != &out || got.Ctx == nil {
		t.Errorf("options %+v", got)
	}
	if got, err := parse("--dir", d); err != nil || got.Workers != nil {
		t.Errorf("without --workers: %v, workers %v; want the spec's (nil)", err, got.Workers)
	}
	// A --dir that is not a folder and an --out that is a file are usage errors (exit 2) found
	// before anything runs or is written.
	file := filepath.Join(d, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--workers", "-1"}, {"--count", "0"}, {"--full-sweep", "--stop-on-first-failure"},
		{"--dir", filepath.Join(d, "missing")}, {"--dir", file}, {"--out", file}} {
		if got, err := parse(args...); exitcode.Of(err) != exitcode.Usage || got != nil {
			t.Errorf("%v: ran with %+v (%v), want a usage error", args, got, err)
		}
	}
	if out.Len() != 0 {
		t.Errorf("local wrote with its run function replaced:\n%s", out.String())
	}
}

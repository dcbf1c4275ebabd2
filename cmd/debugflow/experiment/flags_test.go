package experiment

import (
	"bytes"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/analyse/experiment"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
)

// TestCommandFlags: with the run function replaced (cli/cli style), a command line fills
// ExperimentOptions, the rule's defaults are experiment.DefaultRule's, and nothing runs.
func TestCommandFlags(t *testing.T) {
	var out bytes.Buffer
	f := &ghcmd.Factory{Factory: &factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &out}}}
	sp := &specsource.Source{Stderr: &out}
	parse := func(args ...string) *ExperimentOptions {
		t.Helper()
		var got *ExperimentOptions
		cmd := NewCmdExperiment(f, sp, func(o *ExperimentOptions) error { got = o; return nil })
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := parse("--baseline", "main", "--candidate", "a=fix-a", "--candidate", "fix-b", "--local", "--count", "25", "--until-decided",
		"--max-count", "400", "--max-time", "2h", "--json", "--out", "ev", "-R", "acme/kernels", "--ref", "debug/t4", "--interval", "3s")
	if got.Baseline != "main" || !slices.Equal(got.Candidates, []string{"a=fix-a", "fix-b"}) || !got.Local || got.Count != 25 || !got.CountSet ||
		!got.UntilDecided || got.MaxCount != 400 || got.MaxTime != 2*time.Hour || !got.JSON || got.Out != "ev" ||
		got.Repo.Repo != "acme/kernels" || got.Ref != "debug/t4" || got.Interval != 3*time.Second ||
		got.Spec != sp || got.Factory != f || got.Ctx == nil {
		t.Errorf("options %+v", got)
	}
	got = parse("--baseline", "main")
	if got.CountSet || got.Confidence != experiment.DefaultRule.Confidence || got.MinEffect != experiment.DefaultRule.MinEffect ||
		got.AbsMargin != experiment.DefaultRule.AbsMargin || got.Interval != ghrun.DefaultWatchInterval {
		t.Errorf("defaults %+v", got)
	}
	if out.Len() != 0 {
		t.Errorf("experiment wrote with its run function replaced:\n%s", out.String())
	}
}

// Experiments started in the same second each get a folder of their own.
func TestClaimDefaultOut(t *testing.T) {
	base := filepath.Join(t.TempDir(), "experiment-20261205-110000")
	const n = 8
	got := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir, err := claimDefaultOut(base)
			if err != nil {
				t.Error(err)
			}
			got <- dir
		}()
	}
	wg.Wait()
	close(got)
	seen := map[string]bool{}
	for dir := range got {
		if seen[dir] {
			t.Errorf("%s claimed twice", dir)
		}
		seen[dir] = true
	}
	for _, want := range []string{base, base + "-2", base + "-" + strconv.Itoa(n)} {
		if !seen[want] {
			t.Errorf("%s not claimed; got %v", want, seen)
		}
	}
	if _, err := claimDefaultOut(filepath.Join(t.TempDir(), "missing", "experiment-x")); err == nil || !strings.Contains(err.Error(), "make the experiment's folder") {
		t.Errorf("a folder that cannot be made: %v", err)
	}
}

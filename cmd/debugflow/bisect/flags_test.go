package bisect

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/analyse/bisect"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/spec"
)

// TestCommandFlags: with the run function replaced (cli/cli style), a command line fills
// BisectOptions, Changed tells the flags given (what --resume may change), and nothing runs.
func TestCommandFlags(t *testing.T) {
	var out bytes.Buffer
	f := &ghcmd.Factory{Factory: &factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &out}}}
	sp := &specsource.Source{Stderr: &out}
	parse := func(args ...string) *BisectOptions {
		t.Helper()
		var got *BisectOptions
		cmd := NewCmdBisect(f, sp, func(o *BisectOptions) error { got = o; return nil })
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := parse("--good", "v1.4", "--bad", "main", "--count", "50", "--bad-seen", "9/200", "--parallel", "3", "--max-steps", "20",
		"--max-time", "6h", "--retries", "2", "--runner", "gpu", "--json", "--checkout", "repo", "-R", "acme/kernels", "--interval", "2s")
	if got.Good != "v1.4" || got.Bad != "main" || got.Count != 50 || got.BadSeen != "9/200" || got.Parallel != 3 || got.MaxSteps != 20 ||
		got.MaxTime != 6*time.Hour || got.Retries != 2 || got.Runner != "gpu" || !got.JSON || got.Checkout != "repo" ||
		got.Repo.Repo != "acme/kernels" || got.Interval != 2*time.Second || got.Spec != sp || got.Factory != f || got.Ctx == nil {
		t.Errorf("options %+v", got)
	}
	if !got.Changed("parallel") || got.Changed("confidence") {
		t.Error("Changed does not tell the flags given")
	}
	got = parse("--resume")
	if !got.Resume || got.Confidence != 0.95 || got.MaxSteps != bisectDefaultMaxSteps || got.Parallel != 1 || got.Retries != 1 ||
		got.Interval != ghrun.DefaultWatchInterval {
		t.Errorf("defaults %+v", got)
	}
	if got = parse("--resume", "--confirm"); !got.Confirm || !got.Changed("confirm") {
		t.Errorf("--resume --confirm: %+v", got)
	}
	if out.Len() != 0 {
		t.Errorf("bisect wrote with its run function replaced:\n%s", out.String())
	}
}

// --confirm and --count are settings --resume may change (to run the check a decision asked
// for; to go on with steps large enough for the rate); the range and the mode are not.
func TestResumeStateChanges(t *testing.T) {
	commits := []bisect.Commit{{Commit: strings.Repeat("b", 40), Subject: "change 1"}, {Commit: strings.Repeat("c", 40), Subject: "change 2"}}
	set := bisect.Settings{Mode: bisect.ModeLocal, Confidence: 0.95, Count: 5, MaxSteps: 30, Parallel: 1, Retries: 1, Model: bisect.DefaultModel}
	st, err := bisect.NewState(bisect.RefCommit{Ref: "v1", Commit: strings.Repeat("a", 40)}, bisect.RefCommit{Ref: "main", Commit: commits[1].Commit},
		commits, set, bisect.Counts{}, time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), bisect.StateFile)
	if err := st.Save(path); err != nil {
		t.Fatal(err)
	}
	given := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	got, err := resumeState(path, &BisectOptions{Confirm: true}, given("confirm"))
	if err != nil || !got.Settings.Confirm {
		t.Fatalf("--resume --confirm: %v, confirm %v", err, got != nil && got.Settings.Confirm)
	}
	got, err = resumeState(path, &BisectOptions{Count: 50}, given("count"))
	if err != nil || got.Settings.Count != 50 || got.Settings.Confirm {
		t.Fatalf("--resume --count 50: %v, %+v", err, got)
	}
	for _, flag := range []string{"good", "bad", "local", "bad-seen", "runner"} {
		if _, err := resumeState(path, &BisectOptions{}, given(flag)); err == nil || !strings.Contains(err.Error(), "--"+flag) {
			t.Errorf("--resume --%s: %v, want it refused", flag, err)
		}
	}
	// A state a newer debugflow wrote is whole: resuming it here is refused without advice
	// to remove it, which a damaged one gets.
	for _, tt := range []struct{ version, want, notWant string }{
		{"1", "(`debugflow bisect reset` starts over)", "newer"},
		{"999", "was written by a newer debugflow (this one reads version 2): go on with that one", "starts over"},
	} {
		b, _ := os.ReadFile(path)
		other := filepath.Join(t.TempDir(), bisect.StateFile)
		os.WriteFile(other, bytes.Replace(b, []byte(`"version": 2`), []byte(`"version": `+tt.version), 1), 0o644)
		_, err := resumeState(other, &BisectOptions{}, given())
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), tt.notWant) {
			t.Errorf("version %s: %v, want %q and not %q", tt.version, err, tt.want, tt.notWant)
		}
	}
}

// TestNotDecided: the error of an undecided end says the first bad commit is in the range only
// when the range holds the confidence, and does not send a bisection where nothing changed to
// raise its budget.
func TestNotDecided(t *testing.T) {
	tests := []struct {
		stop          string
		rangeP        float64
		want, notWant string
	}{
		{bisect.StopNothing, 0.97, "the first bad commit is in the range above", "holds only"},
		{bisect.StopNothing, 0.89, "the range above holds only 0.8900", "is in the range"},
		{bisect.StopNoChange, 0, "came before --good", "raise --max-steps"},
		{bisect.StopNoStep, 0, bisect.StopNoStep, "raise --max-steps"},
		{bisect.StopSteps, 0.5, "raise --max-steps or --max-time and --resume", "range"},
		// No failure anywhere (rangeP 0 here): a larger budget is not the advice.
		{bisect.StopSteps, 0, bisect.StopSteps, "raise --max-steps"},
	}
	for _, tt := range tests {
		rep := &bisect.Report{Stop: tt.stop, Confidence: 0.95, Range: bisect.ReportRange{Posterior: tt.rangeP},
			Steps: []bisect.ReportStep{{Trials: 10}}}
		if tt.rangeP > 0 {
			rep.Steps = append(rep.Steps, bisect.ReportStep{Trials: 10, Failures: 2})
		}
		got := notDecided(rep).Error()
		if !strings.Contains(got, tt.want) || strings.Contains(got, tt.notWant) {
			t.Errorf("%s at %.2f: %q, want %q and not %q", tt.stop, tt.rangeP, got, tt.want, tt.notWant)
		}
	}
}

// TestResumeSpec: --resume runs the spec the bisection began with; --spec or --default-spec
// naming another is refused (their steps would be pooled as one failure), and a bisection
// begun on the embedded default keeps it when a debugflow.yaml appears later.
func TestResumeSpec(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	recorded := filepath.Join(dir, "debugflow.yaml")
	tests := []struct {
		name     string
		given    specsource.Source
		recorded string
		want     specsource.Source // Path and Default of the spec run
		err      string
	}{
		{"nothing given", specsource.Source{}, recorded, specsource.Source{Path: recorded}, ""},
		{"nothing given, began on the default", specsource.Source{}, "", specsource.Source{Default: true}, ""},
		{"the same file, relative", specsource.Source{Path: "debugflow.yaml"}, recorded, specsource.Source{Path: "debugflow.yaml"}, ""},
		{"the default again", specsource.Source{Default: true}, "", specsource.Source{Default: true}, ""},
		{"another file", specsource.Source{Path: "other.yaml"}, recorded, specsource.Source{}, "--spec other.yaml: the bisection under way runs " + recorded},
		{"a file after the default", specsource.Source{Path: "debugflow.yaml"}, "", specsource.Source{}, "runs the embedded default spec"},
		{"the default after a file", specsource.Source{Default: true}, recorded, specsource.Source{}, "--default-spec: the bisection under way runs " + recorded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resumeSpec(&tt.given, tt.recorded)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got.Path != tt.want.Path || got.Default != tt.want.Default {
				t.Errorf("got %+v, %v; want path %q, default %v", got, err, tt.want.Path, tt.want.Default)
			}
		})
	}
}

// TestResumeSpecHash: --resume refuses a spec whose content changed since the bisection began
// (the same file edited: its steps measured the spec as it was), naming the sections that
// changed; an edit that changes nothing parsed (a comment) resumes; a state written before the
// hash was recorded resumes with a note; the embedded default is checked as well (an upgrade
// of debugflow may change it between sessions).
func TestResumeSpecHash(t *testing.T) {
	parse := func(t *testing.T, edit func(string) string) *spec.Spec {
		t.Helper()
		s, err := spec.Parse("debugflow.yaml", []byte(edit(string(spec.DefaultYAML()))))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	same := func(y string) string { return y }
	hash := func(s *spec.Spec) map[string]string {
		t.Helper()
		h, err := specHash(s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	began := hash(spec.Default())
	otherDefault := hash(spec.Default())
	otherDefault["reproducer"] = strings.Repeat("0", 64)
	tests := []struct {
		name     string
		recorded map[string]string
		edit     func(string) string
		specName string
		note     string // "" none
		err      string // "" resumes
	}{
		{"the same spec", began, same, "/w/debugflow.yaml", "", ""},
		{"a comment added", began, func(y string) string { return "# a note\n" + y + "\n# another\n" }, "/w/debugflow.yaml", "", ""},
		{"the test selection edited", began, func(y string) string { return strings.Replace(y, "  select: cuda ", "  select: cpu  ", 1) }, "/w/debugflow.yaml",
			"", "the spec file /w/debugflow.yaml changed since the bisection began (reproducer; its steps measured the spec as it was): restore it, or `debugflow bisect reset` to start over"},
		{"the count edited", began, func(y string) string { return strings.Replace(y, "  count: 50 ", "  count: 7  ", 1) }, "/w/debugflow.yaml", "", "(reproducer;"},
		{"a state without the hash", nil, func(y string) string { return strings.Replace(y, "  count: 50 ", "  count: 7  ", 1) }, "/w/debugflow.yaml",
			"could not be checked", ""},
		{"the default, unchanged", began, same, specsource.EmbeddedName, "", ""},
		{"the default changed by an upgrade", otherDefault, same, specsource.EmbeddedName, "",
			"the embedded default spec changed since the bisection began (reproducer; the bisection began under another debugflow version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			note, err := checkSpecHash(tt.recorded, parse(t, tt.edit), tt.specName)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("err %v, want %q", err, tt.err)
			case tt.err != "" && ghrun.ExitCode(err) != 2:
				t.Errorf("exit %d, want 2", ghrun.ExitCode(err))
			}
			if (tt.note == "") != (note == "") || !strings.Contains(note, tt.note) {
				t.Errorf("note %q, want %q", note, tt.note)
			}
		})
	}
}

package reportcmd

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/cmd/internal/lazyflags"
	"github.com/debugflow/debugflow/internal/analyse/experiment"
	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/steps/stepflag"
)

// execute runs the report command on a factory with buffers; runF nil runs the real report.
func execute(t *testing.T, runF func(*report.Options) error, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &errOut}, Getenv: func(string) string { return "" }}
	cmd := NewCmdReport(f, runF)
	lazyflags.Bind(cmd, args)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

// TestFlags checks the command fills report.Options from flags (cli/cli style: the run
// function is replaced), with the factory's streams and environment.
func TestFlags(t *testing.T) {
	var got *report.Options
	capture := func(o *report.Options) error { got = o; return nil }
	if _, _, err := execute(t, capture, "--compare", "a", "b", "--markdown", "--artifact", "art", "--strip-prefix", "", "--baseline", "a",
		"--confidence", "0.9", "--min-effect", "0.25", "--abs-margin", "0"); err != nil {
		t.Fatal(err)
	}
	if !got.Compare || !got.Markdown || got.JSON || got.Artifact != "art" || got.StripPrefix != "" || got.Baseline != "a" ||
		got.Confidence != 0.9 || got.MinEffect != 0.25 || got.AbsMargin != 0 || strings.Join(got.Dirs, ",") != "a,b" || got.Stdout == nil || got.Getenv == nil {
		t.Errorf("options %+v", got)
	}
	if _, _, err := execute(t, capture, "dir"); err != nil {
		t.Fatal(err)
	}
	if got.StripPrefix != "auto" || got.Confidence != experiment.DefaultRule.Confidence || got.MinEffect != experiment.DefaultRule.MinEffect ||
		got.AbsMargin != experiment.DefaultRule.AbsMargin || got.Compare || got.Baseline != "" {
		t.Errorf("defaults %+v", got)
	}
	// --baseline alone compares several folders (an experiment is a comparison).
	if _, _, err := execute(t, capture, "--baseline", "a", "a", "b"); err != nil || strings.Join(got.Dirs, ",") != "a,b" {
		t.Errorf("--baseline without --compare: %v, dirs %q", err, got.Dirs)
	}
}

// TestFlagsAreTheOptionsTags: the command registers exactly the flags of report.Options'
// tags (package stepflag), with their defaults and help, in both binaries (they share this
// command); none is registered by hand.
func TestFlagsAreTheOptionsTags(t *testing.T) {
	fields, err := stepflag.Fields(reflect.TypeOf(report.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	cmd := NewCmdReport(&factory.Factory{}, nil)
	lazyflags.BindAll(cmd)
	var registered []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { registered = append(registered, f.Name) })
	var want []string
	for _, f := range fields {
		want = append(want, f.Name)
		fl := cmd.Flags().Lookup(f.Name)
		if fl == nil {
			continue
		}
		if fl.Usage != f.Usage || fl.Shorthand != f.Short {
			t.Errorf("--%s: usage %q, shorthand %q; the tag says %q, %q", f.Name, fl.Usage, fl.Shorthand, f.Usage, f.Short)
		}
	}
	slices.Sort(want)
	if !slices.Equal(registered, want) {
		t.Errorf("flags %v, report.Options' tags %v", registered, want)
	}
}

// TestUsageErrors: arguments and flags cobra checks before the report runs exit 2 (a flag
// error is typed by the binaries' main).
func TestUsageErrors(t *testing.T) {
	never := func(*report.Options) error { t.Error("the report ran"); return nil }
	for _, tt := range []struct {
		args []string
		want string
		code int
	}{
		{nil, "requires at least 1 artifact directory", report.ExitUsage},
		{[]string{"a", "b"}, "use --compare", report.ExitUsage},
		{[]string{"a", "--no-such-flag"}, "unknown flag", -1},
		{[]string{"a", "--json", "--markdown"}, "none of the others can be", -1},
	} {
		_, _, err := execute(t, never, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.args, err, tt.want)
			continue
		}
		var ee *exitcode.Error
		if tt.code >= 0 && (!errors.As(err, &ee) || ee.Code != tt.code) {
			t.Errorf("%q: err = %v, want exit code %d", tt.args, err, tt.code)
		}
	}
}

// TestReportsToTheFactory: the verdict goes to the factory's stdout, an unreadable folder
// exits 1.
func TestReportsToTheFactory(t *testing.T) {
	dir := t.TempDir()
	summary := `{"command":["python3","-m","pytest"],"exit_code":1,"reproduced":true,"status":"reproduced","count":5,"workers":2,"failed":1,"complete":true}`
	if err := os.WriteFile(filepath.Join(dir, "reproducer_summary.json"), []byte(summary), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := execute(t, nil, dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"reproduced": true`) {
		t.Errorf("stdout:\n%s", out)
	}
	_, _, err = execute(t, nil, t.TempDir())
	if exitcode.Of(err) != report.ExitUnreadable {
		t.Errorf("empty folder: err = %v (code %d), want %d", err, exitcode.Of(err), report.ExitUnreadable)
	}
}

func TestHelp(t *testing.T) {
	out, _, err := execute(t, nil, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"debugflow report ./evidence", "--compare", "--json", "NO_COLOR", "Exit status"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

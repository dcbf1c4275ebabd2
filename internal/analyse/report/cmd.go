package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/experiment"
	"github.com/debugflow/debugflow/internal/exitcode"
)

// Exit codes of `debugflow report`.
const (
	// ExitOK: the verdict was printed, whatever it says.
	ExitOK = 0
	// ExitUnreadable: an artifact directory could not be read or held no artifact files.
	ExitUnreadable = 1
	// ExitUsage: bad flags or arguments.
	ExitUsage = 2
	// ExitInterrupted: Ctrl-C or SIGTERM stopped the reading.
	ExitInterrupted = 130
)

// ExitError carries the exit code the report command wants (shared by every debugflow command).
type ExitError = exitcode.Error

// Options configures the report command (its cobra wiring is cmd/internal/reportcmd, shared
// by debugflow and debugflow-step). Tests set the writers and the environment.
//
// The tags are the command's flags for package steps/stepflag: they register the flags of
// both binaries and write the generated workflows' report lines (in declaration order:
// --compare --markdown --artifact/--baseline, then the directories), so a flag's name, default
// and help are written once. The defaults of the verdict rule's flags are
// experiment.DefaultRule's (a test holds them equal).
type Options struct {
	// Dirs are the artifact directories (one, or several with Compare): the positional
	// arguments.
	Dirs []string `flag:"-"`
	// Compare puts several directories side by side.
	Compare bool `flag:"compare" usage:"compare several artifact directories, one per runner"`
	// JSON prints the machine-readable shape instead of text.
	JSON bool `flag:"json" usage:"print JSON (the shape of docs/design.md; an array of {runner, ...} with --compare)"`
	// Markdown prints the Markdown of the step summary instead of text.
	Markdown bool `flag:"markdown" usage:"print the Markdown of the job summary instead of text"`
	// Artifact is the artifact name shown in the Markdown.
	Artifact string `flag:"artifact" usage:"artifact name to show in the Markdown (with --compare, also the prefix of the directory names)"`
	// StripPrefix is removed from directory names to make runner labels; "auto" (the default)
	// removes Artifact+"-" when every name starts with it, else the names' common prefix up to
	// and including its first '-'.
	StripPrefix string `flag:"strip-prefix" default:"auto" usage:"prefix removed from directory names to label runners with --compare (\"\" keeps the names)"`
	// Baseline, with Compare, makes it an experiment across refs: the baseline's folder or ref
	// name; every other ref is judged against it (docs/experiment.md). Confidence and
	// MinEffect are the verdict rule's thresholds, AbsMargin its absolute margin of "no
	// change" (all three zero: experiment.DefaultRule).
	Baseline   string  "flag:\"baseline\" usage:\"with --compare: the baseline `DIR` (or ref name) of an experiment across refs; adds crash rates, intervals, p-values and verdicts (docs/experiment.md)\""
	Confidence float64 `flag:"confidence" default:"0.95" usage:"with --baseline: the verdict rule's confidence"`
	MinEffect  float64 `flag:"min-effect" default:"0.5" usage:"with --baseline: the odds ratio a fix must reach (0.5: it halves the odds of failing)"`
	AbsMargin  float64 `flag:"abs-margin" default:"0.02" usage:"with --baseline: \"no change\" also holds with the rates within this difference (0.02: ±2 points); 0 for none"`

	Stdout io.Writer `flag:"-"`
	Stderr io.Writer `flag:"-"`
	// Getenv reads the environment (NO_COLOR); default os.Getenv.
	Getenv func(string) string `flag:"-"`
	// IsTerminal reports whether w is a terminal; default: a character device other than
	// /dev/null.
	IsTerminal func(w io.Writer) bool `flag:"-"`

	// load reads one directory; default LoadContext. Tests stand in a file system whose reads
	// hang.
	load func(ctx context.Context, dir string) (*Verdict, error) `flag:"-"`
}

// RunReport prints the verdict of opts.Dirs. It returns an *ExitError with ExitUnreadable when a
// directory could not be read (with --compare, after printing the others) and with
// ExitInterrupted when ctx is cancelled while reading.
func RunReport(ctx context.Context, opts *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.IsTerminal == nil {
		opts.IsTerminal = isTerminal
	}
	if opts.load == nil {
		opts.load = LoadContext
	}
	if len(opts.Dirs) == 0 {
		return &ExitError{Code: ExitUsage, Err: errors.New("report requires at least 1 artifact directory")}
	}
	if opts.Baseline != "" {
		if opts.Confidence == 0 && opts.MinEffect == 0 && opts.AbsMargin == 0 {
			opts.Confidence, opts.MinEffect, opts.AbsMargin = experiment.DefaultRule.Confidence, experiment.DefaultRule.MinEffect, experiment.DefaultRule.AbsMargin
		}
		return runBaselineCompare(ctx, opts)
	}
	if !opts.Compare && len(opts.Dirs) > 1 {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("report accepts 1 artifact directory, got %d (use --compare)", len(opts.Dirs))}
	}
	color := opts.IsTerminal(opts.Stdout) && opts.Getenv("NO_COLOR") == ""
	if !opts.Compare {
		v, err := opts.load(ctx, opts.Dirs[0])
		if err != nil {
			return loadFailed(ctx, err)
		}
		switch {
		case opts.JSON:
			return v.WriteJSON(opts.Stdout)
		case opts.Markdown:
			_, err := io.WriteString(opts.Stdout, v.Markdown(opts.Artifact))
			return err
		}
		return v.WriteText(opts.Stdout, color)
	}

	prefix := opts.StripPrefix
	if prefix == "auto" && opts.Artifact != "" && allHavePrefix(opts.Dirs, opts.Artifact+"-") {
		prefix = opts.Artifact + "-"
	}
	labels := RunnerLabels(opts.Dirs, prefix)
	c := Comparison{Artifact: opts.Artifact}
	var failed errorList
	for i, dir := range opts.Dirs {
		v, err := opts.load(ctx, dir)
		if ctx.Err() != nil {
			return loadFailed(ctx, err)
		}
		if err != nil {
			failed = append(failed, err)
		} else {
			v.Run.Runner = labels[i]
		}
		c.Rows = append(c.Rows, ComparisonRow{Runner: labels[i], Verdict: v, Err: err})
	}
	var err error
	switch {
	case opts.JSON:
		err = c.WriteJSON(opts.Stdout)
	case opts.Markdown:
		_, err = io.WriteString(opts.Stdout, c.Markdown())
	default:
		err = c.WriteText(opts.Stdout)
	}
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		return &ExitError{Code: ExitUnreadable, Err: safeError{failed}}
	}
	return nil
}

// errorList is the errors of the directories --compare could not read, on one line.
type errorList []error

func (l errorList) Error() string {
	msgs := make([]string, len(l))
	for i, err := range l {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (l errorList) Unwrap() []error { return l }

// loadFailed is the exit error of a load that failed: ExitInterrupted once ctx is cancelled,
// ExitUnreadable otherwise. The message shows file names with control characters made visible.
func loadFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted: %w", context.Cause(ctx))}
	}
	return &ExitError{Code: ExitUnreadable, Err: safeError{err}}
}

// RunnerLabels labels artifact directories by their base names. prefix is removed from each
// name; "auto" removes the longest common prefix of all names cut back to its first '-'
// (debug_cuda_repro_artifacts-gpu-t4-4-core and debug_cuda_repro_artifacts-gpu-a10g-4-core give
// gpu-t4-4-core and gpu-a10g-4-core). A name that would become empty keeps its full form.
func RunnerLabels(dirs []string, prefix string) []string {
	names := make([]string, len(dirs))
	for i, d := range dirs {
		names[i] = filepath.Base(filepath.Clean(d))
	}
	if prefix == "auto" {
		prefix = ""
		if len(names) > 1 {
			common := names[0]
			for _, n := range names[1:] {
				for !strings.HasPrefix(n, common) {
					common = common[:len(common)-1]
				}
			}
			if i := strings.IndexByte(common, '-'); i >= 0 {
				prefix = common[:i+1]
			}
		}
	}
	labels := make([]string, len(names))
	for i, n := range names {
		labels[i] = n
		if l := strings.TrimPrefix(n, prefix); l != "" {
			labels[i] = l
		}
	}
	return labels
}

// allHavePrefix reports whether every directory's base name starts with prefix.
func allHavePrefix(dirs []string, prefix string) bool {
	for _, d := range dirs {
		if !strings.HasPrefix(filepath.Base(filepath.Clean(d)), prefix) {
			return false
		}
	}
	return true
}

// isTerminal reports whether w is a character device other than /dev/null.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(st, null) {
		return false
	}
	return true
}

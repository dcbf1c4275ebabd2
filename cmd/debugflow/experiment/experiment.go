// Package experiment is `debugflow experiment`: crash rates of refs with exact intervals and
// a verdict per candidate, on GitHub or on this machine, and `debugflow experiment workflow`,
// the workflow it dispatches.
package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/experimentgh"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/stepbundle"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/workflowcheck"
	"github.com/debugflow/debugflow/internal/analyse/experiment"
	"github.com/debugflow/debugflow/internal/analyse/experiment/rounds"
	"github.com/debugflow/debugflow/internal/atomicfile"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/runner/refrun"
	"github.com/debugflow/debugflow/internal/spec"
)

// ExperimentOptions are the flags of `debugflow experiment`.
type ExperimentOptions struct {
	Baseline      string
	Candidates    []string
	Local         bool
	Count         int
	UntilDecided  bool
	MaxCount      int
	MaxTime       time.Duration
	Confidence    float64
	MinEffect     float64
	AbsMargin     float64
	Out           string
	JSON          bool
	Python        string
	KeepWorktrees bool
	Verbose       bool
	Checkout      string
	// AllowSameCommit runs a candidate that is the baseline's commit (an A/A calibration).
	AllowSameCommit bool
	// GitHub: the repository, the branch dispatched on, the poll interval
	experimentgh.Options

	Spec     *specsource.Source
	CountSet bool // --count was given
	Factory  *ghcmd.Factory
	Ctx      context.Context
}

const experimentLong = `Does the candidate fix make the crash go away? Run the spec's reproducer as a full sweep
(never stopping at the first failure) against a baseline ref and one or more candidate refs,
the same way for each (same spec, runner labels, tests, -k, count), and judge every candidate
against the baseline with exact statistics: failures/trials and the rate with its exact
(Clopper-Pearson) 95% interval per ref, runner and test, Fisher's one-sided exact test, and a
verdict: fixed, improved, no change, worse, or inconclusive with about how many more
repetitions would decide it. The rule and its thresholds are in docs/experiment.md.

On GitHub (the default) it is one dispatch of the experiment workflow ('debugflow experiment
workflow' writes it; commit and push it next to the debug workflow): a matrix over the refs
(passed as a JSON input) x the spec's runner labels, and a report job that puts the comparison
in the run's summary; debugflow watches the run, downloads every artifact and prints the
verdicts. With --local the experiment runs on this machine: every ref is checked out in its
own git worktree of the current repository and set up there as the workflow's job sets a
runner up (the install and the build with their exports and $GITHUB_ENV/$GITHUB_PATH, the
timeouts, the smoke test; setup.log in the ref's folder).

The refs are checked before anything is set up: with --local each must resolve to a commit of
the checkout (else origin/REF), and a candidate at the baseline's commit is refused (exit 2)
unless --allow-same-commit asks for that A/A run. Only commits are tested: uncommitted edits
in the checkout are in no ref's worktree (a warning says so); commit them and give that
branch or commit as a ref.

--until-decided sweeps in rounds of --count repetitions until every candidate has a verdict,
or the budget is spent (--max-count repetitions per ref, default 16 rounds; --max-time). The
planned rounds fix the level of every look (Pocock's group-sequential design), so stopping
early keeps the chance of a wrong verdict at 1-confidence.

Every folder stays under --out (round-N/<ref> in rounds), with experiment.json and
experiment.md; 'debugflow report --compare --baseline' reads them again.
Exit status: 0 every candidate decided, 1 some inconclusive or a run failed, 2 bad flags,
refs or spec, 6 a ref's setup failed (--local: install, build or smoke test), 130 interrupted.`

const experimentExample = `  # does the pin branch fix the crash seen on efd3f69? one GitHub dispatch, 200 repetitions each
  debugflow experiment --baseline efd3f69 --candidate pin=duburcqa/turing_stream_pin_experiment --count 200

  # on this machine, in rounds of 25 until decided (at most 400 repetitions per ref)
  debugflow experiment --local --baseline main --candidate fix=my-fix --count 25 --until-decided --max-count 400

  # two candidates, a time budget, machine-readable output
  debugflow experiment --baseline main --candidate a=fix-a --candidate b=fix-b --until-decided --max-time 2h --json

  # write the experiment workflow (commit and push it before dispatching)
  debugflow experiment workflow -o .github/workflows/debug_cuda_repro_experiment.yml`

// NewCmdExperiment returns `debugflow experiment` and its `workflow` subcommand; runF nil runs
// runExperiment.
func NewCmdExperiment(fac *ghcmd.Factory, sp *specsource.Source, runF func(*ExperimentOptions) error) *cobra.Command {
	stdout := fac.Stdout()
	o := &ExperimentOptions{Factory: fac}
	cmd := &cobra.Command{
		Use:     "experiment --baseline [NAME=]REF --candidate [NAME=]REF... [--local] [--count N] [--until-decided]",
		Short:   "Does the fix fix it? Crash rates of refs with exact intervals and a verdict per candidate",
		Long:    experimentLong,
		Example: experimentExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Spec, o.CountSet, o.Ctx = sp, cmd.Flags().Changed("count"), cmd.Context()
			if runF != nil {
				return runF(o)
			}
			return runExperiment(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Baseline, "baseline", "", "the ref every candidate is judged against, as `[NAME=]REF` (a branch, tag or commit; default name \"baseline\")")
	f.StringArrayVar(&o.Candidates, "candidate", nil, "a ref to judge, as `[NAME=]REF` (repeatable; default name: the ref with / as -)")
	f.BoolVar(&o.Local, "local", false, "run on this machine: a git worktree set up per ref, the reproducer here")
	f.IntVar(&o.Count, "count", 0, "repetitions of every test per ref in one sweep or round (default: the spec's count)")
	f.BoolVar(&o.UntilDecided, "until-decided", false, "sweep in rounds of --count until every candidate is decided or the budget is spent")
	f.IntVar(&o.MaxCount, "max-count", 0, "with --until-decided: repetition budget per ref (default 16 x --count)")
	f.DurationVar(&o.MaxTime, "max-time", 0, "with --until-decided: start no round that would end after this (e.g. 2h)")
	f.Float64Var(&o.Confidence, "confidence", experiment.DefaultRule.Confidence, "1 - the accepted chance of a wrong verdict")
	f.Float64Var(&o.MinEffect, "min-effect", experiment.DefaultRule.MinEffect, "the odds ratio a fix must reach (0.5: it at least halves the odds of failing)")
	f.Float64Var(&o.AbsMargin, "abs-margin", experiment.DefaultRule.AbsMargin, "\"no change\" also holds with the rates within this difference (0.02: ±2 points; for rates near zero); 0 for none")
	f.StringVar(&o.Out, "out", "", "folder for every run's artifacts and the result (default ./experiment-<time>, or -2, -3, ... after it when another experiment took it; must be new or empty)")
	f.BoolVar(&o.JSON, "json", false, `print {"baseline", "rows": [...]} on stdout (progress goes to stderr)`)
	f.StringVar(&o.Python, "python", "", "with --local: interpreter with pytest, pytest-xdist and pytest-repeat (default: reproducer.python)")
	f.BoolVar(&o.KeepWorktrees, "keep-worktrees", false, "with --local: leave the worktrees in place afterwards")
	f.BoolVar(&o.Verbose, "verbose", false, "with --local: stream the setup and pytest output")
	f.StringVar(&o.Checkout, "checkout", "", "with --local: the git checkout that has the refs (default: the current directory)")
	f.BoolVar(&o.AllowSameCommit, "allow-same-commit", false, "run a candidate that is the baseline's commit anyway (an A/A run: how much two runs of one commit differ)")
	ghcmd.AddRepoFlags(f, &o.Repo)
	f.StringVar(&o.Ref, "ref", "", "branch the experiment workflow is dispatched on (default: the current branch, else workflow.branch)")
	f.DurationVar(&o.Interval, "interval", ghrun.DefaultWatchInterval, "poll interval while a run is watched")
	cmd.AddCommand(newWorkflowCmd(sp, stdout))
	return cmd
}

func runExperiment(o *ExperimentOptions) error {
	ctx, countSet, fac := o.Ctx, o.CountSet, o.Factory
	s, _, err := o.Spec.Load()
	if err != nil {
		return err
	}
	stdout, stderr := fac.Stdout(), fac.Stderr()
	usage := func(err error) error { return &exitcode.Error{Code: cmdutil.ExitUsage, Err: err} }
	if o.Baseline == "" {
		return usage(errors.New("--baseline [NAME=]REF is required"))
	}
	base, err := refrun.ParseRef(o.Baseline, "baseline")
	if err != nil {
		return usage(fmt.Errorf("--baseline: %w", err))
	}
	var cands []refrun.Ref
	for _, c := range o.Candidates {
		r, err := refrun.ParseRef(c, "")
		if err != nil {
			return usage(fmt.Errorf("--candidate: %w", err))
		}
		cands = append(cands, r)
	}
	if len(cands) == 0 {
		return usage(errors.New("give at least one --candidate [NAME=]REF"))
	}
	if err := refrun.CheckRefs(append([]refrun.Ref{base}, cands...)); err != nil {
		return usage(err)
	}
	if countSet && o.Count < 1 {
		return usage(fmt.Errorf("--count must be at least 1 (got %d)", o.Count))
	}
	if o.Count == 0 {
		o.Count = specsource.DefaultCount(s)
	}
	if !o.Local && (o.Python != "" || o.KeepWorktrees || o.Checkout != "") {
		return usage(errors.New("--python, --keep-worktrees and --checkout go with --local"))
	}
	if !o.UntilDecided && (o.MaxCount != 0 || o.MaxTime != 0) {
		return usage(errors.New("--max-count and --max-time are budgets of --until-decided"))
	}
	if o.UntilDecided && o.MaxCount != 0 && o.MaxCount < o.Count {
		return usage(fmt.Errorf("--max-count %d is below --count %d", o.MaxCount, o.Count))
	}
	if o.MaxTime < 0 {
		return usage(fmt.Errorf("--max-time %s: want a positive duration", o.MaxTime))
	}
	// The refs before anything is made: a bad one is a usage error, not a failure after the
	// baseline's setup, and leaves no folder behind.
	if err := checkRefs(ctx, o, base, cands, stderr); err != nil {
		return usage(err)
	}
	defaultOut := o.Out == ""
	madeOut := defaultOut // the folder is this experiment's: an empty one is removed after Ctrl-C
	if defaultOut {
		o.Out = "experiment-" + time.Now().Format("20060102-150405")
	} else if entries, err := os.ReadDir(o.Out); err == nil && len(entries) > 0 {
		return usage(fmt.Errorf("--out %s is not empty: every experiment gets a folder of its own", o.Out))
	} else if errors.Is(err, fs.ErrNotExist) {
		madeOut = true
	}
	ropts := rounds.Options{Baseline: base, Candidates: cands, Count: o.Count, UntilDecided: o.UntilDecided,
		MaxCount: o.MaxCount, MaxTime: o.MaxTime, Rule: experiment.Rule{Confidence: o.Confidence, MinEffect: o.MinEffect, AbsMargin: o.AbsMargin},
		Out: o.Out, Log: stderr}
	if err := ropts.Rule.Validate(); err != nil {
		return usage(err)
	}
	var finish func(error) error = func(err error) error { return err }
	var local *refrun.Local
	if o.Local {
		local = &refrun.Local{Spec: s, Repo: o.Checkout, Python: o.Python, Log: stderr, Verbose: o.Verbose, KeepWorktrees: o.KeepWorktrees}
		ropts.Runner = local
	} else {
		f := fac.GitHub()
		stdout, stderr = f.Streams()
		ropts.Log = stderr
		finish = f.Finish
		runner, err := experimentgh.Runner(ctx, f, o.Options, s, stderr)
		if err != nil {
			return finish(err)
		}
		ropts.Runner = runner
	}
	if defaultOut {
		dir, err := claimDefaultOut(o.Out)
		if err != nil {
			ropts.Runner.Close()
			return finish(err)
		}
		o.Out, ropts.Out = dir, dir
	}
	res, runErr := rounds.Run(ctx, ropts)
	if cerr := ropts.Runner.Close(); cerr != nil {
		fmt.Fprintf(stderr, "debugflow: cleaning up: %v\n", cerr)
	}
	if res != nil && res.Comparison != nil {
		if err := printExperiment(res, o, stdout, stderr); err != nil && runErr == nil {
			runErr = err
		}
	}
	if local != nil {
		// As debugflow local does under its verdict: what the setup did not run for root (on
		// stderr with --json, whose stdout is the JSON object).
		out := stdout
		if o.JSON {
			out = stderr
		}
		local.WriteNotRun(out)
	}
	switch {
	case runErr != nil && ctx.Err() != nil:
		err := interruptedAt(o.Out, madeOut, res)
		if goesOn := (*refrun.RunGoesOnError)(nil); errors.As(runErr, &goesOn) {
			err = fmt.Errorf("%w; %s", err, goesOn.Advice())
		}
		return &exitcode.Error{Code: ghrun.ExitInterrupted, Err: err}
	case runErr != nil:
		return finish(runErr)
	case !res.Comparison.Decided():
		return &exitcode.Error{Code: cmdutil.ExitFindings, Err: fmt.Errorf("not decided (%s)", res.Stop)}
	}
	return nil
}

// checkRefs refuses what cannot be compared, before anything is set up. With --local it
// resolves every ref in the checkout as the worktrees will (a ref that is only a remote branch
// as origin/REF), refuses a candidate that is the baseline's commit unless --allow-same-commit,
// and warns that uncommitted edits of the checkout are in no ref. On GitHub the runners
// resolve the refs; only a candidate that names the baseline's very ref is refused here.
func checkRefs(ctx context.Context, o *ExperimentOptions, base refrun.Ref, cands []refrun.Ref, stderr io.Writer) error {
	const nothing = "there is nothing to compare (--allow-same-commit runs it anyway: an A/A run of one commit)"
	if !o.Local {
		for _, c := range cands {
			if c.Ref == base.Ref && !o.AllowSameCommit {
				return fmt.Errorf("baseline %s and candidate %s are the same ref: %s", base.Ref, candLabel(c), nothing)
			}
		}
		return nil
	}
	root, err := refrun.RepoRoot(ctx, o.Checkout)
	if err != nil {
		return fmt.Errorf("--local needs the git checkout that has the refs: %w", err)
	}
	baseCommit, err := refrun.ResolveCommit(ctx, root, base.Ref)
	if err != nil {
		return fmt.Errorf("--baseline %s: %w", base.Ref, err)
	}
	for _, c := range cands {
		commit, err := refrun.ResolveCommit(ctx, root, c.Ref)
		if err != nil {
			return fmt.Errorf("--candidate %s: %w", candLabel(c), err)
		}
		if commit == baseCommit && !o.AllowSameCommit {
			return fmt.Errorf("baseline %s and candidate %s resolve to the same commit %s: %s", base.Ref, candLabel(c), refrun.ShortCommit(commit), nothing)
		}
	}
	refrun.WarnUncommitted(ctx, o.Checkout, stderr)
	return nil
}

// candLabel is a candidate as the user named it: its ref, and its name when that differs.
func candLabel(c refrun.Ref) string {
	if c.Name == c.Ref {
		return c.Ref
	}
	return c.Ref + " (" + c.Name + ")"
}

// printExperiment prints the comparison (text or JSON) and keeps experiment.json and
// experiment.md next to the folders.
func printExperiment(res *rounds.Result, o *ExperimentOptions, stdout, stderr io.Writer) error {
	c := res.Comparison
	var js strings.Builder
	if err := c.WriteJSON(&js); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(o.Out, evidencefiles.ExperimentJSON), []byte(js.String()), 0o644); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(o.Out, evidencefiles.ExperimentMarkdown), []byte(c.Markdown()), 0o644); err != nil {
		return err
	}
	if o.JSON {
		_, err := io.WriteString(stdout, js.String())
		return err
	}
	fmt.Fprintln(stdout)
	if err := c.WriteText(stdout); err != nil {
		return err
	}
	how := fmt.Sprintf("%d repetitions per ref", res.Repetitions)
	if o.UntilDecided {
		how = fmt.Sprintf("%d round(s), %s, %s", res.Rounds, how, res.Stop)
	}
	baseDir := ""
	for _, r := range c.Rows {
		if r.Decision == nil && len(r.Dirs) > 0 {
			baseDir = r.Dirs[0]
			break
		}
	}
	fmt.Fprintf(stdout, "\n%s in %s. Everything is in %s (experiment.json, experiment.md); read it again with:\n  debugflow report --compare --baseline %s %s\n",
		how, res.Elapsed.Round(time.Second), o.Out, shellWord(baseDir), dirGlob(o.Out, o.UntilDecided, res.Rounds))
	return nil
}

// interruptedAt is the message of an interrupted experiment: which rounds count and where
// their folders are, or that nothing counts (interrupted before the first comparison), or that
// nothing was written, in which case the output folder, when this experiment made it, is
// removed rather than left empty. res is what rounds.Run returned (nil or without a
// comparison when no round ended).
func interruptedAt(out string, made bool, res *rounds.Result) error {
	const again = "an experiment does not resume: run it again with another --out"
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		if res == nil || res.Comparison == nil || res.Rounds < 1 {
			return fmt.Errorf("interrupted before the first sweep ended: nothing counts; the logs so far are in %s; %s", out, again)
		}
		counted := "round 1 counts"
		if res.Rounds > 1 {
			counted = fmt.Sprintf("rounds 1 to %d count", res.Rounds)
		}
		return fmt.Errorf("interrupted in round %d: %s (the comparison printed, also in %s); the folders of round %d (%s) count for nothing; %s",
			res.Rounds+1, counted, filepath.Join(out, evidencefiles.ExperimentJSON), res.Rounds+1, filepath.Join(out, fmt.Sprintf("round-%d", res.Rounds+1)), again)
	}
	if made {
		if err := os.Remove(out); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("interrupted before anything was written (and removing the empty %s failed: %v)", out, err)
		}
		return errors.New("interrupted before anything was written: no folder was kept")
	}
	return fmt.Errorf("interrupted before anything was written to %s", out)
}

// claimDefaultOut makes the default --out folder, base (experiment-<time>), or base-2, base-3,
// ... when an experiment started in the same second has it: the folder's creation is the
// claim, so experiments started together (a loop over candidates in the background, say)
// never write into one folder.
func claimDefaultOut(base string) (string, error) {
	const tries = 100
	for i := 1; i <= tries; i++ {
		dir := base
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", base, i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("make the experiment's folder: %w", err)
		}
	}
	return "", fmt.Errorf("make the experiment's folder: %s and %s-2 to -%d all exist", base, base, tries)
}

// dirGlob is the shell glob of the artifact folders under out, out quoted. It ends in a
// slash, so it matches folders only: out also holds experiment.json and experiment.md, which
// report --compare refuses. With rounds, the comparison printed holds the first compared
// rounds: when a round after them left folders (it was interrupted, or failed), the glob names
// those rounds one by one, so that reading them again gives the same comparison.
func dirGlob(out string, rounds bool, compared int) string {
	dir := filepath.Clean(out)
	word := shellWord(dir)
	if !rounds {
		return word + "/*/"
	}
	if _, err := os.Stat(filepath.Join(dir, "round-"+strconv.Itoa(compared+1))); err != nil || compared < 1 {
		return word + "/round-*/*/"
	}
	globs := make([]string, compared)
	for i := range globs {
		globs[i] = word + "/round-" + strconv.Itoa(i+1) + "/*/"
	}
	return strings.Join(globs, " ")
}

// shellWord is s as one POSIX shell word: unchanged when it has no special characters, else
// single-quoted.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// newWorkflowCmd is `debugflow experiment workflow`.
func newWorkflowCmd(sp *specsource.Source, stdout io.Writer) *cobra.Command {
	var output string
	var check, force bool
	cmd := &cobra.Command{
		Use:   "workflow [--spec FILE] [-o FILE|-] [--check]",
		Short: "Write the experiment workflow of a spec (validated with actionlint and the audit)",
		Long: `Write the workflow 'debugflow experiment' dispatches: a matrix over the refs input (JSON,
the baseline first) x the spec's runner labels, each job checking its ref out, building it as
the debug workflow does and running the reproducer as a full sweep, then a report job with the
comparison in the run's summary. Refs reach scripts only through env:. Commit and push it on
the branch you dispatch from (its file is the debug workflow's with an _experiment suffix).
Like generate, it refuses to write a workflow actionlint or the audit find fault with.`,
		Example: `  debugflow experiment workflow -o .github/workflows/debug_cuda_repro_experiment.yml
  debugflow experiment workflow --spec debugflow.yaml --check -o .github/workflows/debug_cuda_repro_experiment.yml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, specName, err := sp.Load()
			if err != nil {
				return err
			}
			out := output
			if check && out == "-" {
				out = filepath.Join(".github", "workflows", generate.ExperimentFile(s))
			}
			// The report job runs on an x64 runner whatever step_binary.arch says.
			plan, err := stepbundle.Resolve(cmd.Context(), s, cmd.ErrOrStderr(), spec.ArchX64)
			if err != nil {
				return err
			}
			data, err := generate.GenerateExperiment(s, specsource.HeaderName(specName), specsource.HeaderOutput(out))
			if err != nil {
				return fmt.Errorf("generating the experiment workflow: %w", err)
			}
			name := out
			if name == "-" {
				name = generate.ExperimentFile(s)
			}
			n, err := workflowcheck.Report(name, data, s.Runners, stdout, generate.AuditOptions(s)...)
			if err != nil {
				return err
			}
			if n > 0 {
				return &exitcode.Error{Code: cmdutil.ExitFindings, Err: fmt.Errorf("refusing to write a workflow with %d finding(s)", n)}
			}
			switch {
			case check:
				stale := workflowcheck.CheckStale("experiment workflow", out, data, specName, stdout)
				if err := stepbundle.Finish(plan, out, true, stdout, cmd.ErrOrStderr()); err != nil {
					return err
				}
				return stale
			case out == "-":
				if _, err := stdout.Write(data); err != nil {
					return err
				}
				return stepbundle.Finish(plan, out, false, stdout, cmd.ErrOrStderr())
			}
			if !force {
				// As generate: never replace the workflow of another spec, or a hand-written file.
				if err := workflowcheck.CheckOverwrite(out, specName); err != nil {
					return err
				}
			}
			if err := atomicfile.Write(out, data, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s from %s\n", out, specName)
			return stepbundle.Finish(plan, out, false, stdout, cmd.ErrOrStderr())
		},
	}
	sp.AddFlags(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "-", "file to write, or - for stdout")
	cmd.Flags().BoolVar(&check, "check", false, "compare with the file on disk instead of writing; exit 1 with a diff when stale")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite a workflow generated from another spec, or not by debugflow")
	return cmd
}

package steps

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/internal/analyse/refinfo"
)

// RefInfoOptions configures `debugflow-step ref-info`.
type RefInfoOptions struct {
	Out string
	refinfo.Info
	// Dir is the checkout whose HEAD commit is recorded ("" = the current directory).
	Dir string
}

// RunRefInfo is `debugflow-step ref-info`: it records which ref (and commit) this job of an
// experiment workflow measured, so the report can group artifact folders by ref and runner.
func RunRefInfo(ctx context.Context, env *Env, opts RefInfoOptions) error {
	if err := opts.Info.Validate(); err != nil {
		return usagef("%v", err)
	}
	r := opts.Info
	if r.Commit == "" {
		args := []string{"rev-parse", "HEAD"}
		if opts.Dir != "" {
			args = append([]string{"-C", opts.Dir}, args...)
		}
		if out, err := env.runCapture(ctx, 30*time.Second, "git", args...); err == nil {
			r.Commit = strings.TrimSpace(out.Stdout)
		} else {
			env.warnf("commit of %s not recorded: %v", r.Ref, err)
		}
	}
	if err := refinfo.Write(opts.Out, r); err != nil {
		return err
	}
	commit := r.Commit
	if commit == "" {
		commit = "commit unknown"
	}
	fmt.Fprintf(env.Stdout, "ref-info: %s = %s (%s) on %s", r.Name, r.Ref, commit, r.Runner)
	if r.Rounds > 0 {
		fmt.Fprintf(env.Stdout, ", round %d of %d", r.Round, r.Rounds)
	}
	fmt.Fprintln(env.Stdout)
	return nil
}

func newCmdRefInfo(env *Env) *cobra.Command {
	var o RefInfoOptions
	cmd := &cobra.Command{
		Use:   "ref-info",
		Short: "Write ref.json: which ref, commit and runner this job of an experiment measured",
		Example: `  # in a job of the experiment workflow, after the checkout
  debugflow-step ref-info --out /tmp/repro --name "$REF_NAME" --ref "$REF" --runner "$RUNNER" \
    --round "$ROUND" --rounds "$ROUNDS"`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return RunRefInfo(cmd.Context(), env, o) },
	}
	f := cmd.Flags()
	addOut(f, &o.Out)
	f.StringVar(&o.Name, "name", "", "the experiment's name for the ref (letters, digits, '.', '_', '-')")
	f.StringVar(&o.Ref, "ref", "", "the ref as given (branch, tag or commit)")
	f.StringVar(&o.Commit, "commit", "", "the commit checked out (default: git rev-parse HEAD in --dir)")
	f.StringVar(&o.Runner, "runner", "", "the runner label")
	f.IntVar(&o.Round, "round", 0, "round of a sequential experiment (0: a single sweep)")
	f.IntVar(&o.Rounds, "rounds", 0, "planned rounds of the sequential experiment (0: a single sweep)")
	f.StringVar(&o.Dir, "dir", "", "checkout whose HEAD is recorded (default: the current directory)")
	return cmd
}

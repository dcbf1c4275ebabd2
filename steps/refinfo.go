package steps

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/refinfo"
)

// RefInfoOptions configures `debugflow-step ref-info`.
type RefInfoOptions struct {
	Out string `flag:"out" default:"/tmp/repro" emit:"always" usage:"artifact directory (created if missing)"`
	// Name, Ref, Commit, Runner, Round and Rounds are ref.json's fields (refinfo.Info).
	Name   string `flag:"name" usage:"the experiment's name for the ref (letters, digits, '.', '_', '-')"`
	Ref    string `flag:"ref" usage:"the ref as given (branch, tag or commit)"`
	Commit string `flag:"commit" usage:"the commit checked out (default: git rev-parse HEAD in --dir)"`
	Runner string `flag:"runner" usage:"the runner label"`
	Round  int    `flag:"round" usage:"round of a sequential experiment (0: a single sweep)"`
	Rounds int    `flag:"rounds" usage:"planned rounds of the sequential experiment (0: a single sweep)"`
	// Dir is the checkout whose HEAD commit is recorded ("" = the current directory).
	Dir string `flag:"dir" usage:"checkout whose HEAD is recorded (default: the current directory)"`
}

// Info is the ref.json the options describe.
func (o RefInfoOptions) Info() refinfo.Info {
	return refinfo.Info{Name: o.Name, Ref: o.Ref, Commit: o.Commit, Runner: o.Runner, Round: o.Round, Rounds: o.Rounds}
}

// RunRefInfo is `debugflow-step ref-info`: it records which ref (and commit) this job of an
// experiment workflow measured, so the report can group artifact folders by ref and runner.
func RunRefInfo(ctx context.Context, env *Env, opts RefInfoOptions) error {
	r := opts.Info()
	if err := r.Validate(); err != nil {
		return usagef("%v", err)
	}
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

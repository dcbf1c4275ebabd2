// Package experimentgh is the experiment workflow on GitHub as debugflow experiment and
// debugflow bisect dispatch it: its file and inputs as generated, and the refrun.GitHub runner
// that dispatches it, checked before anything is sent.
package experimentgh

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/limits"
	"github.com/debugflow/debugflow/internal/runner/refrun"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/version"
)

// Options are the GitHub flags of experiment and bisect.
type Options struct {
	Repo     ghrun.RepoFlags
	Ref      string
	Interval time.Duration
}

// Runner connects to the repository and describes the experiment workflow.
func Runner(ctx context.Context, f *ghrun.Env, o Options, s *spec.Spec, log io.Writer) (*refrun.GitHub, error) {
	if o.Interval <= 0 {
		return nil, &exitcode.Error{Code: cmdutil.ExitUsage, Err: fmt.Errorf("--interval must be positive, got %s", o.Interval)}
	}
	wf, err := DispatchWorkflow(s)
	if err != nil {
		return nil, err
	}
	repo, client, err := f.Connect(ctx, o.Repo, log)
	if err != nil {
		return nil, err
	}
	ref := o.Ref
	if ref == "" {
		if ref, err = f.GitBranch(ctx); err != nil {
			if s.Workflow.Branch == "" {
				return nil, &exitcode.Error{Code: cmdutil.ExitUsage, Err: fmt.Errorf("no --ref and %v: pass --ref BRANCH", err)}
			}
			ref = s.Workflow.Branch
		}
	}
	// The experiment workflow is a second file: say it is missing before anything is sent,
	// here when ref is the current branch, and at ref on GitHub when the API shows the file.
	if branch, err := cmdutil.GitOutput(ctx, "symbolic-ref", "--short", "HEAD"); err == nil && branch == ref {
		if top, err := cmdutil.GitOutput(ctx, "rev-parse", "--show-toplevel"); err == nil {
			path := cmdutil.RelToCwd(filepath.Join(top, ".github", "workflows", wf.File))
			if !cmdutil.FileExists(path) {
				return nil, &exitcode.Error{Code: cmdutil.ExitFindings, Err: fmt.Errorf("%s is not here: write it with `debugflow experiment workflow -o %s`, commit and push it, then run the experiment again; nothing was dispatched", path, path)}
			}
		}
	}
	var names []string
	for _, in := range wf.Inputs {
		names = append(names, in.Name)
	}
	if err := client.CheckWorkflowAtRef(ctx, repo, wf, ref, names); err != nil {
		return nil, &exitcode.Error{Code: cmdutil.ExitFindings, Err: err}
	}
	return &refrun.GitHub{Client: client, Repo: repo, Workflow: wf, Ref: ref, Runners: s.Runners,
		Log: log, IsTTY: f.IsTTY, Interval: o.Interval}, nil
}

// DispatchWorkflow is the experiment workflow's file and inputs, as generated.
func DispatchWorkflow(s *spec.Spec) (ghrun.Workflow, error) {
	// Only the inputs are read: the step binary is resolved without building a bundle.
	resolved := *s
	if _, err := stepbin.Resolve(context.Background(), &resolved, stepbin.Options{Self: version.Get(), NoBuild: true, ExtraArchs: []string{spec.ArchX64}}); err != nil {
		return ghrun.Workflow{}, err
	}
	w, err := generate.ExperimentWorkflow(&resolved)
	if err != nil {
		return ghrun.Workflow{}, err
	}
	wf := ghrun.Workflow{File: generate.ExperimentFile(s)}
	ranges := map[string]*ghrun.IntRange{
		generate.ExperimentCountInput:  {Min: 1, Max: limits.MaxRepeatCount, Why: "the pytest-repeat count"},
		generate.ExperimentRoundInput:  {Min: 0, Why: "the round"},
		generate.ExperimentRoundsInput: {Min: 0, Why: "the planned rounds"},
	}
	for _, in := range w.On.WorkflowDispatch.Inputs {
		wf.Inputs = append(wf.Inputs, ghrun.InputDef{Name: in.Name, Type: ghrun.InputType(in.Type), Required: in.Required,
			Default: in.Default.String(), Options: in.Options, Description: in.Description, Range: ranges[in.Name]})
	}
	return wf, nil
}

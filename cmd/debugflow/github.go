package main

import (
	"context"
	"io"

	"github.com/debugflow/debugflow/ghrun"
	"github.com/debugflow/debugflow/report"
	"github.com/debugflow/debugflow/spec"
	"github.com/spf13/cobra"
)

// addGitHubCmds wires dispatch, watch and download to the spec and the report.
func addGitHubCmds(root *cobra.Command, specPath *string, stdout, stderr io.Writer) {
	f := ghrun.NewFactory(
		func() (ghrun.Workflow, error) {
			s, _, err := loadSpec(*specPath)
			if err != nil {
				return ghrun.Workflow{}, err
			}
			return dispatchWorkflow(s), nil
		},
		func(dir string, w io.Writer) error {
			v, err := report.Load(dir)
			if err != nil {
				return err
			}
			return v.WriteText(w, false)
		},
	)
	f.Stdout, f.Stderr = stdout, stderr
	// Without --ref, dispatch uses the current branch; on a detached HEAD (a CI checkout, say)
	// the spec's debug branch is the next best answer.
	gitBranch := f.GitBranch
	f.GitBranch = func(ctx context.Context) (string, error) {
		branch, err := gitBranch(ctx)
		if err == nil {
			return branch, nil
		}
		if s, _, serr := loadSpec(*specPath); serr == nil && s.Workflow.Branch != "" {
			return s.Workflow.Branch, nil
		}
		return "", err
	}
	root.AddCommand(ghrun.NewCmdDispatch(f), ghrun.NewCmdWatch(f), ghrun.NewCmdDownload(f))
}

// dispatchWorkflow is what `debugflow dispatch` needs to know of the generated workflow: its
// file and its inputs, including the dispatch_id the generator adds.
func dispatchWorkflow(s *spec.Spec) ghrun.Workflow {
	wf := ghrun.Workflow{File: s.Workflow.File}
	// The steps accept narrower numbers than GitHub's "number": say so before dispatching,
	// not after the build.
	ranges := map[string]*ghrun.IntRange{}
	if name := s.Reproducer.CountInput; name != "" {
		ranges[name] = &ghrun.IntRange{Min: 1, Why: "the pytest-repeat count"}
	}
	if name := s.Tmate.TimeoutInput; name != "" {
		ranges[name] = &ghrun.IntRange{Min: 1, Max: spec.MaxTmateMinutes, Why: "the tmate timeout in minutes"}
	}
	for _, in := range s.Inputs {
		wf.Inputs = append(wf.Inputs, ghrun.InputDef{
			Name: in.Name, Type: ghrun.InputType(in.Type), Required: in.Required,
			Default: in.Default, Options: in.Options, Description: in.Description, Range: ranges[in.Name],
		})
	}
	if s.Triggers.WorkflowDispatch {
		wf.Inputs = append(wf.Inputs, ghrun.InputDef{Name: spec.DispatchIDInput, Type: ghrun.InputString,
			Description: "Set by debugflow dispatch to find this run"})
	}
	return wf
}

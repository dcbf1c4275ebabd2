package main

import (
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
	root.AddCommand(ghrun.NewCmdDispatch(f), ghrun.NewCmdWatch(f), ghrun.NewCmdDownload(f))
}

// dispatchWorkflow is what `debugflow dispatch` needs to know of the generated workflow: its
// file and its inputs, including the dispatch_id the generator adds.
func dispatchWorkflow(s *spec.Spec) ghrun.Workflow {
	wf := ghrun.Workflow{File: s.Workflow.File}
	for _, in := range s.Inputs {
		wf.Inputs = append(wf.Inputs, ghrun.InputDef{
			Name: in.Name, Type: ghrun.InputType(in.Type), Required: in.Required,
			Default: in.Default, Options: in.Options, Description: in.Description,
		})
	}
	if s.Triggers.WorkflowDispatch {
		wf.Inputs = append(wf.Inputs, ghrun.InputDef{Name: spec.DispatchIDInput, Type: ghrun.InputString,
			Description: "Set by debugflow dispatch to find this run"})
	}
	return wf
}

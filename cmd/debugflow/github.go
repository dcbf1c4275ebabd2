package main

import (
	"context"
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/limits"
	"github.com/debugflow/debugflow/internal/runner/refrun"
	"github.com/debugflow/debugflow/internal/spec"
)

// wireGitHub fills the GitHub side of the factory from the spec and the report: the debug
// workflow dispatch checks inputs against, the verdict download prints, the branch dispatch
// runs on, and the checks made here before a dispatch. It runs before any command is built.
func wireGitHub(f *ghcmd.Factory, sp *specsource.Source) {
	f.Workflow = func() (ghrun.Workflow, error) {
		s, _, err := sp.Load()
		if err != nil {
			return ghrun.Workflow{}, err
		}
		return dispatchWorkflow(s), nil
	}
	f.Report = func(dir string, w io.Writer) error {
		v, err := report.Load(dir)
		if err != nil {
			return err
		}
		return v.WriteText(w, false)
	}
	// Without --ref, dispatch uses the current branch; on a detached HEAD (a CI checkout, say)
	// the spec's debug branch is the next best answer.
	gitBranch := f.GitBranch
	f.GitBranch = func(ctx context.Context) (string, error) {
		branch, err := gitBranch(ctx)
		if err == nil {
			return branch, nil
		}
		if s, _, serr := sp.Load(); serr == nil && s.Workflow.Branch != "" {
			return s.Workflow.Branch, nil
		}
		return "", err
	}
	f.Preflight = func(ctx context.Context, ref string, _ bool) error {
		s, specName, err := sp.Load()
		if err != nil {
			return err
		}
		return dispatchPreflight(ctx, s, specName, ref, f.Stderr())
	}
}

// dispatchWorkflow is what `debugflow dispatch` needs to know of the generated workflow: its
// file and its inputs, including the dispatch_id the generator adds.
func dispatchWorkflow(s *spec.Spec) ghrun.Workflow {
	wf := ghrun.Workflow{File: s.Workflow.File}
	// The steps accept narrower numbers than GitHub's "number": say so before dispatching,
	// not after the build.
	ranges := map[string]*ghrun.IntRange{}
	if name := s.Reproducer.CountInput; name != "" {
		ranges[name] = &ghrun.IntRange{Min: 1, Max: limits.MaxRepeatCount, Why: "the pytest-repeat count"}
	}
	if name := s.Tmate.TimeoutInput; name != "" {
		// The runner's gate refuses more than tmate.max_minutes, after the queue and the build.
		most, why := spec.MaxTmateMinutes, "the tmate timeout in minutes"
		if s.Tmate.MaxMinutes > 0 {
			most, why = s.Tmate.MaxMinutes, "the tmate timeout in minutes, at most the spec's tmate.max_minutes"
		}
		ranges[name] = &ghrun.IntRange{Min: 1, Max: most, Why: why}
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

// dispatchPreflight checks here what would otherwise fail on GitHub, before anything is sent:
// for a dispatch of the current branch (ref), the workflow at the top of the work tree exists, was
// generated from this spec, declares every input of the spec, is committed with the spec, and
// the branch is pushed to its upstream. Outside a git work tree, or with --ref naming another
// branch, the local files say nothing about what GitHub runs: nothing is checked.
func dispatchPreflight(ctx context.Context, s *spec.Spec, specName, ref string, stderr io.Writer) error {
	branch, err := cmdutil.GitOutput(ctx, "symbolic-ref", "--short", "HEAD")
	if err != nil || branch != ref {
		return nil
	}
	top, err := cmdutil.GitOutput(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil
	}
	rel := filepath.Join(".github", "workflows", s.Workflow.File)
	path := cmdutil.RelToCwd(filepath.Join(top, rel))
	refuse := func(format string, args ...any) error {
		return &exitcode.Error{Code: cmdutil.ExitFindings, Err: fmt.Errorf(format+"; nothing was dispatched", args...)}
	}
	regenerate := fmt.Sprintf("debugflow generate %s-o %s", specsource.Flag(specName), textsafe.ShellWord(path))
	data, err := cmdutil.ReadBounded(path, cmdutil.MaxFileBytes)
	if err != nil {
		return refuse("%s (workflow.file of %s) is not here: generate it (%s), commit and push it", path, specName, regenerate)
	}
	want := specsource.HeaderName(specName)
	if want == "" {
		want = specsource.EmbeddedName
	}
	if got, ok := specsource.HeaderSpec(data); ok && got != want {
		return refuse("%s was generated from %s, but this dispatch reads %s (inputs and defaults may differ): pass --spec %s, or regenerate it (%s --force)",
			path, got, want, specsource.HeaderPath(got), regenerate)
	}
	if declared, dispatchable, ok := ghrun.WorkflowDispatchInputs(data); ok {
		var missing []string
		for _, in := range dispatchWorkflow(s).Inputs {
			if dispatchable && !slices.Contains(declared, in.Name) {
				missing = append(missing, in.Name)
			}
		}
		switch {
		case !dispatchable:
			return refuse("%s has no workflow_dispatch trigger: regenerate it (%s), commit and push it", path, regenerate)
		case len(missing) > 0:
			return refuse("the spec %s declares the input(s) %s that %s lacks: regenerate it (%s), commit and push it",
				specName, strings.Join(missing, ", "), path, regenerate)
		}
	}
	files := []string{path}
	if specName != specsource.EmbeddedName {
		files = append(files, specName)
	}
	if st, err := cmdutil.GitOutput(ctx, append([]string{"status", "--porcelain", "--"}, files...)...); err == nil && st != "" {
		return refuse("not committed (GitHub runs what is pushed):\n%s\ncommit and push them", st)
	}
	upstream, err := cmdutil.GitOutput(ctx, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
	if err != nil {
		return refuse("branch %s has no upstream, so GitHub has not seen it: push it with git push -u origin HEAD", branch)
	}
	if n, err := cmdutil.GitOutput(ctx, "rev-list", "--count", "@{upstream}..HEAD"); err == nil && n != "0" {
		return refuse("branch %s has %s commit(s) that %s lacks: GitHub would run the older workflow; push them with git push", branch, n, upstream)
	}
	// Edited tests or sources are no reason to refuse (the run may be meant for the pushed
	// code), but the runner never sees them: say so before a GPU job is spent.
	if files, err := refrun.UncommittedChanges(ctx, top); err == nil && len(files) > 0 {
		const show = 5
		list := strings.Join(files[:min(len(files), show)], ", ")
		if len(files) > show {
			list += fmt.Sprintf(", ... (%d more)", len(files)-show)
		}
		fmt.Fprintf(stderr, "debugflow: warning: uncommitted changes to %d tracked file(s) (%s) are not on GitHub: the run tests %s as pushed; commit and push them first to test them\n",
			len(files), textsafe.Visible(list), branch)
	}
	return nil
}

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	disablecmd "github.com/debugflow/debugflow/cmd/debugflow/disable"
	enablecmd "github.com/debugflow/debugflow/cmd/debugflow/enable"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/stepbundle"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/siblings"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/spf13/cobra"
)

// addSiblingCmds wires disable and enable; disable always keeps the spec's own workflow, and
// enable leaves a branch that is safe to merge: the workflows back, and nothing debugflow added.
func addSiblingCmds(root *cobra.Command, sp *specsource.Source, f *factory.Factory) {
	disable := disablecmd.NewCmdDisable(f, nil)
	disable.PreRunE = func(cmd *cobra.Command, args []string) error {
		if err := workflowsDirAtTop(cmd); err != nil {
			return err
		}
		s, _, err := sp.Load()
		if err != nil {
			return err
		}
		// --keep is a string array: Set appends to the user's globs.
		if err := cmd.Flags().Set("keep", s.Workflow.File); err != nil {
			return fmt.Errorf("keeping %s: %w", s.Workflow.File, err)
		}
		return nil
	}
	// The spec's workflow is kept without --keep: the examples name it as generate writes it.
	disable.Example = `  # keep only the debug workflow, and commit it with the renames
  debugflow disable
  git add .github/workflows/debug_cuda_repro.yml && git commit -m "debug branch: only the debug workflow runs"

  # see what would happen
  debugflow disable --dry-run

  # what enable will rename back
  cat .github/workflows/` + siblings.ManifestName + `

  # keep another workflow running too, or a workflows directory elsewhere
  debugflow disable --keep 'lint-*.yml'
  debugflow disable --dir path/to/repo/.github/workflows`
	disable.Long += "\n\nThe workflow of the spec (--spec, else debugflow.yaml here or at the top of the git work tree, else the default) is always kept. " +
		"Without --dir, the workflows directory is the one at the top of the git work tree, from any folder of it."
	enable := enablecmd.NewCmdEnable(f, nil)
	enableRemovesAdded(enable, sp)
	root.AddCommand(disable, enable)
}

// workflowsDirAtTop points --dir, when not given, at .github/workflows at the top of the git
// work tree holding the current folder: GitHub runs no other, and disable or enable run from
// tests/ would otherwise find no workflows at all.
func workflowsDirAtTop(cmd *cobra.Command) error {
	if cmd.Flags().Changed("dir") {
		return nil
	}
	dir := siblings.DefaultDir
	if top := stepbin.WorkTreeTop(); top != "" {
		dir = cmdutil.RelToCwd(filepath.Join(top, siblings.DefaultDir))
		if err := cmd.Flags().Set("dir", dir); err != nil {
			return err
		}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return cmdutil.UsageErrorf("%s is not here: run %s at the top of the repository or anywhere in its git work tree, or pass --dir DIR", dir, cmd.CommandPath())
	}
	return nil
}

// enableRemovesAdded makes `debugflow enable` delete what the debug branch added, after the
// workflows are renamed back: the debug workflow and the experiment workflow (only files whose
// header says debugflow generated them), the spec at the top of the work tree, and the bundled
// debugflow-step. Merged back, a debug workflow would start a GPU job on every pull request;
// --keep leaves them. The bundle's folder is the spec's: a --spec that does not load stops
// enable before anything is renamed, while a broken debugflow.yaml only leaves the default
// folder (and the debug workflow's default name), so a branch can always be restored.
func enableRemovesAdded(enable *cobra.Command, sp *specsource.Source) {
	var s *spec.Spec
	var specFile string
	keep := false
	enable.Flags().BoolVar(&keep, "keep", false, "leave the debug workflow, the spec and the bundle in place (only the workflows are renamed back)")
	enable.PreRunE = func(cmd *cobra.Command, args []string) error {
		if err := workflowsDirAtTop(cmd); err != nil {
			return err
		}
		specFile = sp.Find()
		loaded, _, err := sp.Load()
		switch {
		case err == nil:
			s = loaded
		case cmd.Flags().Changed("spec"):
			return err
		default:
			s = spec.Default()
			fmt.Fprintf(cmd.ErrOrStderr(), "note: %s does not load, so the debug workflow is looked for as %s and the bundle in %s (pass --spec)\n",
				specFile, s.Workflow.File, s.StepBinary.Dir)
		}
		return nil
	}
	enable.PostRunE = func(cmd *cobra.Command, args []string) error {
		workflows, _ := cmd.Flags().GetString("dir")
		dryRun, _ := cmd.Flags().GetBool("dry-run")
		out := cmd.OutOrStdout()
		if keep {
			fmt.Fprintln(out, "kept the debug workflow, the spec and the bundle (--keep): the branch still runs the debug job; do not merge it as is")
			return nil
		}
		var files []string
		for _, name := range []string{s.Workflow.File, generate.ExperimentFile(s)} {
			p := filepath.Join(workflows, name)
			if data, err := cmdutil.ReadBounded(p, cmdutil.MaxFileBytes); err == nil && strings.HasPrefix(string(data), "# Code generated by debugflow") {
				files = append(files, p)
			}
		}
		if specFile != "" && filepath.Base(specFile) == spec.DefaultFile && cmdutil.SameFile(filepath.Dir(specFile), repoRootOf(workflows)) {
			files = append(files, specFile)
		} else if specFile != "" {
			fmt.Fprintf(out, "kept %s (not the debugflow.yaml at the top of the work tree): remove it yourself if the debug branch added it\n", specFile)
		}
		if err := removeAdded(files, dryRun, out); err != nil {
			return err
		}
		if err := stepbundle.Remove(stepbin.Root(filepath.Join(workflows, "x.yml")), s.StepBinary.Dir, dryRun, out); err != nil {
			return err
		}
		if !dryRun {
			fmt.Fprintln(out, "nothing debugflow added is left: commit, and the branch is safe to merge (`git restore --staged --worktree FILE` brings a file back before the commit)")
		}
		return nil
	}
	enable.Long += "\n\nThen, unless --keep, what the debug branch added is removed (with git rm --cached inside a git work tree): the debug workflow and its experiment workflow " +
		"(files with debugflow's \"Code generated\" header), debugflow.yaml at the top of the work tree, and the bundled debugflow-step (step_binary.dir). " +
		"After the commit, nothing of the debug session runs when the branch is merged."
}

// repoRootOf is the folder holding .github/workflows (dir), "." for the current one.
func repoRootOf(workflows string) string {
	root := stepbin.Root(filepath.Join(workflows, "x.yml"))
	if root == "" {
		return "."
	}
	return root
}

// removeAdded deletes files and, inside a git work tree, stages the removal of the tracked
// ones; dryRun only says what it would remove.
func removeAdded(files []string, dryRun bool, stdout io.Writer) error {
	for _, p := range files {
		if dryRun {
			fmt.Fprintf(stdout, "would remove %s\n", p)
			continue
		}
		tracked := exec.Command("git", "ls-files", "--error-unmatch", "--", p).Run() == nil
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("removing %s: %w", p, err)
		}
		how := ""
		if tracked {
			out, err := exec.Command("git", "rm", "--cached", "--quiet", "--", p).CombinedOutput()
			if err != nil {
				return fmt.Errorf("staging the removal of %s: %v: %s", p, err, strings.TrimSpace(string(out)))
			}
			how = " (git rm --cached)"
		}
		fmt.Fprintf(stdout, "removed %s%s\n", p, how)
	}
	return nil
}

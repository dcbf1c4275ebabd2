// Package generate is `debugflow generate`: the debug workflow of a spec, checked with
// actionlint and the audit before it is written, and the step binary it pins.
package generate

import (
	"context"
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/shelladvice"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/stepbundle"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/workflowcheck"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/atomicfile"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
)

// GenerateOptions are the flags of `debugflow generate`.
type GenerateOptions struct {
	Spec   *specsource.Source
	Output string
	Check  bool
	Force  bool
	Stdout io.Writer
	Stderr io.Writer // the step binary's delivery (stdout may be the workflow)
	Ctx    context.Context
}

// NewCmdGenerate returns `debugflow generate`; runF nil runs runGenerate.
func NewCmdGenerate(f *factory.Factory, sp *specsource.Source, runF func(*GenerateOptions) error) *cobra.Command {
	opts := &GenerateOptions{Stdout: f.Stdout()}
	cmd := &cobra.Command{
		Use:   "generate [--spec FILE] [-o FILE|-] [--check]",
		Short: "Write the debug workflow of a spec (validated with actionlint and the audit)",
		Long: `Generate the GitHub Actions workflow described by a spec. Without --spec it reads
debugflow.yaml here, else at the top of the git work tree, else the embedded default (the
reference CUDA T4 workflow), saying so on stderr unless --default-spec asks for it.

Before anything is written the workflow is checked with actionlint (runner labels of the spec
declared as self-hosted) and with 'debugflow audit'; any finding is printed and nothing is
written (exit 1). shellcheck, when installed, checks the spec's shell commands as advice on
stderr (warnings and errors; 'debugflow validate' lists every level), never a refusal.

A file that another spec generated (its header names the spec), or that debugflow did not
write, is not replaced without --force; under .github/workflows only the spec's workflow.file
is written (disable keeps, and dispatch runs, that name).

--check compares with the file given by -o (default .github/workflows/<workflow.file>) and
exits 1 with a unified diff when it is stale: use it in CI.

The runner gets debugflow-step, the same version as this debugflow (step_binary in the spec;
stderr says which way and why): a release build of debugflow pins its own release archive;
any other build bundles it, writing a static Linux binary built from debugflow's own source
next to the workflow (.github/debugflow/debugflow-step-linux-amd64, commit it too) and pinning
its SHA-256; --check then also compares the bundle on disk. The bundle is a go build (about a
minute on a cold build cache, then cached), run even for -o - since the workflow pins its
checksum. See docs/release.md.`,
		Example: `  # print the workflow of the current spec (the default one with --default-spec)
  debugflow generate
  # write it where GitHub finds it
  debugflow generate --spec debugflow.yaml -o .github/workflows/debug_cuda_repro.yml
  # fail CI when the committed workflow is out of date
  debugflow generate --spec examples/debugflow.yaml -o examples/debug_cuda_repro.yml --check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Spec = sp
			opts.Stderr, opts.Ctx = f.Stderr(), cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return runGenerate(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "-", "file to write, or - for stdout")
	cmd.Flags().BoolVar(&opts.Check, "check", false, "compare with the file on disk instead of writing; exit 1 with a diff when stale")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite a workflow generated from another spec, or not by debugflow")
	return cmd
}

func runGenerate(opts *GenerateOptions) error {
	s, specName, err := opts.Spec.Load()
	if err != nil {
		return err
	}
	out := opts.Output
	if opts.Check && out == "-" {
		out = filepath.Join(".github", "workflows", s.Workflow.File)
	}
	out = atWorkTreeTop(out, opts.Stderr)
	if err := checkOutputName(s, out, opts.Stderr); err != nil {
		return err
	}
	if !opts.Check && out != "-" && !opts.Force {
		if err := workflowcheck.CheckOverwrite(out, specName); err != nil {
			return err
		}
	}
	plan, err := stepbundle.Resolve(opts.Ctx, s, opts.Stderr)
	if err != nil {
		return err
	}
	data, err := renderChecked(s, specName, out, opts.Stdout)
	if err != nil {
		return err
	}
	if !opts.Check {
		shelladvice.Spec(s, specName, opts.Stderr, false)
	}
	switch {
	case opts.Check:
		stale := workflowcheck.CheckStale("generate", out, data, specName, opts.Stdout)
		if exitcode.Of(stale) == cmdutil.ExitUsage {
			return stale // the committed file cannot be read: nothing else to compare
		}
		if err := stepbundle.Finish(plan, out, true, opts.Stdout, opts.Stderr); err != nil {
			return err
		}
		return stale
	case out == "-":
		if _, err := opts.Stdout.Write(data); err != nil {
			return err
		}
		return stepbundle.Finish(plan, out, false, opts.Stdout, opts.Stderr)
	default:
		if err := atomicfile.Write(out, data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(opts.Stdout, "wrote %s from %s\n", out, specName)
		return stepbundle.Finish(plan, out, false, opts.Stdout, opts.Stderr)
	}
}

// atWorkTreeTop places a relative output path that starts with .github at the top of the git
// work tree when the current directory is a subfolder of it: GitHub reads workflows only from
// the top's .github/workflows, so that is the folder meant, as for the spec (found there too).
// Other paths are left as they are. It says so on stderr when it moves one.
func atWorkTreeTop(out string, stderr io.Writer) string {
	if out == "-" || filepath.IsAbs(out) {
		return out
	}
	clean := filepath.Clean(out)
	first, _, _ := strings.Cut(filepath.ToSlash(clean), "/")
	if first != ".github" {
		return out
	}
	top := stepbin.WorkTreeTop()
	if top == "" {
		return out
	}
	moved := filepath.Join(top, clean)
	fmt.Fprintf(stderr, "debugflow: %s is at the top of the work tree: %s\n", out, moved)
	return moved
}

// checkOutputName refuses a workflow written under .github/workflows by a name other than the
// spec's workflow.file: disable keeps, and dispatch runs, workflow.file, so the written file
// would be parked and another dispatched. Elsewhere (examples/, a review copy) any name goes; a
// workflows folder that is not the one at the top of the git work tree is only noted.
func checkOutputName(s *spec.Spec, out string, stderr io.Writer) error {
	if out == "-" {
		return nil
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		// Found before the step binary's build (a minute on a cold cache), not after it.
		return cmdutil.UsageErrorf("-o %s is a folder: give the workflow's file name, e.g. -o %s", out,
			textsafe.ShellWord(filepath.Join(out, s.Workflow.File)))
	}
	dir := filepath.Dir(filepath.Clean(out))
	if filepath.Base(dir) != "workflows" || filepath.Base(filepath.Dir(dir)) != ".github" {
		return nil
	}
	if name := filepath.Base(out); name != s.Workflow.File {
		return cmdutil.UsageErrorf("-o %s: the spec's workflow.file is %s, which disable keeps and dispatch runs: write -o %s, or set workflow.file: %s in the spec",
			out, s.Workflow.File, filepath.Join(dir, s.Workflow.File), name)
	}
	if top := stepbin.WorkTreeTop(); top != "" && stderr != nil && !cmdutil.SameFile(filepath.Dir(dir), top) {
		fmt.Fprintf(stderr, "debugflow: note: %s is not the workflows folder at the top of the git work tree (%s): GitHub runs only %s\n",
			dir, top, cmdutil.RelToCwd(filepath.Join(top, ".github", "workflows")))
	}
	return nil
}

// renderChecked generates the workflow and refuses it when actionlint or the audit find
// anything; the findings go to w.
func renderChecked(s *spec.Spec, specName, outPath string, w io.Writer) ([]byte, error) {
	// "" makes the header say "from the embedded default spec"; both names are from the top of
	// the work tree, so the workflow is the same bytes whichever folder generate ran in.
	data, err := generate.GenerateTo(s, specsource.HeaderName(specName), specsource.HeaderOutput(outPath))
	if err != nil {
		return nil, fmt.Errorf("generating the workflow: %w", err)
	}
	name := outPath
	if name == "-" {
		name = s.Workflow.File
	}
	n, err := workflowcheck.Report(name, data, s.Runners, w, generate.AuditOptions(s)...)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		return nil, &exitcode.Error{Code: cmdutil.ExitFindings, Err: fmt.Errorf("refusing to write a workflow with %d finding(s); this is a debugflow bug or a spec value the checks reject", n)}
	}
	return data, nil
}

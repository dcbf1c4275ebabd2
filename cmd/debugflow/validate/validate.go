// Package validate is `debugflow validate`: specs loaded strictly and workflows checked with
// actionlint and the audit, shellcheck as advice.
package validate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/shelladvice"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/workflowcheck"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/audit"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/version"
)

// ValidateOptions are the arguments and flags of `debugflow validate`.
type ValidateOptions struct {
	Files     []string
	Spec      *specsource.Source
	SpecGiven bool // --spec was given: a spec that does not load is an error
	Labels    []string
	Stdout    io.Writer
}

// NewCmdValidate returns `debugflow validate`; runF nil runs runValidate.
func NewCmdValidate(f *factory.Factory, sp *specsource.Source, runF func(*ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{Stdout: f.Stdout()}
	cmd := &cobra.Command{
		Use:   "validate [--spec FILE] [FILE...]",
		Short: "Check specs and workflows: strict spec load, actionlint and the security audit",
		Long: `Check each FILE; without one, check the current spec (--spec, else ./debugflow.yaml).

A spec is loaded strictly: every unknown key (with the nearest known one), wrong type,
lossy number and invalid value is listed with file:line:column and the field path (an
input default that disagrees with the spec number it stands for, such as reproducer.count,
is one: that number is the input's default). Its workflow is then generated and checked with
actionlint and the audit.

A workflow (a file with jobs:) is checked with actionlint and the audit. Self-hosted runner
labels are accepted when they are the runners of the spec named in the workflow's "Code
generated" header, given with --runner-label, or, for a workflow without that header, the
runners of the current spec.

Shell commands of a spec are checked with shellcheck when it is installed, as advice at the
spec's line and field (never counted: the result does not depend on the tools installed).

Exit status: 0 clean, 1 findings, 2 a file that cannot be read, is not YAML (a syntax error),
or a --spec that does not load.`,
		Example: `  # the current spec (debugflow.yaml here, else at the top of the git work tree)
  debugflow validate
  # a spec and a workflow
  debugflow validate specs/t4.yaml .github/workflows/debug_cuda_repro.yml
  # hand-written workflows on self-hosted runners
  debugflow validate --runner-label gpu-a100 .github/workflows/*.yml`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			opts.Spec = sp
			opts.SpecGiven = cmd.Flags().Changed("spec")
			if runF != nil {
				return runF(opts)
			}
			return runValidate(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Labels, "runner-label", nil, "accept this self-hosted runner `LABEL` (repeatable)")
	return cmd
}

func runValidate(ctx context.Context, opts *ValidateOptions) error {
	files := opts.Files
	if len(files) == 0 {
		path := opts.Spec.Find()
		if path == "" {
			return cmdutil.UsageErrorf("nothing to validate: no %s here nor at the top of the git work tree (`debugflow init` writes one; or name the files: debugflow validate FILE...)", spec.DefaultFile)
		}
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return cmdutil.UsageErrorf("nothing to validate: %s does not exist (`debugflow init` writes one; or name the files: debugflow validate FILE...)", path)
		}
		files = []string{path}
	}
	v := &validation{ctx: ctx, opts: opts}
	for _, path := range files {
		if err := v.file(path); err != nil {
			return err
		}
	}
	if v.unreadable > 0 {
		fmt.Fprintf(opts.Stdout, "%d finding(s)\n", v.findings)
		return &exitcode.Error{Code: cmdutil.ExitUsage, Err: fmt.Errorf("%d file(s) could not be read as YAML (see above)", v.unreadable)}
	}
	if v.findings > 0 {
		fmt.Fprintf(opts.Stdout, "%d finding(s)\n", v.findings)
		return cmdutil.ErrFindings
	}
	fmt.Fprintf(opts.Stdout, "%d file(s) OK\n", len(files))
	return nil
}

// validation is one `debugflow validate` run.
type validation struct {
	ctx           context.Context // Ctrl-C ends the check of a workflow at once
	opts          *ValidateOptions
	findings      int
	unreadable    int      // files that are not YAML a spec can be read from: exit 2
	current       []string // runner labels of the current spec, once loaded
	currentLoaded bool
}

// file checks one spec or workflow and prints what it finds.
func (v *validation) file(path string) error {
	w := v.opts.Stdout
	data, err := cmdutil.ReadBounded(path, cmdutil.MaxFileBytes)
	if err != nil {
		return &exitcode.Error{Code: cmdutil.ExitUsage, Err: err}
	}
	if looksLikeWorkflow(data) {
		labels := append([]string{}, v.opts.Labels...)
		var auditOpts []audit.Option
		if header, ok := specsource.HeaderSpecOf(data); ok {
			labels = append(labels, header.Runners...)
			auditOpts = generate.AuditOptions(header)
		} else {
			current, err := v.currentLabels()
			if err != nil {
				return err
			}
			labels = append(labels, current...)
		}
		lines, err := cmdutil.Interruptible(v.ctx, func() ([]string, error) {
			return workflowcheck.Findings(path, data, labels, auditOpts...)
		})
		if v.ctx.Err() != nil {
			return err
		}
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
		v.findings += len(lines)
		if err == nil {
			for _, l := range shelladvice.Workflow(path, data, labels) {
				fmt.Fprintln(w, l)
			}
		}
		return err
	}
	s, err := spec.Parse(path, data)
	if err != nil {
		var errs spec.Errors
		if !errors.As(err, &errs) {
			return err
		}
		for _, e := range errs {
			fmt.Fprintln(w, e.Error())
			if e.Syntax {
				v.unreadable++
			}
		}
		v.findings += len(errs)
		return nil
	}
	// Lint the workflow as generate would write it; a bundle is not built for that.
	if _, err := stepbin.Resolve(context.Background(), s, stepbin.Options{Self: version.Get(), NoBuild: true}); err != nil {
		fmt.Fprintf(w, "%s: %v\n", path, err)
		v.findings++
		return nil
	}
	out, err := generate.Generate(s, path)
	if err != nil {
		return fmt.Errorf("generating the workflow of %s: %w", path, err)
	}
	n, err := workflowcheck.Report(path+" => "+s.Workflow.File, out, s.Runners, w, generate.AuditOptions(s)...)
	v.findings += n
	shelladvice.Spec(s, path, w, true)
	return err
}

// currentLabels returns the runners of the current spec, for a workflow that names none. A
// --spec that does not load is an error; a ./debugflow.yaml that does not load is only noted,
// since the files being validated may have nothing to do with it.
func (v *validation) currentLabels() ([]string, error) {
	if v.currentLoaded {
		return v.current, nil
	}
	v.currentLoaded = true
	s, _, err := v.opts.Spec.Load()
	switch {
	case err != nil && v.opts.SpecGiven:
		return nil, err
	case err != nil:
		fmt.Fprintf(v.opts.Stdout, "note: %s does not load, so its runner labels are not declared (`debugflow validate` says why)\n", spec.DefaultFile)
		return nil, nil
	}
	v.current = s.Runners
	return v.current, nil
}

// looksLikeWorkflow tells a workflow (top-level jobs:) from a spec.
func looksLikeWorkflow(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "jobs:") {
			return true
		}
	}
	return false
}

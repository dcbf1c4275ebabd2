package main

import (
	"github.com/debugflow/debugflow/cmd/internal/factory"

	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/atomicfile"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/debugflow/debugflow/internal/generate"
	"github.com/debugflow/debugflow/internal/generate/audit"
	"github.com/debugflow/debugflow/internal/generate/lint"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/version"
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/internal/exitcode"
)

// embeddedSpecName is how the embedded default spec is named in headers and messages.
const embeddedSpecName = "the embedded default spec"

// generateOptions are the flags of `debugflow generate`.
type generateOptions struct {
	Spec   *specSource
	Output string
	Check  bool
	Force  bool
	Stdout io.Writer
	Stderr io.Writer // the step binary's delivery (stdout may be the workflow)
	Ctx    context.Context
}

// newGenerateCmd returns `debugflow generate`; runF nil runs runGenerate.
func newGenerateCmd(f *factory.Factory, sp *specSource, runF func(*generateOptions) error) *cobra.Command {
	opts := &generateOptions{Stdout: f.Stdout()}
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

func runGenerate(opts *generateOptions) error {
	s, specName, err := opts.Spec.load()
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
		if err := checkOverwrite(out, specName); err != nil {
			return err
		}
	}
	plan, err := resolveStepBinary(opts.Ctx, s, opts.Stderr)
	if err != nil {
		return err
	}
	data, err := renderChecked(s, specName, out, opts.Stdout)
	if err != nil {
		return err
	}
	if !opts.Check {
		specShellAdvice(s, specName, opts.Stderr, false)
	}
	switch {
	case opts.Check:
		stale := checkStale("generate", out, data, specName, opts.Stdout)
		if exitcode.Of(stale) == exitUsage {
			return stale // the committed file cannot be read: nothing else to compare
		}
		if err := finishBundle(plan, out, true, opts.Stdout, opts.Stderr); err != nil {
			return err
		}
		return stale
	case out == "-":
		if _, err := opts.Stdout.Write(data); err != nil {
			return err
		}
		return finishBundle(plan, out, false, opts.Stdout, opts.Stderr)
	default:
		if err := atomicfile.Write(out, data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(opts.Stdout, "wrote %s from %s\n", out, specName)
		return finishBundle(plan, out, false, opts.Stdout, opts.Stderr)
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
	dir := filepath.Dir(filepath.Clean(out))
	if filepath.Base(dir) != "workflows" || filepath.Base(filepath.Dir(dir)) != ".github" {
		return nil
	}
	if name := filepath.Base(out); name != s.Workflow.File {
		return usageErrorf("-o %s: the spec's workflow.file is %s, which disable keeps and dispatch runs: write -o %s, or set workflow.file: %s in the spec",
			out, s.Workflow.File, filepath.Join(dir, s.Workflow.File), name)
	}
	if top := stepbin.WorkTreeTop(); top != "" && stderr != nil && !sameFile(filepath.Dir(dir), top) {
		fmt.Fprintf(stderr, "debugflow: note: %s is not the workflows folder at the top of the git work tree (%s): GitHub runs only %s\n",
			dir, top, relToCwd(filepath.Join(top, ".github", "workflows")))
	}
	return nil
}

// checkOverwrite refuses to replace a file that another spec generated (its header names the
// spec), or that debugflow did not generate: a workflow from the embedded default must not
// silently replace the one of the user's spec. --force overwrites.
func checkOverwrite(out, specName string) error {
	data, err := readBounded(out, maxValidateBytes)
	if err != nil {
		return nil // nothing there (or not a regular file, written in place as before)
	}
	want := headerName(specName)
	if want == "" {
		want = embeddedSpecName
	}
	got, ok := headerSpec(data)
	switch {
	case !ok:
		return &exitcode.Error{Code: exitFindings, Err: fmt.Errorf("%s exists and was not generated by debugflow (no \"Code generated\" header): pass --force to overwrite it", out)}
	case got != want:
		again := "--spec " + headerPath(got)
		if got == embeddedSpecName {
			again = "--default-spec"
		}
		return &exitcode.Error{Code: exitFindings, Err: fmt.Errorf("%s was generated from %s, not from %s: regenerate it with %s, or pass --force to replace it",
			out, got, want, again)}
	}
	return nil
}

// loadSpec loads the spec file at path (see specSource for how the spec is found) and names it.
// Any failure to load the spec exits 2.
func loadSpec(path string) (*spec.Spec, string, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, "", &exitcode.Error{Code: exitUsage, Err: fmt.Errorf("spec %w (`debugflow init --output %s` writes a commented one)", err, path)}
	}
	s, err := spec.Load(path)
	if err != nil {
		var errs spec.Errors
		if errors.As(err, &errs) {
			return nil, "", &exitcode.Error{Code: exitUsage, Err: fmt.Errorf("invalid spec:\n%w\n(fix the lines above; `debugflow init --output FILE` writes a commented reference spec)", err)}
		}
		return nil, "", &exitcode.Error{Code: exitUsage, Err: err}
	}
	return s, path, nil
}

// renderChecked generates the workflow and refuses it when actionlint or the audit find
// anything; the findings go to w.
func renderChecked(s *spec.Spec, specName, outPath string, w io.Writer) ([]byte, error) {
	// "" makes the header say "from the embedded default spec"; both names are from the top of
	// the work tree, so the workflow is the same bytes whichever folder generate ran in.
	data, err := generate.GenerateTo(s, headerName(specName), headerOutput(outPath))
	if err != nil {
		return nil, fmt.Errorf("generating the workflow: %w", err)
	}
	name := outPath
	if name == "-" {
		name = s.Workflow.File
	}
	n, err := reportFindings(name, data, s.Runners, w, generate.AuditOptions(s)...)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		return nil, &exitcode.Error{Code: exitFindings, Err: fmt.Errorf("refusing to write a workflow with %d finding(s); this is a debugflow bug or a spec value the checks reject", n)}
	}
	return data, nil
}

// reportFindings runs actionlint and the audit on one workflow and prints what they find.
// labels are self-hosted runner labels for both.
func reportFindings(name string, data []byte, labels []string, w io.Writer, auditOpts ...audit.Option) (int, error) {
	lines, err := workflowFindings(name, data, labels, auditOpts...)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return len(lines), err
}

// workflowFindings runs actionlint and the audit on one workflow and returns their findings,
// one line each.
func workflowFindings(name string, data []byte, labels []string, auditOpts ...audit.Option) ([]string, error) {
	// Without shellcheck: the outcome must not depend on whether it is installed (shelladvice.go).
	lf, err := lint.Workflow(name, data, lint.Options{SelfHostedLabels: labels, Shellcheck: lint.DisableShellcheck})
	if err != nil {
		return nil, fmt.Errorf("actionlint on %s: %w", name, err)
	}
	var lines []string
	for _, f := range lf {
		msg := f.String()
		if f.Kind == "runner-label" {
			// actionlint suggests its own config file; with debugflow the labels come from the spec.
			msg += " (a self-hosted runner? pass --runner-label LABEL, or --spec with the spec that lists it)"
		}
		lines = append(lines, msg)
	}
	af, err := audit.Workflow(name, data, append(auditOpts, audit.WithSelfHostedLabels(labels...))...)
	if err != nil {
		return lines, fmt.Errorf("audit of %s: %w", name, err)
	}
	for _, f := range af {
		lines = append(lines, f.String())
	}
	return lines, nil
}

// interruptible runs work in a goroutine and returns its result, or ctx's error as soon as ctx
// is cancelled: parsing and checking a large or hostile file cannot be interrupted from inside,
// and Ctrl-C must still end the command at once (the process exits; the work goes with it).
func interruptible[T any](ctx context.Context, work func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := work()
		done <- result{v, err}
	}()
	select {
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("interrupted: %w", ctx.Err())
	case r := <-done:
		return r.v, r.err
	}
}

// checkStale compares the file at path with want; command is the debugflow command that
// writes it ("generate", "experiment workflow"), named in the hint.
func checkStale(command, path string, want []byte, specName string, w io.Writer) error {
	// The file is whatever the repository holds: only a regular file is read (a FIFO would
	// block, a link to /dev/zero fill the memory), and within a bound.
	got, err := readBounded(path, maxValidateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(w, "%s does not exist; create it with: debugflow %s %s-o %s\n", path, command, specFlag(specName), path)
		return errFindings
	}
	if err != nil {
		return &exitcode.Error{Code: exitUsage, Err: err}
	}
	if bytes.Equal(got, want) {
		fmt.Fprintf(w, "%s is up to date with %s\n", path, specName)
		return nil
	}
	fmt.Fprint(w, unifiedDiff(path+" (on disk)", path+" (generated)", string(got), string(want)))
	fmt.Fprintf(w, "%s is stale; regenerate it with: debugflow %s %s-o %s\n", path, command, specFlag(specName), path)
	return errFindings
}

func specFlag(specName string) string {
	if specName == embeddedSpecName {
		return ""
	}
	return "--spec " + specName + " "
}

// minimalSpec is what `init --minimal` writes: runners, tests, install and build, for a
// project that is not the reference one.
//
//go:embed minimal.yaml
var minimalSpec []byte

func newInitCmd(f *factory.Factory) *cobra.Command {
	stdout := f.Stdout()
	var force, minimal bool
	var output string
	cmd := &cobra.Command{
		Use:   "init [--output FILE] [--force]",
		Short: "Write the default spec (the reference CUDA T4 workflow) as an editable file",
		Long: `Write debugflow.yaml: every key of the spec with the values of the reference CUDA T4
debug workflow and a comment saying what it does. Edit it, then run 'debugflow generate'.
--minimal writes a short spec instead (runners, triggers, install, build, the tests), for a
project that is not the reference one. An existing file is never overwritten without --force.
In a subfolder of a git work tree, the default --output is debugflow.yaml at its top, where
the other commands look for it.`,
		Example: `  debugflow init
  debugflow init --minimal
  debugflow init --output specs/t4.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("output") {
				if top := stepbin.WorkTreeTop(); top != "" {
					output = relToCwd(filepath.Join(top, spec.DefaultFile))
				}
			}
			if _, err := os.Stat(output); err == nil && !force {
				return &exitcode.Error{Code: exitFindings, Err: fmt.Errorf("%s already exists; use --force to overwrite it", output)}
			}
			data := spec.DefaultYAML()
			if minimal {
				data = minimalSpec
			}
			if err := atomicfile.Write(output, data, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s; edit it, then run: debugflow generate --spec %s -o .github/workflows/%s\n",
				output, output, spec.Default().Workflow.File)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing file")
	cmd.Flags().BoolVar(&minimal, "minimal", false, "write a short commented spec (runners, triggers, install, build, tests) instead of every key")
	cmd.Flags().StringVarP(&output, "output", "o", spec.DefaultFile, "file to write")
	return cmd
}

// validateOptions are the arguments and flags of `debugflow validate`.
type validateOptions struct {
	Files     []string
	Spec      *specSource
	SpecGiven bool // --spec was given: a spec that does not load is an error
	Labels    []string
	Stdout    io.Writer
}

// newValidateCmd returns `debugflow validate`; runF nil runs runValidate.
func newValidateCmd(f *factory.Factory, sp *specSource, runF func(*validateOptions) error) *cobra.Command {
	opts := &validateOptions{Stdout: f.Stdout()}
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

func runValidate(ctx context.Context, opts *validateOptions) error {
	files := opts.Files
	if len(files) == 0 {
		path := opts.Spec.find()
		if path == "" {
			return usageErrorf("nothing to validate: no %s here nor at the top of the git work tree (`debugflow init` writes one; or name the files: debugflow validate FILE...)", spec.DefaultFile)
		}
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return usageErrorf("nothing to validate: %s does not exist (`debugflow init` writes one; or name the files: debugflow validate FILE...)", path)
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
		return &exitcode.Error{Code: exitUsage, Err: fmt.Errorf("%d file(s) could not be read as YAML (see above)", v.unreadable)}
	}
	if v.findings > 0 {
		fmt.Fprintf(opts.Stdout, "%d finding(s)\n", v.findings)
		return errFindings
	}
	fmt.Fprintf(opts.Stdout, "%d file(s) OK\n", len(files))
	return nil
}

// validation is one `debugflow validate` run.
type validation struct {
	ctx           context.Context // Ctrl-C ends the check of a workflow at once
	opts          *validateOptions
	findings      int
	unreadable    int      // files that are not YAML a spec can be read from: exit 2
	current       []string // runner labels of the current spec, once loaded
	currentLoaded bool
}

// maxValidateBytes bounds what validate reads of one file (a workflow is a few KB).
const maxValidateBytes = 4 << 20

// file checks one spec or workflow and prints what it finds.
func (v *validation) file(path string) error {
	w := v.opts.Stdout
	data, err := readBounded(path, maxValidateBytes)
	if err != nil {
		return &exitcode.Error{Code: exitUsage, Err: err}
	}
	if looksLikeWorkflow(data) {
		labels := append([]string{}, v.opts.Labels...)
		var auditOpts []audit.Option
		if header, ok := headerSpecOf(data); ok {
			labels = append(labels, header.Runners...)
			auditOpts = generate.AuditOptions(header)
		} else {
			current, err := v.currentLabels()
			if err != nil {
				return err
			}
			labels = append(labels, current...)
		}
		lines, err := interruptible(v.ctx, func() ([]string, error) {
			return workflowFindings(path, data, labels, auditOpts...)
		})
		if v.ctx.Err() != nil {
			return err
		}
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
		v.findings += len(lines)
		if err == nil {
			for _, l := range workflowShellAdvice(path, data, labels) {
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
	n, err := reportFindings(path+" => "+s.Workflow.File, out, s.Runners, w, generate.AuditOptions(s)...)
	v.findings += n
	specShellAdvice(s, path, w, true)
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
	s, _, err := v.opts.Spec.load()
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

// readBounded reads a regular file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("reading %s: not a regular file (%s)", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("reading %s: larger than %d MiB, not a spec or a workflow", path, limit>>20)
	}
	return data, nil
}

// headerSpecOf returns the spec a generated workflow names in its header ("# Code generated
// by debugflow from SPEC."), when that file is here to read: a generated workflow then
// validates without --runner-label, and with the spec's choices the audit accepts (see
// generate.AuditOptions). ok is false when the workflow names no spec or the spec does not
// load.
func headerSpecOf(workflow []byte) (*spec.Spec, bool) {
	name, ok := headerSpec(workflow)
	if !ok {
		return nil, false
	}
	if name == embeddedSpecName {
		return spec.Default(), true
	}
	s, err := spec.Load(headerPath(name))
	if err != nil {
		return nil, false
	}
	return s, true
}

func headerSpec(workflow []byte) (string, bool) {
	first, _, _ := strings.Cut(string(workflow), "\n")
	name, ok := strings.CutPrefix(first, "# Code generated by debugflow from ")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(name, ". DO NOT EDIT.")
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

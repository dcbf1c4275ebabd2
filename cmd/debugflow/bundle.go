package main

import (
	"github.com/debugflow/debugflow/cmd/internal/factory"

	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/version"
)

// newBundleBuilder makes the builder of bundled step binaries; tests replace it. nil is
// the real one: go build from debugflow's own source, with the binaries of this executable
// kept in the step binary cache (stepbin.OpenCache).
var newBundleBuilder func(self version.Info) (stepbin.Builder, error)

// resolveStepBinary chooses how debugflow-step reaches the runner, builds a bundle when that
// is the choice, pins the checksums in s, and says on stderr what it chose and why, before
// building.
// extraArchs are runner architectures pinned besides the spec's (stepbin.Options.ExtraArchs).
func resolveStepBinary(ctx context.Context, s *spec.Spec, stderr io.Writer, extraArchs ...string) (*stepbin.Plan, error) {
	plan, err := stepbin.Resolve(ctx, s, stepbin.Options{Self: version.Get(), NewBuilder: newBundleBuilder,
		CacheDir: os.Getenv("DEBUGFLOW_STEP_CACHE"), ExtraArchs: extraArchs, Log: stderr})
	var be *stepbin.BuildError
	switch {
	case errors.As(err, &be):
		return nil, &exitcode.Error{Code: exitFindings, Err: err}
	case err != nil:
		return nil, &exitcode.Error{Code: exitUsage, Err: err}
	}
	return plan, nil
}

// finishBundle writes the bundle next to the workflow written to out (check: compares it);
// it does nothing for the other deliveries.
func finishBundle(plan *stepbin.Plan, out string, check bool, stdout, stderr io.Writer) error {
	if plan.Delivery != spec.DeliveryBundle {
		return nil
	}
	if out == "-" && !check {
		fmt.Fprintln(stderr, "the bundled debugflow-step was not written (the workflow went to stdout): write it with `debugflow bundle`, or use generate -o FILE")
		return nil
	}
	root := stepbin.Root(out)
	if check {
		problems := stepbin.Check(root, plan.Files)
		for _, p := range problems {
			fmt.Fprintln(stdout, p)
		}
		if len(problems) > 0 {
			fmt.Fprintf(stdout, "the bundled debugflow-step is stale; rewrite it with: debugflow generate -o %s (or debugflow bundle)\n", out)
			return errFindings
		}
		fmt.Fprintf(stdout, "the bundled debugflow-step is up to date (%s)\n", bundleList(root, plan))
		return nil
	}
	return writeBundle(plan, root, stdout, stderr)
}

func writeBundle(plan *stepbin.Plan, root string, stdout, stderr io.Writer) error {
	written, removed, err := stepbin.Write(root, plan.Files)
	for _, p := range removed {
		fmt.Fprintf(stdout, "removed %s (a bundle for another architecture)\n", p)
	}
	if err != nil {
		return err
	}
	for i, p := range written {
		fmt.Fprintf(stdout, "wrote %s (debugflow-step %s, SHA-256 %s, %s)\n", p, plan.Version, plan.Files[i].SHA256, plan.Source)
	}
	fmt.Fprintln(stdout, "commit the bundle with the workflow; `debugflow enable` removes it before you merge back")
	for _, p := range written {
		if rule := gitIgnoreRule(p); rule != "" {
			fmt.Fprintf(stderr, "warning: git ignores %s (%s): `git add` leaves it out and the job would stop at its install step; add it with: git add -f %s\n", p, rule, p)
		}
		if attrs := gitRewritingAttrs(p); attrs != "" {
			fmt.Fprintf(stderr, "warning: git would commit other bytes than %s (%s): the runner would check out a file that fails its SHA-256; add this line at the end of .gitattributes: /%s -text -filter\n",
				p, attrs, filepath.ToSlash(filepath.Join(filepath.Dir(p), "*")))
		}
	}
	return nil
}

// gitIgnoreRule returns the .gitignore rule ("FILE:LINE:PATTERN") that makes git ignore path,
// or "" when git does not ignore it or path is not in a git work tree.
func gitIgnoreRule(path string) string {
	out, err := exec.Command("git", "check-ignore", "--verbose", "--", path).Output()
	if err != nil { // exit 1: not ignored; 128: not a work tree
		return ""
	}
	rule, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	return rule
}

// gitRewritingAttrs names the git attributes that would change path's bytes on commit (text
// or eol: line-ending conversion; filter: Git LFS keeps a pointer, which a checkout without
// lfs: true gives the runner), as "filter: lfs"; "" when there are none or path is not in a
// git work tree.
func gitRewritingAttrs(path string) string {
	out, err := exec.Command("git", "check-attr", "-z", "text", "eol", "filter", "--", path).Output()
	if err != nil {
		return ""
	}
	// -z: path NUL attribute NUL value NUL, per attribute.
	f := strings.Split(string(out), "\x00")
	values := map[string]string{}
	for i := 0; i+2 < len(f); i += 3 {
		values[f[i+1]] = f[i+2]
	}
	var found []string
	for _, attr := range []string{"text", "eol", "filter"} {
		switch v := values[attr]; {
		case v == "" || v == "unspecified" || v == "unset":
		case attr == "text" && v == "auto": // git sees a binary and leaves it alone
		case attr == "eol" && values["text"] == "unset": // eol acts only on text
		default:
			found = append(found, attr+": "+v)
		}
	}
	return strings.Join(found, ", ")
}

func bundleList(root string, plan *stepbin.Plan) string {
	var names []string
	for _, f := range plan.Files {
		names = append(names, filepath.Join(root, filepath.FromSlash(f.Path)))
	}
	return strings.Join(names, ", ")
}

// bundleOptions are the flags of `debugflow bundle`.
type bundleOptions struct {
	Spec   *specSource
	Root   string
	Check  bool
	Remove bool
}

// newBundleCmd returns `debugflow bundle`; runF nil runs runBundle.
func newBundleCmd(f *factory.Factory, sp *specSource, runF func(*bundleOptions) error) *cobra.Command {
	opts := &bundleOptions{}
	cmd := &cobra.Command{
		Use:   "bundle [--spec FILE] [--root DIR] [--check | --remove]",
		Short: "Write the debugflow-step binary a bundle workflow verifies and runs",
		Long: `Build debugflow-step for the runner (static, linux, step_binary.arch: x64 or arm64, plus x64
for a matrix's report job) from the source this debugflow was built from, and write it to
step_binary.dir (default .github/debugflow) under --root (default: the top of the git work tree
holding the current directory, else the current directory).

'debugflow generate -o FILE' already does this when the spec's step binary is bundled (the
default for a debugflow that is not a release); use bundle after 'generate -o -', or to
check (--check, exit 1 when stale) or remove (--remove) the bundle. The build is
reproducible: the same debugflow and Go toolchain write the same bytes, whose SHA-256 the
generated workflow pins. 'debugflow enable' removes the bundle too.`,
		Example: `  debugflow generate -o - > .github/workflows/debug.yml && debugflow bundle
  debugflow bundle --check
  debugflow bundle --remove`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Spec = sp
			if !cmd.Flags().Changed("root") {
				opts.Root = stepbin.WorkTreeTop()
			}
			if runF != nil {
				return runF(opts)
			}
			return runBundle(cmd.Context(), opts, f.Stdout(), f.Stderr())
		},
	}
	cmd.Flags().StringVar(&opts.Root, "root", "", "root of the debug branch (default: the top of the git work tree, else the current directory)")
	cmd.Flags().BoolVar(&opts.Check, "check", false, "compare the bundle on disk with what this debugflow builds; exit 1 when stale")
	cmd.Flags().BoolVar(&opts.Remove, "remove", false, "delete the bundle (what debugflow enable does)")
	cmd.MarkFlagsMutuallyExclusive("check", "remove")
	return cmd
}

func runBundle(ctx context.Context, opts *bundleOptions, stdout, stderr io.Writer) error {
	s, _, err := opts.Spec.load()
	if err != nil {
		return err
	}
	if opts.Remove {
		return removeBundle(opts.Root, s.StepBinary.Dir, false, stdout)
	}
	if d := s.StepBinary.Delivery; d != "" && d != spec.DeliveryBundle {
		return &exitcode.Error{Code: exitFindings, Err: fmt.Errorf("the spec's step binary comes from %s (step_binary.delivery): there is nothing to bundle", d)}
	}
	// An empty delivery is resolved as generate does, so the line on stderr gives the real
	// reason ("is not a release ...", not "in the spec").
	plan, err := resolveStepBinary(ctx, s, stderr)
	if err != nil {
		return err
	}
	if plan.Delivery != spec.DeliveryBundle {
		return &exitcode.Error{Code: exitFindings, Err: fmt.Errorf("the workflows of this debugflow get debugflow-step from %s, not a bundle: there is nothing to bundle", plan.Delivery)}
	}
	if opts.Check {
		return finishBundle(plan, filepath.Join(opts.Root, ".github", "workflows", "x.yml"), true, stdout, stderr)
	}
	return writeBundle(plan, opts.Root, stdout, stderr)
}

// removeBundle deletes the bundled binaries from dir under root and, inside a git work tree,
// stages their removal; dryRun only says what it would remove.
func removeBundle(root, dir string, dryRun bool, stdout io.Writer) error {
	if dryRun {
		for _, p := range stepbin.Bundled(root, dir) {
			fmt.Fprintf(stdout, "would remove the bundled %s\n", p)
		}
		return nil
	}
	var tracked []string
	for _, p := range stepbin.Bundled(root, dir) {
		if exec.Command("git", "ls-files", "--error-unmatch", "--", p).Run() == nil {
			tracked = append(tracked, p)
		}
	}
	removed, err := stepbin.Remove(root, dir)
	if err != nil {
		return err
	}
	for _, p := range removed {
		how := ""
		if slices.Contains(tracked, p) {
			out, err := exec.Command("git", "rm", "--cached", "--quiet", "--", p).CombinedOutput()
			if err != nil {
				return fmt.Errorf("staging the removal of %s: %v: %s", p, err, strings.TrimSpace(string(out)))
			}
			how = " (git rm --cached)"
		}
		fmt.Fprintf(stdout, "removed the bundled %s%s\n", p, how)
	}
	return nil
}

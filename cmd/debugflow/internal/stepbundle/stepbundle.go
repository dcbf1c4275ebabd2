// Package stepbundle is how debugflow-step reaches the runner for generate, experiment
// workflow and bundle: the delivery chosen and said on stderr, the bundled binaries built,
// written next to the workflow, compared (--check) and removed (bundle --remove, enable).
package stepbundle

import (
	"context"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/version"
)

// NewBuilder makes the builder of bundled step binaries; tests replace it. nil is
// the real one: go build from debugflow's own source, with the binaries of this executable
// kept in the step binary cache (stepbin.OpenCache).
var NewBuilder func(self version.Info) (stepbin.Builder, error)

// Resolve chooses how debugflow-step reaches the runner, builds a bundle when that
// is the choice, pins the checksums in s, and says on stderr what it chose and why, before
// building.
// extraArchs are runner architectures pinned besides the spec's (stepbin.Options.ExtraArchs).
func Resolve(ctx context.Context, s *spec.Spec, stderr io.Writer, extraArchs ...string) (*stepbin.Plan, error) {
	plan, err := stepbin.Resolve(ctx, s, stepbin.Options{Self: version.Get(), NewBuilder: NewBuilder,
		CacheDir: os.Getenv("DEBUGFLOW_STEP_CACHE"), ExtraArchs: extraArchs, Log: stderr})
	var be *stepbin.BuildError
	switch {
	case errors.As(err, &be):
		return nil, &exitcode.Error{Code: cmdutil.ExitFindings, Err: err}
	case err != nil:
		return nil, &exitcode.Error{Code: cmdutil.ExitUsage, Err: err}
	}
	return plan, nil
}

// Finish writes the bundle next to the workflow written to out (check: compares it);
// it does nothing for the other deliveries.
func Finish(plan *stepbin.Plan, out string, check bool, stdout, stderr io.Writer) error {
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
			fmt.Fprintf(stdout, "the bundled debugflow-step is stale; rewrite it with: debugflow generate -o %s (or debugflow bundle)\n", textsafe.ShellWord(out))
			return cmdutil.ErrFindings
		}
		fmt.Fprintf(stdout, "the bundled debugflow-step is up to date (%s)\n", bundleList(root, plan))
		return nil
	}
	return Write(plan, root, stdout, stderr)
}

// Write writes the bundled binaries of plan under root and says what git would do with them.
func Write(plan *stepbin.Plan, root string, stdout, stderr io.Writer) error {
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

// Remove deletes the bundled binaries from dir under root and, inside a git work tree,
// stages their removal; dryRun only says what it would remove.
func Remove(root, dir string, dryRun bool, stdout io.Writer) error {
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

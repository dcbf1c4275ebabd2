// Package specsource is how debugflow's commands find, load and name their spec (--spec,
// --default-spec, debugflow.yaml here or at the top of the git work tree, the embedded
// default), and how a generated workflow's header names the spec it came from.
package specsource

import (
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
)

// EmbeddedName is how the embedded default spec is named in headers and messages.
const EmbeddedName = "the embedded default spec"

// Source is where the spec-reading commands find their spec, as git and gh find their
// configuration: --spec FILE; else debugflow.yaml in the current folder; else debugflow.yaml at
// the top of the git work tree holding it (a command run from tests/ reads the branch's spec);
// else the embedded default, quietly only when asked for (--default-spec), otherwise with a
// line on stderr: a reference-project workflow or input set must never pass for the user's.
type Source struct {
	Path    string    // --spec
	Default bool      // --default-spec: the embedded default is meant
	Stderr  io.Writer // where the fall-back to the embedded default is said
	noted   bool      // that line was written (a command may load the spec twice)
}

// flagUsage is the help of --spec.
const flagUsage = "read the spec from `FILE` (default: debugflow.yaml here, else at the top of the git work tree, else the embedded default with a warning)"

const defaultFlagUsage = "use the embedded default spec (the reference CUDA T4 project) on purpose, whatever debugflow.yaml exists"

// AddFlags adds --spec and --default-spec to a spec-reading command.
func (sp *Source) AddFlags(c *cobra.Command) {
	c.Flags().StringVar(&sp.Path, "spec", "", flagUsage)
	c.Flags().BoolVar(&sp.Default, "default-spec", false, defaultFlagUsage)
	c.MarkFlagsMutuallyExclusive("spec", "default-spec")
}

// Find returns the spec file to read, "" for the embedded default.
func (sp *Source) Find() string {
	switch {
	case sp.Default:
		return ""
	case sp.Path != "":
		return sp.Path
	}
	if _, err := os.Stat(spec.DefaultFile); err == nil {
		return spec.DefaultFile
	}
	if top := stepbin.WorkTreeTop(); top != "" {
		p := filepath.Join(top, spec.DefaultFile)
		if _, err := os.Stat(p); err == nil {
			return cmdutil.RelToCwd(p)
		}
	}
	return ""
}

// Load loads the spec Find names, or the embedded default, and names what it used (the
// file as this folder reaches it, or EmbeddedName). Any failure to load it exits 2.
func (sp *Source) Load() (*spec.Spec, string, error) {
	path := sp.Find()
	if path == "" && !sp.Default && sp.Stderr != nil && !sp.noted {
		sp.noted = true
		where := "in this folder"
		if top := stepbin.WorkTreeTop(); top != "" {
			where = "in this folder nor at the top of its git work tree (" + top + ")"
		}
		fmt.Fprintf(sp.Stderr, "debugflow: WARNING: no %s %s: using %s, the reference CUDA T4 project's (`debugflow init` writes your own; --default-spec says you mean the default)\n",
			spec.DefaultFile, where, EmbeddedName)
	}
	if path == "" {
		return spec.Default(), EmbeddedName, nil
	}
	return LoadFile(path)
}

// LoadFile loads the spec file at path (see Source for how the spec is found) and names it.
// Any failure to load the spec exits 2.
func LoadFile(path string) (*spec.Spec, string, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, "", &exitcode.Error{Code: cmdutil.ExitUsage, Err: fmt.Errorf("spec %w (`debugflow init --output %s` writes a commented one)", err, path)}
	}
	s, err := spec.Load(path)
	if err != nil {
		var errs spec.Errors
		if errors.As(err, &errs) {
			return nil, "", &exitcode.Error{Code: cmdutil.ExitUsage, Err: fmt.Errorf("invalid spec:\n%w\n(fix the lines above; `debugflow init --output FILE` writes a commented reference spec)", err)}
		}
		return nil, "", &exitcode.Error{Code: cmdutil.ExitUsage, Err: err}
	}
	return s, path, nil
}

// Flag is the --spec argument that names specName again in a suggested command line, with
// a trailing space; "" for the embedded default.
func Flag(specName string) string {
	if specName == EmbeddedName {
		return ""
	}
	return "--spec " + textsafe.ShellWord(specName) + " "
}

// DefaultCount is the debug workflow's default count: the count input's default, else
// reproducer.count.
func DefaultCount(s *spec.Spec) int {
	if in, ok := s.Input(s.Reproducer.CountInput); ok && s.Reproducer.CountInput != "" {
		var n int
		if _, err := fmt.Sscan(in.Default, &n); err == nil && n > 0 {
			return n
		}
	}
	return s.Reproducer.Count
}

// HeaderName is how a generated workflow's header names its spec: relative to the top of the
// git work tree (debugflow.yaml, examples/debugflow.yaml), whichever folder generate ran in, so
// the header is the same bytes from anywhere and marks which spec a workflow came from.
func HeaderName(specName string) string {
	if specName == EmbeddedName {
		return ""
	}
	top := stepbin.WorkTreeTop()
	if top == "" {
		return filepath.ToSlash(specName) // here is the top, or no work tree at all
	}
	abs, err := filepath.Abs(specName)
	if err != nil {
		return filepath.ToSlash(specName)
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(specName)
	}
	return filepath.ToSlash(rel)
}

// HeaderOutput is the -o file as the header's Regenerate line names it (see HeaderName).
func HeaderOutput(out string) string {
	if out == "-" || out == "" {
		return out
	}
	return HeaderName(out)
}

// HeaderPath is the file a header's spec name stands for, seen from here: the name as given
// when it exists here, else relative to the top of the git work tree.
func HeaderPath(name string) string {
	if _, err := os.Stat(name); err == nil || filepath.IsAbs(name) {
		return name
	}
	if top := stepbin.WorkTreeTop(); top != "" {
		if p := filepath.Join(top, filepath.FromSlash(name)); cmdutil.FileExists(p) {
			return cmdutil.RelToCwd(p)
		}
	}
	return name
}

// HeaderSpec returns the spec name a generated workflow's first line gives ("# Code
// generated by debugflow from SPEC. DO NOT EDIT."); ok is false for any other file.
func HeaderSpec(workflow []byte) (string, bool) {
	first, _, _ := strings.Cut(string(workflow), "\n")
	name, ok := strings.CutPrefix(first, "# Code generated by debugflow from ")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(name, ". DO NOT EDIT.")
}

// HeaderSpecOf returns the spec a generated workflow names in its header, when that file is
// here to read: a generated workflow then validates without --runner-label, and with the
// spec's choices the audit accepts (see generate.AuditOptions). ok is false when the workflow
// names no spec or the spec does not load.
func HeaderSpecOf(workflow []byte) (*spec.Spec, bool) {
	name, ok := HeaderSpec(workflow)
	if !ok {
		return nil, false
	}
	if name == EmbeddedName {
		return spec.Default(), true
	}
	s, err := spec.Load(HeaderPath(name))
	if err != nil {
		return nil, false
	}
	return s, true
}

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/spf13/cobra"
)

// specSource is where the spec-reading commands find their spec, as git and gh find their
// configuration: --spec FILE; else debugflow.yaml in the current folder; else debugflow.yaml at
// the top of the git work tree holding it (a command run from tests/ reads the branch's spec);
// else the embedded default, quietly only when asked for (--default-spec), otherwise with a
// line on stderr: a reference-project workflow or input set must never pass for the user's.
type specSource struct {
	Path    string    // --spec
	Default bool      // --default-spec: the embedded default is meant
	Stderr  io.Writer // where the fall-back to the embedded default is said
	noted   bool      // that line was written (a command may load the spec twice)
}

const defaultSpecFlagUsage = "use the embedded default spec (the reference CUDA T4 project) on purpose, whatever debugflow.yaml exists"

// addSpecFlags adds --spec and --default-spec to a spec-reading command.
func (sp *specSource) addSpecFlags(c *cobra.Command) {
	c.Flags().StringVar(&sp.Path, "spec", "", specFlagUsage)
	c.Flags().BoolVar(&sp.Default, "default-spec", false, defaultSpecFlagUsage)
	c.MarkFlagsMutuallyExclusive("spec", "default-spec")
}

// find returns the spec file to read, "" for the embedded default.
func (sp *specSource) find() string {
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
			return relToCwd(p)
		}
	}
	return ""
}

// load loads the spec find names, or the embedded default, and names what it used (the
// file as this folder reaches it, or embeddedSpecName). Any failure to load it exits 2.
func (sp *specSource) load() (*spec.Spec, string, error) {
	path := sp.find()
	if path == "" && !sp.Default && sp.Stderr != nil && !sp.noted {
		sp.noted = true
		where := "in this folder"
		if top := stepbin.WorkTreeTop(); top != "" {
			where = "in this folder nor at the top of its git work tree (" + top + ")"
		}
		fmt.Fprintf(sp.Stderr, "debugflow: WARNING: no %s %s: using %s, the reference CUDA T4 project's (`debugflow init` writes your own; --default-spec says you mean the default)\n",
			spec.DefaultFile, where, embeddedSpecName)
	}
	if path == "" {
		return spec.Default(), embeddedSpecName, nil
	}
	return loadSpec(path)
}

// relToCwd names an absolute path as the current folder reaches it (../debugflow.yaml), so
// the commands a message suggests work when pasted here.
func relToCwd(p string) string {
	if cwd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(cwd, p); err == nil {
			return rel
		}
	}
	return p
}

// headerName is how a generated workflow's header names its spec: relative to the top of the
// git work tree (debugflow.yaml, examples/debugflow.yaml), whichever folder generate ran in, so
// the header is the same bytes from anywhere and marks which spec a workflow came from.
func headerName(specName string) string {
	if specName == embeddedSpecName {
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

// headerOutput is the -o file as the header's Regenerate line names it (see headerName).
func headerOutput(out string) string {
	if out == "-" || out == "" {
		return out
	}
	return headerName(out)
}

// headerPath is the file a header's spec name stands for, seen from here: the name as given
// when it exists here, else relative to the top of the git work tree.
func headerPath(name string) string {
	if _, err := os.Stat(name); err == nil || filepath.IsAbs(name) {
		return name
	}
	if top := stepbin.WorkTreeTop(); top != "" {
		if p := filepath.Join(top, filepath.FromSlash(name)); fileExists(p) {
			return relToCwd(p)
		}
	}
	return name
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return !errors.Is(err, fs.ErrNotExist)
}

// Package siblings disables and re-enables the other workflows of a debug
// branch, so that pushing the branch runs only the debug workflow.
//
// Disable renames every *.yml / *.yaml file of the workflows directory that
// no Keep glob matches to <name>.disabled (GitHub ignores files with other
// extensions); Enable renames every *.yml.disabled / *.yaml.disabled back.
// Both are idempotent, and both check every file before renaming any: a run
// that finds a conflict changes nothing. Inside a Git work tree, tracked files
// are moved with `git mv`, so the renames are staged for the next commit.
package siblings

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultDir is where GitHub reads workflows from.
const DefaultDir = ".github/workflows"

// DisabledSuffix is appended to a workflow file name to disable it.
const DisabledSuffix = ".disabled"

// workflowExts are the extensions GitHub runs as workflows.
var workflowExts = []string{".yml", ".yaml"}

// Statuses of an Action.
const (
	StatusRenamed         = "renamed"
	StatusKept            = "kept"
	StatusAlreadyDisabled = "already disabled"
	StatusAlreadyEnabled  = "already enabled"
	StatusWouldRename     = "would rename"
	// StatusConflict marks, in a refused run, a file that blocked it.
	StatusConflict = "conflict"
)

// ErrConflict is wrapped by the error of a run refused because of
// conflicts (see ConflictError); nothing was renamed.
var ErrConflict = errors.New("conflicting workflow files")

// Options configures Disable and Enable.
type Options struct {
	// Dir is the workflows directory; "" means DefaultDir.
	Dir string
	// Keep holds globs (filepath.Match syntax) matched against file names:
	// Disable leaves matching workflows enabled. The caller always passes the
	// debug workflow's file name here. Enable ignores Keep.
	Keep []string
	// DryRun reports the plan ("would rename") and touches nothing.
	DryRun bool
	// Git runs git. nil uses the git executable on PATH when there is one;
	// without git, or outside a work tree, files are renamed plainly.
	Git GitRunner
	// Out, when non-nil, receives the table of actions (WriteTable).
	Out io.Writer

	// fs is the file-system seam tests use to inject failures.
	fs fileSystem
}

// Action is what happened (or, in a dry run, would happen) to one file.
type Action struct {
	// From is the file's path (Dir joined with its name) before the run.
	From string
	// To is its path after a rename; "" when the file is not renamed.
	To string
	// Status is one of the Status* constants.
	Status string
}

// Conflict is one reason a run was refused.
type Conflict struct {
	// Path is the file that cannot be renamed.
	Path string
	// Problem says what is wrong.
	Problem string
	// Fix says what to do about it.
	Fix string
}

// ConflictError lists every conflict found; it wraps ErrConflict.
type ConflictError struct {
	// Op is "disable" or "enable".
	Op string
	// Conflicts are in file-name order.
	Conflicts []Conflict
}

// Error lists the conflicts, one per line, each with its fix.
func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d conflicting file(s), nothing was renamed:", e.Op, len(e.Conflicts))
	for _, c := range e.Conflicts {
		fmt.Fprintf(&b, "\n  %s: %s; %s", c.Path, c.Problem, c.Fix)
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// Disable renames every workflow not matched by opts.Keep to
// <name>.disabled. It returns one Action per workflow file (enabled or
// disabled) in name order. On conflict it renames nothing and returns the
// planned actions (blocking files with StatusConflict) with a
// *ConflictError.
func Disable(ctx context.Context, opts Options) ([]Action, error) {
	return run(ctx, opts, disable)
}

// Enable renames every *.yml.disabled / *.yaml.disabled file back to its
// original name, the exact reverse of Disable. Conflicts are handled as in
// Disable.
func Enable(ctx context.Context, opts Options) ([]Action, error) {
	return run(ctx, opts, enable)
}

// direction is Disable or Enable.
type direction int

const (
	disable direction = iota
	enable
)

func (d direction) String() string {
	if d == disable {
		return "disable"
	}
	return "enable"
}

func run(ctx context.Context, opts Options, dir direction) ([]Action, error) {
	if opts.Dir == "" {
		opts.Dir = DefaultDir
	}
	if opts.fs == nil {
		opts.fs = osFileSystem{}
	}
	for _, k := range opts.Keep {
		if _, err := filepath.Match(k, ""); err != nil {
			return nil, fmt.Errorf("%s: --keep %q: %w", dir, k, err)
		}
	}
	p, err := makePlan(opts, dir)
	if err != nil {
		return nil, err
	}
	if len(p.conflicts) > 0 {
		actions := p.actions(StatusWouldRename)
		for i, a := range actions {
			if p.conflicting[filepath.Base(a.From)] {
				actions[i].Status = StatusConflict
			}
		}
		if opts.Out != nil {
			WriteTable(opts.Out, actions)
		}
		return actions, &ConflictError{Op: dir.String(), Conflicts: p.conflicts}
	}
	if opts.DryRun || len(p.moves) == 0 {
		actions := p.actions(StatusWouldRename)
		if opts.Out != nil {
			WriteTable(opts.Out, actions)
		}
		return actions, nil
	}
	m, err := newMover(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := m.apply(ctx, p.moves); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	actions := p.actions(StatusRenamed)
	if opts.Out != nil {
		WriteTable(opts.Out, actions)
	}
	return actions, nil
}

// move is one planned rename, by file name inside Dir.
type move struct {
	from, to string
}

// entryPlan is the outcome for one file.
type entryPlan struct {
	name   string
	target string // for renames
	status string // "" for a rename
}

type plan struct {
	dir         string
	entries     []entryPlan
	moves       []move
	conflicts   []Conflict
	conflicting map[string]bool // names with a conflict
}

func (p *plan) actions(renameStatus string) []Action {
	out := make([]Action, 0, len(p.entries))
	for _, e := range p.entries {
		a := Action{From: filepath.Join(p.dir, e.name), Status: e.status}
		if e.status == "" {
			a.To = filepath.Join(p.dir, e.target)
			a.Status = renameStatus
		}
		out = append(out, a)
	}
	return out
}

// makePlan reads Dir once and decides every file's fate, collecting all
// conflicts.
func makePlan(opts Options, dir direction) (*plan, error) {
	names, err := opts.fs.ReadDirNames(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("%s: read workflows directory: %w", dir, err)
	}
	sort.Strings(names)
	present := make(map[string]bool, len(names))
	for _, n := range names {
		present[n] = true
	}
	p := &plan{dir: opts.Dir, conflicting: map[string]bool{}}
	for _, name := range names {
		var target string
		switch {
		case isWorkflow(name):
			if dir == enable {
				p.entries = append(p.entries, entryPlan{name: name, status: StatusAlreadyEnabled})
				continue
			}
			if kept(name, opts.Keep) {
				p.entries = append(p.entries, entryPlan{name: name, status: StatusKept})
				continue
			}
			target = name + DisabledSuffix
		case isDisabledWorkflow(name):
			if dir == disable {
				p.entries = append(p.entries, entryPlan{name: name, status: StatusAlreadyDisabled})
				continue
			}
			target = strings.TrimSuffix(name, DisabledSuffix)
		default:
			continue // not a workflow: leave it alone
		}
		if c, ok := checkSource(opts, name); !ok {
			p.conflicts = append(p.conflicts, c)
			p.conflicting[name] = true
		}
		if present[target] {
			p.conflicting[name] = true
			p.conflicts = append(p.conflicts, Conflict{
				Path:    filepath.Join(opts.Dir, name),
				Problem: fmt.Sprintf("%s already exists", target),
				Fix:     fmt.Sprintf("keep one of %s and %s (delete or rename the other), then run %s again", name, target, dir),
			})
		}
		p.entries = append(p.entries, entryPlan{name: name, target: target})
		p.moves = append(p.moves, move{from: name, to: target})
	}
	return p, nil
}

// checkSource verifies that name is a readable regular file.
func checkSource(opts Options, name string) (Conflict, bool) {
	path := filepath.Join(opts.Dir, name)
	info, err := opts.fs.Stat(path)
	switch {
	case err != nil:
		return Conflict{Path: path, Problem: fmt.Sprintf("cannot stat it: %v", err),
			Fix: "fix or remove the file (a broken symbolic link?)"}, false
	case info.IsDir():
		return Conflict{Path: path, Problem: "it is a directory, not a workflow file",
			Fix: "rename the directory so its name does not end in .yml, .yaml or .disabled"}, false
	case !info.Mode().IsRegular():
		return Conflict{Path: path, Problem: fmt.Sprintf("it is not a regular file (%s)", info.Mode().Type()),
			Fix: "replace it with a regular file or remove it"}, false
	}
	if err := opts.fs.CheckReadable(path); err != nil {
		return Conflict{Path: path, Problem: fmt.Sprintf("cannot read it: %v", err),
			Fix: "fix its permissions"}, false
	}
	return Conflict{}, true
}

func isWorkflow(name string) bool {
	for _, ext := range workflowExts {
		if strings.HasSuffix(name, ext) && len(name) > len(ext) {
			return true
		}
	}
	return false
}

func isDisabledWorkflow(name string) bool {
	return strings.HasSuffix(name, DisabledSuffix) && isWorkflow(strings.TrimSuffix(name, DisabledSuffix))
}

func kept(name string, globs []string) bool {
	for _, g := range globs {
		if ok, _ := filepath.Match(g, name); ok {
			return true
		}
	}
	return false
}

// fileSystem is what the planner and the mover need from the OS.
type fileSystem interface {
	ReadDirNames(dir string) ([]string, error)
	Stat(path string) (os.FileInfo, error)
	CheckReadable(path string) error
	Lstat(path string) (os.FileInfo, error)
	Rename(from, to string) error
}

type osFileSystem struct{}

func (osFileSystem) ReadDirNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

func (osFileSystem) Stat(path string) (os.FileInfo, error)  { return os.Stat(path) }
func (osFileSystem) Lstat(path string) (os.FileInfo, error) { return os.Lstat(path) }
func (osFileSystem) Rename(from, to string) error           { return os.Rename(from, to) }

func (osFileSystem) CheckReadable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

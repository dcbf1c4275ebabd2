// Package siblings disables and re-enables the other workflows of a debug
// branch, so that pushing the branch runs only the debug workflow.
//
// Disable renames every *.yml / *.yaml file of the workflows directory that
// no Keep glob matches to <name>.disabled (GitHub ignores files with other
// extensions) and records the original names, each with a fingerprint of
// the file it renamed, in a manifest file (ManifestName) in that directory.
// Enable renames exactly the workflows the manifest lists back, when they are
// still what Disable renamed, and deletes it, so workflows the repository had
// disabled before (or since) stay disabled; with Options.All it renames every
// *.yml.disabled / *.yaml.disabled back. A symbolic link is renamed itself,
// its target text unchanged.
//
// Both are idempotent, and both check every file before renaming any: a run
// that finds a conflict changes nothing. Inside a Git work tree, tracked files
// are moved with `git mv` and the manifest is staged (`git add`, later
// `git rm --cached`), so the next commit carries the change.
//
// Both survive any interruption. Disable writes the manifest (its intent)
// before the first rename; Enable deletes it after the last. A failure, or a
// cancelled context (SIGINT, SIGTERM) between two renames, undoes the renames
// and the manifest on a context of its own, and the error exits 130 when
// cancelled. Killed outright (SIGKILL), a run leaves a tree the next Disable
// or Enable finishes. git runs in a process group of its own and is never
// stopped while it writes the index, so no .git/index.lock is left behind;
// a run waits briefly for a lock held by an earlier run's git.
package siblings

import (
	"context"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/readfile"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/debugflow/debugflow/internal/exitcode"
	"github.com/debugflow/debugflow/internal/textsafe"
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
	// StatusLeftDisabled marks, in Enable, a disabled workflow the manifest
	// does not list: the repository had disabled it, not debugflow.
	StatusLeftDisabled = "left disabled (not disabled by debugflow)"
	// StatusMissing marks, in Enable, a workflow the manifest lists whose
	// <name>.disabled file (and <name>) no longer exists: it is skipped.
	StatusMissing = "missing (skipped)"
	// StatusStale marks, in Enable, a disabled workflow the manifest lists
	// but that is not what Disable renamed: its content changed since, or (in
	// Git) it was disabled in a commit after the manifest's. It stays
	// disabled; the note after the table says why.
	StatusStale = "left disabled (record is stale)"
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
	// DryRun reports the plan ("would rename") and touches nothing, the
	// manifest included.
	DryRun bool
	// All makes Enable rename every *.yml.disabled / *.yaml.disabled back,
	// whether or not the manifest lists it (and delete the manifest if there
	// is one). Disable ignores All.
	All bool
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
// <name>.disabled and writes the manifest: the names it renamed with their
// fingerprints, merged with the entries of an earlier Disable that still
// hold (see checkRecord; the others are dropped and said so). The file is
// written even when nothing is renamed, so that Enable knows nothing was. It returns one Action per
// workflow file (enabled or disabled) in name order. On conflict it renames
// and writes nothing and returns the planned actions (blocking files with
// StatusConflict) with a *ConflictError. A failure half-way undoes what was
// done.
func Disable(ctx context.Context, opts Options) ([]Action, error) {
	return run(ctx, opts, disable)
}

// Enable reverses Disable exactly: it renames back the workflows the
// manifest lists, leaves every other disabled workflow alone
// (StatusLeftDisabled), then deletes the manifest. A listed workflow that is
// no longer what Disable renamed (checkRecord) stays disabled (StatusStale).
// A listed workflow whose <name>.disabled file is gone is skipped
// (StatusMissing): there is nothing to rename, and the rest can still be
// restored. Conflicts are handled as in Disable. Without a manifest (and
// without opts.All) there is nothing to enable: Enable renames nothing,
// returns no error and says so, like a second Disable.
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

// exitInterrupted is the exit status of a run stopped by SIGINT or SIGTERM
// (the cancelled context), as in every debugflow command.
const exitInterrupted = 130

// run is Disable or Enable. Its error carries the exit status (package
// exitcode): 130 when ctx was cancelled, else 1, so the status of a git that
// failed never becomes debugflow's.
func run(ctx context.Context, opts Options, dir direction) ([]Action, error) {
	actions, err := runDirection(ctx, opts, dir)
	switch {
	case err == nil:
		return actions, nil
	case ctx.Err() != nil:
		return actions, &exitcode.Error{Code: exitInterrupted, Err: err}
	}
	return actions, &exitcode.Error{Code: exitcode.Failure, Err: err}
}

// runDirection plans, then changes the tree in an order that any
// interruption leaves resumable: Disable writes the manifest (its intent)
// before the first rename and stages it after the last; Enable deletes it
// after the last. A failure or a cancellation between two renames undoes the
// renames, then the manifest, on a context of its own; SIGKILL leaves a tree
// that the next Disable or Enable finishes.
func runDirection(ctx context.Context, opts Options, dir direction) ([]Action, error) {
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
	rec, err := readManifest(opts.fs, opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	p, err := makePlan(ctx, opts, dir, rec)
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
	change := planManifest(opts, dir, rec, p)
	if opts.DryRun || (len(p.moves) == 0 && change.op == manifestNone) {
		actions := p.actions(StatusWouldRename)
		report(opts.Out, actions, append(p.notes, change.note(opts.DryRun)))
		return actions, nil
	}
	m, err := newMover(ctx, opts)
	if err == nil {
		err = ctx.Err() // the plan's git may have been stopped: decide nothing on it
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w (nothing was renamed)", dir, err)
	}
	m.removeStaleTemps()
	if err := m.writeIntent(&change); err != nil {
		return nil, fmt.Errorf("%s: %w (nothing was renamed)", dir, err)
	}
	if err := m.apply(ctx, p.moves); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, m.restoreManifest(&change, err))
	}
	if err := m.finishManifest(ctx, &change); err != nil {
		err = m.rollback(ctx, p.moves, err)
		return nil, fmt.Errorf("%s: %w", dir, m.restoreManifest(&change, err))
	}
	actions := p.actions(StatusRenamed)
	report(opts.Out, actions, append(p.notes, change.note(false)))
	return actions, nil
}

// report writes the table, then the notes (about the record), to out (when
// out is not nil).
func report(out io.Writer, actions []Action, notes []string) {
	if out == nil {
		return
	}
	WriteTable(out, actions)
	for _, n := range notes {
		if n != "" {
			fmt.Fprintln(out, textsafe.Visible(n))
		}
	}
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
	// fingerprints of the files Disable renames, by original name.
	fingerprints map[string]string
	// record is, for Disable, the entries of the existing manifest that still
	// describe the tree: they stay in the manifest.
	record map[string]string
	notes  []string // printed after the table
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
// conflicts. rec is the manifest found before the run; its entries are
// checked against the tree (checkRecord) before they are trusted.
func makePlan(ctx context.Context, opts Options, dir direction, rec *manifest) (*plan, error) {
	names, err := opts.fs.ReadDirNames(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("%s: read workflows directory: %w", dir, err)
	}
	sort.Strings(names)
	present := make(map[string]bool, len(names))
	for _, n := range names {
		present[n] = true
	}
	p := &plan{dir: opts.Dir, conflicting: map[string]bool{}, fingerprints: map[string]string{}, record: map[string]string{}}
	stale := checkRecord(ctx, opts, rec, present)
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
			if !recordable(name) {
				p.conflicting[name] = true
				p.conflicts = append(p.conflicts, Conflict{
					Path:    filepath.Join(opts.Dir, name),
					Problem: fmt.Sprintf("its name cannot be recorded in %s (it starts with # or holds a line break)", ManifestName),
					Fix:     "rename it, or keep it enabled with --keep",
				})
			}
		case isDisabledWorkflow(name):
			if dir == disable {
				p.entries = append(p.entries, entryPlan{name: name, status: StatusAlreadyDisabled})
				continue
			}
			target = strings.TrimSuffix(name, DisabledSuffix)
			if !opts.All && !rec.has(target) {
				p.entries = append(p.entries, entryPlan{name: name, status: StatusLeftDisabled})
				continue
			}
			if !opts.All && stale[target] != "" {
				p.entries = append(p.entries, entryPlan{name: name, status: StatusStale})
				continue
			}
		default:
			continue // not a workflow: leave it alone
		}
		if c, ok := checkSource(opts, name); !ok {
			p.conflicts = append(p.conflicts, c)
			p.conflicting[name] = true
		} else if dir == disable {
			fp, err := fingerprint(opts.fs, filepath.Join(opts.Dir, name))
			if err != nil {
				p.conflicting[name] = true
				p.conflicts = append(p.conflicts, Conflict{Path: filepath.Join(opts.Dir, name),
					Problem: fmt.Sprintf("cannot read it: %v", err), Fix: "fix its permissions"})
			}
			p.fingerprints[name] = fp
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
	staleNames := sortedNames(stale)
	switch {
	case dir == disable:
		// The record keeps what still describes the tree; this run adds to it.
		for name, fp := range rec.entries {
			if present[name+DisabledSuffix] && !present[name] && stale[name] == "" {
				p.record[name] = fp
			}
		}
		if len(staleNames) > 0 {
			p.notes = append(p.notes, fmt.Sprintf("dropped from the record, so enable leaves them disabled: %s", staleReasons(staleNames, stale)))
		}
	case opts.All:
	case !rec.exists:
		p.notes = append(p.notes, nothingToEnable(opts.Dir, p))
	default:
		// A listed workflow found neither disabled nor enabled was deleted
		// (or renamed) after Disable ran: say so, rename the rest.
		missing := false
		for _, name := range rec.sorted() {
			if !present[name+DisabledSuffix] && !present[name] {
				p.entries = append(p.entries, entryPlan{name: name + DisabledSuffix, status: StatusMissing})
				missing = true
			}
		}
		if missing {
			sort.SliceStable(p.entries, func(i, j int) bool { return p.entries[i].name < p.entries[j].name })
		}
		if len(staleNames) > 0 {
			p.notes = append(p.notes, fmt.Sprintf("%s does not describe these any more, so they stay disabled: %s; "+
				"rename back by hand the ones you want, or use enable --all", filepath.Join(opts.Dir, ManifestName), staleReasons(staleNames, stale)))
		}
	}
	return p, nil
}

func staleReasons(names []string, stale map[string]string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + DisabledSuffix + " (" + stale[n] + ")"
	}
	return strings.Join(parts, "; ")
}

// nothingToEnable is the note of an Enable without a manifest: there is
// nothing to do (the usual case: enable already ran), and any disabled
// workflow was disabled by someone else.
func nothingToEnable(dir string, p *plan) string {
	var disabled []string
	for _, e := range p.entries {
		if e.status == StatusLeftDisabled {
			disabled = append(disabled, e.name)
		}
	}
	msg := fmt.Sprintf("nothing to enable: %s does not exist, so debugflow disable renamed nothing here (or enable already ran)", filepath.Join(dir, ManifestName))
	if len(disabled) > 0 {
		msg += fmt.Sprintf("; %d workflow(s) disabled otherwise stay disabled (%s): rename back the ones you want, "+
			"or run debugflow enable --all to rename every *.yml.disabled / *.yaml.disabled back", len(disabled), strings.Join(disabled, ", "))
	}
	return msg
}

// checkSource verifies that name is a readable regular file or a symbolic
// link. A link is renamed itself, its target text unchanged (dangling or
// not): after Disable, link.yml -> ci.yml becomes link.yml.disabled ->
// ci.yml, and Enable puts it back as it was.
func checkSource(opts Options, name string) (Conflict, bool) {
	path := filepath.Join(opts.Dir, name)
	info, err := opts.fs.Lstat(path)
	switch {
	case err != nil:
		return Conflict{Path: path, Problem: fmt.Sprintf("cannot stat it: %v", err),
			Fix: "fix or remove the file"}, false
	case info.Mode()&os.ModeSymlink != 0:
		return Conflict{}, true
	case info.IsDir():
		return Conflict{Path: path, Problem: "it is a directory, not a workflow file",
			Fix: "rename the directory so its name does not end in .yml, .yaml or .disabled"}, false
	case !info.Mode().IsRegular():
		return Conflict{Path: path, Problem: fmt.Sprintf("it is not a regular file (%s)", readfile.Kind(info.Mode())),
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
	Readlink(path string) (string, error)
	CheckReadable(path string) error
	Lstat(path string) (os.FileInfo, error)
	Rename(from, to string) error
	ReadFile(path string) ([]byte, error)
	// WriteFile replaces path's content atomically (mode 0644).
	WriteFile(path string, data []byte) error
	Remove(path string) error
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
func (osFileSystem) Readlink(path string) (string, error)   { return os.Readlink(path) }
func (osFileSystem) Lstat(path string) (os.FileInfo, error) { return os.Lstat(path) }
func (osFileSystem) Rename(from, to string) error           { return os.Rename(from, to) }

// ReadFile reads a regular file (the record, a workflow to fingerprint): a FIFO or a device
// swapped in after the caller's Lstat is refused, never waited on.
func (osFileSystem) ReadFile(path string) ([]byte, error) {
	f, _, err := readfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (osFileSystem) Remove(path string) error { return os.Remove(path) }

// WriteFile writes a temporary file next to path and renames it over path,
// so a reader (or a crash) never sees half a manifest.
func (osFileSystem) WriteFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	err = errors.Join(werr, cerr)
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func (osFileSystem) CheckReadable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

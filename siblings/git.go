package siblings

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GitRunner runs git with args in dir and returns its standard output. It
// is the seam through which this package reaches git.
type GitRunner interface {
	Run(ctx context.Context, dir string, args ...string) ([]byte, error)
}

// ExecGit runs the git executable.
type ExecGit struct {
	// Path is the git executable; "" looks up "git" on PATH.
	Path string
}

// errNoGit is returned by ExecGit when no git executable is found.
var errNoGit = errors.New("git executable not found")

// Run implements GitRunner. The error includes git's standard error.
func (g ExecGit) Run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	path := g.Path
	if path == "" {
		p, err := exec.LookPath("git")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errNoGit, err)
		}
		path = p
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return stdout.Bytes(), fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return stdout.Bytes(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// mover renames files, with `git mv` for those Git tracks.
type mover struct {
	dir     string
	fs      fileSystem
	git     GitRunner
	tracked map[string]bool // file names inside dir that Git tracks
}

// newMover finds out whether dir is in a Git work tree and which of its
// files are tracked. Outside a work tree, or without git, every rename is
// plain.
func newMover(ctx context.Context, opts Options) (*mover, error) {
	m := &mover{dir: opts.Dir, fs: opts.fs, git: opts.Git, tracked: map[string]bool{}}
	if m.git == nil {
		m.git = ExecGit{}
	}
	out, err := m.git.Run(ctx, m.dir, "rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(string(out)) != "true" {
		m.git = nil // not a work tree (or no git): plain renames
		return m, nil
	}
	out, err = m.git.Run(ctx, m.dir, "ls-files", "-z", "--")
	if err != nil {
		return nil, fmt.Errorf("list tracked files in %s: %w", m.dir, err)
	}
	for _, name := range strings.Split(string(out), "\x00") {
		if name != "" && !strings.Contains(name, "/") {
			m.tracked[name] = true
		}
	}
	return m, nil
}

// apply performs the moves in order. If one fails, the moves already done
// are undone, so the directory is left as it was.
func (m *mover) apply(ctx context.Context, moves []move) error {
	for i, mv := range moves {
		if err := m.rename(ctx, mv.from, mv.to); err != nil {
			err = fmt.Errorf("rename %s to %s: %w", filepath.Join(m.dir, mv.from), mv.to, err)
			return m.rollback(ctx, moves[:i], err)
		}
	}
	return nil
}

// rollback undoes done, the moves already made, in reverse order, and
// returns cause with what became of them.
func (m *mover) rollback(ctx context.Context, done []move, cause error) error {
	var undoErrs []error
	for j := len(done) - 1; j >= 0; j-- {
		if err := m.rename(ctx, done[j].to, done[j].from); err != nil {
			undoErrs = append(undoErrs, fmt.Errorf("undo %s: %w", done[j].to, err))
		}
	}
	if len(undoErrs) > 0 {
		return fmt.Errorf("%w; undoing the %d earlier rename(s) failed: %w", cause, len(done), errors.Join(undoErrs...))
	}
	return fmt.Errorf("%w (the %d earlier rename(s) were undone)", cause, len(done))
}

// applyManifest writes or deletes the manifest as c says and updates Git's
// index to match (setting c.inGit). On failure the manifest is put back as
// it was.
func (m *mover) applyManifest(ctx context.Context, c *manifestChange) error {
	switch c.op {
	case manifestWrite:
		if err := m.fs.WriteFile(c.path, c.content); err != nil {
			return fmt.Errorf("write %s: %w", c.path, err)
		}
		if m.git == nil {
			return nil
		}
		// -f: the commit must carry the manifest even if an ignore rule
		// matches it, or enable in another clone would find no record.
		if _, err := m.git.Run(ctx, m.dir, "add", "-f", "--", ManifestName); err != nil {
			return m.restoreManifest(c, fmt.Errorf("stage %s: %w", c.path, err))
		}
		c.inGit = true
	case manifestRemove:
		// Delete first: `git rm --cached` then never refuses over content
		// that differs between the file, the index and HEAD.
		if err := m.fs.Remove(c.path); err != nil {
			return fmt.Errorf("delete %s: %w", c.path, err)
		}
		if m.git == nil || !m.tracked[ManifestName] {
			return nil
		}
		if _, err := m.git.Run(ctx, m.dir, "rm", "-q", "--cached", "--", ManifestName); err != nil {
			return m.restoreManifest(c, fmt.Errorf("unstage %s: %w", c.path, err))
		}
		c.inGit = true
	}
	return nil
}

// restoreManifest puts the manifest back as it was before the run after
// cause, the failure of a later step.
func (m *mover) restoreManifest(c *manifestChange, cause error) error {
	var err error
	if c.old.exists {
		err = m.fs.WriteFile(c.path, c.old.raw)
	} else {
		err = m.fs.Remove(c.path)
	}
	if err != nil {
		return fmt.Errorf("%w; restoring %s failed: %w", cause, c.path, err)
	}
	return cause
}

func (m *mover) rename(ctx context.Context, from, to string) error {
	// The plan checked that no target exists; check again right before the
	// rename, which would otherwise replace a file created meanwhile.
	if _, err := m.fs.Lstat(filepath.Join(m.dir, to)); err == nil {
		return fmt.Errorf("%s appeared while renaming: %w", to, os.ErrExist)
	}
	if m.git != nil && m.tracked[from] {
		if _, err := m.git.Run(ctx, m.dir, "mv", "--", from, to); err != nil {
			return err
		}
		delete(m.tracked, from)
		m.tracked[to] = true
		return nil
	}
	return m.fs.Rename(filepath.Join(m.dir, from), filepath.Join(m.dir, to))
}

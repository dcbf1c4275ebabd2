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
			var undoErrs []error
			for j := i - 1; j >= 0; j-- {
				if uerr := m.rename(ctx, moves[j].to, moves[j].from); uerr != nil {
					undoErrs = append(undoErrs, fmt.Errorf("undo %s: %w", moves[j].to, uerr))
				}
			}
			if len(undoErrs) > 0 {
				return fmt.Errorf("%w; undoing the %d earlier rename(s) failed: %w", err, i, errors.Join(undoErrs...))
			}
			return fmt.Errorf("%w (the %d earlier rename(s) were undone)", err, i)
		}
	}
	return nil
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

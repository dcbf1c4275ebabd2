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
	"time"
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
	// No optional locks: a `git status` that would refresh the index in passing cannot
	// leave .git/index.lock behind when the context kills it.
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	ownProcessGroup(cmd)
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

// gitWriteTimeout bounds one git command that changes the index. Such a command runs on a
// context the caller's cancellation does not reach: killed half-way, it would leave
// .git/index.lock, and a later run of git (or of debugflow) would refuse to start.
const gitWriteTimeout = time.Minute

// lockWait is how long a run waits for .git/index.lock to go before it changes anything:
// the git of an earlier, killed run may still be finishing (it runs in its own process group,
// so it outlives debugflow).
var lockWait = 5 * time.Second

// mover renames files, with `git mv` for those Git tracks.
type mover struct {
	dir     string
	fs      fileSystem
	git     GitRunner
	tracked map[string]bool // file names inside dir that Git tracks
}

// newMover finds out whether dir is in a Git work tree and which of its
// files are tracked, and waits for the index to be free. Outside a work
// tree, or without git, every rename is plain.
func newMover(ctx context.Context, opts Options) (*mover, error) {
	m := &mover{dir: opts.Dir, fs: opts.fs, git: opts.Git, tracked: map[string]bool{}}
	if m.git == nil {
		m.git = ExecGit{}
	}
	out, err := m.git.Run(ctx, m.dir, "rev-parse", "--is-inside-work-tree", "--git-path", "index.lock")
	if ctx.Err() != nil {
		// A cancelled git says nothing about the tree: never mistake it for "no work tree".
		return nil, ctx.Err()
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if err != nil || lines[0] != "true" {
		m.git = nil // not a work tree (or no git): plain renames
		return m, nil
	}
	if len(lines) > 1 && lines[1] != "" {
		lock := lines[1]
		if !filepath.IsAbs(lock) {
			lock = filepath.Join(m.dir, lock)
		}
		if err := waitUnlocked(ctx, lock); err != nil {
			return nil, err
		}
	}
	out, err = m.git.Run(ctx, m.dir, "ls-files", "-z", "--")
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("list tracked files in %s: %w", m.dir, err)
	}
	for _, name := range strings.Split(string(out), "\x00") {
		if name != "" && !strings.Contains(name, "/") {
			m.tracked[name] = true
		}
	}
	return m, nil
}

// waitUnlocked waits up to lockWait for Git's index lock to go. One that stays
// means another git command is running here, or one was killed (by someone
// else: debugflow's own git is never killed half-way); nothing has changed yet,
// so the run stops and says what to do.
func waitUnlocked(ctx context.Context, lock string) error {
	deadline := time.Now().Add(lockWait)
	for {
		if _, err := os.Lstat(lock); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s exists, so Git's index is in use: another git command is running in this repository, "+
				"or one was killed; if no git is running, delete %s and run again", lock, lock)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// gitWrite runs a git command that changes the index to its end, whatever
// happens to ctx (see gitWriteTimeout).
func (m *mover) gitWrite(ctx context.Context, args ...string) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gitWriteTimeout)
	defer cancel()
	_, err := m.git.Run(wctx, m.dir, args...)
	return err
}

// apply performs the moves in order. If one fails, or ctx is cancelled
// between two, the moves already done are undone, so the directory is left
// as it was.
func (m *mover) apply(ctx context.Context, moves []move) error {
	for i, mv := range moves {
		if err := ctx.Err(); err != nil {
			return m.rollback(ctx, moves[:i], fmt.Errorf("interrupted: %w", err))
		}
		if err := m.rename(ctx, mv.from, mv.to); err != nil {
			err = fmt.Errorf("rename %s to %s: %w", filepath.Join(m.dir, mv.from), mv.to, err)
			return m.rollback(ctx, moves[:i], err)
		}
	}
	return nil
}

// rollback undoes done, the moves already made, in reverse order, and
// returns cause with what became of them. It runs to its end even when ctx
// is cancelled: that is usually why it runs.
func (m *mover) rollback(ctx context.Context, done []move, cause error) error {
	ctx = context.WithoutCancel(ctx)
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

// removeStaleTemps deletes the temporary manifests (osFileSystem.WriteFile)
// of a run killed while it wrote one.
func (m *mover) removeStaleTemps() {
	names, _ := m.fs.ReadDirNames(m.dir)
	for _, n := range names {
		if strings.HasPrefix(n, ManifestName+".tmp-") {
			m.fs.Remove(filepath.Join(m.dir, n))
		}
	}
}

// writeIntent writes the manifest Disable plans before it renames anything:
// whenever a run stops, by a failure, a signal or SIGKILL, every workflow it
// renamed is listed, so Enable (or Disable again) finishes or undoes it.
func (m *mover) writeIntent(c *manifestChange) error {
	if c.op != manifestWrite {
		return nil
	}
	if err := m.fs.WriteFile(c.path, c.content); err != nil {
		return fmt.Errorf("write %s: %w", c.path, err)
	}
	return nil
}

// finishManifest completes the manifest's change after the renames: Disable
// stages the manifest (also an unchanged one, which a killed run may have
// left unstaged); Enable removes it from the index, then deletes it, the
// last step, so a run killed before leaves the record for the next one. It
// sets c.inGit when the index changed. On failure the manifest's index entry
// is as it was; the caller undoes the renames, then the manifest
// (restoreManifest).
func (m *mover) finishManifest(ctx context.Context, c *manifestChange) error {
	switch c.op {
	case manifestWrite, manifestUnchanged:
		if m.git == nil {
			return nil
		}
		// -f: the commit must carry the manifest even if an ignore rule
		// matches it, or enable in another clone would find no record.
		if err := m.gitWrite(ctx, "add", "-f", "--", ManifestName); err != nil {
			return fmt.Errorf("stage %s: %w", c.path, err)
		}
		c.inGit = c.op == manifestWrite
	case manifestRemove:
		if m.git != nil && m.tracked[ManifestName] {
			// -f: the staged manifest is debugflow's own record, deleted next.
			if err := m.gitWrite(ctx, "rm", "-q", "-f", "--cached", "--", ManifestName); err != nil {
				return fmt.Errorf("unstage %s: %w", c.path, err)
			}
			c.inGit = true
		}
		if err := m.fs.Remove(c.path); err != nil {
			err = fmt.Errorf("delete %s: %w", c.path, err)
			if c.inGit {
				if aerr := m.gitWrite(ctx, "add", "-f", "--", ManifestName); aerr != nil {
					err = fmt.Errorf("%w; staging it again failed: %w", err, aerr)
				}
				c.inGit = false
			}
			return err
		}
	}
	return nil
}

// restoreManifest puts the manifest back as it was before the run after
// cause, the failure of a later step (Disable's intent is replaced by the
// old record, or deleted). Enable never changed it before its last step.
func (m *mover) restoreManifest(c *manifestChange, cause error) error {
	if c.op != manifestWrite {
		return cause
	}
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
		if err := m.gitWrite(ctx, "mv", "--", from, to); err != nil {
			return err
		}
		delete(m.tracked, from)
		m.tracked[to] = true
		return nil
	}
	return m.fs.Rename(filepath.Join(m.dir, from), filepath.Join(m.dir, to))
}

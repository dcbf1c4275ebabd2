package bisect

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/gitcmd"
	"io"
	"os/exec"
	"strings"
)

// Git runs git in a repository: the seam tests could replace, and the one place bisect
// reaches git for the range (the runners check commits out through package refrun).
type Git struct {
	// Dir is a folder inside the repository ("" = the current one).
	Dir string
}

func (g Git) run(ctx context.Context, args ...string) (string, error) {
	return gitcmd.Output(ctx, g.Dir, args...)
}

// TopLevel is the repository's top folder.
func (g Git) TopLevel(ctx context.Context) (string, error) {
	dir, err := g.run(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("bisect runs inside the project's git repository: %w", err)
	}
	return dir, nil
}

// Resolve returns the full commit id of ref (a branch, tag or commit; else origin/REF).
func (g Git) Resolve(ctx context.Context, ref string) (string, error) {
	if ref == "" || strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, " \t\n\r\x00") || len(ref) > 1024 {
		return "", fmt.Errorf("%q is not a branch, tag or commit", ref)
	}
	for _, cand := range []string{ref, "origin/" + ref} {
		if out, err := g.run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", cand+"^{commit}"); err == nil && out != "" {
			return out, nil
		}
	}
	return "", fmt.Errorf("%q is not a commit, branch or tag of this repository (nor origin/%s): fetch it first", ref, ref)
}

// Range resolves good and bad and lists the candidates: the first-parent history of bad
// back to (not including) what good already has, oldest first, with their subject lines.
// Good must be an ancestor of bad.
func (g Git) Range(ctx context.Context, good, bad string) (RefCommit, RefCommit, []Commit, error) {
	gc, err := g.Resolve(ctx, good)
	if err != nil {
		return RefCommit{}, RefCommit{}, nil, fmt.Errorf("--good: %w", err)
	}
	bc, err := g.Resolve(ctx, bad)
	if err != nil {
		return RefCommit{}, RefCommit{}, nil, fmt.Errorf("--bad: %w", err)
	}
	goodRC, badRC := RefCommit{Ref: good, Commit: gc}, RefCommit{Ref: bad, Commit: bc}
	if gc == bc {
		return goodRC, badRC, nil, fmt.Errorf("--good and --bad are the same commit %s", short(gc))
	}
	if _, err := g.run(ctx, "merge-base", "--is-ancestor", gc, bc); err != nil {
		return goodRC, badRC, nil, fmt.Errorf("--good %s is not an ancestor of --bad %s: bisect needs the good commit in the bad one's history", good, bad)
	}
	args := []string{"log", "--first-parent", "--reverse", "--format=%H%x00%s", "--end-of-options", gc + ".." + bc}
	if g.Dir != "" {
		args = append([]string{"-C", g.Dir}, args...)
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return goodRC, badRC, nil, err
	}
	if err := cmd.Start(); err != nil {
		return goodRC, badRC, nil, fmt.Errorf("git log: %w", err)
	}
	var commits []Commit
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var tooMany bool
	for sc.Scan() {
		if len(commits) == maxCommits {
			tooMany = true
			break
		}
		id, subject, _ := strings.Cut(sc.Text(), "\x00")
		commits = append(commits, Commit{Commit: id, Subject: subject})
	}
	scanErr := sc.Err()
	if tooMany || scanErr != nil {
		io.Copy(io.Discard, stdout)
	}
	if err := cmd.Wait(); err != nil {
		return goodRC, badRC, nil, fmt.Errorf("git log %s..%s: %s", good, bad, strings.TrimSpace(stderr.String()))
	}
	switch {
	case tooMany:
		return goodRC, badRC, nil, fmt.Errorf("more than %d commits between --good and --bad", maxCommits)
	case scanErr != nil:
		return goodRC, badRC, nil, fmt.Errorf("git log: %w", scanErr)
	case len(commits) == 0 || commits[len(commits)-1].Commit != bc:
		return goodRC, badRC, nil, errors.New("git log listed no commit ending at --bad")
	}
	return goodRC, badRC, commits, nil
}

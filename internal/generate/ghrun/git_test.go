package ghrun

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// gitRepo makes a real repository with one commit on branch and an origin remote.
func gitRepo(t *testing.T, branch, origin string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed for this test: %v", err)
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", branch)
	run("commit", "-q", "--allow-empty", "-m", "first")
	if origin != "" {
		run("remote", "add", "origin", origin)
	}
	return dir
}

func TestGit(t *testing.T) {
	ctx := context.Background()
	dir := gitRepo(t, "debug/t4-corruption", "git@github.com:acme/kernels.git")
	g := Git{Dir: dir}
	origin, err := g.Origin(ctx)
	if err != nil || origin != "git@github.com:acme/kernels.git" {
		t.Fatalf("Origin = %q, %v", origin, err)
	}
	branch, err := g.Branch(ctx)
	if err != nil || branch != "debug/t4-corruption" {
		t.Fatalf("Branch = %q, %v", branch, err)
	}

	detach := exec.Command("git", "checkout", "-q", "--detach")
	detach.Dir = dir
	if out, err := detach.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if _, err := g.Branch(ctx); err == nil || !strings.Contains(err.Error(), "not on a branch") {
		t.Errorf("detached HEAD: err = %v", err)
	}

	noRemote := Git{Dir: gitRepo(t, "main", "")}
	if _, err := noRemote.Origin(ctx); err == nil || !strings.Contains(err.Error(), "git remote get-url origin") {
		t.Errorf("no origin: err = %v", err)
	}
}

func TestRedactUserinfo(t *testing.T) {
	in := "fatal: unable to access 'https://x:" + testToken + "@github.com/acme/kernels/': and ssh://git@host/a"
	got := redactUserinfo(in)
	want := "fatal: unable to access 'https://***@github.com/acme/kernels/': and ssh://***@host/a"
	if got != want {
		t.Fatalf("redactUserinfo = %q, want %q", got, want)
	}
}

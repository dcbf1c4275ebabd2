package steps

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/refinfo"
)

// TestRefInfoRecordsCommit runs the verb in a real git checkout: the recorded commit is HEAD.
func TestRefInfoRecordsCommit(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	writeFile(t, filepath.Join(repo, "f"), "x")
	git("add", "f")
	git("commit", "-qm", "one")
	head := git("rev-parse", "HEAD")

	out := t.TempDir()
	path, _ := exec.LookPath("git")
	r := runStep(t, out, []string{"PATH=" + filepath.Dir(path)}, "ref-info", "--out", out, "--name", "pin",
		"--ref", "duburcqa/turing_stream_pin_experiment", "--runner", "gpu-t4-4-core", "--round", "2", "--rounds", "8", "--dir", repo)
	if r.code != 0 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	got, err := refinfo.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	want := refinfo.Info{Name: "pin", Ref: "duburcqa/turing_stream_pin_experiment", Commit: head, Runner: "gpu-t4-4-core", Round: 2, Rounds: 8}
	if *got != want {
		t.Errorf("ref.json = %+v, want %+v", *got, want)
	}
	if !strings.Contains(r.stdout, "round 2 of 8") {
		t.Errorf("stdout %q", r.stdout)
	}
}

// Bad values are usage errors and nothing is written.
func TestRefInfoRejects(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	r := runStep(t, out, []string{"PATH=" + t.TempDir()}, "ref-info", "--out", out, "--commit", "abc",
		"--name", "a/b", "--ref", "main", "--runner", "r", "--round", "3")
	if r.code != 2 || !strings.Contains(r.stderr, `name "a/b"`) || !strings.Contains(r.stderr, "round 3 of 0") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := refinfo.Load(out); err == nil {
		t.Error("ref.json written despite the error")
	}
}

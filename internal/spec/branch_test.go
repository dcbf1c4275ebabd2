package spec

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBranchNameAgreesWithGit checks branchNameProblem against git check-ref-format --branch:
// every name git refuses is refused, every name it takes is taken.
func TestBranchNameAgreesWithGit(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"debug/cuda-t4-repro", true},
		{"a", true},
		{"@", true},
		{"a@b", true},
		{"a/-b", true},
		{"a.lock.x", true},
		{"ü/ñ", true},
		{"a-b_c+d", true},
		{"-x", false},
		{"HEAD", false},
		{"a..b", false},
		{"a/.b", false},
		{".a", false},
		{"a/./b", false},
		{"x/.lock", false},
		{"a.lock", false},
		{"a/b.lock/c", false},
		{"a b", false},
		{" a", false},
		{"a~1", false},
		{"a^", false},
		{"a:b", false},
		{"a?", false},
		{"a*", false},
		{"a[b", false},
		{`a\b`, false},
		{"a/", false},
		{"/a", false},
		{"a//b", false},
		{"a.", false},
		{"a@{b", false},
		{"@{-1}", false},
		{"a\tb", false},
		{"a\x01b", false},
		{"a\x7fb", false},
	}
	dir := t.TempDir() // outside any repository
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("git", "check-ref-format", "--branch", tt.name)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if gitOK := err == nil; gitOK != tt.ok {
				t.Fatalf("the table says ok=%v but git check-ref-format --branch %q says %v (%s)", tt.ok, tt.name, gitOK, strings.TrimSpace(string(out)))
			}
			problem := branchNameProblem(tt.name)
			if (problem == "") != tt.ok {
				t.Errorf("branchNameProblem(%q) = %q, git says ok=%v", tt.name, problem, tt.ok)
			}
		})
	}
}

// TestBranchRefusedNamingTheKey checks the spec error: the key, the name and the rule.
func TestBranchRefusedNamingTheKey(t *testing.T) {
	data := "runners: [gpu-t4-4-core]\ntriggers: {workflow_dispatch: true}\nreproducer: {paths: [tests]}\nworkflow:\n  branch: debug/fix..it\n"
	_, err := Parse("debugflow.yaml", []byte(data))
	want := `debugflow.yaml:5:3: workflow.branch: "debug/fix..it" is not a branch name git accepts: it contains ".."`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

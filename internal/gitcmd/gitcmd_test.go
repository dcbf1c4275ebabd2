package gitcmd

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

func TestOutput(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed:", err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := Output(ctx, dir, "init", "-q", "-b", "main"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		want    string
		wantErr string
	}{
		{"trimmed stdout", []string{"symbolic-ref", "--short", "HEAD"}, "main", ""},
		{"stderr in the error", []string{"rev-parse", "--verify", "no-such-ref"}, "", "git -C " + dir + " rev-parse --verify no-such-ref: fatal: Needed a single revision"},
		{"unknown verb", []string{"no-such-verb"}, "", "is not a git command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Output(ctx, dir, tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Output = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

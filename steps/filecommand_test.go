package steps_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/runner/jobsetup"
	"github.com/debugflow/debugflow/steps"
	"github.com/sethvargo/go-githubactions"
)

// The delimiter go-githubactions writes around every $GITHUB_ENV and $GITHUB_OUTPUT value.
const fixedDelimiter = "_GitHubActionsFileCommandDelimeter_"

// A value written to $GITHUB_ENV or $GITHUB_OUTPUT reaches the later steps whole and sets
// nothing else, whatever lines it holds, as the runner reads the file
// (jobsetup.ParseFileCommand). Before, the values went out between go-githubactions' fixed
// delimiter, so a compiler-cache --dir (or an init --root) holding that line ended the value
// and set LD_PRELOAD for every later step.
func TestFileCommandsCannotBeInjected(t *testing.T) {
	t.Parallel()
	evil := "c\n" + fixedDelimiter + "\nLD_PRELOAD=/evil.so\nX<<" + fixedDelimiter
	tests := []struct {
		name string
		run  func(env *steps.Env, dir string) (string, error)
		file string // GITHUB_ENV or GITHUB_OUTPUT
		want map[string]func(dir string) string
	}{
		{"compiler-cache --dir", func(env *steps.Env, dir string) (string, error) {
			return "", steps.RunCompilerCache(context.Background(), env, steps.CompilerCacheOptions{Tool: "sccache", Dir: filepath.Join(dir, evil)})
		}, "GITHUB_ENV", map[string]func(string) string{"SCCACHE_DIR": func(dir string) string { return filepath.Join(dir, evil) }}},
		{"init --root: $GITHUB_ENV", func(env *steps.Env, dir string) (string, error) {
			return steps.RunInit(env, steps.InitOptions{Root: filepath.Join(dir, evil)})
		}, "GITHUB_ENV", map[string]func(string) string{steps.EvidenceEnv: nil}},
		{"init --root: $GITHUB_OUTPUT", func(env *steps.Env, dir string) (string, error) {
			return steps.RunInit(env, steps.InitOptions{Root: filepath.Join(dir, evil)})
		}, "GITHUB_OUTPUT", map[string]func(string) string{"dir": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"GITHUB_ENV": filepath.Join(dir, "env"), "GITHUB_OUTPUT": filepath.Join(dir, "output")}
			vars := map[string]string{"HOME": dir, "PATH": "/nonexistent", "GITHUB_ENV": files["GITHUB_ENV"], "GITHUB_OUTPUT": files["GITHUB_OUTPUT"]}
			getenv := func(k string) string { return vars[k] }
			var stdout bytes.Buffer
			env := steps.NewEnv()
			env.Stdout, env.Stderr, env.Getenv = &stdout, &stdout, getenv
			env.Environ = func() []string { return nil }
			env.LookPath = func(file string) (string, error) { return steps.LookPathIn(vars["PATH"], file) }
			env.Action = githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(&stdout))
			made, err := tt.run(env, dir)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(files[tt.file])
			if err != nil {
				t.Fatal(err)
			}
			got, err := jobsetup.ParseFileCommand(string(b))
			if err != nil {
				t.Fatalf("the runner cannot read $%s: %v\n%s", tt.file, err, b)
			}
			if len(got) != len(tt.want) {
				t.Errorf("$%s sets %d variables, want %d: %q", tt.file, len(got), len(tt.want), got)
			}
			for _, v := range got {
				want, ok := tt.want[v.Name]
				wantValue := made
				if want != nil {
					wantValue = want(dir)
				}
				if !ok || v.Value != wantValue || !strings.Contains(v.Value, "LD_PRELOAD") {
					t.Errorf("$%s: %s=%q, want only %q", tt.file, v.Name, v.Value, wantValue)
				}
			}
		})
	}
}

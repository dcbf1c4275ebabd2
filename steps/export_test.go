package steps

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExport(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	llvm := filepath.Join(work, "llvm 22")
	if err := os.MkdirAll(filepath.Join(llvm, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		opts     ExportOptions
		wantCode int
		wantEnv  string // the value in $GITHUB_ENV
		wantPath string // the line in $GITHUB_PATH
		wantErr  string
	}{
		{"last line of a pipe, with a path", ExportOptions{Name: "LLVM_DIR", Path: "bin",
			Command: "echo banner; echo '" + llvm + "' | tail -n 1"}, 1, "", "", "printed 2 lines"},
		{"value and path", ExportOptions{Name: "LLVM_DIR", Path: "bin",
			Command: "{ echo banner; echo '" + llvm + "'; } | tail -n 1"}, 0, llvm, filepath.Join(llvm, "bin"), ""},
		{"the value itself on PATH", ExportOptions{Name: "TOOLS", Path: ".", Command: "echo '" + llvm + "'"}, 0, llvm, llvm, ""},
		{"reads the step env", ExportOptions{Name: "BUILD_DIR", Command: `echo "$WORK/$SUB"`}, 0, work + "/_skbuild x", "", ""},
		{"runs in Dir", ExportOptions{Name: "HERE", Command: "pwd", Dir: llvm}, 0, llvm, "", ""},
		{"a failing pipe fails", ExportOptions{Name: "X", Command: "false | echo value"}, 1, "", "", "exited 1"},
		{"nothing printed", ExportOptions{Name: "X", Command: "true"}, 1, "", "", "printed nothing"},
		// A daemon the command starts (a compiler cache's server) keeps stdout open after the
		// shell exits 0: the value is what it printed. Before, the step failed with "exec:
		// WaitDelay expired before I/O complete".
		{"a background process keeps stdout open", ExportOptions{Name: "X", Command: "sleep 30 & echo " + work}, 0, work, "", ""},
		{"stderr is not the value", ExportOptions{Name: "X", Command: "echo oops >&2"}, 1, "", "", "printed nothing"},
		{"bad name", ExportOptions{Name: "1X", Command: "echo x"}, 2, "", "", "want a variable name"},
		{"PATH is the runner's", ExportOptions{Name: "PATH", Command: "echo /x"}, 2, "", "", "export another and use --path"},
		{"path leaves the value", ExportOptions{Name: "X", Path: "../up", Command: "echo /x"}, 2, "", "", "want a folder under $X"},
		{"no command", ExportOptions{Name: "X"}, 2, "", "", "--command is empty"},
		// $GITHUB_PATH is read a line at a time: a line break would put a second folder on PATH.
		{"a path of two lines", ExportOptions{Name: "X", Path: "bin\n/tmp/evil", Command: "echo " + work}, 2, "", "", "--path \"bin\\n/tmp/evil\": one line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := t.TempDir()
			ghEnv, ghPath := filepath.Join(files, "env"), filepath.Join(files, "path")
			for _, f := range []string{ghEnv, ghPath} {
				if err := os.WriteFile(f, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			te := newTestEnv(t, map[string]string{"PATH": os.Getenv("PATH"), "GITHUB_ENV": ghEnv, "GITHUB_PATH": ghPath,
				"WORK": work, "SUB": "_skbuild x"})
			err := RunExport(context.Background(), te.Env, tt.opts)
			if got := ExitCodeFor(err); got != tt.wantCode || (tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr))) {
				t.Fatalf("RunExport: exit %d, %v; want exit %d with %q", got, err, tt.wantCode, tt.wantErr)
			}
			env, _ := os.ReadFile(ghEnv)
			path, _ := os.ReadFile(ghPath)
			if tt.wantEnv == "" {
				if len(env) > 0 || len(path) > 0 {
					t.Errorf("wrote GITHUB_ENV %q, GITHUB_PATH %q on failure", env, path)
				}
				return
			}
			if got := readOutputs(t, ghEnv)[tt.opts.Name]; got != tt.wantEnv {
				t.Errorf("GITHUB_ENV %s=%q, want %q (file %q)", tt.opts.Name, got, tt.wantEnv, env)
			}
			if strings.TrimSuffix(string(path), "\n") != tt.wantPath {
				t.Errorf("GITHUB_PATH %q, want %q", path, tt.wantPath)
			}
			if !strings.Contains(te.stdout.String(), tt.opts.Name+"="+tt.wantEnv) {
				t.Errorf("the log does not show the value:\n%s", te.stdout.String())
			}
		})
	}
}

// Without the runner's files (a terminal) the verb prints what it would export.
func TestExportInATerminal(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t, map[string]string{"PATH": os.Getenv("PATH")})
	if err := RunExport(context.Background(), te.Env, ExportOptions{Name: "D", Path: "bin", Command: "echo /opt/d"}); err != nil {
		t.Fatal(err)
	}
	out := te.stdout.String()
	if !strings.Contains(out, "export D=/opt/d\n") || !strings.Contains(out, "export PATH=/opt/d/bin:$PATH\n") {
		t.Errorf("output:\n%s", out)
	}
	if !strings.Contains(te.stderr.String(), "/opt/d/bin is not a folder") {
		t.Errorf("no warning for a missing PATH folder:\n%s", te.stderr.String())
	}
}

package report

import (
	"bytes"
	"errors"
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/templates"
)

// checkGolden compares got with the golden file, rewriting it under -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	golden.Check(t, path, got)
}

// goldenCases are the artifact directories under testdata/ with want.json, want.md and want.txt.
var goldenCases = []string{"t4_reproduced", "clean_run", "sanitizer_inconclusive", "only_reproducer_log", "cancelled", "setup_failed", "first_error_cut",
	"t4_evidence", "runner_suspect", "gpu_tools_missing"}

// inputsOf lists the artifact files of a case directory (the want.* files are not inputs).
func copyCase(t *testing.T, name, to string) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "want") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

func TestGolden(t *testing.T) {
	for _, name := range goldenCases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			v, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			v.Run.Dir = "" // the text names the directory; keep the golden independent of it
			var js bytes.Buffer
			if err := v.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join(dir, "want.json"), js.Bytes())
			checkGolden(t, filepath.Join(dir, "want.md"), []byte(v.Markdown("debug_cuda_repro_artifacts")))
			var txt bytes.Buffer
			if err := v.WriteText(&txt, false); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join(dir, "want.txt"), txt.Bytes())
		})
	}
}

func TestGoldenUnreadable(t *testing.T) {
	tests := []struct {
		name string
		dir  func(t *testing.T) string
		want []string
	}{
		{"identity only", func(*testing.T) string { return filepath.Join("testdata", "identity_only") },
			[]string{"no artifact files", "reproducer.log", "reproducer_summary.json", "sanitizer.log", "dmesg_*.log", "xid_added.log"}},
		{"empty directory", func(t *testing.T) string { return t.TempDir() },
			[]string{"no artifact files", "looked for reproducer.log"}},
		{"missing directory", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") },
			[]string{"artifact directory: stat ", "nope: no such file or directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Load(tt.dir(t))
			if err == nil {
				t.Fatalf("Load: got a verdict %+v, want an error", v)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := Load(t.TempDir()); !errors.Is(err, ErrNoInputs) {
		t.Errorf("empty directory: %v does not wrap ErrNoInputs", err)
	}
}

// The summary's artifact line names the helpers the folder holds (the stage step writes them;
// an experiment job does not stage, so its folder has none and the line must not promise them).
func TestArtifactLineNamesTheStagedHelpersPresent(t *testing.T) {
	for _, name := range StagedHelpers {
		if !slices.Contains(templates.Names(), name) {
			t.Errorf("StagedHelpers names %s, which the stage step does not write (%v)", name, templates.Names())
		}
	}
	dir := copyCase(t, "t4_reproduced", filepath.Join(t.TempDir(), "art"))
	line := func() string {
		t.Helper()
		v, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(v.Markdown("art"), "\n") {
			if strings.HasPrefix(l, "- **Artifact:**") {
				return l
			}
		}
		t.Fatal("no artifact line")
		return ""
	}
	if got, want := line(), "- **Artifact:** `art` (logs)"; got != want {
		t.Errorf("without helpers: %q, want %q", got, want)
	}
	for _, name := range []string{"run_reproducer.sh", "README.md"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Not a regular file: not a helper a person can open.
	if err := os.Mkdir(filepath.Join(dir, "run_sanitizer.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := line(), "- **Artifact:** `art` (logs, `README.md`, `run_reproducer.sh`)"; got != want {
		t.Errorf("with two helpers: %q, want %q", got, want)
	}
}

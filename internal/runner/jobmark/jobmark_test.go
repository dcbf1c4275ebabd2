package jobmark

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestNewMakesAFreshFolderPerJob(t *testing.T) {
	root := t.TempDir()
	m := FromEnv(env(map[string]string{"GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_JOB": "debug"}), time.Now())
	a, err := New(root, m)
	if err != nil {
		t.Fatal(err)
	}
	// The same run, attempt and job on one host at once (matrix legs under act): another folder.
	b, err := New(root, m)
	if err != nil {
		t.Fatal(err)
	}
	if a == b || !strings.HasPrefix(filepath.Base(a), "debugflow-4242-2-debug-") || filepath.Dir(a) != root {
		t.Errorf("folders %s and %s, want two different debugflow-4242-2-debug-* under %s", a, b, root)
	}
	got, err := Load(a)
	if err != nil {
		t.Fatal(err)
	}
	// Created is m's, or the marker file's own time when the file system's coarse clock
	// stamped it earlier (writeFirst).
	if got.Run() != "run 4242 attempt 2, job debug" || got.Created.After(m.Created) || m.Created.Sub(got.Created) > time.Second {
		t.Errorf("marker %+v", got)
	}
	if fi, err := os.Stat(a); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("folder mode %v (%v), want 0755", fi.Mode(), err)
	}
}

func TestFromEnvOutsideGitHub(t *testing.T) {
	m := FromEnv(env(nil), time.Now())
	if m.RunID != "local" || m.FolderPrefix() != "debugflow-local-" || m.Validate() != nil {
		t.Errorf("marker %+v prefix %q", m, m.FolderPrefix())
	}
}

func TestValidateRefusesNamesThatLeaveTheFolder(t *testing.T) {
	for _, job := range []string{"../x", "a/b", "x\ny", strings.Repeat("j", 101)} {
		m := Marker{RunID: "1", Job: job, Created: time.Now()}
		if m.Validate() == nil {
			t.Errorf("job %q accepted", job)
		}
		if _, err := New(t.TempDir(), m); err == nil {
			t.Errorf("New accepted job %q", job)
		}
	}
}

func TestResetEmptiesTheFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repro")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sanitizer.log", "sub/x"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("earlier job"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Without a marker the folder is not evidence (a home folder, a checkout): left alone.
	if err := Reset(dir, Marker{RunID: "7", Created: time.Now()}); !errors.Is(err, ErrNotEvidence) {
		t.Fatalf("Reset of a folder without %s: %v, want ErrNotEvidence", File, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("a refused Reset changed the folder: %v", entries)
	}
	// An earlier job's folder is emptied.
	if err := Write(dir, Marker{RunID: "6", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := Reset(dir, Marker{RunID: "7", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != File {
		t.Errorf("after Reset the folder holds %v, want only %s", entries, File)
	}
	if m, err := Load(dir); err != nil || m.RunID != "7" {
		t.Errorf("marker %+v, %v; want run 7's", m, err)
	}
}

func TestSetAsideMovesWhatTheJobDidNotWrite(t *testing.T) {
	dir := t.TempDir()
	created := time.Now()
	// Reset, as init does: Created is then on the file system's clock, and a file written
	// in the same clock tick as the marker is still the job's.
	if err := Reset(dir, Marker{RunID: "9", Job: "debug", Created: created}); err != nil {
		t.Fatal(err)
	}
	old := created.Add(-time.Hour)
	for _, name := range []string{"sanitizer.log", "reproducer.log"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("earlier job"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	// Written by this job, after the marker.
	if err := os.WriteFile(filepath.Join(dir, "reproducer_summary.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := SetAside(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Leftovers, []string{"reproducer.log", "sanitizer.log"}) || m.LeftoverCount != 2 {
		t.Errorf("leftovers %q (%d)", m.Leftovers, m.LeftoverCount)
	}
	for _, name := range m.Leftovers {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still in the folder (%v)", name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, LeftoverDir, name)); err != nil {
			t.Errorf("%s not set aside: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "reproducer_summary.json")); err != nil {
		t.Errorf("the job's own file was moved: %v", err)
	}
	// The names survive in the marker (a downloaded artifact's file times are not the job's).
	again, err := Load(dir)
	if err != nil || again.LeftoverCount != 2 {
		t.Fatalf("reloaded marker %+v, %v", again, err)
	}
	d := again.Describe()
	for _, want := range []string{"2 file(s)", "run 9, job debug", "left by an earlier job", "leftover/", "sanitizer.log"} {
		if !strings.Contains(d, want) {
			t.Errorf("Describe() = %q lacks %q", d, want)
		}
	}
	// A second pass finds nothing new and keeps the count.
	if m, err := SetAside(dir); err != nil || m.LeftoverCount != 2 {
		t.Errorf("second SetAside: %+v, %v", m, err)
	}
}

func TestSetAsideWithoutMarkerLeavesTheFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sanitizer.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := SetAside(dir); m != nil || err != nil {
		t.Errorf("SetAside = %+v, %v; want nothing done", m, err)
	}
	if (*Marker)(nil).Describe() != "" {
		t.Error("a nil marker describes leftovers")
	}
}

func TestParseIsBounded(t *testing.T) {
	if _, err := Parse(strings.NewReader(`{"run_id":"1","created":"2026-12-04T05:00:00Z","job":"` + strings.Repeat("a", maxBytes) + `"}`)); err == nil {
		t.Error("an oversized job.json was accepted")
	}
	if _, err := Parse(strings.NewReader(`{"run_id":"1"}`)); err == nil {
		t.Error("a job.json without created was accepted")
	}
}

package tmate

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestContinueFiles(t *testing.T) {
	old := rootContinueFile
	rootContinueFile = "/continue"
	defer func() { rootContinueFile = old }()
	tests := []struct {
		name       string
		configured []string
		workspace  string
		want       []string
	}{
		{"default", []string{"/tmp/continue"}, "/home/runner/work/r/r", []string{"/tmp/continue", "/continue", "/home/runner/work/r/r/continue"}},
		{"no workspace", []string{"/tmp/continue"}, "", []string{"/tmp/continue", "/continue"}},
		{"duplicates and unclean paths", []string{"/tmp//continue", "/continue", "/ws/./continue"}, "/ws", []string{"/tmp/continue", "/continue", "/ws/continue"}},
		{"several configured", []string{"/a", "/b"}, "/ws", []string{"/a", "/b", "/continue", "/ws/continue"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, continueFiles(tc.configured, tc.workspace)); diff != "" {
				t.Errorf("continueFiles (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContinueWatch(t *testing.T) {
	dir := t.TempDir()
	fresh, stale := filepath.Join(dir, "fresh"), filepath.Join(dir, "stale")
	touch(t, stale)
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, past, past); err != nil {
		t.Fatal(err)
	}
	w := newContinueWatch([]string{fresh, stale})
	if _, ok := w.Stale[stale]; !ok || len(w.Stale) != 1 {
		t.Fatalf("Stale = %v, want only %s", w.Stale, stale)
	}
	if f, ok := w.triggered(); ok {
		t.Fatalf("triggered by %s although only a stale file exists", f)
	}
	// Touching the stale file again frees the job.
	now := time.Now()
	if err := os.Chtimes(stale, now, now); err != nil {
		t.Fatal(err)
	}
	if f, ok := w.triggered(); !ok || f != stale {
		t.Fatalf("triggered() = %q, %v after touching the stale file", f, ok)
	}
	// A new file frees the job; the first in order is named.
	touch(t, fresh)
	if f, ok := w.triggered(); !ok || f != fresh {
		t.Fatalf("triggered() = %q, %v; want %s", f, ok, fresh)
	}
}

func BenchmarkContinueWatch(b *testing.B) {
	dir := b.TempDir()
	w := newContinueWatch([]string{filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")})
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := w.triggered(); ok {
			b.Fatal("triggered")
		}
	}
}

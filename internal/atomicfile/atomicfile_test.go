package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFollowsALinkReplaceDoesNot(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	// Write, for a file the user names: through the link, which stays a link.
	if err := Write(link, []byte("via write"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "via write" {
		t.Errorf("target %q after Write through the link", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is gone after Write: %v", err)
	}
	// Replace, for a step's own file: the link is replaced, its target untouched.
	if err := Replace(link, []byte("replaced"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "via write" {
		t.Errorf("Replace wrote through the link: target %q", b)
	}
	fi, err := os.Lstat(link)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("after Replace %s is %v (%v), want a regular 0600 file", link, fi.Mode(), err)
	}
	// No temporary file is left behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("entries %v, want target and link only", entries)
	}
}

func TestWriteToADeviceWritesInPlace(t *testing.T) {
	if err := Write(os.DevNull, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("%s replaced by a file: %v %v", os.DevNull, fi.Mode(), err)
	}
	if err := Write(t.TempDir(), []byte("x"), 0o644); err == nil {
		t.Error("writing over a directory succeeded")
	}
}

func TestWriteJSONCreatesTheFolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a", "b", "x.json")
	if err := WriteJSON(p, map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "{\n  \"n\": 1\n}\n" {
		t.Errorf("wrote %q", b)
	}
}

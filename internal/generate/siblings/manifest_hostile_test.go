package siblings

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The record comes with the branch, so it may be someone else's: a link to /dev/zero (git
// stores links) or to a FIFO made enable and disable read for ever (or until memory ran out),
// deaf to Ctrl-C. The record is a regular file of bounded size, or it is refused, before
// anything is renamed.
func TestHostileManifestIsRefused(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, dir, path string)
		want string
	}{
		{"a FIFO", func(t *testing.T, dir, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "it is a FIFO, not a regular file"},
		{"a link to a FIFO", func(t *testing.T, dir, path string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("pipe", path); err != nil {
				t.Fatal(err)
			}
		}, "it is a symbolic link, not a regular file"},
		{"too large", func(t *testing.T, dir, path string) {
			line := "sha256:" + strings.Repeat("0", 64) + "  ci.yml\n"
			if err := os.WriteFile(path, []byte(strings.Repeat(line, (1<<20)/len(line)+1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "is larger than 1 MiB"},
	}
	for _, tt := range tests {
		for _, d := range []direction{enable, disable} {
			t.Run(tt.name+"/"+d.String(), func(t *testing.T) {
				dir := t.TempDir()
				for name, body := range map[string]string{"ci.yml.disabled": "on: push\n", "lint.yml": "on: push\n"} {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				tt.make(t, dir, filepath.Join(dir, ManifestName))
				before := listDir(t, dir)
				done := make(chan error, 1)
				go func() {
					_, err := run(context.Background(), Options{Dir: dir, Git: noGit{}}, d)
					done <- err
				}()
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), tt.want) {
						t.Errorf("err = %v, want %q", err, tt.want)
					}
				case <-time.After(5 * time.Second):
					// Unblock the reader so the test can end.
					if f, err := os.OpenFile(filepath.Join(dir, "pipe"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						f.Close()
					}
					if f, err := os.OpenFile(filepath.Join(dir, ManifestName), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						f.Close()
					}
					t.Fatalf("%s waits for ever on the record", d)
				}
				if after := listDir(t, dir); after != before {
					t.Errorf("the folder changed:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

//go:build unix

package readfile

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "log")
	if err := os.WriteFile(regular, []byte("text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path string
		wantKind   string // "" for a file that opens
		notExist   bool
	}{
		{"regular file", regular, "", false},
		{"link to a regular file", link("ok", regular), "", false},
		{"FIFO without a writer", fifo, "a FIFO", false},
		{"link to /dev/zero", link("zero", "/dev/zero"), "a character device", false},
		{"directory", dir, "a directory", false},
		{"dangling link", link("gone", filepath.Join(dir, "missing")), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, st, err := Open(tt.path)
			var notRegular *NotRegularError
			switch {
			case tt.notExist:
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("err %v, want not exist", err)
				}
			case tt.wantKind != "":
				if !errors.As(err, &notRegular) || notRegular.Kind != tt.wantKind {
					t.Fatalf("err %v, want not a regular file (%s)", err, tt.wantKind)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				b, err := io.ReadAll(f)
				if err != nil || string(b) != "text\n" || st.Size() != 5 {
					t.Fatalf("read %q, %v, size %d", b, err, st.Size())
				}
			}
		})
	}
}

// blockingReader never returns, like a read on a hung network mount.
type blockingReader struct{ entered chan struct{} }

func (b blockingReader) Read([]byte) (int, error) {
	close(b.entered)
	select {}
}

func TestWithContextAbandonsAStuckRead(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stuck := blockingReader{entered: make(chan struct{})}
	r := WithContext(ctx, stuck)
	errc := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 8))
		errc <- err
	}()
	<-stuck.entered
	why := errors.New("interrupt")
	cancel(why)
	select {
	case err := <-errc:
		if err != why {
			t.Fatalf("Read returned %v, want the cause", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Read did not return after the cancel")
	}
	if _, err := r.Read(make([]byte, 8)); err != why {
		t.Errorf("a Read after the cancel returned %v", err)
	}
}

func TestWithContextReadsEverything(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	want := strings.Repeat("0123456789", 100_000)
	got, err := io.ReadAll(WithContext(ctx, strings.NewReader(want)))
	if err != nil || string(got) != want {
		t.Fatalf("read %d bytes, %v; want %d", len(got), err, len(want))
	}
	if r := strings.NewReader(""); WithContext(context.Background(), r) != io.Reader(r) {
		t.Error("a context that is never done should not wrap the reader")
	}
}

// TestOpenRefusesKernelFiles: a file of /proc reads like a regular file but is a kernel
// interface (/proc/kmsg blocks on read): Open refuses it, through a link too, unopened.
func TestOpenRefusesKernelFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kernel file systems are Linux's")
	}
	link := filepath.Join(t.TempDir(), "evidence.log")
	if err := os.Symlink("/proc/self/status", link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/proc/self/status", link, "/proc/kmsg"} {
		f, _, err := Open(path)
		var notRegular *NotRegularError
		if !errors.As(err, &notRegular) || notRegular.Kind != "a kernel interface on procfs" {
			if f != nil {
				f.Close()
			}
			t.Errorf("Open(%s) = %v, want a refusal of a kernel interface on procfs", path, err)
		}
	}
}

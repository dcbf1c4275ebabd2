package ghrun

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func extractBytes(data []byte, dir string, limits ExtractLimits) (ExtractStats, error) {
	return ExtractZip(context.Background(), bytes.NewReader(data), int64(len(data)), dir, limits)
}

func TestExtractZip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	stats, err := extractBytes(evidenceZip(t, 3), dir, ExtractLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Files != 3 {
		t.Errorf("%d files, want 3", stats.Files)
	}
	b, err := os.ReadFile(filepath.Join(dir, "reproducer_summary.json"))
	if err != nil || !strings.Contains(string(b), `"failed":3`) {
		t.Fatalf("summary %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dmesg", "dmesg_start.log")); err != nil {
		t.Error(err)
	}
	for name, want := range map[string]fs.FileMode{"run_reproducer.sh": 0o755, "reproducer_summary.json": 0o644} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v (%v)", name, fi.Mode().Perm(), want, err)
		}
	}
}

func TestExtractZipIntoExistingDir(t *testing.T) {
	empty := t.TempDir()
	if _, err := extractBytes(evidenceZip(t, 1), empty, ExtractLimits{}); err != nil {
		t.Fatalf("an existing empty folder must be accepted: %v", err)
	}
	_, err := extractBytes(evidenceZip(t, 1), empty, ExtractLimits{})
	if err == nil || !strings.Contains(err.Error(), "already exists and is not empty") {
		t.Fatalf("err = %v", err)
	}
	// The refusal left the earlier extraction alone.
	if _, err := os.Stat(filepath.Join(empty, "reproducer_summary.json")); err != nil {
		t.Fatal(err)
	}
}

// corruptZip has two good entries (one in a folder) and a third whose stored
// bytes were changed after its checksum was written: it fails only once the
// first two are on disk.
func corruptZip(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range []struct{ name, body string }{{"a.txt", "first"}, {"sub/b.txt", "second"}, {"c.txt", "CORRUPT-ME-PLEASE"}} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.body))
	}
	zw.Close()
	data := buf.Bytes()
	i := bytes.Index(data, []byte("CORRUPT-ME-PLEASE"))
	data[i] = 'X'
	return data
}

// A failed extraction leaves the target as it was found: an existing empty
// folder stays (empty, same mode), a folder it created goes, with the parents
// it created for it.
func TestExtractZipFailureLeavesTargetAsFound(t *testing.T) {
	t.Run("existing empty folder", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		_, err := extractBytes(corruptZip(t), dir, ExtractLimits{})
		if err == nil || !strings.Contains(err.Error(), "c.txt") {
			t.Fatalf("err = %v, want the corrupt entry", err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("the folder is gone: %v", err)
		}
		if len(entries) != 0 {
			t.Errorf("left behind: %v", entries)
		}
		if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o750 {
			t.Errorf("mode %v, want 0750", fi.Mode().Perm())
		}
	})
	t.Run("new nested folder", func(t *testing.T) {
		parent := t.TempDir()
		_, err := extractBytes(corruptZip(t), filepath.Join(parent, "x", "y", "out"), ExtractLimits{})
		if err == nil {
			t.Fatal("no error")
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 0 {
			t.Errorf("left behind in %s: %v", parent, entries)
		}
	})
	t.Run("new folder under an existing one", func(t *testing.T) {
		parent := t.TempDir()
		os.Mkdir(filepath.Join(parent, "keep"), 0o755)
		_, err := extractBytes(corruptZip(t), filepath.Join(parent, "keep", "out"), ExtractLimits{})
		if err == nil {
			t.Fatal("no error")
		}
		if entries, _ := os.ReadDir(filepath.Join(parent, "keep")); len(entries) != 0 {
			t.Errorf("left behind: %v", entries)
		}
		if _, err := os.Stat(filepath.Join(parent, "keep")); err != nil {
			t.Errorf("the existing parent was removed: %v", err)
		}
	})
}

// rawZip writes one entry whose header declares `declared` bytes but whose
// deflated data inflates to `actual` zero bytes: a lying header.
func rawZip(t *testing.T, declared, actual int) []byte {
	t.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	payload := make([]byte, actual)
	fw.Write(payload)
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "bomb.bin", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(payload),
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: uint64(declared)})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(comp.Bytes())
	zw.Close()
	return buf.Bytes()
}

func TestExtractZipAttacks(t *testing.T) {
	many := func(n int) []byte {
		entries := make([]zipEntry, n)
		for i := range entries {
			entries[i] = zipEntry{Name: "f" + strconv.Itoa(i)}
		}
		return makeZip(t, entries...)
	}
	zeros := strings.Repeat("\x00", 1<<20)
	tests := []struct {
		name    string
		zip     []byte
		limits  ExtractLimits
		want    string
		prechek bool // refused before writing anything
	}{
		{name: "dot-dot", zip: makeZip(t, zipEntry{Name: "ok.txt"}, zipEntry{Name: "../evil.txt", Body: "x"}), want: "path traversal", prechek: true},
		{name: "dot-dot inside", zip: makeZip(t, zipEntry{Name: "a/../../evil.txt"}), want: "path traversal", prechek: true},
		{name: "dot-dot directory", zip: makeZip(t, zipEntry{Name: "../up/", Mode: fs.ModeDir | 0o755}), want: "path traversal", prechek: true},
		{name: "absolute", zip: makeZip(t, zipEntry{Name: "/tmp/evil.txt"}), want: "absolute path", prechek: true},
		{name: "drive letter", zip: makeZip(t, zipEntry{Name: "C:/evil.txt"}), want: "absolute path", prechek: true},
		{name: "backslash traversal", zip: makeZip(t, zipEntry{Name: `..\evil.txt`}), want: "backslash", prechek: true},
		{name: "NUL in name", zip: makeZip(t, zipEntry{Name: "a\x00b"}), want: "NUL", prechek: true},
		{name: "symlink out", zip: makeZip(t, zipEntry{Name: "link", Body: "/etc/passwd", Mode: fs.ModeSymlink | 0o777}), want: "symbolic link", prechek: true},
		{name: "symlink in", zip: makeZip(t, zipEntry{Name: "ok.txt"}, zipEntry{Name: "link", Body: "ok.txt", Mode: fs.ModeSymlink | 0o777}), want: "symbolic link", prechek: true},
		{name: "symlink then write through it", zip: makeZip(t, zipEntry{Name: "d", Body: "..", Mode: fs.ModeSymlink | 0o777}, zipEntry{Name: "d/evil.txt"}), want: "symbolic link", prechek: true},
		{name: "device", zip: makeZip(t, zipEntry{Name: "dev", Mode: fs.ModeDevice | 0o644}), want: "not a regular file", prechek: true},
		{name: "named pipe", zip: makeZip(t, zipEntry{Name: "fifo", Mode: fs.ModeNamedPipe | 0o644}), want: "not a regular file", prechek: true},
		{name: "entry count over the default limit", zip: many(DefaultExtractLimits.MaxFiles + 1), want: "10001 entries, more than the limit of 10000", prechek: true},
		{name: "entry count over a set limit", zip: many(11), limits: ExtractLimits{MaxFiles: 10}, want: "11 entries", prechek: true},
		{name: "declared total size over the limit", zip: makeZip(t, zipEntry{Name: "a", Body: zeros}, zipEntry{Name: "b", Body: zeros}, zipEntry{Name: "c", Body: zeros}),
			limits: ExtractLimits{MaxBytes: 2 << 20}, want: "declare more than 2.0 MiB", prechek: true},
		{name: "lying header inflates past what it declares", zip: rawZip(t, 10, 4<<20), limits: ExtractLimits{MaxBytes: 1 << 20}, want: "bomb.bin"},
		{name: "duplicate entry", zip: makeZip(t, zipEntry{Name: "a", Body: "1"}, zipEntry{Name: "a", Body: "2"}),
			want: `entry "a" names the same file as entry "a"`, prechek: true},
		{name: "duplicate entry after cleaning", zip: makeZip(t, zipEntry{Name: "a", Body: "1"}, zipEntry{Name: "./a", Body: "2"}),
			want: `entry "./a" names the same file as entry "a"`, prechek: true},
		{name: "duplicate nested entry", zip: makeZip(t, zipEntry{Name: "d/x.log"}, zipEntry{Name: "d//./x.log"}),
			want: `entry "d//./x.log" names the same file as entry "d/x.log"`, prechek: true},
		{name: "file and folder of one name", zip: makeZip(t, zipEntry{Name: "a"}, zipEntry{Name: "a/", Mode: fs.ModeDir | 0o755}),
			want: `entry "a/" names the same file as entry "a"`, prechek: true},
		{name: "a file used as a folder", zip: makeZip(t, zipEntry{Name: "a"}, zipEntry{Name: "a/b"}),
			want: `entry "a/b" is inside entry "a", which is a file`, prechek: true},
		{name: "a file after a folder of its name", zip: makeZip(t, zipEntry{Name: "a/b"}, zipEntry{Name: "a"}),
			want: `entry "a" names the same file as the folder of entry "a/b"`, prechek: true},
		{name: "not a zip", zip: []byte("PK\x03\x04 garbage"), want: "read zip", prechek: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			_, err := extractBytes(tt.zip, dir, tt.limits)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if tt.prechek && tt.want != "read zip" && !errors.Is(err, ErrUnsafeArchive) {
				t.Errorf("want ErrUnsafeArchive, got %v", err)
			}
			// Nothing survives: the folder we created is gone, nothing was written beside it.
			entries, _ := os.ReadDir(parent)
			if len(entries) != 0 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("left behind in %s: %v", parent, names)
			}
			if _, err := os.Lstat("/tmp/evil.txt"); err == nil && tt.name == "absolute" {
				t.Error("wrote /tmp/evil.txt")
			}
		})
	}
}

func TestCheckArtifactName(t *testing.T) {
	for name, ok := range map[string]bool{"debug_cuda_repro_artifacts": true, "evidence-t4": true,
		"": false, ".": false, "..": false, "../x": false, "a/b": false, `a\b`: false, "a\x00": false} {
		if err := checkArtifactName(name); (err == nil) != ok {
			t.Errorf("checkArtifactName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "10B": 10, "4GiB": 4 << 30, "500 MiB": 500 << 20, "2k": 2048, "1TB": 1 << 40, " 3 gb ": 3 << 30} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1", "1.5GiB", "0", "3 PB", "99999999999999999999", "9000000TiB"} {
		if n, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, n)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 27 << 20: "27.0 MiB", 4 << 30: "4.0 GiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzExtractZip feeds arbitrary archives to the extractor: it must never
// panic, never write outside the target, never create a link, and never write
// more than the limit.
func FuzzExtractZip(f *testing.F) {
	f.Add(evidenceZip(f, 1))
	f.Add(makeZip(f, zipEntry{Name: "../x"}))
	f.Add(makeZip(f, zipEntry{Name: "l", Body: "/", Mode: fs.ModeSymlink | 0o777}))
	f.Add(makeZip(f, zipEntry{Name: "a/"}, zipEntry{Name: "a/b/c", Body: "hello"}))
	const limit = 64 << 10
	// One folder for every input of this process (a t.TempDir per input cost more than most
	// extractions), emptied before each; archives over 64 KiB only cost more to run and to
	// minimize (Go's fuzzer minimizes every new input for up to a minute, counting no
	// executions): the limits have their own tests.
	parent := f.TempDir()
	dir := filepath.Join(parent, "out")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > limit {
			return
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		extractBytes(data, dir, ExtractLimits{MaxFiles: 50, MaxBytes: limit})
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			if e.Name() != "out" {
				t.Fatalf("wrote %q outside the target", e.Name())
			}
		}
		var total int64
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 || (!d.IsDir() && !d.Type().IsRegular()) {
				t.Fatalf("created %s of type %v", p, d.Type())
			}
			if fi, err := d.Info(); err == nil && !d.IsDir() {
				total += fi.Size()
			}
			return nil
		})
		if total > limit {
			t.Fatalf("wrote %d bytes, limit %d", total, limit)
		}
	})
}

func BenchmarkExtractZip(b *testing.B) {
	entries := make([]zipEntry, 200)
	body := strings.Repeat("========= Invalid __global__ write of size 4 bytes\n", 200) // ~10 KiB of sanitizer log
	for i := range entries {
		entries[i] = zipEntry{Name: "logs/part" + strconv.Itoa(i) + ".log", Body: body}
	}
	data := makeZip(b, entries...)
	b.SetBytes(int64(len(body) * len(entries)))
	parent := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		if _, err := extractBytes(data, filepath.Join(parent, strconv.Itoa(i)), ExtractLimits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParseSize checks sizes parse to positive values that format back sensibly.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"4GiB", "1", "500 mb", "9000000TiB", "0", "1.5G", "k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && n <= 0 {
			t.Fatalf("ParseSize(%q) = %d without error", s, n)
		}
	})
}

// A context that ends stops the extraction (Ctrl-C during a multi-GiB archive) and leaves the
// target as it was found, as any other failure does: a folder it made is removed.
func TestExtractZipStopsWhenTheContextEnds(t *testing.T) {
	data := evidenceZip(t, 3)
	dir := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ExtractZip(ctx, bytes.NewReader(data), int64(len(data)), dir, ExtractLimits{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the folder it made is still there (%v)", err)
	}
	// An entry already being inflated stops at its next read.
	r := ctxReader{ctx, strings.NewReader("data")}
	if n, err := r.Read(make([]byte, 4)); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("read %d, %v after the context ended", n, err)
	}
}

// An archive of 65,541 entries whose end record, without zip64, says 5 (the count is 16 bits
// and wraps; zip.NewReader accepts it and holds every entry in memory): refused by the central
// directory's size before it is read. Built by the zip64 writer and rewritten as the plain form.
func TestExtractZipRefusesAWrappedEntryCount(t *testing.T) {
	const n = 65541
	data, z64, dirSize, dirOff := manyEntryZip(t, n)
	wrapped := plainEnd(data, z64, n, dirSize, dirOff, "")
	// The attack is real: the standard reader takes all of them.
	if zr, err := zip.NewReader(bytes.NewReader(wrapped), int64(len(wrapped))); err != nil || len(zr.File) != n {
		t.Fatalf("zip.NewReader: %v", err)
	}
	_, err := extractBytes(wrapped, filepath.Join(t.TempDir(), "out"), ExtractLimits{MaxFiles: 10})
	if !errors.Is(err, ErrUnsafeArchive) || !strings.Contains(err.Error(), "central directory of") {
		t.Errorf("err = %v, want the central directory refused", err)
	}
	// The zip64 form says the true count.
	_, err = extractBytes(data, filepath.Join(t.TempDir(), "out"), ExtractLimits{MaxFiles: 10})
	if !errors.Is(err, ErrUnsafeArchive) || !strings.Contains(err.Error(), "65541 entries, more than the limit of 10") {
		t.Errorf("zip64: err = %v, want 65541 entries refused", err)
	}
}

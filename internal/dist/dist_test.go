package dist

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	p := Platform{"linux", "arm64"}
	if got := ArchiveName(Step, "v0.2.0", p); got != "debugflow-step_v0.2.0_linux_arm64.tar.gz" {
		t.Errorf("ArchiveName = %q", got)
	}
	r, err := RunnerFor("arm64")
	if err != nil || r.Machine != "aarch64" || r.Platform() != p || BundlePath(".github/debugflow/", r) != ".github/debugflow/debugflow-step-linux-arm64" {
		t.Errorf("RunnerFor(arm64) = %+v, %v", r, err)
	}
	if _, err := RunnerFor("X64"); err == nil {
		t.Error("RunnerFor accepts X64 (the spec names it x64)")
	}
}

// The same binary gives the same archive bytes (a reproducible release), which reads back.
func TestArchiveRoundTrip(t *testing.T) {
	bin := []byte("\x7fELF fake binary")
	var a, b bytes.Buffer
	if err := WriteArchive(&a, Step, bin); err != nil {
		t.Fatal(err)
	}
	if err := WriteArchive(&b, Step, bin); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two archives of the same binary differ")
	}
	got, err := ReadArchive(bytes.NewReader(a.Bytes()), Step)
	if err != nil || !bytes.Equal(got, bin) {
		t.Errorf("ReadArchive = %q, %v", got, err)
	}
	if _, err := ReadArchive(bytes.NewReader(a.Bytes()), CLI); err == nil || !strings.Contains(err.Error(), "has no debugflow") {
		t.Errorf("ReadArchive of a missing member: %v", err)
	}
}

func hostileArchive(t testing.TB, hdr *tar.Header, body []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(hdr); err != nil {
		t.Fatal(err)
	}
	tw.Write(body)
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func TestReadArchiveRefuses(t *testing.T) {
	for name, data := range map[string][]byte{
		"not gzip":  []byte("plain text"),
		"a symlink": hostileArchive(t, &tar.Header{Typeflag: tar.TypeSymlink, Name: Step, Linkname: "/etc/passwd"}, nil),
		"too big":   hostileArchive(t, &tar.Header{Typeflag: tar.TypeReg, Name: Step, Size: MaxBinary + 1, Mode: 0o755}, nil),
		"truncated": hostileArchive(t, &tar.Header{Typeflag: tar.TypeReg, Name: Step, Size: 100, Mode: 0o755}, []byte("short")),
	} {
		if _, err := ReadArchive(bytes.NewReader(data), Step); err == nil {
			t.Errorf("%s: ReadArchive accepted it", name)
		}
	}
}

// FuzzReadArchive: any bytes give a binary or an error, never a panic or more than MaxBinary.
func FuzzReadArchive(f *testing.F) {
	var ok bytes.Buffer
	WriteArchive(&ok, Step, []byte("bin"))
	f.Add(ok.Bytes())
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadArchive(bytes.NewReader(data), Step)
		if err == nil && len(got) > MaxBinary {
			t.Fatalf("%d bytes read, more than MaxBinary", len(got))
		}
	})
}

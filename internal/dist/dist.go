// Package dist names what debugflow distributes: the release archives of each binary and
// platform, their checksums file, and the step binary a debug branch carries (delivery bundle).
// The release build (internal/release), the generator and the resolver (stepbin) share these
// names, so a workflow downloads exactly what a release publishes.
package dist

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"time"
)

// The binaries a release ships.
const (
	CLI  = "debugflow"
	Step = "debugflow-step"
)

// ChecksumsFile is the release asset listing every archive's SHA-256 in sha256sum format.
const ChecksumsFile = "SHA256SUMS"

// Platform is one GOOS/GOARCH a release is built for.
type Platform struct{ GOOS, GOARCH string }

// String is "linux/amd64".
func (p Platform) String() string { return p.GOOS + "/" + p.GOARCH }

// Key is "linux_amd64", as used in archive names and in the checksums a release embeds.
func (p Platform) Key() string { return p.GOOS + "_" + p.GOARCH }

// ReleasePlatforms are the platforms of every release: the runners' Linux x64 and arm64, and
// Apple silicon for the user's own machine.
var ReleasePlatforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "arm64"}}

// ArchiveName is the release asset of binary for p: debugflow-step_v0.2.0_linux_amd64.tar.gz.
func ArchiveName(binary, version string, p Platform) string {
	return binary + "_" + version + "_" + p.Key() + ".tar.gz"
}

// Runner is a runner architecture as the spec names it (step_binary.arch).
type Runner struct {
	// Arch is the spec's name: x64, arm64 (GitHub's runner.arch in lower case).
	Arch string
	// GOARCH is Go's name.
	GOARCH string
	// Machine is what `uname -m` prints on such a runner.
	Machine string
}

// Runners are the runner architectures debugflow-step is delivered for.
var Runners = []Runner{{"x64", "amd64", "x86_64"}, {"arm64", "arm64", "aarch64"}}

// RunnerFor returns the runner architecture called arch.
func RunnerFor(arch string) (Runner, error) {
	for _, r := range Runners {
		if r.Arch == arch {
			return r, nil
		}
	}
	return Runner{}, fmt.Errorf("unknown runner architecture %q (want x64 or arm64)", arch)
}

// Platform is the Linux platform of the runner.
func (r Runner) Platform() Platform { return Platform{"linux", r.GOARCH} }

// BundleName is the file name of the bundled step binary for r: debugflow-step-linux-amd64.
func (r Runner) BundleName() string { return Step + "-linux-" + r.GOARCH }

// BundlePath is the bundled step binary for r in the folder dir of the debug branch
// (step_binary.dir), with slashes: .github/debugflow/debugflow-step-linux-amd64.
func BundlePath(dir string, r Runner) string { return path.Join(path.Clean(dir), r.BundleName()) }

// archiveTime is the modification time of every archive member: fixed, so an archive depends
// only on the binary inside it (reproducible releases).
var archiveTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteArchive writes a .tar.gz holding one executable, name, with fixed metadata (owner 0,
// mode 0755, a constant time, no gzip name or time): the same binary gives the same bytes.
func WriteArchive(w io.Writer, name string, binary []byte) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(binary)),
		ModTime: archiveTime, Uname: "root", Gname: "root", Format: tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("archive %s: %w", name, err)
	}
	if _, err := tw.Write(binary); err != nil {
		return fmt.Errorf("archive %s: %w", name, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("archive %s: %w", name, err)
	}
	return zw.Close()
}

// MaxBinary bounds what ReadArchive extracts: a debugflow binary is about 15 MB.
const MaxBinary = 256 << 20

// ReadArchive returns the file called name from a .tar.gz written by WriteArchive. It reads
// at most MaxBinary bytes of it and refuses anything but a regular file.
func ReadArchive(r io.Reader, name string) ([]byte, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a gzip archive: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("the archive has no %s", name)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the archive: %w", err)
		}
		if hdr.Name != name {
			continue
		}
		if hdr.Typeflag != tar.TypeReg || hdr.Size > MaxBinary {
			return nil, fmt.Errorf("%s in the archive is not a regular file of at most %d bytes", name, MaxBinary)
		}
		var b bytes.Buffer
		if _, err := io.Copy(&b, io.LimitReader(tr, MaxBinary)); err != nil {
			return nil, fmt.Errorf("reading %s from the archive: %w", name, err)
		}
		return b.Bytes(), nil
	}
}

// Package release builds debugflow's release assets from a tagged tree: for every platform of
// dist.ReleasePlatforms, a .tar.gz of debugflow-step, then a .tar.gz of debugflow, whose
// binary embeds the SHA-256 of the step archives (so the generator of a release pins exactly
// what the runner downloads), and the SHA256SUMS file. Every build is static and
// reproducible (stepbin.BuildFlags): the same tag, revision and Go toolchain give the same
// bytes, which Compare checks. .github/workflows/release.yml runs it (docs/release.md).
package release

import (
	"bytes"
	"context"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/debugflow/debugflow/internal/dist"
	"github.com/debugflow/debugflow/internal/generate/stepbin"
	"github.com/debugflow/debugflow/internal/version"
)

// CLIPackage is the package of the debugflow command.
const CLIPackage = "./cmd/debugflow"

var revisionRe = lazyre.New(`^[0-9a-f]{40}$`)

// Options say what to build.
type Options struct {
	// Version is the release tag (v0.2.0, v1.0.0-rc.1).
	Version string
	// Revision is the full commit the tag points to.
	Revision string
	// Dir is the module root (default ".").
	Dir string
	// Out is the folder for the assets; it must not exist or be empty.
	Out string
	// Platforms default to dist.ReleasePlatforms.
	Platforms []dist.Platform
	// Go is the go command (default "go"); Env the base environment (default os.Environ()).
	Go  string
	Env []string
	// Log gets one line per asset (nil: io.Discard).
	Log io.Writer
}

// Asset is one file of the release.
type Asset struct {
	Name   string
	SHA256 string
}

// Build writes the release assets into o.Out and returns them, the archives in build order
// and SHA256SUMS last.
func Build(ctx context.Context, o Options) ([]Asset, error) {
	if !version.IsRelease(o.Version) {
		return nil, fmt.Errorf("release version %q is not a release tag such as v0.2.0", o.Version)
	}
	if !revisionRe.MatchString(o.Revision) {
		return nil, fmt.Errorf("revision %q is not a full 40-character commit SHA", o.Revision)
	}
	if o.Dir == "" {
		o.Dir = "."
	}
	if len(o.Platforms) == 0 {
		o.Platforms = dist.ReleasePlatforms
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if err := emptyDir(o.Out); err != nil {
		return nil, err
	}
	info := version.Info{Version: o.Version, Revision: o.Revision}
	var assets []Asset
	stepSums := map[string]string{}
	build := func(binary, pkg string, p dist.Platform, flags []string) (Asset, error) {
		data, err := stepbin.GoBuild(ctx, stepbin.GoBuildOptions{Go: o.Go, Dir: o.Dir, Env: o.Env,
			GOOS: p.GOOS, GOARCH: p.GOARCH, Package: pkg, Flags: flags})
		if err != nil {
			return Asset{}, err
		}
		var archive bytes.Buffer
		if err := dist.WriteArchive(&archive, binary, data); err != nil {
			return Asset{}, err
		}
		a := Asset{Name: dist.ArchiveName(binary, o.Version, p), SHA256: stepbin.Sum(archive.Bytes())}
		if err := os.WriteFile(filepath.Join(o.Out, a.Name), archive.Bytes(), 0o644); err != nil {
			return Asset{}, err
		}
		fmt.Fprintf(o.Log, "%s  %s\n", a.SHA256, a.Name)
		return a, nil
	}
	// The step archives first: debugflow embeds their checksums.
	for _, p := range o.Platforms {
		a, err := build(dist.Step, stepbin.StepPackage, p, stepbin.BuildFlags(info))
		if err != nil {
			return nil, err
		}
		stepSums[p.Key()] = a.SHA256
		assets = append(assets, a)
	}
	cliFlags := stepbin.BuildFlags(info, "-X", version.ArchiveFlag(stepSums))
	for _, p := range o.Platforms {
		a, err := build(dist.CLI, CLIPackage, p, cliFlags)
		if err != nil {
			return nil, err
		}
		assets = append(assets, a)
	}
	sums := Checksums(assets)
	if err := os.WriteFile(filepath.Join(o.Out, dist.ChecksumsFile), []byte(sums), 0o644); err != nil {
		return nil, err
	}
	return append(assets, Asset{Name: dist.ChecksumsFile, SHA256: stepbin.Sum([]byte(sums))}), nil
}

// Checksums is the SHA256SUMS text of the assets, sorted by name, in `sha256sum -c` format.
func Checksums(assets []Asset) string {
	sorted := append([]Asset(nil), assets...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var b strings.Builder
	for _, a := range sorted {
		fmt.Fprintf(&b, "%s  %s\n", a.SHA256, a.Name)
	}
	return b.String()
}

// emptyDir creates dir, or accepts it when it exists and is empty: a release never mixes
// assets of two builds.
func emptyDir(dir string) error {
	if dir == "" {
		return fmt.Errorf("no output folder")
	}
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s is not empty: a release is built into an empty folder", dir)
	}
	return nil
}

// Compare checks that two release folders hold the same files with the same bytes (a
// reproducible build); it names every difference.
func Compare(a, b string) error {
	list := func(dir string) (map[string][]byte, error) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		files := map[string][]byte{}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				return nil, err
			}
			files[e.Name()] = data
		}
		return files, nil
	}
	fa, err := list(a)
	if err != nil {
		return err
	}
	fb, err := list(b)
	if err != nil {
		return err
	}
	var diffs []string
	for name, da := range fa {
		db, ok := fb[name]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s is only in %s", name, a))
		case !bytes.Equal(da, db):
			diffs = append(diffs, fmt.Sprintf("%s differs: %s in %s, %s in %s", name, stepbin.Sum(da), a, stepbin.Sum(db), b))
		}
	}
	for name := range fb {
		if _, ok := fa[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s is only in %s", name, b))
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return fmt.Errorf("the builds are not reproducible:\n  %s", strings.Join(diffs, "\n  "))
	}
	return nil
}

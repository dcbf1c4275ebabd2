// Package version says which build of debugflow is running: the module version, the VCS
// revision and whether the tree was modified, read from the Go build info, with the values a
// release or bundle build sets through -ldflags -X taking precedence. debugflow and
// debugflow-step both print it (--version), so a user can tell that the generator and the
// step binary on the runner are the same build.
package version

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
)

// Package is the import path of this package, for -ldflags -X.
const Package = "github.com/debugflow/debugflow/internal/version"

// Module is debugflow's Go module path.
const Module = "github.com/debugflow/debugflow"

// Devel is the version of a build that knows none (go build in a checkout without VCS
// stamping, go run, go test).
const Devel = "(devel)"

// Set with -ldflags "-X github.com/debugflow/debugflow/internal/version.NAME=VALUE" by release
// builds (.github/workflows/release.yml) and by the step binary debugflow bundles; empty means
// "ask the build info". They are strings because -X only sets strings.
var (
	// version is the module version, e.g. v0.2.0.
	version string
	// revision is the full VCS commit the build comes from.
	revision string
	// modified is "true" when the tree had uncommitted changes.
	modified string
	// stepArchives are the SHA-256 checksums of this version's debugflow-step release
	// archives, "linux_amd64=HEX,linux_arm64=HEX,..." (set on the debugflow binary of a
	// release: the generator then knows what the runner downloads).
	stepArchives string
)

// Info describes one build.
type Info struct {
	// Version is a release version (v0.2.0), a pseudo-version (v0.0.0-20261202163852-a0908f56b132+dirty)
	// or (devel).
	Version string `json:"version"`
	// Revision is the full VCS commit, when known.
	Revision string `json:"revision,omitempty"`
	// Modified is true when the build's tree had uncommitted changes.
	Modified bool `json:"modified"`
	// GoVersion is the toolchain that built the binary (go1.26.8).
	GoVersion string `json:"go"`
	// Platform is GOOS/GOARCH of the binary.
	Platform string `json:"platform"`
	// FromLDFlags is true when Version was set with -ldflags -X (a release or bundle build).
	FromLDFlags bool `json:"-"`
	// StepArchiveSHA256 maps "linux_amd64" (GOOS_GOARCH) to the SHA-256 of this version's
	// debugflow-step release archive; empty unless this is the debugflow binary of a release.
	StepArchiveSHA256 map[string]string `json:"step_archive_sha256,omitempty"`
}

// Get returns the running binary's build.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(bi, ldflags{version, revision, modified, stepArchives})
}

// ldflags are the -X values of a build.
type ldflags struct{ version, revision, modified, stepArchives string }

func fromBuildInfo(bi *debug.BuildInfo, x ldflags) Info {
	info := Info{Version: Devel, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		if bi.Main.Version != "" {
			info.Version = bi.Main.Version
		}
		goos, goarch := runtime.GOOS, runtime.GOARCH
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			case "GOOS":
				goos = s.Value
			case "GOARCH":
				goarch = s.Value
			}
		}
		info.Platform = goos + "/" + goarch
	}
	if x.version != "" {
		info.Version, info.FromLDFlags = x.version, true
		// The -X values describe the build as a whole: never mix them with VCS settings the
		// toolchain may have stamped as well.
		info.Revision, info.Modified = x.revision, x.modified == "true"
	}
	info.StepArchiveSHA256 = parseArchives(x.stepArchives)
	return info
}

// parseArchives reads "linux_amd64=HEX,linux_arm64=HEX"; malformed entries are dropped (a
// generator that does not know a checksum says so when it needs it).
func parseArchives(s string) map[string]string {
	if s == "" {
		return nil
	}
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if ok && platformKeyRe.MatchString(k) && sha256Re.MatchString(v) {
			m[k] = v
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

var (
	platformKeyRe = lazyre.New(`^[a-z0-9]+_[a-z0-9]+$`)
	sha256Re      = lazyre.New(`^[0-9a-f]{64}$`)
	// releaseRe is a semantic version as a tag names it: v1.2.3, v1.2.3-rc.1.
	releaseRe = lazyre.New(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)
	// pseudoRe is a Go pseudo-version (golang.org/x/mod/module.IsPseudoVersion).
	pseudoRe = lazyre.New(`^v[0-9]+\.(0\.0-|\d+\.\d+-([^+]*\.)?0\.)\d{14}-[A-Za-z0-9]+(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
)

// IsRelease reports whether v names a tagged release (v0.2.0, v1.0.0-rc.1), not a
// pseudo-version, a +dirty build or (devel).
func IsRelease(v string) bool { return releaseRe.MatchString(v) && !pseudoRe.MatchString(v) }

// Tagged reports whether the build is of a tagged release version from an unmodified tree.
func (i Info) Tagged() bool { return IsRelease(i.Version) && !i.Modified }

// StepArchive returns the SHA-256 of this version's debugflow-step archive for goos/goarch.
func (i Info) StepArchive(goos, goarch string) (string, bool) {
	sum, ok := i.StepArchiveSHA256[goos+"_"+goarch]
	return sum, ok
}

// String is the version line both binaries print after their name:
// "v0.2.0", "v0.0.0-20261202163852-a0908f56b132+dirty (revision a0908f56b132, modified)".
func (i Info) String() string {
	var extra []string
	if i.Revision != "" {
		rev := i.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		extra = append(extra, "revision "+rev)
	}
	if i.Modified {
		extra = append(extra, "modified")
	}
	if len(extra) == 0 {
		return i.Version
	}
	return i.Version + " (" + strings.Join(extra, ", ") + ")"
}

// Text is what `NAME --version` prints: the version line, then the toolchain and platform.
func (i Info) Text(name string) string {
	return fmt.Sprintf("%s %s\nbuilt with %s for %s\n", name, i.String(), i.GoVersion, i.Platform)
}

// Details is what `debugflow version` prints: every field, one per line.
func (i Info) Details(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", name, i.String())
	fmt.Fprintf(&b, "  version:   %s\n", i.Version)
	if i.Revision != "" {
		fmt.Fprintf(&b, "  revision:  %s\n", i.Revision)
	}
	fmt.Fprintf(&b, "  modified:  %t\n", i.Modified)
	fmt.Fprintf(&b, "  go:        %s\n", i.GoVersion)
	fmt.Fprintf(&b, "  platform:  %s\n", i.Platform)
	keys := make([]string, 0, len(i.StepArchiveSHA256))
	for k := range i.StepArchiveSHA256 {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  debugflow-step %s archive sha256: %s\n", k, i.StepArchiveSHA256[k])
	}
	return b.String()
}

// LDFlags are the -X flags that give another build the version of info (the bundled step
// binary is built with them so that it reports exactly the generator's version).
func LDFlags(info Info) []string {
	flags := []string{"-X", Package + ".version=" + info.Version}
	if info.Revision != "" {
		flags = append(flags, "-X", Package+".revision="+info.Revision)
	}
	if info.Modified {
		flags = append(flags, "-X", Package+".modified=true")
	}
	return flags
}

// ArchiveFlag is the -X flag that embeds the step archives' checksums in a release's
// debugflow binary; sums maps "linux_amd64" to the hex SHA-256.
func ArchiveFlag(sums map[string]string) string {
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + sums[k]
	}
	return Package + ".stepArchives=" + strings.Join(parts, ",")
}

// SourceDir is the directory of debugflow's module source this binary was compiled from, when
// the build recorded it (a build without -trimpath records absolute source paths: go build or
// go install in a checkout, go install module@version from the module cache, go run); "" for
// -trimpath builds such as releases.
func SourceDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !strings.HasPrefix(file, "/") {
		return ""
	}
	// file is <module root>/internal/version/version.go.
	dir, ok := strings.CutSuffix(file, "/internal/version/version.go")
	if !ok {
		return ""
	}
	return dir
}

// Package stepbin decides how debugflow-step reaches the runner of a generated workflow
// (step_binary.delivery) and prepares what that needs: for bundle, a static Linux binary of
// this very debugflow, built from the source it was compiled from, and its SHA-256; for
// release, the SHA-256 of the release archive, which a release build of debugflow embeds.
// Resolve fills the spec's step_binary so that package generate can pin the checksums.
// docs/release.md explains the choices.
package stepbin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"

	"github.com/debugflow/debugflow/internal/dist"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/version"
)

// Builder builds the step binary for Linux on goarch.
type Builder interface {
	Build(ctx context.Context, goarch string) ([]byte, error)
	// Describe says where the binary comes from, for the message generate prints.
	Describe() string
}

// Options are the inputs of Resolve.
type Options struct {
	// Self is this debugflow's build (version.Get()).
	Self version.Info
	// NewBuilder makes the builder when a bundle is needed; nil uses NewSourceBuilder.
	NewBuilder func(self version.Info) (Builder, error)
	// ExtraArchs are runner architectures to pin besides Archs(s): x64 for the experiment
	// workflow's report job, which runs on ubuntu-latest even with one arm64 runner.
	ExtraArchs []string
	// NoBuild pins a placeholder instead of building a bundle: for checks that only read
	// the workflow (debugflow validate), never for a workflow that is written.
	NoBuild bool
	// CacheDir is where the bundled binaries of this executable are kept (OpenCache; ""
	// for DefaultCacheDir, "off" for none): a second generate reads them back instead of
	// building. Only with the default builder (NewBuilder nil): a test's builder makes
	// binaries that are not this executable's.
	CacheDir string
	// Log, when set, gets the plan's Summary as soon as the delivery is chosen and a line
	// before each bundle build, which takes a minute on a cold build cache.
	Log io.Writer
}

// BuildError is a bundle that could not be built: no source, a changed source, no Go
// toolchain, a failed go build. Other Resolve errors are about the spec.
type BuildError struct{ Err error }

func (e *BuildError) Error() string { return e.Err.Error() }
func (e *BuildError) Unwrap() error { return e.Err }

// Placeholder is the checksum pinned with Options.NoBuild: it never matches a file.
var Placeholder = fmt.Sprintf("%064d", 0)

// File is one bundled binary.
type File struct {
	// Path is relative to the root of the debug branch, with slashes
	// (.github/debugflow/debugflow-step-linux-amd64).
	Path string
	// Arch is the runner architecture (x64, arm64).
	Arch string
	// Data is the binary; SHA256 its checksum, pinned in the workflow. A binary from the
	// cache is read only when it is written (Bytes): a generate to stdout pins its
	// checksum without reading 10 MB.
	Data   []byte
	SHA256 string
	// load reads Data on first use (a cached binary).
	load func() ([]byte, error)
}

// Bytes returns the binary, reading a cached one and checking it against SHA256.
func (f *File) Bytes() ([]byte, error) {
	if f.Data != nil || f.load == nil {
		return f.Data, nil
	}
	data, err := f.load()
	if err != nil {
		return nil, err
	}
	if got := Sum(data); got != f.SHA256 {
		return nil, fmt.Errorf("the cached debugflow-step for %s has SHA-256 %s, not the %s it was stored with: remove the cache folder (DEBUGFLOW_STEP_CACHE, default %s) and generate again", f.Arch, got, f.SHA256, "~/.cache/debugflow/step-binaries")
	}
	f.Data = data
	return data, nil
}

// Plan is what Resolve decided.
type Plan struct {
	// Delivery is the chosen step_binary.delivery.
	Delivery string
	// Reason says why, in a sentence for the user.
	Reason string
	// Version is the debugflow-step version the workflow gets ("" for path).
	Version string
	// Files are the binaries to commit with the workflow (bundle only).
	Files []File
	// Source says where the bundle was built from (bundle only).
	Source string
}

// Summary is the line generate prints on stderr.
func (p *Plan) Summary() string {
	return fmt.Sprintf("step binary: %s (%s)", p.Delivery, p.Reason)
}

// Archs are the runner architectures the workflow of s installs debugflow-step on: the debug
// jobs' step_binary.arch and, for a matrix, x64 for the report job on ubuntu-latest.
func Archs(s *spec.Spec) []string {
	archs := []string{s.StepBinary.Arch}
	if s.Matrix() && !slices.Contains(archs, spec.ArchX64) {
		archs = append(archs, spec.ArchX64)
	}
	return archs
}

// archs are Archs(s) and the extra ones.
func (o Options) archs(s *spec.Spec) []string {
	archs := Archs(s)
	for _, a := range o.ExtraArchs {
		if !slices.Contains(archs, a) {
			archs = append(archs, a)
		}
	}
	return archs
}

// Resolve chooses the delivery of s's step binary (an empty step_binary.delivery), its
// version, and pins the checksums the workflow verifies; it writes them into
// s.StepBinary (Delivery, Version, Pinned) and returns the plan. s must be valid.
func Resolve(ctx context.Context, s *spec.Spec, opts Options) (*Plan, error) {
	sb := &s.StepBinary
	self := opts.Self
	plan := &Plan{Delivery: sb.Delivery}
	switch {
	case sb.Delivery != "":
		plan.Reason = "step_binary.delivery in the spec"
	case self.Tagged() && knowsArchives(self, opts.archs(s)):
		plan.Delivery = spec.DeliveryRelease
		plan.Reason = fmt.Sprintf("debugflow %s is a release build and knows the SHA-256 of its debugflow-step archives", self.Version)
	default:
		plan.Delivery = spec.DeliveryBundle
		plan.Reason = fmt.Sprintf("debugflow %s %s, so the runner gets a copy of this very version from the debug branch", self.String(), notReleaseWhy(self))
	}
	if opts.Log != nil {
		fmt.Fprintln(opts.Log, plan.Summary())
	}
	switch plan.Delivery {
	case spec.DeliveryBundle:
		if err := resolveBundle(ctx, s, opts, plan); err != nil {
			return nil, err
		}
	case spec.DeliveryRelease:
		if err := resolveRelease(s, self, opts.archs(s), plan); err != nil {
			return nil, err
		}
	case spec.DeliveryGoInstall:
		plan.Version = sb.Version
		if plan.Version == "" {
			if !version.IsRelease(self.Version) {
				return nil, fmt.Errorf("step_binary: go-install needs a version and debugflow %s is not a release: set step_binary.version (a release or a pushed commit), or use delivery: bundle", self.String())
			}
			plan.Version = self.Version
		}
	case spec.DeliveryPath:
	default:
		return nil, fmt.Errorf("step_binary.delivery %q is unknown", plan.Delivery)
	}
	sb.Delivery, sb.Version = plan.Delivery, plan.Version
	if plan.Delivery == spec.DeliveryPath {
		sb.Version = ""
	}
	return plan, nil
}

// notReleaseWhy says why a build gets a bundle by default.
func notReleaseWhy(self version.Info) string {
	switch {
	case self.Modified:
		return "was built from a modified tree"
	case !version.IsRelease(self.Version):
		return "is not a release (a build from a checkout or go run)"
	default:
		return "was installed with go install, not built by the release workflow, and knows no archive checksums"
	}
}

func knowsArchives(self version.Info, archs []string) bool {
	for _, arch := range archs {
		r, err := dist.RunnerFor(arch)
		if err != nil {
			return false
		}
		if _, ok := self.StepArchive("linux", r.GOARCH); !ok {
			return false
		}
	}
	return true
}

func resolveRelease(s *spec.Spec, self version.Info, archs []string, plan *Plan) error {
	sb := &s.StepBinary
	plan.Version = sb.Version
	if plan.Version == "" {
		if !self.Tagged() {
			return fmt.Errorf("step_binary: release downloads a published version and debugflow %s is not one: set step_binary.version and step_binary.sha256, or use delivery: bundle", self.String())
		}
		plan.Version = self.Version
	}
	pinned := map[string]string{}
	for _, arch := range archs {
		r, err := dist.RunnerFor(arch)
		if err != nil {
			return err
		}
		if sum := sb.SHA256.For(arch); sum != "" {
			pinned[arch] = sum
			continue
		}
		archive := dist.ArchiveName(dist.Step, plan.Version, r.Platform())
		sum, ok := self.StepArchive("linux", r.GOARCH)
		if !ok || plan.Version != self.Version || !self.Tagged() {
			return fmt.Errorf("step_binary: debugflow %s does not know the SHA-256 of %s: copy its line from the release's %s into step_binary.sha256.%s", self.String(), archive, dist.ChecksumsFile, arch)
		}
		pinned[arch] = sum
	}
	sb.Pinned = pinned
	return nil
}

func resolveBundle(ctx context.Context, s *spec.Spec, opts Options, plan *Plan) error {
	sb := &s.StepBinary
	plan.Version = opts.Self.Version
	pinned := map[string]string{}
	if opts.NoBuild {
		for _, arch := range opts.archs(s) {
			pinned[arch] = Placeholder
		}
		sb.Pinned = pinned
		return nil
	}
	var cache *BinaryCache
	newBuilder := opts.NewBuilder
	if newBuilder == nil {
		newBuilder = newSourceBuilder
		if opts.CacheDir != CacheOff {
			var err error
			if cache, err = OpenCache(opts.CacheDir); err != nil && opts.Log != nil {
				fmt.Fprintf(opts.Log, "no step binary cache (%v): debugflow-step is built each time\n", err)
			}
		}
	}
	// The builder (which finds and checks the source, and runs go) is made only when some
	// architecture is not in the cache.
	var builder Builder
	for _, arch := range opts.archs(s) {
		r, err := dist.RunnerFor(arch)
		if err != nil {
			return err
		}
		var data []byte
		var sum string
		var load func() ([]byte, error)
		if cache != nil {
			if cachedSum, source, loader, ok := cache.Get(r.GOARCH); ok {
				sum, load, plan.Source = cachedSum, loader, source
				if opts.Log != nil {
					fmt.Fprintf(opts.Log, "debugflow-step for %s: the one built for this debugflow executable before (%s), from %s\n", r.Platform(), source, cache.Dir)
				}
			}
		}
		if load == nil {
			if builder == nil {
				if builder, err = newBuilder(opts.Self); err != nil {
					return &BuildError{Err: err}
				}
				plan.Source = builder.Describe()
			}
			if opts.Log != nil {
				fmt.Fprintf(opts.Log, "building debugflow-step for %s: static, CGO_ENABLED=0, %s (about a minute on a cold Go build cache)...\n", r.Platform(), plan.Source)
			}
			if data, err = builder.Build(ctx, r.GOARCH); err != nil {
				return &BuildError{Err: fmt.Errorf("bundling debugflow-step for %s: %w", r.Platform(), err)}
			}
			if cache != nil {
				if err := cache.Put(r.GOARCH, data, plan.Source); err != nil && opts.Log != nil {
					fmt.Fprintf(opts.Log, "debugflow-step for %s was built but not cached (the next generate builds it again): %v\n", r.Platform(), err)
				}
			}
		}
		if sum == "" {
			sum = Sum(data)
		}
		f := File{Path: dist.BundlePath(sb.Dir, r), Arch: arch, Data: data, SHA256: sum, load: load}
		plan.Files = append(plan.Files, f)
		pinned[arch] = f.SHA256
	}
	sb.Pinned = pinned
	return nil
}

// newSourceBuilder is the default builder; tests count its builds.
var newSourceBuilder = func(self version.Info) (Builder, error) { return NewSourceBuilder(self) }

// Sum is the hex SHA-256 of data.
func Sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

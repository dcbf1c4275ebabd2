package spec

import (
	_ "embed"
	"fmt"
	"strings"
)

// DefaultFile is the conventional spec file name.
const DefaultFile = "debugflow.yaml"

// Module is debugflow's Go module path (step_binary.module).
const Module = "github.com/debugflow/debugflow"

// Step binary defaults (docs/release.md).
const (
	// DefaultBundleDir is where delivery bundle writes the binary in the debug branch.
	DefaultBundleDir = ".github/debugflow"
	// DefaultReleaseBaseURL is where delivery release downloads <version>/<archive> from.
	DefaultReleaseBaseURL = "https://github.com/debugflow/debugflow/releases/download"
)

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML returns the embedded default spec, comments included (what `debugflow init`
// writes).
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// Default returns the embedded default spec: the reference CUDA T4 debug workflow.
func Default() *Spec {
	s, err := Parse("(embedded default)", defaultYAML)
	if err != nil {
		// The embedded file is part of the program and covered by tests: this is a build bug.
		panic(fmt.Sprintf("embedded default spec is invalid: %v", err))
	}
	return s
}

// applyDefaults fills the fields that are absent from the file. Present fields keep what was
// written, so validation can reject count: 0 instead of silently using the default.
func applyDefaults(s *Spec, idx *positions) {
	setStr := func(p string, dst *string, v string) {
		if !idx.has(p) && *dst == "" {
			*dst = v
		}
	}
	setInt := func(p string, dst *int, v int) {
		if !idx.has(p) {
			*dst = v
		}
	}
	setStr("workflow.file", &s.Workflow.File, "debugflow.yml")
	if !idx.has("workflow.name") {
		s.Workflow.Name = "Debug " + strings.Join(s.Runners, ", ")
	}
	setInt("timeout_minutes", &s.TimeoutMinutes, 360)
	if !idx.has("triggers") {
		s.Triggers.WorkflowDispatch = true
	}
	setStr("checkout.submodules", &s.Checkout.Submodules, "false")
	setInt("checkout.fetch_depth", &s.Checkout.FetchDepth, 1)
	setStr("setup.python", &s.Setup.Python, "3.12")
	setStr("setup.go", &s.Setup.Go, "1.26")
	setInt("install.timeout_minutes", &s.Install.TimeoutMinutes, 30)
	setInt("build.timeout_minutes", &s.Build.TimeoutMinutes, 60)
	setStr("smoke.log", &s.Smoke.Log, "smoke.log")
	setInt("smoke.timeout_minutes", &s.Smoke.TimeoutMinutes, 10)
	setInt("reproducer.timeout_minutes", &s.Reproducer.TimeoutMinutes, 120)
	if !idx.has("reproducer.stop_on_first_failure") {
		s.Reproducer.StopOnFirstFailure = true
	}
	setInt("reproducer.workers", &s.Reproducer.Workers, 8)
	setInt("reproducer.count", &s.Reproducer.Count, 50)
	setStr("reproducer.python", &s.Reproducer.Python, "python")
	setStr("reproducer.rebuild_dir", &s.Reproducer.RebuildDir, "build")
	if !idx.has("sanitizer.tools") {
		setStr("sanitizer.tool", &s.Sanitizer.Tool, "memcheck")
		s.Sanitizer.Tools = []string{s.Sanitizer.Tool}
	} else if !idx.has("sanitizer.tool") && len(s.Sanitizer.Tools) > 0 {
		s.Sanitizer.Tool = s.Sanitizer.Tools[0]
	}
	setInt("coredump.attempts", &s.Coredump.Attempts, 3)
	setInt("coredump.max_size_mb", &s.Coredump.MaxSizeMB, 512)
	setInt("coredump.timeout_minutes", &s.Coredump.TimeoutMinutes, 20)
	setInt("sanitizer.print_limit", &s.Sanitizer.PrintLimit, 100)
	setInt("sanitizer.max_tests", &s.Sanitizer.MaxTests, 5)
	setInt("sanitizer.timeout_minutes", &s.Sanitizer.TimeoutMinutes, 30)
	setStr("sanitizer.when", &s.Sanitizer.When, "failed")
	setInt("tmate.timeout_minutes", &s.Tmate.TimeoutMinutes, 60)
	setInt("tmate.connect_timeout_minutes", &s.Tmate.ConnectTimeoutMinutes, DefaultConnectMinutes)
	setStr("tmate.placement", &s.Tmate.Placement, "after")
	setStr("tmate.continue_file", &s.Tmate.ContinueFile, "/tmp/continue")
	setStr("artifact.name", &s.Artifact.Name, "debugflow_artifacts")
	setStr("artifact.dir", &s.Artifact.Dir, "/tmp/repro")
	if !idx.has("tmate.max_minutes") && s.Tmate.GateEnabled() {
		// What the job timeout leaves after the steps; validation rejects a room smaller than
		// the default timeout, naming the numbers to change.
		s.Tmate.MaxMinutes = min(MaxTmateMinutes, s.tmateRoomMinutes())
	}
	applyCacheDefaults(s, idx)
	setStr("step_binary.arch", &s.StepBinary.Arch, ArchX64)
	setStr("step_binary.dir", &s.StepBinary.Dir, DefaultBundleDir)
	setStr("step_binary.base_url", &s.StepBinary.BaseURL, DefaultReleaseBaseURL)
	setStr("step_binary.module", &s.StepBinary.Module, Module)
	if s.StepBinary.Delivery == "" && s.StepBinary.Path != "" {
		// A path says how: build it from the checkout.
		s.StepBinary.Delivery = DeliveryPath
	}
}

package spec

import (
	_ "embed"
	"fmt"
	"reflect"
	"strconv"
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
	// The plain defaults are the `default:` tags of the spec's fields (spec.go): a field and its
	// default are written in one place. What depends on other fields follows.
	applyTagDefaults(reflect.ValueOf(s).Elem(), "", idx)
	if !idx.has("workflow.name") {
		s.Workflow.Name = "Debug " + strings.Join(s.Runners, ", ")
	}
	if !idx.has("triggers") {
		s.Triggers.WorkflowDispatch = true
	}
	if !idx.has("reproducer.stop_on_first_failure") {
		s.Reproducer.StopOnFirstFailure = true
	}
	if !idx.has("sanitizer.tools") {
		setStr("sanitizer.tool", &s.Sanitizer.Tool, "memcheck")
		s.Sanitizer.Tools = []string{s.Sanitizer.Tool}
	} else if !idx.has("sanitizer.tool") && len(s.Sanitizer.Tools) > 0 {
		s.Sanitizer.Tool = s.Sanitizer.Tools[0]
	}
	setInt("tmate.connect_timeout_minutes", &s.Tmate.ConnectTimeoutMinutes, DefaultConnectMinutes)
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

// applyTagDefaults sets every field of v (a struct, at the spec path prefix) that has a
// `default:` tag and is absent from the file: a string only while it is empty, an int
// always; struct fields are walked with their yaml names as the path.
func applyTagDefaults(v reflect.Value, prefix string, idx *positions) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		path := prefix + name
		fv := v.Field(i)
		if f.Type.Kind() == reflect.Struct {
			applyTagDefaults(fv, path+".", idx)
			continue
		}
		def, ok := f.Tag.Lookup("default")
		if !ok || idx.has(path) {
			continue
		}
		switch fv.Kind() {
		case reflect.String:
			if fv.String() == "" {
				fv.SetString(def)
			}
		case reflect.Int:
			n, err := strconv.Atoi(def)
			if err != nil {
				panic(fmt.Sprintf("spec: field %s: default %q is not a whole number", path, def)) // a tag of this package: covered by its tests
			}
			fv.SetInt(int64(n))
		default:
			panic(fmt.Sprintf("spec: field %s: a default tag on a %s", path, fv.Kind()))
		}
	}
}

package spec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every file under testdata/ok must load clean.
func TestOKSpecs(t *testing.T) {
	files, _ := filepath.Glob("testdata/ok/*.yaml")
	if len(files) == 0 {
		t.Fatal("no specs under testdata/ok")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if _, err := Load(f); err != nil {
				t.Fatalf("want no error, got:\n%v", err)
			}
		})
	}
}

// Every file under testdata/err carries its expected errors as "# want: line:col: path: message"
// comments; the errors must match them one to one (each want a prefix of one error).
func TestErrSpecs(t *testing.T) {
	files, _ := filepath.Glob("testdata/err/*.yaml")
	if len(files) == 0 {
		t.Fatal("no specs under testdata/err")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var wants []string
			for _, line := range strings.Split(string(data), "\n") {
				if w, ok := strings.CutPrefix(line, "# want: "); ok {
					wants = append(wants, f+":"+w)
				}
			}
			if len(wants) == 0 {
				t.Fatal("no # want: lines")
			}
			_, err = Parse(f, data)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("want spec.Errors, got %T: %v", err, err)
			}
			if len(errs) != len(wants) {
				t.Fatalf("want %d errors, got %d:\n%v", len(wants), len(errs), err)
			}
			for i, w := range wants {
				if got := errs[i].Error(); !strings.HasPrefix(got, w) {
					t.Errorf("error %d:\n got: %s\nwant: %s...", i, got, w)
				}
			}
		})
	}
}

// The default spec's own values; generate's TestDefaultCarriesV3 holds the generated workflow
// against every behaviour of the reference workflow.
func TestDefaultIsTheReferenceWorkflow(t *testing.T) {
	s := Default()
	checks := []struct {
		name      string
		got, want any
	}{
		{"title", s.Workflow.Name, "Debug CUDA T4 max-reducer hang"},
		{"runners", s.Runners, []string{"gpu-t4-4-core"}},
		{"job timeout", s.TimeoutMinutes, 360},
		{"pull_request types", s.Triggers.PullRequest.Types, []string{"opened", "reopened", "synchronize"}},
		{"dispatch", s.Triggers.WorkflowDispatch, true},
		{"input names", inputNames(s), []string{"quadrants_ref", "tmate_timeout_minutes", "reproduce_count", "full_sweep"}},
		{"ref default", s.Inputs[0].Default, "efd3f69abba15b574bf729ae11239d2a203a5f40"},
		{"tmate input takes tmate.timeout_minutes", s.Inputs[1].Default, ""},
		{"count input takes reproducer.count", s.Inputs[2].Default, ""},
		{"full sweep default", s.Inputs[3].Default, "false"},
		{"env", s.Env, Env{{"QD_OFFLINE_CACHE", "0"}, {"QD_OFFLINE_CACHE_CLEANING_POLICY", "never"},
			{"QD_DEBUG_ADSTACK", "1"}, {"PYTHONUNBUFFERED", "1"}, {"PYTHONFAULTHANDLER", "1"}, {"CUDA_LAUNCH_BLOCKING", "1"},
			{"QUADRANTS_CMAKE_ARGS", "-DQD_WITH_VULKAN:BOOL=OFF -DQD_WITH_CUDA:BOOL=ON -DQD_WITH_AMDGPU:BOOL=OFF -DQD_BUILD_TESTS:BOOL=OFF"}}},
		{"exports", inputExports(s), []string{"LLVM_DIR", "BUILD_DIR"}},
		{"smoke log", s.Smoke.Log, "cuda_init.log"},
		{"python", s.Setup.Python, "3.10"},
		{"submodules", s.Checkout.Submodules, "recursive"},
		{"paths", s.Reproducer.Paths, []string{"tests/python/test_ad_ndarray.py"}},
		{"select", s.Reproducer.Select, "cuda"},
		{"workers", s.Reproducer.Workers, 8},
		{"count", s.Reproducer.Count, 50},
		{"count input", s.Reproducer.CountInput, "reproduce_count"},
		{"stop at the first failure", s.Reproducer.StopOnFirstFailure, true},
		{"full sweep input", s.Reproducer.FullSweepInput, "full_sweep"},
		{"tool", s.Sanitizer.Tool, "memcheck"},
		{"artifact", s.Artifact, Artifact{Name: "debug_cuda_repro_artifacts", Dir: "/tmp/repro"}},
		{"tmate limit", s.Tmate.LimitsToActor(), true},
		{"continue", s.Tmate.ContinueFile, "/tmp/continue"},
		{"placement", s.Tmate.Placement, "before"},
		{"tmate max", s.Tmate.MaxMinutes, 120},
		{"budget fits exactly", s.StepMinutes() + GateMarginMinutes + s.Tmate.MaxMinutes, s.TimeoutMinutes},
		{"step binary", s.StepBinary, StepBinary{Arch: ArchX64, Dir: DefaultBundleDir, BaseURL: DefaultReleaseBaseURL, Module: Module}},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

func inputExports(s *Spec) []string {
	var names []string
	for _, e := range s.Exports() {
		names = append(names, e.Name)
	}
	return names
}

func TestDefaultsFillOnlyAbsentFields(t *testing.T) {
	s, err := Parse("min.yaml", []byte("runners: [gpu]\nreproducer:\n  paths: [t]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Reproducer.Count != 50 || s.Reproducer.Workers != 8 || s.Sanitizer.PrintLimit != 100 ||
		s.Tmate.TimeoutMinutes != 60 || s.Artifact.Dir != "/tmp/repro" || !s.Triggers.WorkflowDispatch ||
		!s.Reproducer.StopOnFirstFailure || s.TimeoutMinutes != 360 || s.Smoke.Log != "smoke.log" {
		t.Errorf("defaults not applied: %+v", s)
	}
	// A session nobody attaches to ends after 10 minutes and frees the runner; pull_request
	// runs open none.
	if s.Tmate.ConnectTimeoutMinutes != DefaultConnectMinutes || DefaultConnectMinutes != 10 || s.Tmate.OnPullRequest {
		t.Errorf("tmate defaults: connect %d, on_pull_request %v", s.Tmate.ConnectTimeoutMinutes, s.Tmate.OnPullRequest)
	}
	if off, err := Parse("off.yaml", []byte("runners: [gpu]\nreproducer: {paths: [t]}\ntmate: {connect_timeout_minutes: 0, on_pull_request: true}\n")); err != nil ||
		off.Tmate.ConnectTimeoutMinutes != 0 || !off.Tmate.OnPullRequest {
		t.Errorf("a written connect_timeout_minutes: 0 / on_pull_request: true: %+v, %v", off.Tmate, err)
	}
	// Without tmate.max_minutes a run may ask for what the job timeout leaves after the steps:
	// 360 - (10 + 120 reproducer + 30 sanitizer) - 5.
	if s.Tmate.MaxMinutes != 195 {
		t.Errorf("derived tmate.max_minutes = %d, want 195", s.Tmate.MaxMinutes)
	}
	// A present zero is kept and rejected, not replaced by the default.
	_, err = Parse("zero.yaml", []byte("runners: [gpu]\nreproducer:\n  paths: [t]\n  workers: 0\n  count: 0\n"))
	if err == nil || !strings.Contains(err.Error(), "reproducer.count: must be between 1 and") {
		t.Errorf("want count error, got %v", err)
	}
	if strings.Contains(err.Error(), "workers") {
		t.Errorf("workers: 0 (no xdist) is valid, got %v", err)
	}
}

func TestEnvKeepsOrder(t *testing.T) {
	s, err := Parse("env.yaml", []byte("runners: [gpu]\nreproducer: {paths: [t]}\nenv:\n  Z: 1\n  A: x\n  M: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Env{{"Z", "1"}, {"A", "x"}, {"M", "true"}}
	if diff := cmp.Diff(want, s.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

func TestDefaultYAMLIsACopy(t *testing.T) {
	a := DefaultYAML()
	a[0] = 'X'
	if DefaultYAML()[0] == 'X' {
		t.Error("DefaultYAML returned the embedded slice itself")
	}
}

func inputNames(s *Spec) []string {
	var names []string
	for _, in := range s.Inputs {
		names = append(names, in.Name)
	}
	return names
}

// maxFuzzSpec bounds a fuzzed spec: parsing a larger one costs more per input and far more
// to minimize (Go's fuzzer minimizes every new input for up to a minute, counting no
// executions), and the default spec's 14 KB only repeat what its sections show. The size
// limit itself (MaxSpecBytes) has its own test.
const maxFuzzSpec = 4 << 10

// FuzzParse: any bytes either load or give located errors, never a panic. The default spec
// is seeded one top-level section at a time.
func FuzzParse(f *testing.F) {
	for _, section := range topLevelSections(DefaultYAML()) {
		f.Add(section)
	}
	seeds, _ := filepath.Glob("testdata/*/*.yaml")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil && len(b) <= maxFuzzSpec {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzSpec {
			return
		}
		s, err := Parse("fuzz.yaml", data)
		if err == nil {
			if s == nil || len(s.Runners) == 0 || s.Reproducer.Count < 1 {
				t.Fatalf("valid spec breaks an invariant: %+v", s)
			}
			return
		}
		var errs Errors
		if !errors.As(err, &errs) || len(errs) == 0 {
			t.Fatalf("want spec.Errors, got %T: %v", err, err)
		}
	})
}

// topLevelSections splits a YAML document before each line that starts a top-level key,
// dropping comment lines, so each piece is a small spec of one section.
func topLevelSections(data []byte) [][]byte {
	var out [][]byte
	var cur []byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) > 0 && line[0] == '#' {
			continue
		}
		if len(line) > 0 && line[0] != ' ' && line[0] != '\n' && len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
		cur = append(cur, line...)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func BenchmarkParseDefault(b *testing.B) {
	data := DefaultYAML()
	for b.Loop() {
		if _, err := Parse("default.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEveryDefaultTagIsApplied: a spec that writes none of the tagged fields gets each
// field's `default:` tag (and a tag that is not a value of its field would panic here first).
func TestEveryDefaultTagIsApplied(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "ok", "minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(v reflect.Value, path string) int
	walk = func(v reflect.Value, path string) int {
		n := 0
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if f.Type.Kind() == reflect.Struct {
				n += walk(v.Field(i), path+name+".")
				continue
			}
			def, ok := f.Tag.Lookup("default")
			if !ok {
				continue
			}
			n++
			if got := fmt.Sprint(v.Field(i).Interface()); got != def {
				t.Errorf("%s%s = %q, want its default %q", path, name, got, def)
			}
		}
		return n
	}
	if n := walk(reflect.ValueOf(s).Elem(), ""); n < 20 {
		t.Errorf("only %d fields have a default tag", n)
	}
}

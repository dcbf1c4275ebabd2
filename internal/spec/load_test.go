package spec

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An input that stands for a number of the spec (count_input, timeout_input) takes that
// number as its default (issue 9: one source of truth). A different default of its own would
// silently win over the number, so it is an error at the input's default, the line to change
// (issue 12 asked for a warning there; an error leaves nothing to warn about). Equal values,
// or an input without a default, load.
func TestInputDefaultDisagreeingWithTheNumberIsAnError(t *testing.T) {
	const base = "runners: [gpu]\nreproducer:\n  paths: [t]\n"
	tests := []struct {
		name    string
		extra   string
		wantErr string
	}{
		{"count", "  count: 200\n  count_input: n\ninputs: [{name: n, type: number, default: \"50\"}]\n",
			`w.yaml:6:34: inputs[0].default: input "n" defaults to 50 but reproducer.count is 200`},
		{"tmate timeout", "tmate: {timeout_minutes: 30, timeout_input: m}\ninputs: [{name: m, type: number, default: \"60\"}]\n",
			`w.yaml:5:34: inputs[0].default: input "m" defaults to 60 but tmate.timeout_minutes is 30`},
		{"count not written: the default 50", "  count_input: n\ninputs: [{name: n, type: number, default: \"40\"}]\n",
			`w.yaml:5:34: inputs[0].default: input "n" defaults to 40 but reproducer.count is 50`},
		{"equal values", "  count: 50\n  count_input: n\ninputs: [{name: n, type: number, default: \"50\"}]\n", ""},
		{"value not written, default equal", "  count_input: n\ninputs: [{name: n, type: number, default: \"50\"}]\n", ""},
		{"input without a default", "  count: 200\n  count_input: n\ninputs: [{name: n, type: number}]\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("w.yaml", []byte(base+tt.extra))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatal(err)
			case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want %s...", err, tt.wantErr)
			}
		})
	}
}

// A spec that is a device, a pipe or a huge file is refused without reading it all (or
// blocking on it).
func TestLoadReadsOnlyBoundedRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("# padding\n", 20_000)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{fifo, "not a regular file (a FIFO)"},
		{zero, "not a regular file (a character device)"},
		{dir, "not a regular file (a directory)"},
		{big, "larger than 64 KiB"},
		{filepath.Join(dir, "missing.yaml"), "no such file"},
	} {
		done := make(chan error, 1)
		go func() { _, err := Load(c.path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: want %q, got %v", filepath.Base(c.path), c.want, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Load blocked", filepath.Base(c.path))
		}
	}
}

func TestSuggest(t *testing.T) {
	keys := []string{"paths", "select", "workers", "count", "count_input", "pytest_args", "env", "python", "stop_on_first_failure"}
	for _, c := range []struct{ in, want string }{
		{"worker", "workers"},
		{"Workers", "workers"},
		{"slect", "select"},
		{"seletc", "select"},
		{"count-input", "count_input"},
		{"countinput", "count_input"},
		{"pytest_arg", "pytest_args"},
		{"stop_on_first_fail", "stop_on_first_failure"},
		{"ENV", "env"},
		{"en", ""},
		{"tool", ""},
		{"banana", ""},
	} {
		if got := suggest(c.in, keys); got != c.want {
			t.Errorf("suggest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Parse reports decode and value errors together, and a wrong-typed value is not reported a
// second time by validation.
func TestErrorsAllAtOnceWithoutEchoes(t *testing.T) {
	_, err := Parse("x.yaml", []byte("runners: [gpu]\nreproducer:\n  paths: [t]\n  count: many\n  workers: -1\nsanitizer: {tool: valgrind}\n"))
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want Errors, got %v", err)
	}
	got := errs.Error()
	for _, want := range []string{"reproducer.count: wrong type", "reproducer.workers: must be between 0 and 256", `sanitizer.tool: unknown tool "valgrind"`} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "must be at least 1") || len(errs) != 3 {
		t.Errorf("want exactly 3 errors, got:\n%s", got)
	}
}

// The decoder handles every field of Spec: a field of a new kind (a float, a map, a type with
// its own UnmarshalYAML) needs a case in decode.go, and this test says so before a user does.
func TestDecoderHandlesEveryField(t *testing.T) {
	var walk func(t *testing.T, typ reflect.Type, path string)
	walk = func(t *testing.T, typ reflect.Type, path string) {
		if typ == envType {
			return
		}
		if typ.Implements(reflect.TypeOf((*interface{ UnmarshalYAML(func(any) error) error })(nil)).Elem()) ||
			reflect.PointerTo(typ).Implements(reflect.TypeOf((*interface{ UnmarshalYAML(func(any) error) error })(nil)).Elem()) {
			t.Errorf("%s: %s has its own UnmarshalYAML, which Parse's decoder does not call", path, typ)
		}
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice:
			walk(t, typ.Elem(), path+"[]")
		case reflect.Struct:
			fields, keys := fieldsOf(typ)
			skipped := 0 // yaml:"-": filled by debugflow, never read from a file
			for i := range typ.NumField() {
				if typ.Field(i).Tag.Get("yaml") == "-" {
					skipped++
				}
			}
			if len(keys)+skipped != typ.NumField() {
				t.Errorf("%s: a field of %s has no yaml tag", path, typ)
			}
			for _, k := range keys {
				walk(t, typ.Field(fields[k]).Type, joinPath(path, k))
			}
		case reflect.String, reflect.Int, reflect.Bool:
		default:
			t.Errorf("%s: the decoder has no case for %s", path, typ)
		}
	}
	walk(t, reflect.TypeOf(Spec{}), "")
}

// A value outside a fixed set that looks like a typo names the value meant.
func TestEnumTyposSuggestTheValue(t *testing.T) {
	const base = "runners: [gpu]\nreproducer:\n  paths: [t]\n"
	tests := []struct{ name, yaml, field, want string }{
		{"delivery", "step_binary: {delivery: bundel}\n", "step_binary.delivery", `(got "bundel"); did you mean "bundle"?`},
		{"tmate placement", "tmate: {placement: befor}\n", "tmate.placement", `(got "befor"); did you mean "before"?`},
		{"sanitizer tool", "sanitizer: {tool: memchek}\n", "sanitizer.tool", `unknown tool "memchek": use memcheck, racecheck, initcheck or synccheck; did you mean "memcheck"?`},
		{"sanitizer ladder", "sanitizer: {tools: [memcheck, racechek]}\n", "sanitizer.tools[1]", `did you mean "racecheck"?`},
		{"input type", "inputs: [{name: n, type: bool}]\n", "inputs[0].type", `unknown input type "bool": use string, number, boolean or choice`},
		{"compiler cache", "cache: {compiler: {tool: cache}}\n", "cache.compiler.tool", `(got "cache"); did you mean "ccache"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(base+tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.field) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %s: ...%s", err, tt.field, tt.want)
			}
		})
	}
	// A value nowhere near an allowed one gets no guess.
	if _, err := Parse("x.yaml", []byte(base+"tmate: {placement: sideways}\n")); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("error %v, want no suggestion", err)
	}
}

// TestByteOrderMark: a spec saved as "UTF-8 with BOM" loads like the same spec without it;
// before, its first key was "\ufeffrunners", an unknown key. Positions stay as an editor shows
// them.
func TestByteOrderMark(t *testing.T) {
	s, err := Parse("bom.yaml", []byte("\ufeffrunners: [gpu]\nreproducer: {paths: [t]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runners) != 1 || s.Runners[0] != "gpu" {
		t.Errorf("runners = %q", s.Runners)
	}
	_, err = Parse("bom.yaml", []byte("\ufeffrunner: [gpu]\n"))
	if err == nil || !strings.Contains(err.Error(), `bom.yaml:1:1: runner: unknown key "runner"`) {
		t.Errorf("want the unknown key at 1:1 without the mark, got %v", err)
	}
}

// TestEmptySpec: a file without a key says it is empty, once, instead of listing every key it
// lacks.
func TestEmptySpec(t *testing.T) {
	for _, src := range []string{"", "\n\n", "# only a comment\n", "\ufeff"} {
		_, err := Parse("empty.yaml", []byte(src))
		var errs Errors
		if !errors.As(err, &errs) || len(errs) != 1 || !strings.Contains(errs[0].Error(), "the spec is empty") {
			t.Errorf("%q: %v, want one finding saying the spec is empty", src, err)
		}
	}
}

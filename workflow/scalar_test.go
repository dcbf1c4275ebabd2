package workflow

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/rhysd/actionlint"
)

// quotingCases are strings whose style matters: values from real workflows, strings YAML
// would read as another type, indicators, and multi-line scripts.
var quotingCases = []struct {
	in   string
	want scalarStyle
}{
	// Plain: what a reviewer expects to see unquoted.
	{"ubuntu-latest", stylePlain},
	{"gpu-t4-4-core", stylePlain},
	{"${{ inputs.quadrants_ref || 'efd3f69a2b' }}", stylePlain},
	{"${{ fromJSON(steps.stage.outputs.gate_timeout_minutes || '65') }}", stylePlain},
	{"debug_cuda_repro_artifacts-${{ matrix.runner }}", stylePlain},
	{"steps.reproduce.outputs.reproduced == 'true'", stylePlain},
	{"always()", stylePlain},
	{"/tmp/repro", stylePlain},
	{"./build", stylePlain},
	{"-DQD_WITH_CUDA=ON", stylePlain},
	{`debugflow-step stage --count "$REPRODUCE_COUNT"`, stylePlain},
	{"a:b", stylePlain},
	{"C:\\path", stylePlain},
	{"x{y}[z],w", stylePlain},
	{"v4.2.2", stylePlain},
	{"efd3f69a", stylePlain},
	{"é-ünïcode", stylePlain},
	{"yes-please", stylePlain},
	// Would be read as another type: quoted.
	{"3.10", styleDoubleQuoted},
	{"1", styleDoubleQuoted},
	{"0", styleDoubleQuoted},
	{"-1", styleDoubleQuoted},
	{"+1", styleDoubleQuoted},
	{".5", styleDoubleQuoted},
	{"1e3", styleDoubleQuoted},
	{"0x1F", styleDoubleQuoted},
	{"0o17", styleDoubleQuoted},
	{"1_000", styleDoubleQuoted},
	{"12:30", styleDoubleQuoted},
	{"2001-12-14", styleDoubleQuoted},
	{".inf", styleDoubleQuoted},
	{"-.inf", styleDoubleQuoted},
	{".NaN", styleDoubleQuoted},
	{"true", styleDoubleQuoted},
	{"False", styleDoubleQuoted},
	{"yes", styleDoubleQuoted},
	{"No", styleDoubleQuoted},
	{"on", styleDoubleQuoted},
	{"OFF", styleDoubleQuoted},
	{"y", styleDoubleQuoted},
	{"null", styleDoubleQuoted},
	{"~", styleDoubleQuoted},
	{"", styleDoubleQuoted},
	{"<<", styleDoubleQuoted},
	{"=", styleDoubleQuoted},
	// Indicators and syntax: quoted.
	{"a: b", styleDoubleQuoted},
	{"a:", styleDoubleQuoted},
	{"a #b", styleDoubleQuoted},
	{"a#b", styleDoubleQuoted},
	{"#x", styleDoubleQuoted},
	{"*alias", styleDoubleQuoted},
	{"&anchor", styleDoubleQuoted},
	{"!tag", styleDoubleQuoted},
	{"!cancelled()", styleDoubleQuoted},
	{"{a: 1}", styleDoubleQuoted},
	{"[a]", styleDoubleQuoted},
	{"@x", styleDoubleQuoted},
	{"`x`", styleDoubleQuoted},
	{"%TAG", styleDoubleQuoted},
	{"? x", styleDoubleQuoted},
	{":x", styleDoubleQuoted},
	{"- x", styleDoubleQuoted},
	{"-", styleDoubleQuoted},
	{"--flag", styleDoubleQuoted},
	{"---", styleDoubleQuoted},
	{"...", styleDoubleQuoted},
	{"|", styleDoubleQuoted},
	{">", styleDoubleQuoted},
	{"'single'", styleDoubleQuoted},
	{`"double"`, styleDoubleQuoted},
	{" leading", styleDoubleQuoted},
	{"trailing ", styleDoubleQuoted},
	{"tab\there", styleDoubleQuoted},
	{"bell\a", styleDoubleQuoted},
	{"nul\x00", styleDoubleQuoted},
	{"bom\ufeff", styleDoubleQuoted},
	{"line\u2028sep", styleDoubleQuoted},
	{"nbsp\u00a0", styleDoubleQuoted},
	// Multi-line: literal when it round-trips without an indentation indicator.
	{"echo a\necho b\n", styleLiteral},
	{"echo a\necho b", styleLiteral},
	{"if true; then\n  echo 'in: side' # c\nfi\n", styleLiteral},
	{"a\n\tb\n", styleLiteral},
	{"a\n\nb\n", styleLiteral},
	{"a\n  \nb", styleDoubleQuoted},
	{"a \nb", styleDoubleQuoted},
	{"0\n ", styleDoubleQuoted},
	{" indented first line\nb\n", styleDoubleQuoted},
	{"\nleading newline", styleDoubleQuoted},
	{"\tleading tab\nb", styleDoubleQuoted},
	{"two trailing\n\n", styleDoubleQuoted},
	{"\n", styleDoubleQuoted},
	{"crlf\r\nline", styleDoubleQuoted},
	{"ctl\x01\nline", styleDoubleQuoted},
}

func TestStyleFor(t *testing.T) {
	for _, tc := range quotingCases {
		if got := styleFor(tc.in); got != tc.want {
			t.Errorf("styleFor(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestQuotingRoundTrip puts every quoting case everywhere a string can go and checks that
// YAML reads back the same string and that the emitted line has the expected style.
func TestQuotingRoundTrip(t *testing.T) {
	for _, tc := range quotingCases {
		out, err := stringWorkflow(tc.in).Marshal(Header{})
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if err := checkStringRoundTrip(out, tc.in); err != nil {
			t.Errorf("%q: %v\n%s", tc.in, err, out)
		}
		if tc.in == "" {
			continue // an empty name is omitted
		}
		line := lineAfter(string(out), "      - name: ")
		switch tc.want {
		case stylePlain:
			if line != tc.in {
				t.Errorf("%q: written as %q, want plain", tc.in, line)
			}
		case styleDoubleQuoted:
			if !strings.HasPrefix(line, `"`) {
				t.Errorf("%q: written as %q, want double-quoted", tc.in, line)
			}
		case styleLiteral:
			if !strings.HasPrefix(line, "|") {
				t.Errorf("%q: written as %q, want a literal block", tc.in, line)
			}
		}
	}
}

// lineAfter returns the rest of the first line of s that starts with prefix.
func lineAfter(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return rest
		}
	}
	return ""
}

// stringWorkflow places s in every kind of string slot: a step name, run script, env value,
// with value, runs-on label, a matrix value, an input description and a choice option.
func stringWorkflow(s string) *Workflow {
	return &Workflow{
		Name: s,
		On: On{WorkflowDispatch: &WorkflowDispatch{Inputs: Inputs{
			{Name: "in", Description: s, Type: InputChoice, Options: []string{s}},
		}}},
		Env: Env{{Name: "E", Value: s}},
		Jobs: Jobs{{
			ID:       "j",
			RunsOn:   RunsOn{runnerLabel(s)},
			Strategy: &Strategy{Matrix: MatrixAxes{{Name: "m", Values: []Value{Str(s)}}}},
			Steps: []Step{
				{Name: s, Run: s + "x", Env: Env{{Name: "S", Value: s}}},
				{Uses: Uses{Action: "a/b", Ref: "v1", Comment: "c"}, With: With{{Key: "k", Value: Str(s)}}},
			},
		}},
	}
}

// runnerLabel is s, or a placeholder when s is empty (an empty label is invalid).
func runnerLabel(s string) string {
	if s == "" {
		return "placeholder"
	}
	return s
}

// checkStringRoundTrip parses out and checks that every slot of stringWorkflow holds s.
func checkStringRoundTrip(out []byte, s string) error {
	var got struct {
		Name string `yaml:"name"`
		On   struct {
			WorkflowDispatch struct {
				Inputs struct {
					In struct {
						Description string   `yaml:"description"`
						Options     []string `yaml:"options"`
					} `yaml:"in"`
				} `yaml:"inputs"`
			} `yaml:"workflow_dispatch"`
		} `yaml:"on"`
		Env  map[string]string `yaml:"env"`
		Jobs struct {
			J struct {
				RunsOn   string `yaml:"runs-on"`
				Strategy struct {
					Matrix struct {
						M []string `yaml:"m"`
					} `yaml:"matrix"`
				} `yaml:"strategy"`
				Steps []struct {
					Name string            `yaml:"name"`
					Run  string            `yaml:"run"`
					Env  map[string]string `yaml:"env"`
					With map[string]string `yaml:"with"`
				} `yaml:"steps"`
			} `yaml:"j"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(out, &got); err != nil {
		return err
	}
	j := got.Jobs.J
	in := got.On.WorkflowDispatch.Inputs.In
	checks := []struct {
		slot, got string
		want      string
	}{
		{"name", got.Name, s},
		{"input description", in.Description, s},
		{"env", got.Env["E"], s},
		{"runs-on", j.RunsOn, runnerLabel(s)},
		{"step name", stepField(j.Steps, 0, func(i int) string { return j.Steps[i].Name }), s},
		{"run", stepField(j.Steps, 0, func(i int) string { return j.Steps[i].Run }), s + "x"},
		{"step env", stepField(j.Steps, 0, func(i int) string { return j.Steps[i].Env["S"] }), s},
		{"with", stepField(j.Steps, 1, func(i int) string { return j.Steps[i].With["k"] }), s},
	}
	if len(in.Options) != 1 {
		return errorf("options = %q, want one", in.Options)
	}
	checks = append(checks, struct{ slot, got, want string }{"option", in.Options[0], s})
	if len(j.Strategy.Matrix.M) != 1 {
		return errorf("matrix = %q, want one value", j.Strategy.Matrix.M)
	}
	checks = append(checks, struct{ slot, got, want string }{"matrix", j.Strategy.Matrix.M[0], s})
	for _, c := range checks {
		if c.got != c.want {
			return errorf("%s read back as %q, want %q", c.slot, c.got, c.want)
		}
	}
	return checkActionlintReads(out, s)
}

// checkActionlintReads parses out with actionlint's parser (a different YAML library from
// goccy, the one the lint package uses) and checks it reads the same strings.
func checkActionlintReads(out []byte, s string) error {
	if s == "" {
		return nil // actionlint rejects empty option and matrix values, rightly
	}
	w, errs := actionlint.Parse(out)
	if len(errs) > 0 {
		return errorf("actionlint cannot parse: %v", errs[0])
	}
	if w.Name == nil || w.Name.Value != s {
		if !(w.Name == nil && s == "") {
			return errorf("actionlint reads name as %v, want %q", w.Name, s)
		}
	}
	job := w.Jobs["j"]
	if job == nil || len(job.Steps) != 2 {
		return errorf("actionlint reads no job j with two steps")
	}
	run, ok := job.Steps[0].Exec.(*actionlint.ExecRun)
	if !ok || run.Run == nil || run.Run.Value != s+"x" {
		return errorf("actionlint reads run as %v, want %q", job.Steps[0].Exec, s+"x")
	}
	action, ok := job.Steps[1].Exec.(*actionlint.ExecAction)
	if !ok || action.Inputs["k"] == nil || action.Inputs["k"].Value.Value != s {
		return errorf("actionlint reads with.k wrongly, want %q", s)
	}
	if e := w.Env.Vars["e"]; e == nil || e.Value.Value != s {
		return errorf("actionlint reads env.E wrongly, want %q", s)
	}
	return nil
}

func stepField(steps []struct {
	Name string            `yaml:"name"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
	With map[string]string `yaml:"with"`
}, i int, f func(int) string) string {
	if i >= len(steps) {
		return "<missing step>"
	}
	return f(i)
}

// FuzzMarshalString proves the quoting: any valid UTF-8 string placed in any string slot
// survives marshal → unmarshal unchanged, and marshalling never fails for it.
func FuzzMarshalString(f *testing.F) {
	for _, tc := range quotingCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			if _, err := stringWorkflow(s).Marshal(Header{}); err == nil {
				t.Fatalf("invalid UTF-8 %q marshalled without error", s)
			}
			return
		}
		out, err := stringWorkflow(s).Marshal(Header{})
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if err := checkStringRoundTrip(out, s); err != nil {
			t.Fatalf("%q: %v\n%s", s, err, out)
		}
	})
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

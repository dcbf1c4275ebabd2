package ghrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateInputs(t *testing.T) {
	wf := testWorkflow()
	wf.Inputs = append(wf.Inputs,
		InputDef{Name: "runner_label", Type: InputString, Required: true},
		InputDef{Name: "deploy_env", Type: InputEnvironment},
	)
	tests := []struct {
		name     string
		given    map[string]string
		want     map[string]any
		problems []string // substrings, one per expected problem, in order
	}{
		{
			name:  "only required given; defaults are not sent",
			given: map[string]string{"runner_label": "gpu-t4-4-core"},
			want:  map[string]any{"runner_label": "gpu-t4-4-core"},
		},
		{
			name: "every type normalised",
			given: map[string]string{"runner_label": "x", "reproduce_count": " 200 ", "open_tmate": "FALSE",
				"sanitizer_tool": "racecheck", "tmate_timeout_minutes": "2.5e1", "deploy_env": "gpu"},
			want: map[string]any{"runner_label": "x", "reproduce_count": "200", "open_tmate": "false",
				"sanitizer_tool": "racecheck", "tmate_timeout_minutes": "2.5e1", "deploy_env": "gpu"},
		},
		{
			name:  "a value equal to the default is still sent when given",
			given: map[string]string{"runner_label": "x", "reproduce_count": "50"},
			want:  map[string]any{"runner_label": "x", "reproduce_count": "50"},
		},
		{
			name:     "unknown name lists the valid ones",
			given:    map[string]string{"runner_label": "x", "count": "5"},
			problems: []string{`unknown input "count"; valid inputs: quadrants_ref, tmate_timeout_minutes, reproduce_count, sanitizer_tool, open_tmate, dispatch_id, runner_label, deploy_env`},
		},
		{
			name:     "near miss is suggested",
			given:    map[string]string{"runner_label": "x", "Reproduce-Count": "5"},
			problems: []string{`unknown input "Reproduce-Count" (did you mean "reproduce_count"?)`},
		},
		{
			name: "every problem at once, unknown first then in declaration order",
			given: map[string]string{"zeta": "1", "alpha": "2", "tmate_timeout_minutes": "thirty",
				"reproduce_count": "0x10", "sanitizer_tool": "Memcheck", "open_tmate": "yes"},
			problems: []string{
				`unknown input "alpha"`,
				`unknown input "zeta"`,
				`input "tmate_timeout_minutes" must be a number (like 50), got "thirty"`,
				`input "reproduce_count" must be a number`,
				`input "sanitizer_tool" must be one of "memcheck", "racecheck", "initcheck", got "Memcheck"`,
				`input "open_tmate" must be a boolean (true or false), got "yes"`,
				`required input "runner_label" is missing: pass -f runner_label=VALUE`,
			},
		},
		{
			name:     "required and empty",
			given:    map[string]string{"runner_label": "  "},
			problems: []string{`required input "runner_label" is empty`},
		},
		{
			name:     "number out of range",
			given:    map[string]string{"runner_label": "x", "reproduce_count": "1e999"},
			problems: []string{`number "1e999" is out of range`},
		},
		{
			name:     "number with sign and spaces inside",
			given:    map[string]string{"runner_label": "x", "reproduce_count": "5 0"},
			problems: []string{`input "reproduce_count" must be a number`},
		},
		{
			name:     "empty environment",
			given:    map[string]string{"runner_label": "x", "deploy_env": ""},
			problems: []string{`input "deploy_env" must name an environment`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ValidateInputs(wf, tt.given)
			if len(tt.problems) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want *ValidationError, got %v", err)
			}
			if len(ve.Problems) != len(tt.problems) {
				t.Fatalf("want %d problems, got %d:\n%s", len(tt.problems), len(ve.Problems), err)
			}
			for i, p := range tt.problems {
				if !strings.Contains(ve.Problems[i], p) {
					t.Errorf("problem %d = %q, want it to contain %q", i, ve.Problems[i], p)
				}
			}
		})
	}
}

func TestValidateInputsRequiredWithDefaultIsNotMissing(t *testing.T) {
	wf := Workflow{File: "w.yml", Inputs: []InputDef{{Name: "ref", Required: true, Default: "main"}}}
	got, err := ValidateInputs(wf, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want nothing to send (GitHub applies the default)", got, err)
	}
}

func TestValidateInputsNoInputsDeclared(t *testing.T) {
	_, err := ValidateInputs(Workflow{File: "w.yml"}, map[string]string{"x": "1"})
	if err == nil || !strings.Contains(err.Error(), "the workflow declares no inputs") {
		t.Fatalf("got %v", err)
	}
}

func TestGatherFields(t *testing.T) {
	dir := t.TempDir()
	refFile := filepath.Join(dir, "ref.txt")
	os.WriteFile(refFile, []byte("v1.2.3\n"), 0o644)
	big := filepath.Join(dir, "big.txt")
	os.WriteFile(big, bytes.Repeat([]byte("a"), maxInputBytes+1), 0o644)
	tests := []struct {
		name    string
		src     inputSources
		want    map[string]string
		wantErr string
	}{
		{name: "none", want: map[string]string{}},
		{name: "raw", src: inputSources{Raw: []string{"a=1", "b=x=y", "c="}}, want: map[string]string{"a": "1", "b": "x=y", "c": ""}},
		{name: "raw @ is literal", src: inputSources{Raw: []string{"a=@" + refFile}}, want: map[string]string{"a": "@" + refFile}},
		{name: "-F reads a file", src: inputSources{Magic: []string{"a=@" + refFile, "b=plain"}}, want: map[string]string{"a": "v1.2.3\n", "b": "plain"}},
		{name: "-F @- reads stdin", src: inputSources{Magic: []string{"a=@-"}, Stdin: strings.NewReader("from stdin")}, want: map[string]string{"a": "from stdin"}},
		{name: "-F and -f together", src: inputSources{Raw: []string{"a=1"}, Magic: []string{"b=2"}, Stdin: strings.NewReader("ignored")}, want: map[string]string{"a": "1", "b": "2"}},
		{name: "no =", src: inputSources{Raw: []string{"novalue"}}, wantErr: `-f "novalue": expected name=value`},
		{name: "empty name", src: inputSources{Magic: []string{"=v"}}, wantErr: `-F "=v": the input name is empty`},
		{name: "all problems at once", src: inputSources{Raw: []string{"a=1", "b"}, Magic: []string{"a=2"}},
			wantErr: "invalid inputs:\n  - -f \"b\": expected name=value\n  - input \"a\" is given twice"},
		{name: "missing file", src: inputSources{Magic: []string{"a=@" + filepath.Join(dir, "nope")}}, wantErr: "no such file"},
		{name: "file too big", src: inputSources{Magic: []string{"a=@" + big}}, wantErr: "more than 64.0 KiB"},
		{name: "bare @", src: inputSources{Magic: []string{"a=@"}}, wantErr: "@ must be followed by a file name"},
		{name: "stdin twice", src: inputSources{Magic: []string{"a=@-", "b=@-"}, Stdin: strings.NewReader("x")}, wantErr: "stdin can be read for one input only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.src.gather(context.Background())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseInputsJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]string
		wantErr string
	}{
		{in: "", want: map[string]string{}},
		{in: " \n", want: map[string]string{}},
		{in: `{}`, want: map[string]string{}},
		{in: `{"a": "x", "n": 200, "f": 2.5e1, "b": false}`, want: map[string]string{"a": "x", "n": "200", "f": "2.5e1", "b": "false"}},
		{in: `{"a": null}`, wantErr: `input "a" is null: leave it out`},
		{in: `{"a": [1], "b": {"c": 1}}`, wantErr: "invalid inputs:\n  - input \"a\" is a JSON array: inputs are strings, numbers or booleans\n  - input \"b\" is a JSON object"},
		{in: `{"a": "1", "a": "2"}`, wantErr: `input "a" is given twice`},
		{in: `["a"]`, wantErr: "not a JSON object"},
		{in: `reproduce_count=5`, wantErr: "not a JSON object"},
		{in: `{"a": "1"} {"b": 2}`, wantErr: "more data after the object"},
		{in: `{"a": "1"`, wantErr: "invalid JSON"},
	}
	for _, tt := range tests {
		got, err := parseInputsJSON([]byte(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseInputsJSON(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseInputsJSON(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseInputsJSON(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// FuzzParseInputsJSON: the stdin parser never panics, and what it accepts
// is one string per name.
func FuzzParseInputsJSON(f *testing.F) {
	for _, s := range []string{`{"a": 1}`, `{"a": "x", "b": true}`, `{"a": null}`, `[1]`, `{"a":1}{}`, `{"a": {"b": [1, 2]}}`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseInputsJSON([]byte(s))
		if err != nil {
			return
		}
		var back map[string]any
		if strings.TrimSpace(s) != "" && json.Unmarshal([]byte(s), &back) != nil {
			t.Fatalf("accepted %q, which is not JSON", s)
		}
		if len(got) > len(back) && strings.TrimSpace(s) != "" {
			t.Fatalf("%d inputs from %d keys", len(got), len(back))
		}
	})
}

// FuzzValidateInputs checks that validation never panics, and that whatever
// it accepts is declared, a string, and of the declared type.
func FuzzValidateInputs(f *testing.F) {
	f.Add("reproduce_count=50", "open_tmate=true")
	f.Add("sanitizer_tool=racecheck", "x=y")
	f.Add("tmate_timeout_minutes=-1.5E+3", "=")
	wf := testWorkflow()
	f.Fuzz(func(t *testing.T, a, b string) {
		given, err := inputSources{Raw: []string{a, b}}.gather(context.Background())
		if err != nil {
			return
		}
		body, err := ValidateInputs(wf, given)
		if err != nil {
			return
		}
		for name, v := range body {
			in, ok := wf.Input(name)
			if !ok {
				t.Fatalf("accepted undeclared input %q", name)
			}
			s, ok := v.(string)
			if !ok {
				t.Fatalf("input %q sent as %T, want string", name, v)
			}
			if _, err := checkValue(in, s); err != nil {
				t.Fatalf("normalised value %q of %q does not validate again: %v", s, name, err)
			}
		}
	})
}

func BenchmarkValidateInputs(b *testing.B) {
	wf := testWorkflow()
	given := map[string]string{"reproduce_count": "200", "open_tmate": "true", "sanitizer_tool": "memcheck", "quadrants_ref": "v1.2"}
	for b.Loop() {
		if _, err := ValidateInputs(wf, given); err != nil {
			b.Fatal(err)
		}
	}
}

func TestValidateInputsRanges(t *testing.T) {
	wf := Workflow{File: "w.yml", Inputs: []InputDef{
		{Name: "reproduce_count", Type: InputNumber, Range: &IntRange{Min: 1, Why: "the pytest-repeat count"}},
		{Name: "tmate_timeout_minutes", Type: InputNumber, Range: &IntRange{Min: 1, Max: 360, Why: "the tmate timeout in minutes"}},
		{Name: "scale", Type: InputNumber}, // no range: any number
	}}
	tests := []struct {
		given map[string]string
		want  string // "" = valid
	}{
		{map[string]string{"reproduce_count": "200", "tmate_timeout_minutes": "360", "scale": "2.5"}, ""},
		{map[string]string{"reproduce_count": "2e2", "tmate_timeout_minutes": "30.0"}, ""},
		{map[string]string{"reproduce_count": "1e300"}, "whole number at least 1"},
		{map[string]string{"reproduce_count": "2.5"}, `input "reproduce_count" is the pytest-repeat count: it must be a whole number at least 1, got "2.5"`},
		{map[string]string{"reproduce_count": "0"}, "at least 1"},
		{map[string]string{"tmate_timeout_minutes": "999"}, `the tmate timeout in minutes: it must be a whole number from 1 to 360, got "999"`},
		{map[string]string{"tmate_timeout_minutes": "-5"}, "from 1 to 360"},
	}
	for _, tt := range tests {
		_, err := ValidateInputs(wf, tt.given)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%v: unexpected %v", tt.given, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%v: got %v, want %q", tt.given, err, tt.want)
		}
	}
}

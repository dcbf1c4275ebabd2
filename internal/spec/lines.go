package spec

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// multiLineFields are the string fields that may hold line breaks: descriptions and shell
// commands. Every other string (a label, a path, a -k expression, an interpreter, a name, an
// environment value) becomes one word or one line of a shell command, a Python literal, a
// KEY=VALUE argument or a YAML key on the runner, where a line break, a carriage return or a
// NUL would split or cut it: they are refused here, before anything is built.
var multiLineFields = map[string]bool{
	"inputs[].description": true,
	"install.commands[]":   true,
	"build.commands[]":     true,
	// Python code, staged as written into repro_standalone.py.
	"reproducer.standalone.code": true,
}

// envFields are the environment maps. Their values are one line: the steps pass them as
// --env KEY=VALUE and stage them into env.sh for the tmate shell, and `debugflow-step stage`
// refuses a line break on the runner, after the install and the build; validation refuses it
// here instead.
var envFields = map[string]bool{"env.*": true, "build.env.*": true, "reproducer.env.*": true}

// controlChars reports every string of the spec that holds a control character: NUL and
// carriage return anywhere, a line break or another control character (tab excepted) outside
// the multi-line fields.
func (v *validator) controlChars(s *Spec) {
	reported := map[string]bool{} // a bad label or name is already reported by its own check
	for _, e := range v.errs {
		reported[e.Path] = true
	}
	walkStrings(reflect.ValueOf(s).Elem(), "", "", func(path, schemaPath string, p *string) {
		value := *p
		if reported[path] {
			return
		}
		multi := multiLineFields[schemaPath]
		for _, r := range value {
			if r == '\t' || (r == '\n' && multi) || (r >= 0x20 && r != 0x7f && (r < 0x80 || r > 0x9f)) {
				continue
			}
			what := fmt.Sprintf("the control character %U", r)
			switch r {
			case '\n':
				what = "a line break"
			case '\r':
				what = "a carriage return (\\r)"
			case 0:
				what = "a NUL character"
			}
			kind := "this value must be one line of text"
			switch {
			case envFields[schemaPath]:
				kind = "an environment value must be one line (write longer text to a file and set the variable to its path)"
			case multi:
				kind = "only line breaks and tabs are allowed here"
			}
			v.addf(path, "contains %s: %s", what, kind)
			return
		}
	})
}

// walkStrings calls f with every string of the struct v (addressable): its path
// ("reproducer.paths[2]", "env.CUDA_HOME" for a variable's value), the same path with indexes
// as [] and variable names as * ("reproducer.paths[]", "env.*"), and a pointer to the value.
// Variable names are checked by env().
func walkStrings(v reflect.Value, path, schema string, f func(path, schemaPath string, value *string)) {
	switch {
	case v.Type() == envType:
		env := v.Interface().(Env)
		for i := range env {
			f(path+"."+env[i].Name, schema+".*", &env[i].Value)
		}
	case v.Kind() == reflect.Pointer:
		if !v.IsNil() {
			walkStrings(v.Elem(), path, schema, f)
		}
	case v.Kind() == reflect.Struct:
		fields, keys := fieldsOf(v.Type())
		for _, k := range keys {
			walkStrings(v.Field(fields[k]), joinPath(path, k), joinPath(schema, k), f)
		}
	case v.Kind() == reflect.Slice:
		for i := range v.Len() {
			walkStrings(v.Index(i), fmt.Sprintf("%s[%d]", path, i), schema+"[]", f)
		}
	case v.Kind() == reflect.String:
		// A named string type (InputType) is a string too.
		f(path, schema, v.Addr().Convert(reflect.TypeFor[*string]()).Interface().(*string))
	}
}

// noExpressionField is a string of the spec in which a ${{ }} is refused.
type noExpressionField struct {
	// schema is the field's path with indexes as [] ("inputs[].description").
	schema string
	// code: the value is shell or Python code, into which GitHub would paste the value.
	code bool
	// where is, for a value that is not code, where the generator writes it: a YAML value of
	// the workflow where GitHub evaluates no expression (actionlint refuses the file).
	where string
}

// noExpressionFields are every string of the spec in which a ${{ }} is an error: code, and the
// values the generator writes as YAML outside run: scripts where GitHub evaluates no
// expression. The other strings may hold one: a value that reaches a command goes through the
// step's env:, and env:, with: and the artifact name take expressions. A test of package spec
// (TestEveryYAMLValueWithAnExpressionIsRefused) puts an expression into every string field,
// generates the workflows and runs actionlint: a field missing here fails it.
func noExpressionFields() []noExpressionField {
	return []noExpressionField{
		{schema: "workflow.name", where: "the workflow's name: and run-name:"},
		{schema: "inputs[].description", where: "the dispatch input's description:"},
		{schema: "inputs[].default", where: "the dispatch input's default:"},
		{schema: "inputs[].options[]", where: "the dispatch input's options:"},
		{schema: "install.commands[]", code: true},
		{schema: "install.exports[].command", code: true},
		{schema: "build.commands[]", code: true},
		{schema: "build.exports[].command", code: true},
		{schema: "build.iterate[]", code: true},
		{schema: "smoke.command", code: true},
		{schema: "reproducer.standalone.code", code: true},
	}
}

// expressions reports a ${{ }} in every field of noExpressionFields.
func (v *validator) expressions(s *Spec) {
	fields := noExpressionFields()
	walkStrings(reflect.ValueOf(s).Elem(), "", "", func(path, schemaPath string, p *string) {
		i := slices.IndexFunc(fields, func(f noExpressionField) bool { return f.schema == schemaPath })
		if i < 0 || !strings.Contains(*p, "${{") || !v.written(path) {
			// A value the file does not write is a default computed from fields checked on
			// their own (workflow.name from the runner labels).
			return
		}
		if fields[i].code {
			v.addf(path, "contains ${{ }}: this is code, GitHub would paste the value into it; set the value in env: and read the variable instead")
			return
		}
		v.addf(path, "contains ${{ }}: the value is written as it is into %s, where GitHub evaluates no expression (actionlint refuses the workflow); write plain text", fields[i].where)
	})
}

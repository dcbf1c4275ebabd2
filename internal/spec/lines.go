package spec

import (
	"fmt"
	"reflect"
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
	walkStrings(reflect.ValueOf(s).Elem(), "", "", func(path, schemaPath, value string) {
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

// walkStrings calls f with every string of the struct v: its path ("reproducer.paths[2]",
// "env.CUDA_HOME" for a variable's value), the same path with indexes as [] and variable names
// as * ("reproducer.paths[]", "env.*"), and the value. Variable names are checked by env().
func walkStrings(v reflect.Value, path, schema string, f func(path, schemaPath, value string)) {
	switch {
	case v.Type() == envType:
		for _, e := range v.Interface().(Env) {
			f(path+"."+e.Name, schema+".*", e.Value)
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
		f(path, schema, v.String())
	}
}

package spec

import "reflect"

// ParseMutated is Parse of data with mutate applied to the decoded spec (defaults filled)
// before validation (the values it changes count as written): a test sets any field to any value without writing YAML for it.
func ParseMutated(data []byte, mutate func(*Spec)) (*Spec, Errors) {
	body, e := parseDocument(data)
	if e != nil {
		return nil, Errors{e}
	}
	d := newDecoder(body)
	var s Spec
	d.decodeTop(body, &s)
	applyDefaults(&s, d.pos)
	before := map[string]string{}
	StringFields(&s, func(path, _ string, v *string) { before[path] = *v })
	mutate(&s)
	// What mutate set counts as written in the file.
	StringFields(&s, func(path, _ string, v *string) {
		if old, ok := before[path]; !ok || old != *v {
			d.pos.record(path, 1, 1)
		}
	})
	if errs := append(d.errs, validate(&s, d.pos)...); len(errs) > 0 {
		return &s, errs
	}
	return &s, nil
}

// StringFields calls f with every string of s: its path, its schema path ("inputs[].name")
// and a pointer to it.
func StringFields(s *Spec, f func(path, schema string, value *string)) {
	walkStrings(reflect.ValueOf(s).Elem(), "", "", f)
}

// SchemaStrings returns the schema path of every string field of the Spec type, whether or not
// a spec sets it.
func SchemaStrings() []string {
	var out []string
	var walk func(t reflect.Type, schema string)
	walk = func(t reflect.Type, schema string) {
		switch {
		case t == envType:
			out = append(out, schema+".*")
		case t.Kind() == reflect.Pointer:
			walk(t.Elem(), schema)
		case t.Kind() == reflect.Struct:
			fields, keys := fieldsOf(t)
			for _, k := range keys {
				walk(t.Field(fields[k]).Type, joinPath(schema, k))
			}
		case t.Kind() == reflect.Slice:
			walk(t.Elem(), schema+"[]")
		case t.Kind() == reflect.String:
			out = append(out, schema)
		}
	}
	walk(reflect.TypeOf(Spec{}), "")
	return out
}

package workflow

import "strconv"

// ValueKind says which scalar a Value holds.
type ValueKind int

// The kinds of scalar a Value holds. The zero Value is unset.
const (
	KindUnset ValueKind = iota
	KindString
	KindInt
	KindBool
)

// Value is a typed scalar for with: inputs, input defaults and matrix values: a string, an
// integer or a boolean, so `persist-credentials: false` is a YAML bool and `fetch-depth: 1`
// a YAML integer while `python-version: "3.10"` stays a string.
type Value struct {
	kind ValueKind
	s    string
	n    int64
	b    bool
}

// Str is a string value (an expression too: Str(Input("ref").String())).
func Str(s string) Value { return Value{kind: KindString, s: s} }

// Int is an integer value.
func Int(n int) Value { return Value{kind: KindInt, n: int64(n)} }

// Bool is a boolean value.
func Bool(b bool) Value { return Value{kind: KindBool, b: b} }

// Kind reports which scalar v holds.
func (v Value) Kind() ValueKind { return v.kind }

// IsZero reports whether v is unset.
func (v Value) IsZero() bool { return v.kind == KindUnset }

// String returns the value as text, the way GitHub hands it to an action.
func (v Value) String() string {
	switch v.kind {
	case KindString:
		return v.s
	case KindInt:
		return strconv.FormatInt(v.n, 10)
	case KindBool:
		return strconv.FormatBool(v.b)
	}
	return ""
}

// MarshalYAML writes the scalar with its type; an unset value is null.
func (v Value) MarshalYAML() (any, error) {
	switch v.kind {
	case KindString:
		return v.s, nil
	case KindInt:
		return v.n, nil
	case KindBool:
		return v.b, nil
	}
	return nil, nil
}

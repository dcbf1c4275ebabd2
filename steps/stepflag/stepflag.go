// Package stepflag derives debugflow-step's command line from the options structs of its
// verbs (package steps', tmate.Options of the gate, report.Options of the report): the same
// struct tags give the pflag registration of a verb (its flags, defaults and help) and the argv
// the generator writes for a value of the struct, so a flag's name, default and usage are
// written once.
//
// Tags of an options field:
//
//	flag:"workers"     the long flag name; flag:"-" marks a field that is no flag (set in Go)
//	short:"k"          a one-letter shorthand; Args writes the flag with it (-k EXPR)
//	default:"8"        the default as the flag parses it (a slice: values joined with ",")
//	usage:"..."        the help text
//	emit:"always"      Args writes the flag even when it holds its default
//
// A struct-typed field (embedded or not, other than time.Duration) is inlined: its fields are
// flags of the same verb. Every other field must carry a flag tag; Fields names one that does
// not. Supported types: string, bool, int, int64, float64, time.Duration and []string
// (repeatable).
//
// A usage text may name the flag's value in backquotes, as pflag reads it (the baseline `DIR`:
// --baseline DIR in the help); such a tag is written as an interpreted string literal.
package stepflag

import (
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Field is one flag of an options struct.
type Field struct {
	// Name is the long name (workers), Short the shorthand (k) or "".
	Name, Short string
	// Default is the tag's default text; Usage the help text.
	Default, Usage string
	// Always makes Args write the flag even when it holds its default.
	Always bool
	// GoName is the field's path in the struct (ReproducerFlags.Workers), for messages.
	GoName string
	// Type is the field's Go type.
	Type reflect.Type

	index []int
	def   reflect.Value // the parsed default
}

// Flag is the flag as Args writes it: -k for a shorthand, else --name.
func (f Field) Flag() string {
	if f.Short != "" {
		return "-" + f.Short
	}
	return "--" + f.Name
}

// Env is the variable the generator passes an expression value through by default:
// DEBUGFLOW_ and the long name in capitals (--rebuild-dir: DEBUGFLOW_REBUILD_DIR).
func (f Field) Env() string {
	return "DEBUGFLOW_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
}

// durationType is time.Duration's type (reflect.TypeFor is resolved by the compiler: a
// reflect.TypeOf package variable would be set at every start of debugflow-step).
func durationType() reflect.Type { return reflect.TypeFor[time.Duration]() }

// Fields returns the flags of the options struct type t (or a pointer to it) in declaration
// order. It fails naming the field when a field has no flag tag, an unsupported type, a
// default its type cannot parse, or a name used twice.
func Fields(t reflect.Type) ([]Field, error) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("stepflag: %s is not a struct", t)
	}
	var out []Field
	seen := map[string]string{}
	if err := walk(t, nil, "", &out, seen); err != nil {
		return nil, fmt.Errorf("stepflag: %s: %w", t, err)
	}
	return out, nil
}

func walk(t reflect.Type, index []int, prefix string, out *[]Field, seen map[string]string) error {
	for i := range t.NumField() {
		sf := t.Field(i)
		idx := append(append([]int(nil), index...), i)
		goName := prefix + sf.Name
		tag, tagged := sf.Tag.Lookup("flag")
		if sf.Type.Kind() == reflect.Struct && sf.Type != durationType() && !tagged {
			if err := walk(sf.Type, idx, goName+".", out, seen); err != nil {
				return err
			}
			continue
		}
		if !tagged {
			return fmt.Errorf("field %s has no flag tag (flag:\"name\", or flag:\"-\" when it is no flag)", goName)
		}
		if tag == "-" {
			continue
		}
		if !sf.IsExported() {
			return fmt.Errorf("field %s: a flag must be an exported field", goName)
		}
		f := Field{Name: tag, Short: sf.Tag.Get("short"), Default: sf.Tag.Get("default"), Usage: sf.Tag.Get("usage"),
			Always: sf.Tag.Get("emit") == "always", GoName: goName, Type: sf.Type, index: idx}
		if other, dup := seen[f.Name]; dup {
			return fmt.Errorf("field %s: flag --%s is already field %s", goName, f.Name, other)
		}
		seen[f.Name] = goName
		if f.Usage == "" {
			return fmt.Errorf("field %s (--%s) has no usage tag", goName, f.Name)
		}
		if len(f.Short) > 1 {
			return fmt.Errorf("field %s: shorthand %q is longer than one letter", goName, f.Short)
		}
		def, err := parseDefault(f)
		if err != nil {
			return fmt.Errorf("field %s: %w", goName, err)
		}
		f.def = def
		*out = append(*out, f)
	}
	return nil
}

// parseDefault returns the default of f as a value of its type.
func parseDefault(f Field) (reflect.Value, error) {
	v := reflect.New(f.Type).Elem()
	d := f.Default
	switch {
	case f.Type == durationType():
		if d == "" {
			return v, nil
		}
		n, err := time.ParseDuration(d)
		if err != nil {
			return v, fmt.Errorf("default %q: %w", d, err)
		}
		v.SetInt(int64(n))
	case f.Type.Kind() == reflect.String:
		v.SetString(d)
	case f.Type.Kind() == reflect.Bool:
		if d == "" {
			return v, nil
		}
		b, err := strconv.ParseBool(d)
		if err != nil {
			return v, fmt.Errorf("default %q: %w", d, err)
		}
		v.SetBool(b)
	case f.Type.Kind() == reflect.Int, f.Type.Kind() == reflect.Int64:
		if d == "" {
			return v, nil
		}
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil {
			return v, fmt.Errorf("default %q: %w", d, err)
		}
		v.SetInt(n)
	case f.Type.Kind() == reflect.Float64:
		if d == "" {
			return v, nil
		}
		x, err := strconv.ParseFloat(d, 64)
		if err != nil {
			return v, fmt.Errorf("default %q: %w", d, err)
		}
		v.SetFloat(x)
	case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String:
		if d != "" {
			v.Set(reflect.ValueOf(strings.Split(d, ",")).Convert(f.Type))
		}
	default:
		return v, fmt.Errorf("type %s is not supported (string, bool, int, int64, float64, time.Duration, []string)", f.Type)
	}
	return v, nil
}

// structValue returns the struct opts points to.
func structValue(opts any) (reflect.Value, error) {
	v := reflect.ValueOf(opts)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, fmt.Errorf("stepflag: want a pointer to an options struct, got %T", opts)
	}
	return v.Elem(), nil
}

// Register adds the flags of the options struct opts points to to fs, each bound to its
// field and set to its default.
func Register(fs *pflag.FlagSet, opts any) error {
	v, err := structValue(opts)
	if err != nil {
		return err
	}
	fields, err := Fields(v.Type())
	if err != nil {
		return err
	}
	for _, f := range fields {
		def := f.def
		p := v.FieldByIndex(f.index).Addr().Interface()
		switch p := p.(type) {
		case *time.Duration:
			fs.DurationVarP(p, f.Name, f.Short, time.Duration(def.Int()), f.Usage)
		case *string:
			fs.StringVarP(p, f.Name, f.Short, def.String(), f.Usage)
		case *bool:
			fs.BoolVarP(p, f.Name, f.Short, def.Bool(), f.Usage)
		case *int:
			fs.IntVarP(p, f.Name, f.Short, int(def.Int()), f.Usage)
		case *int64:
			fs.Int64VarP(p, f.Name, f.Short, def.Int(), f.Usage)
		case *float64:
			fs.Float64VarP(p, f.Name, f.Short, def.Float(), f.Usage)
		case *[]string:
			fs.StringArrayVarP(p, f.Name, f.Short, def.Interface().([]string), f.Usage)
		default:
			return fmt.Errorf("stepflag: %s.%s: type %s is not supported", v.Type(), f.GoName, f.Type)
		}
	}
	return nil
}

// Parse reads argv (flags and positional arguments, as a process gets them) into the options
// struct opts points to, starting from the defaults, and returns the positional arguments.
// debugflow-step's verbs parse through cobra; tests and tools that hold a generated command
// line use Parse.
func Parse(opts any, argv []string) ([]string, error) {
	fs := pflag.NewFlagSet("stepflag", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := Register(fs, opts); err != nil {
		return nil, err
	}
	if err := fs.Parse(argv); err != nil {
		return nil, err
	}
	return fs.Args(), nil
}

// MustRegister is Register for the verbs' own structs, whose tags the tests check: a bad tag
// is a programming error.
func MustRegister(fs *pflag.FlagSet, opts any) {
	if err := Register(fs, opts); err != nil {
		panic(err)
	}
}

// Defaults returns a T with every flag field set to its default, as the verb parses an empty
// command line.
func Defaults[T any]() T {
	var o T
	fs := pflag.NewFlagSet("defaults", pflag.ContinueOnError)
	MustRegister(fs, &o)
	return o
}

// Kind says how an Arg's value reaches the command line.
type Kind int

const (
	// Literal is a value of the struct, written as one shell word (an expression in it goes
	// through Env).
	Literal Kind = iota
	// Expr is a value given by an Override (a workflow expression such as an input):
	// through Env when it holds an expression.
	Expr
	// Code is shell code of the spec: always through Env, never pasted into the script.
	Code
	// Shell is trusted shell text written as it is ("$DEBUGFLOW_OUT").
	Shell
)

// Arg is one flag of the command line Args builds.
type Arg struct {
	// Flag is --name or -k.
	Flag string
	// Value is the value; NoValue is set for a boolean flag written alone (--leak-check).
	Value   string
	NoValue bool
	// Eq writes Flag=Value (a boolean flag takes its value only after =).
	Eq bool
	// Env is the variable the value goes through when it must not be pasted into the script.
	Env  string
	Kind Kind
	// Path names the spec field of a Code value, for the error about an expression in it.
	Path string
}

// Override replaces how one field is written. Its field is a pointer into the struct given
// to Args (&o.Count), so a renamed or removed field is a compile error, not a stale string.
type Override struct {
	field any
	kind  Kind
	env   string
	text  string
	keep  bool
	omit  bool
}

// WithExpr writes field with value instead of the struct's (a workflow expression such as
// ${{ inputs.count || 50 }}); the generator passes it through env. A boolean is written
// --flag=value.
func WithExpr(field any, env, value string) Override {
	return Override{field: field, kind: Expr, env: env, text: value}
}

// AsCode passes the field's value (shell code of the spec, at spec path) through env, when it
// is set; a slice is joined with line breaks into one value. The generator refuses an
// expression in it (GitHub would paste the value into the code).
func AsCode(field any, env, path string) Override {
	return Override{field: field, kind: Code, env: env, text: path}
}

// ThroughEnv passes the field's value through env, when it is set, like AsCode but for a
// value that is no code (a folder): an expression in it is fine.
func ThroughEnv(field any, env string) Override {
	return Override{field: field, kind: Code, env: env}
}

// Omit leaves field off the command line: the verb's own default gives it the same value.
func Omit(field any) Override { return Override{field: field, omit: true} }

// WithShell writes field with trusted shell text ("$DEBUGFLOW_OUT").
func WithShell(field any, text string) Override {
	return Override{field: field, kind: Shell, text: text}
}

// Keep writes field even when it holds its default.
func Keep(field any) Override { return Override{field: field, keep: true} }

// Args returns the command line of the options struct opts points to, in declaration order:
// every flag whose value differs from its default, is tagged emit:"always" or kept by an
// Override; a slice gives one flag per value. Fields that are no flags (positional
// arguments) are the caller's.
func Args(opts any, overrides ...Override) ([]Arg, error) {
	v, err := structValue(opts)
	if err != nil {
		return nil, err
	}
	fields, err := Fields(v.Type())
	if err != nil {
		return nil, err
	}
	byAddr := map[uintptr]Override{}
	for _, o := range overrides {
		p := reflect.ValueOf(o.field)
		if p.Kind() != reflect.Pointer || p.IsNil() {
			return nil, fmt.Errorf("stepflag: override of %T: want a pointer to a field", o.field)
		}
		byAddr[p.Pointer()] = o
	}
	used := 0
	var out []Arg
	for _, f := range fields {
		fv := v.FieldByIndex(f.index)
		o, over := byAddr[fv.Addr().Pointer()]
		if over && reflect.TypeOf(o.field).Elem() != f.Type {
			over = false // the address of an inlined struct's first field
		}
		if over {
			used++
		}
		base := Arg{Flag: f.Flag(), Env: f.Env()}
		switch {
		case over && o.omit:
			continue
		case over && o.kind == Shell:
			base.Kind, base.Value = Shell, o.text
			out = append(out, base)
			continue
		case over && o.kind == Expr:
			base.Kind, base.Value, base.Env = Expr, o.text, o.env
			base.Eq = f.Type.Kind() == reflect.Bool
			out = append(out, base)
			continue
		case over && o.kind == Code:
			text := ""
			if s, ok := fv.Interface().([]string); ok {
				text = strings.Join(s, "\n")
			} else {
				text = fv.String()
			}
			if text != "" {
				base.Kind, base.Value, base.Env, base.Path = Code, text, o.env, o.text
				out = append(out, base)
			}
			continue
		}
		if !f.Always && !(over && o.keep) && reflect.DeepEqual(normal(fv), normal(f.def)) {
			continue
		}
		out = append(out, literal(base, fv)...)
	}
	if used != len(overrides) {
		return nil, fmt.Errorf("stepflag: %s: an override names a field that is no flag of the struct", v.Type())
	}
	return out, nil
}

// normal makes an empty slice equal to a nil one.
func normal(v reflect.Value) any {
	if v.Kind() == reflect.Slice && v.Len() == 0 {
		return nil
	}
	return v.Interface()
}

// literal writes a field's own value.
func literal(base Arg, fv reflect.Value) []Arg {
	switch x := fv.Interface().(type) {
	case []string:
		out := make([]Arg, len(x))
		for i, s := range x {
			out[i] = base
			out[i].Value = s
		}
		return out
	case bool:
		if x {
			base.NoValue = true
		} else {
			base.Value, base.Eq = "false", true
		}
	case time.Duration:
		base.Value = FormatDuration(x)
	case float64:
		// The shortest text that parses back to the same number (0.95, not 0.9500000000000001).
		base.Value = strconv.FormatFloat(x, 'g', -1, 64)
	default:
		base.Value = fmt.Sprint(x)
	}
	return []Arg{base}
}

// FormatDuration writes d as a flag value the way a person would: whole minutes as 4m, whole
// seconds as 90s, anything else as time.Duration writes it.
func FormatDuration(d time.Duration) string {
	switch {
	case d != 0 && d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// FlagOf returns how Args writes field, a pointer into the struct opts points to (--cache),
// for a caller that must order a verb's flags its own way.
func FlagOf(opts, field any) (string, error) {
	v, err := structValue(opts)
	if err != nil {
		return "", err
	}
	fields, err := Fields(v.Type())
	if err != nil {
		return "", err
	}
	p := reflect.ValueOf(field)
	for _, f := range fields {
		fv := v.FieldByIndex(f.index)
		if p.Kind() == reflect.Pointer && fv.Addr().Pointer() == p.Pointer() && p.Type().Elem() == f.Type {
			return f.Flag(), nil
		}
	}
	return "", fmt.Errorf("stepflag: %T is no flag field of %s", field, v.Type())
}

// Argv is the command line as a process receives it (no shell): Code and Expr values as they
// are, Shell text as it is written. The round-trip tests parse it back.
func Argv(args []Arg) []string {
	var out []string
	for _, a := range args {
		switch {
		case a.NoValue:
			out = append(out, a.Flag)
		case a.Eq || strings.HasPrefix(a.Value, "-"):
			out = append(out, a.Flag+"="+a.Value)
		default:
			out = append(out, a.Flag, a.Value)
		}
	}
	return out
}

package spec

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Error is one problem in a spec file, located by line, column and field path.
type Error struct {
	File   string
	Line   int
	Column int
	// Path is the field path, e.g. "reproducer.count" or "inputs[1].name"; empty for the file.
	Path    string
	Message string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Errors is every problem found in one spec file, in file order.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Load reads, decodes and validates the spec file at path.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading spec: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes and validates a spec. name is used in error messages. Fields that are absent
// take the defaults documented in default.yaml; fields that are present are validated as
// written (count: 0 is an error, not "use the default").
func Parse(name string, data []byte) (*Spec, error) {
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, Errors{yamlError(name, err, nil)}
	}
	idx := indexPositions(file)
	if errs := lossyScalars(name, file); len(errs) > 0 {
		return nil, errs
	}
	var s Spec
	if err := decodeStrict(data, &s); err != nil {
		return nil, Errors{yamlError(name, err, idx)}
	}
	applyDefaults(&s, idx)
	if errs := validate(&s); len(errs) > 0 {
		for _, e := range errs {
			e.File = name
			e.Line, e.Column = idx.lookup(e.Path)
		}
		sort.SliceStable(errs, func(i, j int) bool {
			if errs[i].Line != errs[j].Line {
				return errs[i].Line < errs[j].Line
			}
			return errs[i].Column < errs[j].Column
		})
		return nil, errs
	}
	return &s, nil
}

// decodeStrict decodes with unknown keys rejected. go-yaml v1.19.2 can panic on some malformed
// tagged nodes (found by FuzzParse, e.g. "runners: !00\n0"); that is reported as an error.
func decodeStrict(data []byte, s *Spec) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot decode this YAML (unsupported tag or structure): %v", r)
		}
	}()
	return yaml.UnmarshalWithOptions(data, s, yaml.Strict())
}

// positions maps field paths ("reproducer.count", "inputs[0].name") to where they are written.
type positions struct {
	byPath map[string][2]int
	// byPos finds the path of the key or value written at a line:column.
	byPos map[[2]int]string
}

func indexPositions(file *ast.File) *positions {
	p := &positions{byPath: map[string][2]int{}, byPos: map[[2]int]string{}}
	for _, doc := range file.Docs {
		ast.Walk(p, doc)
	}
	return p
}

// Visit records every mapping key and value with its path (ast.Visitor).
func (p *positions) Visit(n ast.Node) ast.Visitor {
	if n == nil {
		return nil
	}
	if _, isDoc := n.(*ast.DocumentNode); isDoc {
		return p // an empty document has no token to ask for
	}
	mv, ok := n.(*ast.MappingValueNode)
	if !ok {
		// Sequence items and scalars: the first node seen for a path is where it starts.
		if tk := n.GetToken(); tk != nil && tk.Position != nil {
			path := cleanPath(n.GetPath())
			if _, seen := p.byPath[path]; !seen && path != "" {
				p.byPath[path] = [2]int{tk.Position.Line, tk.Position.Column}
			}
		}
		return p
	}
	path := cleanPath(mv.GetPath())
	kt := mv.Key.GetToken()
	pos := [2]int{kt.Position.Line, kt.Position.Column}
	if _, seen := p.byPath[path]; !seen {
		p.byPath[path] = pos
	}
	p.byPos[pos] = path
	if mv.Value != nil {
		vt := mv.Value.GetToken()
		p.byPos[[2]int{vt.Position.Line, vt.Position.Column}] = path
	}
	return p
}

// has reports whether the field at path is written in the file.
func (p *positions) has(path string) bool {
	_, ok := p.byPath[path]
	return ok
}

// lookup returns where path is written, or where its nearest written parent is.
func (p *positions) lookup(path string) (line, col int) {
	for path != "" {
		if pos, ok := p.byPath[path]; ok {
			return pos[0], pos[1]
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0, 0
}

// cleanPath turns goccy's "$.inputs[0].name" into "inputs[0].name".
func cleanPath(p string) string {
	p = strings.TrimPrefix(p, "$")
	return strings.TrimPrefix(p, ".")
}

var goTypeRe = regexp.MustCompile(`cannot unmarshal (\S+) into Go (?:struct field \S+|value) of type (\S+)`)

// yamlError turns a goccy error into an Error with a position and a message in spec terms.
func yamlError(name string, err error, idx *positions) *Error {
	e := &Error{File: name, Message: err.Error()}
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return e
	}
	msg := ye.GetMessage()
	if tk := ye.GetToken(); tk != nil && tk.Position != nil {
		e.Line, e.Column = tk.Position.Line, tk.Position.Column
		if idx != nil {
			e.Path = idx.byPos[[2]int{e.Line, e.Column}]
		}
		if tk.Value != "" && strings.HasPrefix(msg, "unknown field") {
			msg = fmt.Sprintf("unknown key %q (see `debugflow init` for every key)", tk.Value)
		}
	}
	if m := goTypeRe.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("wrong type: want %s, got %s", friendlyType(m[2]), m[1])
	}
	if strings.Contains(msg, "was used where") {
		msg = "wrong type: " + msg
	}
	e.Message = msg
	return e
}

func friendlyType(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"):
		return "an integer"
	case goType == "bool", goType == "*bool":
		return "true or false"
	case goType == "string", strings.HasSuffix(goType, "InputType"):
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	default:
		return "a mapping"
	}
}

// lossyScalars rejects numbers that YAML would silently change, such as python: 3.10 (read as
// 3.1). They are almost always meant as strings.
func lossyScalars(name string, file *ast.File) Errors {
	var errs Errors
	for _, doc := range file.Docs {
		ast.Walk(visitorFunc(func(n ast.Node) {
			f, ok := n.(*ast.FloatNode)
			if !ok {
				return
			}
			text := f.GetToken().Value
			if strconv.FormatFloat(f.Value, 'f', -1, 64) == text {
				return
			}
			tk := f.GetToken()
			errs = append(errs, &Error{File: name, Line: tk.Position.Line, Column: tk.Position.Column,
				Path:    cleanPath(f.GetPath()),
				Message: fmt.Sprintf("YAML reads %s as the number %v: write it in quotes (%q)", text, f.Value, text)})
		}), doc)
	}
	return errs
}

type visitorFunc func(ast.Node)

func (f visitorFunc) Visit(n ast.Node) ast.Visitor {
	f(n)
	return f
}

// UnmarshalYAML reads a mapping of scalars, keeping the order written.
func (e *Env) UnmarshalYAML(unmarshal func(any) error) error {
	var ms yaml.MapSlice
	if err := unmarshal(&ms); err != nil {
		return err
	}
	out := make(Env, 0, len(ms))
	for _, item := range ms {
		key := fmt.Sprint(item.Key)
		switch v := item.Value.(type) {
		case string:
			out = append(out, EnvVar{key, v})
		case nil:
			out = append(out, EnvVar{key, ""})
		case bool, int, int64, uint64, float64:
			out = append(out, EnvVar{key, fmt.Sprint(v)})
		default:
			return fmt.Errorf("env %s: want a string, number or boolean value", key)
		}
	}
	*e = out
	return nil
}

// Get returns the value of the variable called name.
func (e Env) Get(name string) (string, bool) {
	for _, v := range e {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

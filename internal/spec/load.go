package spec

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/readfile"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/debugflow/debugflow/internal/textsafe"
	"github.com/debugflow/debugflow/internal/yamlnest"
)

// Limits on what loading a spec may cost. A spec is a few KB of hand-written YAML; these stop a
// hostile or broken one (an alias bomb, thousands of nested brackets, a device file) in
// milliseconds and a few MB, with a message that says which limit was hit.
const (
	// MaxSpecBytes is the largest spec file read (the default spec is about 11 KB).
	MaxSpecBytes = 64 << 10
	// MaxNesting is the deepest nesting of lists and mappings (a spec needs 4).
	MaxNesting = 32
	// MaxExpandedValues bounds the values a spec holds once its aliases are expanded.
	MaxExpandedValues = 50_000
	// MaxExpandedBytes bounds the text a spec holds once its aliases are expanded.
	MaxExpandedBytes = 1 << 20
)

// Error is one problem in a spec file, located by line, column and field path.
type Error struct {
	File   string
	Line   int
	Column int
	// Path is the field path, e.g. "reproducer.count" or "inputs[1].name"; empty for the file.
	Path    string
	Message string
	// Syntax is set when the file is not YAML at all (a syntax error): validate exits 2 for it,
	// as for a file it cannot read.
	Syntax bool
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
	// One line, control characters shown as escapes: the file's keys and values must not
	// drive the terminal (a spec may come with someone else's repository).
	return textsafe.Visible(b.String())
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
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// ReadFile reads a spec file: a regular file (not a pipe or a device, which could block or never
// end), at most MaxSpecBytes+1 bytes of it, so that Parse can tell a file over the limit.
func ReadFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading spec: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("reading spec %s: not a regular file (%s)", path, readfile.Kind(fi.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading spec: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading spec %s: %w", path, err)
	}
	return data, nil
}

// utf8BOM starts a file some editors save as "UTF-8 with BOM".
const utf8BOM = "\ufeff"

// Parse decodes and validates a spec. name is used in error messages. Fields that are absent
// take the defaults documented in default.yaml; fields that are present are validated as
// written (count: 0 is an error, not "use the default"). Errors, when there are any, are all
// returned at once as Errors: unknown keys and input names (with the nearest known one), wrong
// types, lossy numbers and invalid values. A spec has no warnings: a value that would be
// ignored, such as an input default that disagrees with the spec number it stands for, is an
// error.
func Parse(name string, data []byte) (*Spec, error) {
	if len(data) > MaxSpecBytes {
		return nil, Errors{{File: name, Message: fmt.Sprintf(
			"the file is larger than %d KiB, the limit for a spec (the default spec is about 11 KB): is it the right file?", MaxSpecBytes>>10)}}
	}
	// A UTF-8 byte order mark (Windows editors write one) is not part of the first key.
	data = bytes.TrimPrefix(data, []byte(utf8BOM))
	body, e := parseDocument(data)
	if e != nil {
		e.File = name
		return nil, Errors{e}
	}
	if body == nil {
		// No key at all (an empty file, only comments): say that, not every missing key.
		return nil, Errors{{File: name, Message: "the spec is empty (no key): it needs at least runners and reproducer.paths; `debugflow init` writes a commented one"}}
	}
	d := newDecoder(body)
	var s Spec
	if body != nil {
		d.decodeTop(body, &s)
	}
	if d.limit != nil {
		d.limit.File = name
		return nil, Errors{d.limit}
	}
	applyDefaults(&s, d.pos)
	if errs := append(d.errs, withoutDecoded(validate(&s, d.pos), d.errs)...); len(errs) > 0 {
		return nil, located(name, errs, d.pos)
	}
	return &s, nil
}

// withoutDecoded drops the validation errors about values that could not be decoded: a
// wrong-typed count is reported as such, not also as "must be at least 1 (got 0)".
func withoutDecoded(errs, decodeErrs Errors) Errors {
	var out Errors
	for _, e := range errs {
		bad := false
		for _, de := range decodeErrs {
			if de.Path != "" && (e.Path == de.Path || strings.HasPrefix(e.Path, de.Path+".") || strings.HasPrefix(e.Path, de.Path+"[")) {
				bad = true
				break
			}
		}
		if !bad {
			out = append(out, e)
		}
	}
	return out
}

// located fills in the file and, where the error has none, the position of its path, and sorts
// the errors in file order.
func located(name string, errs Errors, pos *positions) Errors {
	for _, e := range errs {
		e.File = name
		if e.Line == 0 {
			e.Line, e.Column = pos.lookup(e.Path)
		}
	}
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Line != errs[j].Line {
			return errs[i].Line < errs[j].Line
		}
		return errs[i].Column < errs[j].Column
	})
	return errs
}

// parseDocument checks the limits that must hold before parsing (the parser's cost grows with
// the square of the nesting depth), parses, and returns the body of the one document a spec
// is (nil for an empty file).
func parseDocument(data []byte) (body ast.Node, e *Error) {
	defer func() {
		// The YAML library has panicked on malformed input before (found by fuzzing): an
		// error, never a crash.
		if r := recover(); r != nil {
			body, e = nil, &Error{Message: fmt.Sprintf("cannot parse this YAML: %v", r), Syntax: true}
		}
	}()
	tokens := lexer.Tokenize(string(data))
	if e := checkNesting(tokens); e != nil {
		return nil, e
	}
	file, err := parser.Parse(tokens, 0)
	if err != nil {
		e := yamlError(err)
		e.Syntax = true
		return nil, e
	}
	if len(file.Docs) == 0 {
		return nil, nil
	}
	if len(file.Docs) > 1 {
		e := &Error{Message: "a second YAML document: a spec is one document; remove this --- line and what follows it (or put it in a file of its own)"}
		second := file.Docs[1]
		if tk := second.Start; tk != nil && tk.Position != nil {
			e.Line, e.Column = tk.Position.Line, tk.Position.Column
		} else if second.Body != nil {
			e.Line, e.Column = nodePos(second.Body)
		}
		return nil, e
	}
	return file.Docs[0].Body, nil
}

// checkNesting bounds the nesting depth from the tokens, before the parser sees them.
func checkNesting(tokens token.Tokens) *Error {
	tk := yamlnest.Exceeds(tokens, MaxNesting)
	if tk == nil {
		return nil
	}
	e := &Error{Message: fmt.Sprintf("lists and mappings nest deeper than %d levels here; a spec needs 4 (unbalanced brackets?)", MaxNesting)}
	if tk.Position != nil {
		e.Line, e.Column = tk.Position.Line, tk.Position.Column
	}
	return e
}

// positions maps field paths ("reproducer.count", "inputs[0].name") to where they are written.
type positions struct {
	byPath map[string][2]int
}

// record notes where path is written; the first place wins.
func (p *positions) record(path string, line, col int) {
	if _, seen := p.byPath[path]; !seen && path != "" {
		p.byPath[path] = [2]int{line, col}
	}
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

// yamlError turns a syntax error into an Error with a position.
func yamlError(err error) *Error {
	e := &Error{Message: err.Error()}
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return e
	}
	e.Message = ye.GetMessage()
	if tk := ye.GetToken(); tk != nil && tk.Position != nil {
		e.Line, e.Column = tk.Position.Line, tk.Position.Column
	}
	return e
}

// nodePos is where a node starts.
func nodePos(n ast.Node) (line, col int) {
	if n == nil {
		return 0, 0
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line, tk.Position.Column
	}
	return 0, 0
}

// UnmarshalYAML reads a mapping of scalars, keeping the order written (for code that decodes
// a Spec with the YAML library directly; Parse has its own decoder).
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

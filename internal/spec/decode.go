package spec

import (
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// decoder fills a Spec from the YAML syntax tree and collects every problem on the way, so
// that one run reports all unknown keys and wrong types at once. It reads only what a spec
// can hold (mappings, lists, strings, integers, booleans), refuses what YAML would silently
// change (3.10 read as 3.1, 1.99 truncated to 1, 010 read as 8), and expands aliases within
// the MaxExpanded* budget. A Spec field of another kind needs a case in decode
// (TestDecoderHandlesEveryField fails until it has one).
type decoder struct {
	errs    Errors
	pos     *positions
	aliases map[*ast.AliasNode]ast.Node // each alias's anchored value
	values  int                         // values decoded so far, aliases expanded
	bytes   int                         // scalar text decoded so far, aliases expanded
	limit   *Error                      // set when the budget ran out: decoding stops
}

func newDecoder(body ast.Node) *decoder {
	d := &decoder{pos: &positions{byPath: map[string][2]int{}}, aliases: map[*ast.AliasNode]ast.Node{}}
	anchors := map[string]ast.Node{}
	resolveAliases(body, anchors, d.aliases)
	return d
}

// resolveAliases maps each alias to the value of the anchor of that name defined before it.
// An anchor is registered after its own value is walked, so an alias inside it cannot refer
// to it: expansion never loops.
func resolveAliases(n ast.Node, anchors map[string]ast.Node, out map[*ast.AliasNode]ast.Node) {
	switch n := n.(type) {
	case *ast.AnchorNode:
		resolveAliases(n.Value, anchors, out)
		if n.Name != nil {
			anchors[n.Name.GetToken().Value] = n.Value
		}
	case *ast.AliasNode:
		if n.Value != nil {
			if v, ok := anchors[n.Value.GetToken().Value]; ok {
				out[n] = v
			}
		}
	case *ast.MappingNode:
		for _, mv := range n.Values {
			resolveAliases(mv, anchors, out)
		}
	case *ast.MappingValueNode:
		resolveAliases(n.Key, anchors, out)
		resolveAliases(n.Value, anchors, out)
	case *ast.MappingKeyNode:
		resolveAliases(n.Value, anchors, out)
	case *ast.SequenceNode:
		for _, v := range n.Values {
			resolveAliases(v, anchors, out)
		}
	case *ast.TagNode:
		resolveAliases(n.Value, anchors, out)
	}
}

var envType = reflect.TypeOf(Env{})

func (d *decoder) addf(n ast.Node, path, format string, args ...any) {
	line, col := nodePos(n)
	d.errs = append(d.errs, &Error{Line: line, Column: col, Path: path, Message: fmt.Sprintf(format, args...)})
}

// value follows anchors and aliases to the node that holds a value; it returns nil after
// reporting an alias with no anchor, a tag, or a budget overrun.
func (d *decoder) value(n ast.Node, path string) ast.Node {
	if d.limit != nil {
		return nil
	}
	d.values++
	if d.values > MaxExpandedValues {
		d.overBudget(n, fmt.Sprintf("more than %d values", MaxExpandedValues))
		return nil
	}
	for {
		switch a := n.(type) {
		case *ast.AnchorNode:
			n = a.Value
		case *ast.AliasNode:
			target, ok := d.aliases[a]
			if !ok {
				d.addf(a, path, "alias %s names no anchor defined before it", a.String())
				return nil
			}
			n = target
		case *ast.TagNode:
			d.addf(a, path, "YAML tags such as %s are not used in a spec: remove it (quote the value to make it a string)", a.Start.Value)
			return nil
		default:
			return n
		}
	}
}

func (d *decoder) overBudget(n ast.Node, what string) {
	line, col := nodePos(n)
	d.limit = &Error{Line: line, Column: col, Message: fmt.Sprintf(
		"aliases expand this spec to %s (the limit; the default spec holds about 150): remove the repeated aliases", what)}
}

// decodeTop decodes the document body into s.
func (d *decoder) decodeTop(body ast.Node, s *Spec) {
	d.decode(body, reflect.ValueOf(s).Elem(), "")
}

func (d *decoder) decode(n ast.Node, v reflect.Value, path string) {
	n = d.value(n, path)
	if n == nil {
		return
	}
	_, isNull := n.(*ast.NullNode)
	switch {
	case v.Type() == envType:
		d.decodeEnv(n, v, path)
	case v.Kind() == reflect.Pointer:
		if isNull && v.Type().Elem().Kind() == reflect.Struct {
			// "pull_request:" with nothing under it turns the trigger on with GitHub's defaults.
			v.Set(reflect.New(v.Type().Elem()))
			return
		}
		if isNull {
			d.decodeScalar(n, v.Type().Elem(), path) // reports the missing value
			return
		}
		p := reflect.New(v.Type().Elem())
		d.decode(n, p.Elem(), path)
		v.Set(p)
	case v.Kind() == reflect.Struct:
		v.Set(reflect.Zero(v.Type()))
		if !isNull {
			d.decodeStruct(n, v, path)
		}
	case v.Kind() == reflect.Slice:
		d.decodeSlice(n, v, path)
	default:
		if x, ok := d.decodeScalar(n, v.Type(), path); ok {
			v.Set(reflect.ValueOf(x).Convert(v.Type()))
		}
	}
}

// mappingPairs returns the key-value pairs of a mapping node.
func mappingPairs(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}, true
	}
	return nil, false
}

// fieldsOf maps the YAML keys of a struct type to field indexes.
func fieldsOf(t reflect.Type) (map[string]int, []string) {
	m := map[string]int{}
	var keys []string
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		m[tag] = i
		keys = append(keys, tag)
	}
	return m, keys
}

// pairsWithMerges returns the pairs of a mapping with YAML merge keys (<<: *base) expanded:
// merged pairs first (from the last merged mapping to the first, so the first wins), then the
// explicit ones, which win over all merged ones.
func (d *decoder) pairsWithMerges(n ast.Node, path string) ([]*ast.MappingValueNode, bool) {
	pairs, ok := mappingPairs(n)
	if !ok {
		return nil, false
	}
	var merged, explicit []*ast.MappingValueNode
	for _, mv := range pairs {
		if _, isMerge := mv.Key.(*ast.MergeKeyNode); !isMerge {
			explicit = append(explicit, mv)
			continue
		}
		src := d.value(mv.Value, path)
		var sources []ast.Node
		if seq, ok := src.(*ast.SequenceNode); ok {
			for _, item := range seq.Values {
				sources = append(sources, d.value(item, path))
			}
		} else {
			sources = append(sources, src)
		}
		for i := len(sources) - 1; i >= 0; i-- {
			if sources[i] == nil {
				continue
			}
			sub, ok := d.pairsWithMerges(sources[i], path)
			if !ok {
				d.addf(mv.Value, path, "<< merges a mapping (or a list of mappings), not %s", describe(sources[i]))
				continue
			}
			merged = append(merged, sub...)
		}
	}
	return append(merged, explicit...), true
}

// key returns the text of a mapping key.
func (d *decoder) key(k ast.MapKeyNode, path string) (string, bool) {
	var n ast.Node = k
	if mk, ok := n.(*ast.MappingKeyNode); ok {
		n = mk.Value
	}
	n = d.value(n, path)
	switch n := n.(type) {
	case nil:
		return "", false
	case *ast.StringNode:
		return n.Value, true
	case ast.ScalarNode:
		return n.GetToken().Value, true
	}
	d.addf(n, path, "a key must be a name, not %s", describe(n))
	return "", false
}

func (d *decoder) decodeStruct(n ast.Node, v reflect.Value, path string) {
	pairs, ok := d.pairsWithMerges(n, path)
	if !ok {
		d.wrongType(n, path, "a mapping")
		return
	}
	fields, keys := fieldsOf(v.Type())
	for _, mv := range pairs {
		key, ok := d.key(mv.Key, path)
		if !ok {
			continue
		}
		kp := joinPath(path, key)
		i, known := fields[key]
		if !known {
			d.addf(mv.Key, kp, "unknown key %q%s (see `debugflow init` for every key)", key, keyHint(key, path, keys))
			continue
		}
		line, col := nodePos(mv.Key)
		d.pos.record(kp, line, col)
		d.decode(mv.Value, v.Field(i), kp)
		if d.limit != nil {
			return
		}
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d *decoder) decodeSlice(n ast.Node, v reflect.Value, path string) {
	if _, isNull := n.(*ast.NullNode); isNull {
		v.Set(reflect.Zero(v.Type()))
		return
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		d.wrongType(n, path, "a list")
		return
	}
	out := reflect.MakeSlice(v.Type(), len(seq.Values), len(seq.Values))
	for i, item := range seq.Values {
		ip := fmt.Sprintf("%s[%d]", path, i)
		line, col := nodePos(item)
		d.pos.record(ip, line, col)
		d.decode(item, out.Index(i), ip)
		if d.limit != nil {
			return
		}
	}
	v.Set(out)
}

// decodeEnv reads a mapping of variable names to scalars, in the order written.
func (d *decoder) decodeEnv(n ast.Node, v reflect.Value, path string) {
	if _, isNull := n.(*ast.NullNode); isNull {
		v.Set(reflect.Zero(v.Type()))
		return
	}
	pairs, ok := d.pairsWithMerges(n, path)
	if !ok {
		d.wrongType(n, path, "a mapping of NAME: value")
		return
	}
	var env Env
	index := map[string]int{}
	for _, mv := range pairs {
		name, ok := d.key(mv.Key, path)
		if !ok {
			continue
		}
		vp := path + "." + name
		line, col := nodePos(mv.Key)
		d.pos.record(vp, line, col)
		val := d.value(mv.Value, vp)
		if val == nil {
			continue
		}
		s, ok := d.scalarText(val, vp, "a string, number or boolean")
		if !ok {
			continue
		}
		if i, seen := index[name]; seen { // an explicit key over a merged one
			env[i].Value = s
			continue
		}
		index[name] = len(env)
		env = append(env, EnvVar{Name: name, Value: s})
	}
	v.Set(reflect.ValueOf(env))
}

var (
	stringType = reflect.TypeOf("")
	intType    = reflect.TypeOf(0)
	boolType   = reflect.TypeOf(false)
	// A spec integer is written in plain decimal: YAML would read 010 as 8 and 0x10 as 16.
	decimalRe = lazyre.New(`^-?(0|[1-9][0-9]*)$`)
)

// decodeScalar returns the value of a string, integer or boolean of type t.
func (d *decoder) decodeScalar(n ast.Node, t reflect.Type, path string) (any, bool) {
	switch t.Kind() {
	case reflect.String:
		return d.scalarText(n, path, "a string")
	case reflect.Int:
		return d.integer(n, path)
	case reflect.Bool:
		if b, ok := n.(*ast.BoolNode); ok {
			return b.Value, true
		}
		d.wrongType(n, path, "true or false")
		return nil, false
	}
	d.addf(n, path, "cannot decode a value of Go type %s (a debugflow bug)", t)
	return nil, false
}

func (d *decoder) integer(n ast.Node, path string) (any, bool) {
	in, ok := n.(*ast.IntegerNode)
	if !ok {
		str, isStr := n.(*ast.StringNode)
		_, isFloat := n.(*ast.FloatNode)
		_, isInf := n.(*ast.InfinityNode)
		_, isNaN := n.(*ast.NanNode)
		plain := isStr && str.GetToken().Type == token.StringType
		switch {
		case plain && decimalRe.MatchString(str.Value):
			d.addf(n, path, "%s is out of range", str.Value)
		case isFloat || isInf || isNaN || (plain && isNumber(str.Value)):
			// YAML reads 1e3 and NaN as strings, 1.99 as a number: all are refused, not rounded.
			d.addf(n, path, "wrong type: want a whole number, got number %s (numbers are not rounded: write e.g. 50)", n.GetToken().Value)
		case isStr && decimalRe.MatchString(str.Value):
			d.addf(n, path, "wrong type: want an integer, got string %q (remove the quotes)", str.Value)
		default:
			d.wrongType(n, path, "an integer")
		}
		return nil, false
	}
	text := in.GetToken().Value
	if in.GetToken().Type != token.IntegerType || !decimalRe.MatchString(text) {
		d.addf(n, path, "write the integer in decimal (YAML reads %s as %v)", text, in.Value)
		return nil, false
	}
	i, err := strconv.Atoi(text)
	if err != nil {
		d.addf(n, path, "%s is out of range", text)
		return nil, false
	}
	d.bytes += len(text)
	return i, true
}

// scalarText returns a scalar as the string written. Numbers and booleans are accepted when
// YAML reads them as written (5, 2.5, true); otherwise they must be quoted (3.10, 010, True).
func (d *decoder) scalarText(n ast.Node, path, want string) (string, bool) {
	var text string
	switch s := n.(type) {
	case *ast.StringNode:
		text = s.Value
	case *ast.LiteralNode:
		text = s.Value.Value
	case *ast.NullNode:
		text = ""
	case *ast.IntegerNode:
		text = s.GetToken().Value
		if fmt.Sprint(s.Value) != text {
			return "", d.lossy(n, path, text, fmt.Sprintf("the number %v", s.Value))
		}
	case *ast.FloatNode:
		text = s.GetToken().Value
		if strconv.FormatFloat(s.Value, 'f', -1, 64) != text {
			return "", d.lossy(n, path, text, fmt.Sprintf("the number %v", s.Value))
		}
	case *ast.BoolNode:
		text = s.GetToken().Value
		if strconv.FormatBool(s.Value) != text {
			return "", d.lossy(n, path, text, fmt.Sprintf("the boolean %v", s.Value))
		}
	case *ast.InfinityNode:
		return "", d.lossy(n, path, s.GetToken().Value, fmt.Sprintf("the number %v", s.Value))
	case *ast.NanNode:
		return "", d.lossy(n, path, s.GetToken().Value, "not-a-number")
	default:
		d.wrongType(n, path, want)
		return "", false
	}
	d.bytes += len(text)
	if d.bytes > MaxExpandedBytes {
		d.overBudget(n, fmt.Sprintf("more than %d KiB of text", MaxExpandedBytes>>10))
		return "", false
	}
	return text, true
}

func (d *decoder) lossy(n ast.Node, path, text, reads string) bool {
	d.addf(n, path, "YAML reads %s as %s: write it in quotes (%q)", text, reads, text)
	return false
}

func (d *decoder) wrongType(n ast.Node, path, want string) {
	d.addf(n, path, "wrong type: want %s, got %s", want, describe(n))
}

// describe names a node's kind and value for messages.
func describe(n ast.Node) string {
	switch s := n.(type) {
	case *ast.StringNode:
		return fmt.Sprintf("string %q", truncate(s.Value))
	case *ast.LiteralNode:
		return "a block string"
	case *ast.IntegerNode:
		return "integer " + s.GetToken().Value
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "number " + n.GetToken().Value
	case *ast.BoolNode:
		return "boolean " + s.GetToken().Value
	case *ast.NullNode:
		return "nothing (remove the key to use the default)"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	}
	return n.Type().String()
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// isNumber reports whether s reads as a number (1e3, 2.5, NaN, inf).
func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// decimalDefault reports whether the default of input name is a whole number written in
// decimal, as the steps read a count or a number of minutes (not 2.9, 1e3 or NaN).
func decimalDefault(s *Spec, name string) bool {
	in, _ := s.Input(name)
	return decimalRe.MatchString(in.Default)
}

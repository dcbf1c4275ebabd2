package audit

import (
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
)

// maxAliasDepth bounds alias/anchor/tag unwrapping so a crafted document
// cannot make the audit loop.
const maxAliasDepth = 32

// position is a 1-based line:column in the workflow source.
type position struct {
	Line, Column int
}

// posOf returns where node starts in the source.
func posOf(n ast.Node) position {
	if n == nil {
		return position{1, 1}
	}
	if l, ok := n.(*ast.LiteralNode); ok && l.Start != nil && l.Start.Position != nil {
		return position{l.Start.Position.Line, l.Start.Position.Column}
	}
	t := n.GetToken()
	if t == nil || t.Position == nil || t.Position.Line < 1 {
		return position{1, 1}
	}
	col := t.Position.Column
	if col < 1 {
		col = 1
	}
	return position{t.Position.Line, col}
}

// document is the parsed workflow: the source lines, for positions inside
// scalars, and the anchors, to resolve aliases.
type document struct {
	lines   []string
	anchors map[string]ast.Node
	decoded map[ast.Node]scalar // decodeScalar's results
	// safeInputs are the inputs typed boolean, number or choice (lower case).
	safeInputs map[string]bool
	// action is set for an action's metadata: inputs.* are the calling workflow's values.
	action bool
}

func newDocument(src []byte) *document {
	return &document{
		lines:   splitLines(string(src)),
		anchors: map[string]ast.Node{},
		decoded: map[ast.Node]scalar{},
	}
}

// splitLines splits text at YAML line breaks: LF, CRLF and a lone CR (which the parser
// counts as a line too).
func splitLines(text string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			lines = append(lines, text[start:i])
			start = i + 1
		case '\r':
			lines = append(lines, text[start:i])
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	return append(lines, text[start:])
}

// clampColumn keeps a column inside its line: the parser places an empty value (`uses:`)
// after the end of the line.
func (d *document) clampColumn(line, col int) int {
	if line < 1 || line > len(d.lines) {
		return col
	}
	n := utf8.RuneCountInString(d.lines[line-1])
	return max(1, min(col, n))
}

// collectAnchors records every anchor so aliases can be resolved.
func (d *document) collectAnchors(root ast.Node) {
	ast.Walk(anchorCollector(d.anchors), root)
}

type anchorCollector map[string]ast.Node

func (c anchorCollector) Visit(n ast.Node) ast.Visitor {
	if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil {
		c[a.Name.GetToken().Value] = a.Value
	}
	return c
}

// resolve strips anchors, tags, explicit-key markers and aliases, returning the node that holds the
// value. It returns nil for a nil node or an alias to an unknown anchor.
func (d *document) resolve(n ast.Node) ast.Node {
	for range maxAliasDepth {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.MappingKeyNode: // an explicit key, `? run`, is the key `run`
			n = v.Value
		case *ast.AliasNode:
			if v.Value == nil {
				return nil
			}
			n = d.anchors[v.Value.GetToken().Value]
		default:
			return n
		}
	}
	return nil
}

// entry is one key: value pair of a mapping.
type entry struct {
	Key   string
	KeyNd ast.Node
	Value ast.Node // resolved
}

// mappingEntries returns the pairs of a mapping node, following `<<` merge
// keys, or nil when n is not a mapping.
func (d *document) mappingEntries(n ast.Node) []entry {
	return d.mappingEntriesDepth(n, 0)
}

func (d *document) mappingEntriesDepth(n ast.Node, depth int) []entry {
	if depth > maxAliasDepth {
		return nil
	}
	var values []*ast.MappingValueNode
	switch m := d.resolve(n).(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	default:
		return nil
	}
	var out []entry
	var merged []entry
	for _, mv := range values {
		if mv == nil || mv.Key == nil {
			continue
		}
		key := scalarText(d.resolve(mv.Key))
		if mv.Key.IsMergeKey() || key == "<<" {
			merged = append(merged, d.mergeSources(mv.Value, depth)...)
			continue
		}
		out = append(out, entry{Key: key, KeyNd: mv.Key, Value: d.resolve(mv.Value)})
	}
	// Explicit keys win over merged ones.
	for _, e := range merged {
		if lookupEntry(out, e.Key) == nil {
			out = append(out, e)
		}
	}
	return out
}

func (d *document) mergeSources(n ast.Node, depth int) []entry {
	n = d.resolve(n)
	if s, ok := n.(*ast.SequenceNode); ok {
		var out []entry
		for _, v := range s.Values {
			out = append(out, d.mappingEntriesDepth(v, depth+1)...)
		}
		return out
	}
	return d.mappingEntriesDepth(n, depth+1)
}

func lookupEntry(es []entry, key string) *entry {
	for i := range es {
		if es[i].Key == key {
			return &es[i]
		}
	}
	return nil
}

// lookup returns the value of key in mapping n, or nil.
func (d *document) lookup(n ast.Node, key string) ast.Node {
	if e := lookupEntry(d.mappingEntries(n), key); e != nil {
		return e.Value
	}
	return nil
}

// sequence returns the items of a sequence node (resolved), or nil.
func (d *document) sequence(n ast.Node) []ast.Node {
	s, ok := d.resolve(n).(*ast.SequenceNode)
	if !ok {
		return nil
	}
	out := make([]ast.Node, 0, len(s.Values))
	for _, v := range s.Values {
		if r := d.resolve(v); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// scalarText returns the decoded text of a scalar node, or "" for
// collections and nil.
func scalarText(n ast.Node) string {
	switch v := n.(type) {
	case nil, *ast.NullNode: // an empty value (`uses:`) reads as null, not as "null"
		return ""
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		if v.Value == nil {
			return ""
		}
		return v.Value.Value
	case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode, *ast.CommentGroupNode, *ast.DocumentNode:
		return ""
	default:
		if t := n.GetToken(); t != nil {
			return t.Value
		}
		return ""
	}
}

// trailingComment returns the text of a `# comment` on the same line as the
// scalar n, without the `#` and surrounding spaces.
func trailingComment(n ast.Node) string {
	cg := n.GetComment()
	if cg == nil || len(cg.Comments) == 0 {
		return ""
	}
	line := posOf(n).Line
	for _, c := range cg.Comments {
		if c == nil || c.Token == nil || c.Token.Position == nil {
			continue
		}
		if c.Token.Position.Line == line {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(c.Token.Value), "#"))
		}
	}
	return ""
}

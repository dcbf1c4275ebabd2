package audit

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
)

// Bounds on a workflow once its aliases are expanded: the rules walk the expanded values
// (a matrix, an env:), and a few hundred bytes of nested aliases expand to a billion. A real
// workflow holds a few thousand values.
const (
	maxExpandedValues = 250_000
	maxExpandedBytes  = 32 << 20
)

// checkExpansion measures the document with every alias expanded, each anchor's size computed
// once, and refuses one over the bounds before any rule walks it.
func checkExpansion(d *document, body ast.Node) error {
	e := &expansion{d: d, memo: map[string]expanded{}, busy: map[string]bool{}}
	size := e.size(body)
	// What the file holds as written is bounded by the file size; the bounds are on what the
	// aliases add to it, so a large workflow with no alias is never refused.
	written := (&expansion{d: d, literal: true}).size(body)
	size.values -= written.values
	size.bytes -= written.bytes
	switch {
	case size.values > maxExpandedValues:
		return fmt.Errorf("its aliases expand to more than %d values (an alias bomb?)", maxExpandedValues)
	case size.bytes > maxExpandedBytes:
		return fmt.Errorf("its aliases expand to more than %d MiB of text (an alias bomb?)", maxExpandedBytes>>20)
	}
	return nil
}

type expanded struct{ values, bytes int64 }

// add sums two sizes, saturating far above the bounds so that a deep bomb cannot overflow.
func (a expanded) add(b expanded) expanded {
	const ceiling = 1 << 50
	return expanded{min(a.values+b.values, ceiling), min(a.bytes+b.bytes, ceiling)}
}

type expansion struct {
	d    *document
	memo map[string]expanded // anchor name -> size of its value
	busy map[string]bool     // anchors being measured (an alias inside its own anchor)
	// literal measures the document as written: an alias is one value.
	literal bool
}

func (e *expansion) size(n ast.Node) expanded {
	switch v := n.(type) {
	case nil:
		return expanded{}
	case *ast.AliasNode:
		if v.Value == nil || e.literal {
			return expanded{values: 1}
		}
		name := v.Value.GetToken().Value
		if s, ok := e.memo[name]; ok {
			return s
		}
		if e.busy[name] {
			return expanded{values: 1}
		}
		e.busy[name] = true
		s := e.size(e.d.anchors[name])
		delete(e.busy, name)
		e.memo[name] = s
		return s
	case *ast.AnchorNode:
		return e.size(v.Value)
	case *ast.TagNode:
		return e.size(v.Value)
	case *ast.MappingKeyNode:
		return e.size(v.Value)
	case *ast.MappingNode:
		s := expanded{values: 1}
		for _, mv := range v.Values {
			s = s.add(e.size(mv))
		}
		return s
	case *ast.MappingValueNode:
		return e.size(v.Key).add(e.size(v.Value))
	case *ast.SequenceNode:
		s := expanded{values: 1}
		for _, item := range v.Values {
			s = s.add(e.size(item))
		}
		return s
	case *ast.CommentGroupNode, *ast.CommentNode:
		return expanded{}
	}
	s := expanded{values: 1}
	if tk := n.GetToken(); tk != nil {
		s.bytes = int64(len(tk.Value))
	}
	return s
}

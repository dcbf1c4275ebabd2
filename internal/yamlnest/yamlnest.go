// Package yamlnest bounds how deep YAML nests, from the lexer's tokens, before a parser sees
// them: the goccy parser's cost grows with the square of the depth (45 KB of '[' takes
// gigabytes and a minute), so a spec or a workflow that may be hostile is checked first.
package yamlnest

import "github.com/goccy/go-yaml/token"

// Exceeds returns the first token at which lists and mappings nest deeper than max, or nil.
// Flow brackets count one level each, and block collections one level per deeper indentation
// (a "- - - x" line nests as deep as "[[[x]]]").
func Exceeds(tokens token.Tokens, max int) *token.Token {
	var block []int // columns of the open block collections
	flow := 0
	var prev *token.Token
	for _, tk := range tokens {
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			if flow > 0 {
				flow--
			}
		case token.DocumentHeaderType, token.DocumentEndType:
			block, flow = block[:0], 0
		case token.SequenceEntryType, token.MappingKeyType, token.MappingValueType:
			if flow > 0 || tk.Position == nil {
				break
			}
			col := tk.Position.Column
			if tk.Type == token.MappingValueType && prev != nil && prev.Position != nil && prev.Position.Line == tk.Position.Line {
				col = prev.Position.Column // the key's column
			}
			for len(block) > 0 && block[len(block)-1] > col {
				block = block[:len(block)-1]
			}
			if len(block) == 0 || block[len(block)-1] < col {
				block = append(block, col)
			}
		}
		if tk.Type != token.CommentType {
			prev = tk
		}
		if len(block)+flow > max {
			return tk
		}
	}
	return nil
}

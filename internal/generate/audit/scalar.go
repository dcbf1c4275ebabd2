package audit

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
)

// scalar is the decoded value of a YAML scalar, the text GitHub reads after the YAML
// escapes, quotes, folding and block indentation are resolved, with the source position of
// each byte so a finding inside the value still points at its place in the file.
type scalar struct {
	// Text is the decoded value.
	Text string
	// at[i] is where the source text that produced Text[i] starts; nil when the decoded
	// value could not be traced back to the source (then every offset maps to start).
	at    []position
	start position
}

// pos returns the source position of byte offset i of Text.
func (s scalar) pos(i int) position {
	if s.at == nil || i < 0 || i >= len(s.at) {
		return s.start
	}
	return s.at[i]
}

// decodeScalar returns the decoded text of the scalar n and traces each byte back to the
// source. The decoded text is the parser's; the trace walks the source from the scalar's
// first character, matching decoded characters against source characters and escapes and
// letting source whitespace (indentation, folded line breaks, trailing blanks) stand for
// the whitespace folding produced. When the walk cannot account for a character the trace
// is dropped and every position is the scalar's start: the text is still audited.
func (d *document) decodeScalar(n ast.Node) scalar {
	if s, ok := d.decoded[n]; ok {
		return s // several rules read the same scripts
	}
	s := d.traceScalar(n)
	d.decoded[n] = s
	return s
}

func (d *document) traceScalar(n ast.Node) scalar {
	s := scalar{Text: scalarText(n), start: posOf(n)}
	src, ok := d.scalarSource(n)
	if !ok {
		return s
	}
	at := make([]position, len(s.Text))
	for i, r := range s.Text {
		p, ok := src.match(r)
		if !ok {
			return s
		}
		for j := i; j < i+utf8.RuneLen(r) && j < len(at); j++ {
			at[j] = p
		}
	}
	s.at = at
	return s
}

// scalarStyle is how a scalar is written, which decides what its source characters mean.
type scalarStyle int

const (
	stylePlain scalarStyle = iota
	styleSingleQuoted
	styleDoubleQuoted
	styleBlock // | or >, content from the line after the header
)

// scalarSource returns a reader over the source of n, positioned at its first content
// character.
func (d *document) scalarSource(n ast.Node) (*sourceReader, bool) {
	switch v := n.(type) {
	case *ast.LiteralNode:
		if v.Start == nil || v.Start.Position == nil {
			return nil, false
		}
		return &sourceReader{lines: d.lines, line: v.Start.Position.Line, col: 1, style: styleBlock}, true
	case *ast.StringNode:
		if v.Token == nil || v.Token.Position == nil || v.Token.Position.Line < 1 {
			return nil, false
		}
		r := &sourceReader{lines: d.lines, line: v.Token.Position.Line - 1, col: v.Token.Position.Column}
		if !r.seek() {
			return nil, false
		}
		// The token may start at the blank before the value (after a tag or an anchor).
		for c := r.peekRune(); c == ' ' || c == '\t'; c = r.peekRune() {
			r.advance()
		}
		// The token's text as written starts with the quote, if any; the source must agree.
		quote := strings.TrimLeft(v.Token.Origin, " \t\r\n")
		switch {
		case strings.HasPrefix(quote, `"`):
			r.style = styleDoubleQuoted
		case strings.HasPrefix(quote, "'"):
			r.style = styleSingleQuoted
		}
		switch c := r.peekRune(); {
		case r.style == styleDoubleQuoted && c == '"', r.style == styleSingleQuoted && c == '\'':
			r.advance()
		case r.style != stylePlain || c == '"' || c == '\'':
			return nil, false
		}
		return r, true
	}
	return nil, false
}

// sourceReader walks the workflow source rune by rune from a scalar's first character.
type sourceReader struct {
	lines []string
	line  int // 0-based index into lines
	col   int // 1-based rune column of the next rune
	off   int // byte offset of the next rune in lines[line]
	style scalarStyle
	ended bool // the closing quote was read
	// pending is a unit read but not yet matched or skipped, when hasPending.
	pending    unit
	hasPending bool
}

// seek moves off to the rune at col on line; false when the line is shorter.
func (r *sourceReader) seek() bool {
	if r.line < 0 || r.line >= len(r.lines) || r.col < 1 {
		return false
	}
	text := r.lines[r.line]
	off := 0
	for c := 1; c < r.col; c++ {
		if off >= len(text) {
			return false
		}
		_, size := utf8.DecodeRuneInString(text[off:])
		off += size
	}
	r.off = off
	return true
}

// peekRune returns the next source rune, '\n' at the end of a line, or -1 at the end of
// the source.
func (r *sourceReader) peekRune() rune {
	if r.line >= len(r.lines) {
		return -1
	}
	text := r.lines[r.line]
	if r.off >= len(text) {
		if r.line == len(r.lines)-1 {
			return -1
		}
		return '\n'
	}
	c, _ := utf8.DecodeRuneInString(text[r.off:])
	return c
}

// advance moves past the next rune.
func (r *sourceReader) advance() {
	if r.line >= len(r.lines) {
		return
	}
	text := r.lines[r.line]
	if r.off >= len(text) {
		r.line++
		r.col, r.off = 1, 0
		return
	}
	_, size := utf8.DecodeRuneInString(text[r.off:])
	r.off += size
	r.col++
}

func (r *sourceReader) here() position { return position{r.line + 1, r.col} }

// unit is what the next piece of source means: the decoded rune it stands for (-1 for an
// escaped line break, which stands for nothing), and whether it is whitespace that folding
// may have removed or replaced.
type unit struct {
	r        rune
	pos      position
	foldable bool
}

// next reads one unit, false at the end of the scalar or of the source.
func (r *sourceReader) next() (unit, bool) {
	if r.ended {
		return unit{}, false
	}
	p := r.here()
	c := r.peekRune()
	if c < 0 {
		return unit{}, false
	}
	switch {
	case r.style == styleDoubleQuoted && c == '"':
		r.ended = true
		return unit{}, false
	case r.style == styleSingleQuoted && c == '\'':
		r.advance()
		if r.peekRune() == '\'' {
			r.advance()
			return unit{r: '\'', pos: p}, true
		}
		r.ended = true
		return unit{}, false
	case r.style == styleDoubleQuoted && c == '\\':
		return r.escape(p)
	case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		r.advance()
		return unit{r: c, pos: p, foldable: true}, true
	}
	r.advance()
	return unit{r: c, pos: p}, true
}

// simpleEscapes are the one-letter escapes of double-quoted YAML scalars.
var simpleEscapes = map[rune]rune{
	'0': 0, 'a': '\a', 'b': '\b', 't': '\t', '\t': '\t', 'n': '\n', 'v': '\v', 'f': '\f',
	'r': '\r', 'e': 0x1b, ' ': ' ', '"': '"', '/': '/', '\\': '\\', 'N': 0x85, '_': 0xa0,
	'L': 0x2028, 'P': 0x2029,
}

// hexEscapes are the escapes followed by a fixed number of hex digits.
var hexEscapes = map[rune]int{'x': 2, 'u': 4, 'U': 8}

// escape reads a backslash escape of a double-quoted scalar starting at p.
func (r *sourceReader) escape(p position) (unit, bool) {
	r.advance() // the backslash
	c := r.peekRune()
	if c == '\n' || c == '\r' {
		// An escaped line break joins the lines with nothing in between.
		for c == '\r' {
			r.advance()
			c = r.peekRune()
		}
		r.advance()
		return unit{r: -1, pos: p, foldable: true}, true
	}
	if v, ok := simpleEscapes[c]; ok {
		r.advance()
		return unit{r: v, pos: p}, true
	}
	digits, ok := hexEscapes[c]
	if !ok {
		return unit{}, false
	}
	r.advance()
	var hex strings.Builder
	for range digits {
		h := r.peekRune()
		if !strings.ContainsRune("0123456789abcdefABCDEF", h) || h < 0 {
			return unit{}, false
		}
		hex.WriteRune(h)
		r.advance()
	}
	v, err := strconv.ParseUint(hex.String(), 16, 32)
	if err != nil {
		return unit{}, false
	}
	return unit{r: rune(v), pos: p}, true
}

// match returns the position of the source that produced the decoded rune want, consuming
// the source up to it.
func (r *sourceReader) match(want rune) (position, bool) {
	for range maxFoldRun {
		u, ok := r.peekUnit()
		if !ok {
			return position{}, false
		}
		switch {
		case u.r == want:
			r.hasPending = false
			return u.pos, true
		case u.r == -1:
			r.hasPending = false // an escaped line break stands for nothing
		case u.foldable && isFoldedSpace(want):
			// Folding turned this source whitespace into other whitespace (a line break
			// into a space, several into one): the decoded character maps here and the
			// source whitespace stays for what follows.
			return u.pos, true
		case u.foldable:
			r.hasPending = false // indentation or a folded break: skip it
		default:
			return position{}, false
		}
	}
	return position{}, false
}

// maxFoldRun bounds the source units skipped for one decoded character.
const maxFoldRun = 1 << 20

func (r *sourceReader) peekUnit() (unit, bool) {
	if r.hasPending {
		return r.pending, true
	}
	u, ok := r.next()
	if !ok {
		return unit{}, false
	}
	r.pending, r.hasPending = u, true
	return u, true
}

func isFoldedSpace(c rune) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

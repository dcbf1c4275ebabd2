package audit

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
)

// valueOf parses src and returns the document and the value node of the top-level key "v".
func valueOf(t testing.TB, src string) (*document, ast.Node) {
	t.Helper()
	f, err := parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	doc := newDocument([]byte(src))
	body := f.Docs[0].Body
	doc.collectAnchors(body)
	n := doc.lookup(doc.resolve(body), "v")
	if n == nil {
		t.Fatalf("no v: in %q", src)
	}
	return doc, n
}

// sourceAt returns the source text from p to the end of its line.
func sourceAt(lines []string, p position) string {
	if p.Line < 1 || p.Line > len(lines) {
		return ""
	}
	line := lines[p.Line-1]
	for c := 1; c < p.Column && line != ""; c++ {
		_, size := utf8.DecodeRuneInString(line)
		line = line[size:]
	}
	return line
}

// checkTrace asserts that every decoded character that is not whitespace is traced to
// itself in the source, or to the backslash escape or the doubled single quote that wrote it.
func checkTrace(t testing.TB, doc *document, s scalar) {
	t.Helper()
	if s.at == nil {
		t.Fatalf("%q: no trace", s.Text)
	}
	for i, r := range s.Text {
		if isFoldedSpace(r) {
			continue
		}
		at := sourceAt(doc.lines, s.pos(i))
		if !strings.HasPrefix(at, string(r)) && !strings.HasPrefix(at, `\`) && !strings.HasPrefix(at, "''") {
			t.Fatalf("%q: byte %d (%q) traced to %d:%d, where the source reads %q", s.Text, i, r, s.pos(i).Line, s.pos(i).Column, at)
		}
	}
}

func TestDecodeScalar(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		text   string
		dollar position // where the first "${{" of text is traced
	}{
		{"unicode escape inside the expression", `v: "echo ${{ github.ev\u0065nt.issue.title }}"`,
			"echo ${{ github.event.issue.title }}", position{1, 10}},
		{"tab escapes and a hex escape", `v: "x\t${{\tgithub.head\x5fref }}"`,
			"x\t${{\tgithub.head_ref }}", position{1, 8}},
		{"the dollar itself escaped", `v: "\x24{{ inputs.g }}"`, "${{ inputs.g }}", position{1, 5}},
		{"an astral escape shifts nothing after it", `v: "\U0001F600 ${{ inputs.a }}"`, "\U0001F600 ${{ inputs.a }}", position{1, 16}},
		{"single-quoted doubled quotes", `v: 'it''s ${{ github.event.issue.title }}'`,
			"it's ${{ github.event.issue.title }}", position{1, 11}},
		{"double-quoted folded over lines", "v: \"multi\n  line \\\n  esc ${{ inputs.e }}\"",
			"multi line esc ${{ inputs.e }}", position{3, 7}},
		{"plain over two lines", "v: plain\n  continued ${{ inputs.d }}\n", "plain continued ${{ inputs.d }}", position{2, 13}},
		{"folded block", "v: >\n  folded\n  more\n\n  para ${{ inputs.a }}\n", "folded more\npara ${{ inputs.a }}\n", position{5, 8}},
		{"literal block with an indentation indicator", "v: |2-\n    keep ${{ inputs.b }}\n", "  keep ${{ inputs.b }}", position{2, 10}},
		{"literal block in a sequence with a comment on the header", "v:\n  - v: | # c\n      a\n       ${{ inputs.c }}\n",
			"a\n ${{ inputs.c }}\n", position{4, 8}},
		{"CRLF block", "v: |\r\n  crlf ${{ inputs.f }}\r\n", "crlf ${{ inputs.f }}\n", position{2, 8}},
		{"tagged and anchored", "v: !!str &a \"t\\u00e9 ${{ inputs.g }}\"", "t\u00e9 ${{ inputs.g }}", position{1, 22}},
		{"unicode before the value", "v: \"h\u00e9llo ${{ inputs.h }}\"", "h\u00e9llo ${{ inputs.h }}", position{1, 11}},
		{"flow mapping", `v: {run: "echo ${{ inputs.i }}"}`, "", position{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, n := valueOf(t, tt.src)
			switch {
			case tt.text == "": // descend into the flow mapping
				n = doc.lookup(n, "run")
				tt.text, tt.dollar = "echo ${{ inputs.i }}", position{1, 16}
			case doc.sequence(n) != nil: // and into the sequence
				n = doc.lookup(doc.sequence(n)[0], "v")
			}
			s := doc.decodeScalar(n)
			if s.Text != tt.text {
				t.Fatalf("text %q, want %q", s.Text, tt.text)
			}
			checkTrace(t, doc, s)
			if got := s.pos(strings.Index(s.Text, "${{")); got != tt.dollar {
				t.Errorf("${{ traced to %d:%d, want %d:%d", got.Line, got.Column, tt.dollar.Line, tt.dollar.Column)
			}
		})
	}
}

// encodeDoubleQuoted writes s as a double-quoted YAML scalar, choosing for each character
// (by seed) between itself and an escape, and breaking lines with escaped line breaks.
func encodeDoubleQuoted(s string, seed uint64) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		seed = seed*6364136223846793005 + 1442695040888963407
		pick := seed >> 61
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20 || r == 0x7f || r == 0x85 || r == 0xa0 || r == 0x2028 || r == 0x2029 || r == 0xfeff || !utf8.ValidRune(r) || (r >= 0xd800 && r <= 0xdfff):
			fmt.Fprintf(&b, `\U%08x`, r)
		case pick == 0:
			fmt.Fprintf(&b, `\x%02x`, r&0xff)
			if r > 0xff {
				b.Reset()
				return ""
			}
		case pick == 1:
			fmt.Fprintf(&b, `\u%04x`, r)
			if r > 0xffff {
				b.Reset()
				return ""
			}
		case pick == 2 && i > 0 && r != ' ':
			b.WriteString("\\\n    ") // escaped line break, indentation dropped
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzDecodeScalar: any string written as a double-quoted scalar with arbitrary escapes
// decodes to itself, traced character by character to the source.
func FuzzDecodeScalar(f *testing.F) {
	f.Add("echo ${{ github.event.issue.title }}", uint64(1))
	f.Add("x\t${{\tgithub.head_ref }}", uint64(7))
	f.Add("é ${{ inputs.a }} \U0001F600", uint64(3))
	f.Fuzz(func(t *testing.T, s string, seed uint64) {
		if !utf8.ValidString(s) {
			return
		}
		enc := encodeDoubleQuoted(s, seed)
		if enc == "" {
			return
		}
		src := "v: " + enc + "\n"
		doc, n := valueOf(t, src)
		sc := doc.decodeScalar(n)
		if sc.Text != s {
			t.Skipf("the parser decodes %q as %q, not %q", enc, sc.Text, s) // not ours to judge
		}
		checkTrace(t, doc, sc)
	})
}

package audit

import (
	"strings"
)

// expression is one `${{ ... }}` found in a text.
type expression struct {
	// Offset is the byte offset of "${{" in the text.
	Offset int
	// Inner is the text between "${{" and "}}" (to the end of the text when
	// the expression is not closed).
	Inner string
}

// Source returns the expression as written, "${{ inner }}".
func (e expression) Source() string {
	return "${{" + e.Inner + "}}"
}

// findExpressions returns the `${{ }}` expressions of text in order. The
// closing "}}" is searched outside '...' string literals, as GitHub does.
func findExpressions(text string) []expression {
	var out []expression
	pos := 0
	for {
		i := strings.Index(text[pos:], "${{")
		if i < 0 {
			return out
		}
		start := pos + i
		body := start + 3
		end := closeOf(text, body)
		if end < 0 {
			out = append(out, expression{Offset: start, Inner: text[body:]})
			return out
		}
		out = append(out, expression{Offset: start, Inner: text[body:end]})
		pos = end + 2
	}
}

// closeOf returns the index of the "}}" closing an expression body starting
// at from, or -1.
func closeOf(text string, from int) int {
	inString := false
	for j := from; j < len(text); j++ {
		switch {
		case text[j] == '\'':
			// '' inside a literal is an escaped quote: toggling twice keeps
			// us inside it.
			inString = !inString
		case !inString && text[j] == '}' && j+1 < len(text) && text[j+1] == '}':
			return j
		}
	}
	return -1
}

// contextPaths returns the property-access chains of an expression, lower
// case, as GitHub contexts are case-insensitive: `inputs.Ref` gives
// [inputs ref], `github.event['pull_request'].title` gives
// [github event pull_request title], `steps.*.outputs` gives
// [steps * outputs]. Function names and string literals are skipped.
func contextPaths(expr string) [][]string {
	var out [][]string
	i := 0
	for i < len(expr) {
		c := expr[i]
		switch {
		case c == '\'':
			i = skipString(expr, i)
		case c == '.':
			// A property of a computed value, fromJSON(x).name: not a context.
			i = skipSpaces(expr, i+1)
			if i < len(expr) && expr[i] == '*' {
				i++
			}
			i = skipIdent(expr, i)
		case isDigit(c):
			for i < len(expr) && (isIdentChar(expr[i]) || expr[i] == '.') {
				i++
			}
		case isIdentStart(c):
			start := i
			i = skipIdent(expr, i)
			name := strings.ToLower(expr[start:i])
			if j := skipSpaces(expr, i); j < len(expr) && expr[j] == '(' {
				continue // function call
			}
			chain := []string{name}
			chain, i = readChain(expr, i, chain)
			out = append(out, chain)
		default:
			i++
		}
	}
	return out
}

// readChain consumes `.name`, `.*` and `['name']` accessors after an
// identifier. Blanks may surround the accessors, as GitHub's lexer skips them
// between tokens: `github . event [ 'issue' ]` reads github.event.issue.
func readChain(expr string, i int, chain []string) ([]string, int) {
	for i < len(expr) {
		next := skipSpaces(expr, i)
		if next >= len(expr) || (expr[next] != '.' && expr[next] != '[') {
			return chain, i
		}
		i = next
		switch expr[i] {
		case '.':
			j := skipSpaces(expr, i+1)
			switch {
			case j < len(expr) && expr[j] == '*':
				chain = append(chain, "*")
				i = j + 1
			case j < len(expr) && isIdentStart(expr[j]):
				k := skipIdent(expr, j)
				chain = append(chain, strings.ToLower(expr[j:k]))
				i = k
			default:
				return chain, i
			}
		case '[':
			j := skipSpaces(expr, i+1)
			if j < len(expr) && expr[j] == '*' {
				if k := skipSpaces(expr, j+1); k < len(expr) && expr[k] == ']' {
					chain = append(chain, "*")
					i = k + 1
					continue
				}
				return chain, i
			}
			if j >= len(expr) || expr[j] != '\'' {
				return chain, i // computed index: its identifiers are chains of their own
			}
			end := skipString(expr, j)
			k := skipSpaces(expr, end)
			if k >= len(expr) || expr[k] != ']' {
				return chain, i
			}
			lit := expr[j+1 : end-1]
			chain = append(chain, strings.ToLower(strings.ReplaceAll(lit, "''", "'")))
			i = k + 1
		default:
			return chain, i
		}
	}
	return chain, i
}

// skipString returns the index after the '...' literal starting at i.
func skipString(s string, i int) int {
	j := i + 1
	for j < len(s) {
		if s[j] == '\'' {
			if j+1 < len(s) && s[j+1] == '\'' {
				j += 2
				continue
			}
			return j + 1
		}
		j++
	}
	return len(s)
}

func skipIdent(s string, i int) int {
	for i < len(s) && isIdentChar(s[i]) {
		i++
	}
	return i
}

func skipSpaces(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || isDigit(c) || c == '-'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

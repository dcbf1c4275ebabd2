package workflow

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// scalarStyle is how a string is written in YAML.
type scalarStyle int

const (
	// stylePlain writes the string unquoted.
	stylePlain scalarStyle = iota
	// styleLiteral writes a multi-line string as a literal block (|, |-).
	styleLiteral
	// styleDoubleQuoted writes the string in double quotes with escapes.
	styleDoubleQuoted
)

func (s scalarStyle) String() string {
	return [...]string{"plain", "literal", "double-quoted"}[s]
}

// styleFor picks the style of a string value. The rules are deliberately conservative: a
// string is plain only when every YAML 1.1 and 1.2 reader (GitHub's, actionlint's, goccy's)
// reads it back as the same string, a literal block only when no indentation indicator or
// keep-chomping is needed, and double-quoted otherwise. Double quotes cannot fail: every
// valid UTF-8 string has an escaped form. Callers reject invalid UTF-8 before.
func styleFor(s string) scalarStyle {
	if strings.Contains(s, "\n") {
		if literalSafe(s) {
			return styleLiteral
		}
		return styleDoubleQuoted
	}
	if plainSafe(s) {
		return stylePlain
	}
	return styleDoubleQuoted
}

// plainKeywords are strings that YAML 1.1 or 1.2 reads as null, a boolean or a merge key
// when plain (compared case-insensitively). YAML 1.1 readers treat on/off/yes/no/y/n as
// booleans, so those are quoted too, except the workflow's own `on:` key (see Marshal).
var plainKeywords = map[string]bool{
	"": true, "~": true, "null": true, "true": true, "false": true,
	"yes": true, "no": true, "on": true, "off": true, "y": true, "n": true,
	"<<": true, "=": true,
}

// plainSafe reports whether a one-line string can be written without quotes.
func plainSafe(s string) bool {
	if plainKeywords[strings.ToLower(s)] {
		return false
	}
	for _, r := range s {
		// Only printable characters; this also excludes tabs and line breaks.
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return false
		}
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' || s[len(s)-1] == ':' {
		return false
	}
	if looksNumeric(s) {
		return false
	}
	switch s[0] {
	case '-':
		// "-x" is a plain string, but "-", "- x", "-1", "--" and "---" are not (or read
		// badly): allow only a dash followed by a letter.
		if len(s) < 2 || !isASCIILetter(s[1]) {
			return false
		}
	case '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		// YAML indicators; @ and ` are reserved.
		return false
	}
	// ": " starts a mapping value and "#" a comment (goccy quotes every #, so do we).
	return !strings.Contains(s, ": ") && !strings.Contains(s, "#")
}

// looksNumeric reports whether s could be read as a number, an infinity or NaN, a
// timestamp or a YAML 1.1 sexagesimal: anything starting with a digit, or with + - . and
// then a digit or a dot.
func looksNumeric(s string) bool {
	if isDigit(s[0]) {
		return true
	}
	if s[0] == '+' || s[0] == '-' || s[0] == '.' {
		return len(s) == 1 || isDigit(s[1]) || s[1] == '.' || strings.EqualFold(s[1:], "inf") ||
			strings.EqualFold(s[1:], "nan") || strings.EqualFold(s[1:], ".inf")
	}
	return false
}

// literalSafe reports whether a multi-line string round-trips as a literal block without an
// indentation indicator or keep chomping: it must not start with a space, tab or line break
// (the first line sets the block's indentation), not end in more than one line break, have
// no line ending in a space or tab (goccy trims trailing blank lines, and trailing
// whitespace is invisible to a reviewer anyway), and hold only printable characters, tabs
// and \n.
func literalSafe(s string) bool {
	switch s[0] {
	case ' ', '\t', '\n':
		return false
	}
	if strings.HasSuffix(s, "\n\n") {
		return false
	}
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasSuffix(line, " ") || strings.HasSuffix(line, "\t") {
			return false
		}
	}
	for _, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

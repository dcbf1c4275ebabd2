package templates

import (
	"encoding/json"
	"strings"
)

// shellQuote returns s as one POSIX shell word that expands to exactly s. Words made only of
// characters the shell never treats specially stay bare so the scripts read naturally; all
// others are single-quoted; an embedded single quote closes the quoting, is written escaped
// with a backslash, and quoting reopens.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if isShellSafe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isShellSafe reports whether every byte of s is one that needs no quoting anywhere in a word.
// '=' is excluded at the start (bash would read name=value as an assignment only before the
// command, but a leading '=' also trips zsh); '%', '+', ',', ':' and '@' are literal in bash.
func isShellSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_-./,:@%+", c) >= 0:
		case c == '=' && i > 0:
		default:
			return false
		}
	}
	return true
}

// shellJoin quotes every word and joins them with spaces.
func shellJoin(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shellQuote(w)
	}
	return strings.Join(quoted, " ")
}

// pyString returns s as a Python string literal. A JSON string is a valid Python literal with
// the same value (json.Marshal escapes quotes, backslashes and control characters and writes
// invalid UTF-8 as U+FFFD).
func pyString(s string) string {
	b, err := json.Marshal(s)
	if err != nil { // cannot happen for a string
		return `""`
	}
	return string(b)
}

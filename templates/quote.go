package templates

import (
	"encoding/json"
	"github.com/debugflow/debugflow/internal/textsafe"
	"strings"
)

// shellJoin quotes every word and joins them with spaces.
func shellJoin(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = textsafe.ShellWord(w)
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

// mdCode returns s as a Markdown code span that renders exactly s (CommonMark: the content of
// a code span is literal; the fence is one backtick longer than the longest run of backticks
// inside, and a renderer strips one space from each side when both sides have one, so s is
// padded with a space on each side when it starts or ends with a backtick or a space). s must
// be one line and not empty (Validate and the templates see to it).
func mdCode(s string) string {
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	allSpaces := strings.Trim(s, " ") == ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") ||
		(!allSpaces && (strings.HasPrefix(s, " ") || strings.HasSuffix(s, " "))) {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdCell makes rendered Markdown safe inside a table cell: GitHub splits a row on every
// unescaped '|', even inside a code span, and renders "\|" there as "|".
func mdCell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// mdFence returns a code fence of backticks that no line of the texts can close: longer than
// every run of backticks in them, and at least three.
func mdFence(texts ...string) string {
	n := 2
	for _, t := range texts {
		n = max(n, longestRun(t, '`'))
	}
	return strings.Repeat("`", n+1)
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] != c {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	return longest
}

// shellGlob returns a path pattern as shell source that expands like the pattern: '*' and '?'
// stay bare so the shell matches them, every other part is quoted like textsafe.ShellWord.
func shellGlob(pattern string) string {
	var b strings.Builder
	start := 0
	for i := 0; i <= len(pattern); i++ {
		if i < len(pattern) && pattern[i] != '*' && pattern[i] != '?' {
			continue
		}
		if i > start {
			b.WriteString(textsafe.ShellWord(pattern[start:i]))
		}
		if i < len(pattern) {
			b.WriteByte(pattern[i])
		}
		start = i + 1
	}
	return b.String()
}

package report

import (
	"fmt"
	"unicode/utf8"

	"github.com/debugflow/debugflow/internal/textsafe"
)

// Every string the verdict shows may come from a log someone else wrote: a kernel or process
// name in dmesg, a test id, an exception message, a file name in the artifact. Before it reaches
// a terminal, the Markdown or the JSON, whatever a terminal would act on is made visible text.

// maxDisplayRunes bounds one value on screen or in the Markdown (a test id, a message, a
// kernel name); the JSON keeps the parsers' own bounds.
const maxDisplayRunes = 500

// display is s with control characters made visible (see visible) and cut to maxDisplayRunes.
func display(s string) string {
	return clip(visible(s), maxDisplayRunes)
}

// visible, visibleLines, jsonSafe and needsEscape are package textsafe's, shared with the
// experiment and the commands that print what artifacts say.
func visible(s string) string      { return textsafe.Visible(s) }
func visibleLines(s string) string { return textsafe.VisibleLines(s) }
func jsonSafe(js []byte) []byte    { return textsafe.JSON(js) }
func needsEscape(r rune) bool      { return textsafe.NeedsEscape(r) }

// clip cuts s to at most n runes, saying how much was left out.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i] + fmt.Sprintf("… (%d more characters)", utf8.RuneCountInString(s[i:]))
}

// safeError shows an error's message with control characters made visible (an artifact's file
// name goes into error messages) while keeping the error chain for errors.Is.
type safeError struct{ err error }

func (e safeError) Error() string { return visible(e.err.Error()) }
func (e safeError) Unwrap() error { return e.err }

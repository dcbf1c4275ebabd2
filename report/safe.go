package report

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
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

// visible neutralises what a terminal would act on: C0 controls (escape, newline, carriage
// return, tab and the rest), DEL, C1 controls (U+0080-U+009F: 8-bit CSI and OSC), the line and
// paragraph separators, the bidirectional overrides ("Trojan Source") and invalid UTF-8 become
// Go-style escapes such as \x1b, \u009b, \u202e and \xff, so the text cannot move the cursor,
// recolour or retitle the terminal, hide itself, or reorder what is shown.
func visible(s string) string {
	if isPlainASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isPlainASCII reports whether s is printable ASCII only (the common case, kept allocation-free).
func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// mayNeedEscape reports a byte jsonSafe may have to escape: DEL or one of a multi-byte sequence.
func mayNeedEscape(b []byte) bool {
	for _, c := range b {
		if c >= 0x7f {
			return true
		}
	}
	return false
}

// needsEscape reports the non-ASCII code points visible escapes: C1 controls, the line and
// paragraph separators and the bidirectional formatting characters.
func needsEscape(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// visibleLines is visible applied to each line of s, keeping the line breaks.
func visibleLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		lines[i] = visible(body)
		if nl {
			lines[i] += "\n"
		}
	}
	return strings.Join(lines, "")
}

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

// jsonSafe escapes, in encoded JSON, the code points encoding/json writes raw but a terminal may
// act on (DEL, C1 controls, bidirectional formatting characters): they can only occur inside
// strings, where \uXXXX means the same text, so `report --json` on a terminal is as safe as the
// text output and loses nothing.
func jsonSafe(js []byte) []byte {
	if !mayNeedEscape(js) {
		return js
	}
	var b bytes.Buffer
	b.Grow(len(js) + 16)
	for i := 0; i < len(js); {
		r, size := utf8.DecodeRune(js[i:])
		if r == 0x7f || (size > 1 && needsEscape(r)) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.Write(js[i : i+size])
		}
		i += size
	}
	return b.Bytes()
}

// safeError shows an error's message with control characters made visible (an artifact's file
// name goes into error messages) while keeping the error chain for errors.Is.
type safeError struct{ err error }

func (e safeError) Error() string { return visible(e.err.Error()) }
func (e safeError) Unwrap() error { return e.err }

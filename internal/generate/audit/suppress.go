package audit

import (
	"github.com/debugflow/debugflow/internal/lazyre"
	"slices"
	"strings"
)

// An inline suppression silences the findings of named rules on one line:
//
//	run: echo "${{ inputs.tag }}" # debugflow: ignore[expression-injection] tag is validated by the release job
//
// or, on a line of its own, on the next line that is not a comment. The reason is
// required: a comment without one suppresses nothing, so every silenced finding says why.
var suppressionComment = lazyre.New(`#\s*debugflow:\s*ignore\[([^\]]*)\]([^\n]*)`)

// suppression is one ignore comment.
type suppression struct {
	line  int // the line it applies to
	rules []string
}

// suppressions reads the ignore comments of the source lines.
func (d *document) suppressions() []suppression {
	var out []suppression
	for i, text := range d.lines {
		m := suppressionComment.FindStringSubmatch(text)
		if m == nil || strings.TrimSpace(m[2]) == "" {
			continue
		}
		var rules []string
		for _, r := range strings.Split(m[1], ",") {
			if r = strings.TrimSpace(r); r != "" {
				rules = append(rules, r)
			}
		}
		line := i + 1
		if strings.HasPrefix(strings.TrimSpace(text), "#") { // a comment line: the next code line
			for j := i + 1; j < len(d.lines); j++ {
				if t := strings.TrimSpace(d.lines[j]); t != "" && !strings.HasPrefix(t, "#") {
					line = j + 1
					break
				}
			}
		}
		out = append(out, suppression{line: line, rules: rules})
	}
	return out
}

// suppressed reports whether an ignore comment silences the finding.
func suppressed(sups []suppression, f Finding) bool {
	for _, s := range sups {
		if s.line == f.Line && slices.Contains(s.rules, f.Rule) {
			return true
		}
	}
	return false
}

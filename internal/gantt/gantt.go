// Package gantt makes text safe inside a Mermaid Gantt chart: the crash timeline of `debugflow
// report` and the forest plot of an experiment. A name must not end early (':' starts the
// task's data; '#' and ';' end it; a line break ends the line), close the Markdown fence (a
// backtick), or, at the start of a task line, read as a statement: Mermaid's Gantt lexer takes
// "title x", "excludes x", "call x", "gantt[x]", "accTitle :", a date "2024-01-31" or a '%'
// comment there before it takes a task name.
package gantt

import (
	"github.com/debugflow/debugflow/internal/lazyre"
	"strings"
)

// Text keeps letters, digits and the characters of keep; anything else becomes '_'. It is cut
// to maxLen bytes ("..." ending a cut text; 0: no limit) and is never empty ("_").
func Text(s, keep string, maxLen int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		case strings.ContainsRune(keep, r) && !strings.ContainsRune(":#;`\n\r", r):
			return r
		}
		return '_'
	}, s)
	if maxLen > 3 && len(s) > maxLen {
		s = s[:maxLen-3] + "..."
	}
	if strings.TrimSpace(s) == "" {
		return "_"
	}
	return s
}

// TaskName is Text for the start of a task line: a name that Mermaid would read as a statement
// gets a '_' before it.
func TaskName(s, keep string, maxLen int) string {
	s = Text(s, keep, maxLen)
	if StartsLikeStatement(strings.TrimLeft(s, " ") + " :") {
		return "_" + s
	}
	return s
}

// statement is how the start of a line reads as a statement, not a task, to Mermaid's Gantt
// lexer (its rules in Mermaid 11, in any case; the keywords of the weekday and weekend rules
// alone, to be safe).
var statement = lazyre.New(`(?i)^(gantt\b|dateformat\s|inclusiveenddates\b|topaxis\b|axisformat\s|tickinterval\s|` +
	`includes\s|excludes\s|todaymarker\s|weekday\b|weekend\b|\d\d\d\d-\d\d-\d\d\b|title\s|accdescription\s|` +
	`section\s|acctitle\s*:|accdescr\s*[:{]|href\s|call\s|click\s|%)`)

// StartsLikeStatement reports whether a chart line (without its indentation) would be read as
// a statement rather than a task name.
func StartsLikeStatement(line string) bool {
	return statement.MatchString(line)
}

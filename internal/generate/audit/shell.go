package audit

import (
	"strings"
)

// A light reading of `run:` scripts: enough to find commands (tmate, debugflow-step gate,
// gh pr checkout) and redirections (>> "$GITHUB_ENV") with their offsets, without a full
// shell parser. Quotes group words, comments and here-document bodies are skipped,
// backslash-newline continues a command, and ; && || | & separate commands.

// shellWord is one word of a command: its text with quotes removed, and the byte offset
// of its first character in the script.
type shellWord struct {
	Text   string
	Offset int
	Raw    string // as written, quotes included
}

// shellCommand is one simple command.
type shellCommand struct {
	Words []shellWord
}

// name returns the command's program without a leading path, skipping variable
// assignments and sudo/env/exec/command wrappers; ok is false for an empty command.
func (c shellCommand) name() (name string, at int, ok bool) {
	for i, w := range c.Words {
		if isAssignment(w.Text) {
			continue
		}
		base := w.Text[strings.LastIndexByte(w.Text, '/')+1:]
		switch base {
		case "sudo", "env", "exec", "command", "nohup", "time":
			continue
		}
		if strings.HasPrefix(base, "-") && i > 0 {
			continue // an option of the wrapper (sudo -E)
		}
		return base, i, true
	}
	return "", 0, false
}

// isAssignment reports whether a word is NAME=value.
func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		if !isIdentStart(w[i]) && !isDigit(w[i]) {
			return false
		}
	}
	return !isDigit(w[0])
}

// shellCommands splits a script into simple commands.
func shellCommands(script string) []shellCommand {
	var (
		cmds     []shellCommand
		cur      shellCommand
		heredocs []heredoc // pending: their bodies start at the next line
	)
	flush := func() {
		if len(cur.Words) > 0 {
			cmds = append(cmds, cur)
		}
		cur = shellCommand{}
	}
	i := 0
	for i < len(script) {
		c := script[i]
		switch {
		case c == '\n':
			flush()
			i++
			for _, h := range heredocs {
				i = skipHeredoc(script, i, h)
			}
			heredocs = nil
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\\' && i+1 < len(script) && script[i+1] == '\n':
			i += 2
		case c == '#':
			for i < len(script) && script[i] != '\n' {
				i++
			}
		case c == ';' || c == '|' || c == '&' || c == '(' || c == ')':
			flush()
			i++
		case c == '>' || c == '<':
			j := i + 1
			for j < len(script) && (script[j] == '>' || script[j] == '<' || script[j] == '&' || script[j] == '-' || script[j] == '|') {
				j++
			}
			op := script[i:j]
			cur.Words = append(cur.Words, shellWord{Text: op, Raw: op, Offset: i})
			i = j
			if strings.HasPrefix(op, "<<") && !strings.HasPrefix(op, "<<<") {
				w, next := readShellWord(script, skipBlanks(script, i))
				if w.Raw != "" {
					heredocs = append(heredocs, heredoc{delim: w.Text, dash: strings.HasPrefix(op, "<<-")})
					cur.Words = append(cur.Words, w)
				}
				i = next
			}
		default:
			w, next := readShellWord(script, i)
			cur.Words = append(cur.Words, w)
			i = next
		}
	}
	flush()
	return cmds
}

type heredoc struct {
	delim string
	dash  bool // <<-: the delimiter line may be indented with tabs
}

// skipHeredoc returns the offset after the body of h, which starts at i.
func skipHeredoc(script string, i int, h heredoc) int {
	for i < len(script) {
		end := strings.IndexByte(script[i:], '\n')
		line := script[i:]
		next := len(script)
		if end >= 0 {
			line, next = script[i:i+end], i+end+1
		}
		line = strings.TrimRight(line, "\r")
		if h.dash {
			line = strings.TrimLeft(line, "\t")
		}
		i = next
		if line == h.delim {
			return i
		}
	}
	return i
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// readShellWord reads one word starting at i: quoted parts keep their blanks, ${...},
// $(...) and ${{ }} are kept whole.
func readShellWord(s string, i int) (shellWord, int) {
	start := i
	var b strings.Builder
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' || c == '|' || c == '>' || c == '<' || c == ')':
			return shellWord{Text: b.String(), Offset: start, Raw: s[start:i]}, i
		case c == '\\' && i+1 < len(s):
			if s[i+1] != '\n' {
				b.WriteByte(s[i+1])
			}
			i += 2
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				end = len(s) - i - 1
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 2
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				j++
			}
			b.WriteString(s[i+1 : min(j, len(s))])
			i = j + 1
		case c == '$' && i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '('):
			j := matchingClose(s, i+1)
			b.WriteString(s[i:j])
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return shellWord{Text: b.String(), Offset: start, Raw: s[start:min(i, len(s))]}, min(i, len(s))
}

// matchingClose returns the offset after the bracket group opening at s[i] ({ or ().
func matchingClose(s string, i int) int {
	open := s[i]
	closer := byte('}')
	if open == '(' {
		closer = ')'
	}
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case open:
			depth++
		case closer:
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(s)
}

// envFileVars are the runner's environment files whose content becomes the environment or
// the PATH of every later step.
var envFileVars = []string{"GITHUB_ENV", "GITHUB_PATH"}

// envFileTarget returns which environment file a word names ($GITHUB_ENV, "${GITHUB_PATH}",
// $env:GITHUB_ENV, %GITHUB_ENV%), or "".
func envFileTarget(word string) string {
	w := strings.TrimSpace(word)
	for _, v := range envFileVars {
		for _, form := range []string{"$" + v, "${" + v + "}", "%" + v + "%"} {
			if w == form {
				return v
			}
		}
		if strings.EqualFold(w, "$env:"+v) || strings.EqualFold(w, "${env:"+v+"}") {
			return v
		}
	}
	return ""
}

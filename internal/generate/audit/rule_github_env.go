package audit

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"strings"
)

// githubScriptEnvCalls are the actions/toolkit calls of a github-script that write the
// environment files.
var githubScriptEnvCalls = []string{"core.exportVariable", "core.addPath"}

// githubEnv refuses writes to $GITHUB_ENV and $GITHUB_PATH in workflows started by
// privileged triggers (pull_request_target, workflow_run, issue_comment, issues,
// discussion...). Every later step of the job gets what is written there as its
// environment or PATH, so a value derived from the pull request or the event
// (LD_PRELOAD=..., BASH_ENV=..., a PATH entry in the checked-out tree) runs code with the
// job's secrets and write token. A write of literal text only (echo "CI=1" >>
// "$GITHUB_ENV") is fine.
//
// https://securitylab.github.com/resources/github-actions-untrusted-input/
type githubEnv struct {
	ruleBase
}

func newGithubEnv(file string) *githubEnv {
	return &githubEnv{ruleBase{file: file, info: Rule{
		Name:        "github-env",
		Description: "no $GITHUB_ENV or $GITHUB_PATH write of computed values in workflows started by pull_request_target, workflow_run, issue_comment and other privileged triggers",
		URL:         "https://securitylab.github.com/resources/github-actions-untrusted-input/",
		Severity:    High,
		Confidence:  Medium,
	}}}
}

const githubEnvFix = "pass the value to later steps through $GITHUB_OUTPUT and their env: (steps.ID.outputs.NAME), never as environment or PATH, or move the step to a pull_request workflow"

// VisitStep checks the step's scripts when a privileged trigger can run it.
func (r *githubEnv) VisitStep(s *stepNode) {
	t, ok := s.Job.Workflow.firstTrigger(privilegedTriggers, s.mayRun)
	if s.Job.Workflow.action {
		// An action has no trigger of its own: any workflow, privileged or not, may call it.
		t, ok = trigger{Event: "a workflow that calls this action (pull_request_target, workflow_run...)"}, true
	}
	if !ok {
		return
	}
	before := len(r.findings)
	defer func() {
		if s.Job.Workflow.action {
			for i := before; i < len(r.findings); i++ {
				r.findings[i].Confidence = Low
			}
		}
	}()
	for _, sc := range s.scripts() {
		script := s.doc.decodeScalar(sc.Node)
		if sc.Language == "javascript" {
			for _, call := range githubScriptEnvCalls {
				if i := strings.Index(script.Text, call); i >= 0 {
					r.reportAt(script.pos(i), githubEnvFix,
						"%s in a workflow started by %s: every later step runs with what it sets, and the event's author chooses it",
						call, t.Event)
				}
			}
		}
		found := false // a write the shell reader understood, literal or not
		if sc.Language == "shell" || sc.Language == "powershell" {
			for _, cmd := range shellCommands(script.Text) {
				target, at, literal := envFileWrite(cmd)
				if target == "" {
					continue
				}
				found = true
				if literal {
					continue
				}
				r.reportAt(script.pos(at), githubEnvFix,
					"%s writes $%s in a workflow started by %s: every later step runs with what it writes, and the event's author can choose it",
					describeStep(s), target, t.Event)
			}
		}
		// Other languages, and programs a shell script starts (python - <<EOF, node -e):
		// code that opens the file named by the variable.
		if loc := envFileProgramWrite.FindStringSubmatchIndex(script.Text); !found && loc != nil {
			var target string
			for g := 2; g+1 < len(loc); g += 2 {
				if loc[g] >= 0 {
					target = script.Text[loc[g]:loc[g+1]]
					break
				}
			}
			r.reportAt(script.pos(loc[0]), githubEnvFix,
				"%s opens $%s from code in a workflow started by %s: every later step runs with what it writes, and the event's author can choose it",
				describeStep(s), target, t.Event)
		}
	}
}

// envFileProgramWrite matches code that reads the name of an environment file to write it:
// Python's os.environ["GITHUB_ENV"] / os.getenv, Node's process.env.GITHUB_ENV, PowerShell's
// $env:GITHUB_ENV, Ruby's ENV["GITHUB_ENV"]. (A shell redirection is matched by envFileWrite,
// which knows a literal echo from a computed one.)
var envFileProgramWrite = lazyre.New(`(?:os\.environ(?:\.get)?\s*[\[(]\s*|os\.getenv\s*\(\s*|getenv\s*\(\s*|ENV\s*\[\s*)["'](GITHUB_(?:ENV|PATH))["']|process\.env(?:\.|\[["'])(GITHUB_(?:ENV|PATH))\b|\$env:(GITHUB_(?:ENV|PATH))\b`)

// envFileWrite returns which environment file the command writes (through a redirection
// or tee / Out-File / Add-Content), the offset of that file's name, and whether the
// command writes only literal text (echo or printf of words with no expansion).
func envFileWrite(cmd shellCommand) (target string, at int, literal bool) {
	ws := cmd.Words
	for i, w := range ws {
		var named string
		switch {
		case strings.HasPrefix(w.Text, ">") && i+1 < len(ws):
			named = envFileTarget(ws[i+1].Text)
			at = ws[i+1].Offset
		case i > 0:
			// tee "$GITHUB_ENV", Out-File -FilePath $env:GITHUB_ENV, Add-Content $env:GITHUB_PATH
			named = envFileTarget(w.Text)
			at = w.Offset
			if named != "" && !writesFileArgument(cmd) {
				named = ""
			}
		}
		if named != "" {
			return named, at, literalEcho(ws[:i])
		}
	}
	return "", 0, false
}

// writesFileArgument reports whether the command writes the files it names (tee, PowerShell
// cmdlets) rather than reading them (cat "$GITHUB_ENV").
func writesFileArgument(cmd shellCommand) bool {
	name, _, ok := cmd.name()
	if !ok {
		return false
	}
	switch strings.ToLower(name) {
	case "tee", "out-file", "add-content", "set-content", "tee-object":
		return true
	}
	return false
}

// literalEcho reports whether words are an echo or printf of literal text only.
func literalEcho(words []shellWord) bool {
	if len(words) == 0 {
		return false
	}
	switch words[0].Text {
	case "echo", "printf", "Write-Output":
	default:
		return false
	}
	for _, w := range words[1:] {
		if strings.ContainsAny(w.Raw, "$`%") || strings.HasPrefix(w.Text, ">") {
			return false
		}
	}
	return true
}

// describeStep names a step for a message that already says where it is.
func describeStep(s *stepNode) string {
	if s.Job.Workflow.action {
		return s.label() + " of the action"
	}
	return fmt.Sprintf("%s of job %q", s.label(), s.Job.ID)
}

package audit

import (
	"fmt"
	"strings"
)

// sshActions open a shell on the runner for whoever has the connection string, which the
// job log prints (public for a public repository). The input that limits who may attach,
// "" when the action has none.
var sshActions = []struct {
	prefix string // the action name, or its prefix for sub-actions (…/detached)
	limits []string
}{
	{"mxschmitt/action-tmate", []string{"limit-access-to-actor"}},
	{"lhotari/action-upterm", []string{"limit-access-to-actor", "limit-access-to-users"}},
	{"owenthereal/action-upterm", []string{"limit-access-to-actor", "limit-access-to-users"}},
	{"csexton/debugger-action", nil},
}

// gateCommand is debugflow's own tmate gate, limited to the actor unless told otherwise.
const (
	gateStepBinary = "debugflow-step"
	gateVerb       = "gate"
	gateLimitFlag  = "--limit-actor"
)

// tmateAccess refuses a tmate or SSH step whose access is not limited to the person who
// started the run: mxschmitt/action-tmate without limit-access-to-actor: true (its default
// is false), action-upterm without limit-access-to-actor or limit-access-to-users, a
// `debugflow-step gate --limit-actor=false`, a `tmate` session started without -a
// authorized_keys, `upterm host` without --github-user or --authorized-keys. The
// connection string is in the job log: anyone who reads the log (everyone, for a public
// repository) gets a shell on the runner, with the checkout and whatever the job holds.
//
// A rule of debugflow's own: https://github.com/mxschmitt/action-tmate#use-registered-public-ssh-keys
type tmateAccess struct {
	ruleBase
	openGate bool // accept debugflow-step gate --limit-actor=false (WithOpenTmateGate)
}

func newTmateAccess(file string, openGate bool) *tmateAccess {
	return &tmateAccess{ruleBase: ruleBase{file: file, info: Rule{
		Name:        "tmate-access",
		Description: "every tmate/SSH debug session (action-tmate, action-upterm, tmate, debugflow-step gate) is limited to the actor's SSH keys",
		URL:         "https://github.com/mxschmitt/action-tmate#use-registered-public-ssh-keys",
		Severity:    High,
		Confidence:  High,
	}}, openGate: openGate}
}

// VisitStep checks one step.
func (r *tmateAccess) VisitStep(s *stepNode) {
	if action := s.action(); action != "" {
		r.checkAction(s, action)
	}
	if n := s.get("run"); n != nil {
		script := s.doc.decodeScalar(n)
		authorizedKeys := strings.Contains(script.Text, "tmate-authorized-keys")
		for _, cmd := range shellCommands(script.Text) {
			name, i, ok := cmd.name()
			if !ok {
				continue
			}
			switch name {
			case gateStepBinary:
				if !r.openGate {
					r.checkGate(s, script, cmd.Words[i+1:])
				}
			case "tmate":
				if tmateStartsOpenSession(cmd.Words[i+1:]) && !authorizedKeys {
					r.reportAt(script.pos(cmd.Words[i].Offset),
						"start it with `tmate -a ~/.ssh/authorized_keys` holding only your keys (https://github.com/USER.keys), or use debugflow-step gate",
						"%s starts a tmate session that anyone with the connection string can join: the job log prints it", s.label())
				}
			case "upterm":
				if uptermOpen(cmd.Words[i+1:]) {
					r.reportAt(script.pos(cmd.Words[i].Offset),
						"add `--github-user USER` (or --authorized-keys FILE) to upterm host",
						"%s starts an upterm session that anyone with the connection string can join: the job log prints it", s.label())
				}
			}
		}
	}
}

func (r *tmateAccess) checkAction(s *stepNode, action string) {
	for _, a := range sshActions {
		if action != a.prefix && !strings.HasPrefix(action, a.prefix+"/") {
			continue
		}
		if len(a.limits) == 0 {
			r.report(s.get("uses"), "use mxschmitt/action-tmate with `limit-access-to-actor: true`, or debugflow-step gate",
				"%s (%s) opens a shell on the runner that cannot be limited to the actor: anyone who reads the job log can attach", s.label(), a.prefix)
			return
		}
		for _, in := range a.limits {
			v := s.with(in)
			if v == nil {
				continue
			}
			text := strings.TrimSpace(scalarText(v))
			if in == "limit-access-to-users" && text != "" && !strings.Contains(text, "${{") {
				return
			}
			if strings.EqualFold(text, "true") {
				return
			}
		}
		where := s.with(a.limits[0])
		if where == nil {
			where = s.get("uses")
		}
		r.report(where, fmt.Sprintf("set `with: %s: true`", a.limits[0]),
			"%s (%s) lets anyone who reads the job log attach to a shell on the runner: %s is not true (the action's default is false)",
			s.label(), a.prefix, a.limits[0])
		return
	}
}

// checkGate reports a debugflow-step gate whose --limit-actor is anything but true.
func (r *tmateAccess) checkGate(s *stepNode, script scalar, args []shellWord) {
	if len(args) == 0 || args[0].Text != gateVerb {
		return
	}
	for _, w := range args[1:] {
		value, ok := strings.CutPrefix(w.Text, gateLimitFlag+"=")
		if !ok {
			continue
		}
		switch strings.TrimSpace(value) {
		case "1", "t", "T", "true", "TRUE", "True":
			continue
		}
		r.reportAt(script.pos(w.Offset), "drop --limit-actor=false (the default limits access to the SSH keys of the user who started the run)",
			"%s runs the tmate gate with %s (only the default or true limits access to the actor): anyone who reads the job log can attach to a shell on the runner", s.label(), w.Text)
	}
}

// tmateStartsOpenSession reports whether tmate's arguments start a session (no command,
// or new-session) without -a authorized_keys. Options with a value: -S -f -a -k -n -r.
func tmateStartsOpenSession(args []shellWord) bool {
	command := ""
	for i := 0; i < len(args); i++ {
		w := args[i].Text
		switch {
		case w == "-a" || strings.HasPrefix(w, "-a") && len(w) > 2:
			return false
		case w == "-S" || w == "-f" || w == "-k" || w == "-n" || w == "-r" || w == "-L":
			i++ // its value
		case strings.HasPrefix(w, "-"):
		default:
			command = w
			i = len(args)
		}
	}
	switch command {
	case "", "new-session", "new":
		return true
	}
	return false
}

// uptermOpen reports whether `upterm host` runs without --github-user or --authorized-keys.
func uptermOpen(args []shellWord) bool {
	if len(args) == 0 || args[0].Text != "host" {
		return false
	}
	for _, w := range args[1:] {
		for _, limit := range []string{"--github-user", "--authorized-keys", "--gitlab-user", "--sourcehut-user", "--codeberg-user"} {
			if w.Text == limit || strings.HasPrefix(w.Text, limit+"=") {
				return false
			}
		}
	}
	return true
}

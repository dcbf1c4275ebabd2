package tmate

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TextFile is the name, in the output directory, of the human-readable
// record of the session: SSH command, access, times and end reason.
const TextFile = evidencefiles.TmateText

// clockFormat prints deadlines the way a user compares them with a clock.
const clockFormat = "15:04:05 MST"

// freeJobHint is the sentence every announcement carries.
func freeJobHint(st *state) string {
	return fmt.Sprintf("to free the job run `touch %s` in the tmate shell", st.Continue.Files[0])
}

// left formats a remaining duration: whole seconds, or milliseconds below one
// second (only tests have such short timeouts).
func left(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// accessSentence says who can attach; it follows the word "access".
func accessSentence(st *state) string {
	if st.LimitActor {
		return fmt.Sprintf("limited to the %d public SSH key(s) of GitHub user %s", st.Keys, st.Actor)
	}
	return "NOT limited: anyone with the SSH command or web URL can attach"
}

// announceStart prints the connection line as a ::notice:: and as a plain log
// line, and adds it to the step summary.
func (g *gate) announceStart(st *state, now time.Time) {
	o := g.o
	msg := fmt.Sprintf("%s — %s; the session ends by itself at %s (%s left)",
		st.SSH, freeJobHint(st), st.Deadline.UTC().Format(clockFormat), left(st.Deadline.Sub(now)))
	if st.Web != "" {
		msg += "; web: " + st.Web
	}
	o.Action.WithFieldsMap(map[string]string{"title": "tmate session"}).Noticef("%s", msg)
	g.logf("tmate: %s", msg)
	g.logf("tmate: access %s", accessSentence(st))
	if !st.ConnectDeadline.IsZero() {
		g.logf("tmate: if nobody attaches by %s (%d min) the session ends", st.ConnectDeadline.UTC().Format(clockFormat), st.ConnectMinutes)
	}

	var b strings.Builder
	b.WriteString("### tmate session\n\n")
	fmt.Fprintf(&b, "Connect: `%s`\n\n", st.SSH)
	if st.Web != "" {
		fmt.Fprintf(&b, "Web: %s\n\n", st.Web)
	}
	fmt.Fprintf(&b, "Access %s.\n\n", accessSentence(st))
	fmt.Fprintf(&b, "Free the job: run `touch %s` in the tmate shell (also honoured: %s).\n\n",
		st.Continue.Files[0], strings.Join(quoteAll(st.Continue.Files[1:]), ", "))
	fmt.Fprintf(&b, "The session ends by itself at %s (timeout %d min)", st.Deadline.UTC().Format(clockFormat), st.TimeoutMinutes)
	if !st.ConnectDeadline.IsZero() {
		fmt.Fprintf(&b, ", or at %s if nobody has attached", st.ConnectDeadline.UTC().Format(clockFormat))
	}
	b.WriteString(".\n")
	g.summary(b.String())
}

// announceTick repeats the connection line with the time left, so it does not
// scroll away in a long log. countKnown is false when the number of attached clients could
// not be read: then nobody is said to be attached or not.
func (g *gate) announceTick(st *state, now time.Time, attached, countKnown bool) {
	line := fmt.Sprintf("tmate: %s | %s | %s left (ends %s)",
		st.SSH, freeJobHint(st), left(st.Deadline.Sub(now)), st.Deadline.UTC().Format(clockFormat))
	switch {
	case st.ConnectDeadline.IsZero() || attached:
	case !countKnown:
		line += " | attached clients unknown (tmate's count could not be read)"
	case now.Before(st.ConnectDeadline):
		line += fmt.Sprintf(" | nobody attached yet: ends in %s without a client", left(st.ConnectDeadline.Sub(now)))
	}
	g.logf("%s", line)
}

// warnUnlimited is the loud warning for limit_to_actor: false.
func (g *gate) warnUnlimited() {
	msg := "tmate access is NOT limited to the actor: anyone who can read this log (or the web URL) can attach to the runner's shell while the session is open. Set limit_to_actor: true in the spec to allow only your GitHub SSH keys."
	g.o.Action.WithFieldsMap(map[string]string{"title": "tmate access not limited"}).Warningf("%s", msg)
}

// writeText writes tmate.txt; ended is zero while the session is open.
func writeText(out string, st *state, ended time.Time, reason EndReason, detail string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "ssh: %s\n", st.SSH)
	switch {
	case st.Web != "":
		fmt.Fprintf(&b, "web: %s\n", st.Web)
	case st.LimitActor:
		b.WriteString("web: (not shown: web access would bypass the SSH key check)\n")
	}
	fmt.Fprintf(&b, "access: %s\n", accessSentence(st))
	if st.Server != "" {
		fmt.Fprintf(&b, "server: %s\n", st.Server)
	}
	fmt.Fprintf(&b, "continue files: %s\n", strings.Join(st.Continue.Files, ", "))
	fmt.Fprintf(&b, "started: %s\n", st.StartedAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "deadline: %s (timeout %d min)\n", st.Deadline.UTC().Format(time.RFC3339), st.TimeoutMinutes)
	if !st.ConnectDeadline.IsZero() {
		fmt.Fprintf(&b, "connect deadline: %s (connect timeout %d min)\n", st.ConnectDeadline.UTC().Format(time.RFC3339), st.ConnectMinutes)
	}
	if !ended.IsZero() {
		fmt.Fprintf(&b, "ended: %s (after %s)\n", ended.UTC().Format(time.RFC3339), left(ended.Sub(st.StartedAt)))
	}
	fmt.Fprintf(&b, "end_reason: %s\n", reason)
	if detail != "" {
		fmt.Fprintf(&b, "end_detail: %s\n", detail)
	}
	if err := os.WriteFile(filepath.Join(out, TextFile), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", TextFile, err)
	}
	return nil
}

// writeUnopenedText writes tmate.txt for a gate that ended before any session was open.
func writeUnopenedText(out string, started, ended time.Time, reason EndReason, detail string) error {
	text := fmt.Sprintf("ssh: (none: no session was opened)\nstarted: %s\nended: %s (after %s)\nend_reason: %s\nend_detail: %s\n",
		started.UTC().Format(time.RFC3339), ended.UTC().Format(time.RFC3339), left(ended.Sub(started)), reason, detail)
	if err := os.WriteFile(filepath.Join(out, TextFile), []byte(text), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", TextFile, err)
	}
	return nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return out
}

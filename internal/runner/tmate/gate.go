package tmate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sethvargo/go-githubactions"
)

// queryTimeout bounds one has-session or display call in the wait loop; a
// wedged tmate must not stall the end-condition checks.
const queryTimeout = 10 * time.Second

// maxSocketPath keeps the socket path below the 108-byte sun_path limit.
const maxSocketPath = 100

// gate carries the defaulted options through one Run.
type gate struct {
	o Options
}

// Run runs the tmate gate and returns what ended it. With Detach it returns
// EndDetached once the session is ready; otherwise it blocks until an end
// condition, kills the session and says which condition it was. A cancelled
// ctx (SIGTERM/SIGINT in the CLI) kills the session and returns EndSignal
// without error. Errors wrapping ErrInvalidInput are the user's to fix.
func Run(ctx context.Context, opts Options) (EndReason, error) {
	o := opts.withDefaults()
	g := &gate{o: o}
	started := o.Now()
	timeout, connect, err := o.validate()
	if err != nil {
		// Recorded like any gate that ends before a session, so a later step reading
		// end_reason learns the input was refused (tmate.txt needs --out: created first).
		if mkErr := os.MkdirAll(o.Out, 0o755); mkErr != nil {
			g.logf("tmate: creating output directory: %v", mkErr)
		}
		g.endUnopened(started, EndBadInput, err.Error())
		return "", err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return "", fmt.Errorf("creating output directory: %w", err)
	}

	if o.Wait {
		st, note := loadState(o.Out, o.Getenv)
		if st != nil {
			return g.resume(ctx, st)
		}
		g.logf("tmate: %s: starting a session now, like the blocking gate", note)
	}

	started = o.Now()
	st, sess, err := g.open(ctx, timeout, connect)
	if err != nil {
		if st == nil || sess == nil {
			if ctx.Err() != nil {
				g.endUnopened(started, EndSignal, fmt.Sprintf("interrupted before the session was open (%v)", context.Cause(ctx)))
				return EndSignal, nil
			}
			// Recorded, so a later step reading end_reason learns why nobody could attach.
			reason := EndNoSession
			if errors.Is(err, ErrInvalidInput) {
				// The command exits 2 on it: the input is what to fix, not the runner.
				reason = EndBadInput
			}
			g.endUnopened(started, reason, err.Error())
			return "", err
		}
		// The session was started but never became usable.
		reason, detail := EndError, err.Error()
		switch {
		case ctx.Err() != nil:
			reason, detail, err = EndSignal, "interrupted while tmate was starting: "+context.Cause(ctx).Error(), nil
		case errors.Is(err, context.DeadlineExceeded) || !g.o.Now().Before(st.Deadline):
			reason = EndTimeout
			err = fmt.Errorf("the %d-minute timeout elapsed before the tmate session was usable: %w", st.TimeoutMinutes, err)
		}
		g.finish(st, *sess, reason, detail, true)
		if reason == EndError {
			return "", err
		}
		return reason, err
	}
	if o.Detach {
		if err := writeText(o.Out, st, time.Time{}, EndDetached, "the session stays open; a later `debugflow-step gate --wait` step waits for it"); err != nil {
			return "", err
		}
		g.logf("tmate: detached: the session stays open until the `gate --wait` step (state in %s)", filepath.Join(o.Out, StateFile))
		g.output(EndDetached)
		return EndDetached, nil
	}
	reason, detail := g.wait(ctx, st, *sess)
	g.finish(st, *sess, reason, detail, reason != EndSessionEnded)
	return reason, nil
}

// resume picks up a session opened by --detach: it announces it again and
// waits. The session's time (and the connect timeout) count from now, when the
// evidence was uploaded, not from the session's start before the reproducer: a
// long sweep must not eat the time a person has to look at its results.
func (g *gate) resume(ctx context.Context, st *state) (EndReason, error) {
	sess := session{runner: g.o.Runner, tmate: st.Tmate, socket: st.Socket}
	// Continue files configured on the --wait step count too.
	for _, f := range continueFiles(g.o.ContinueFiles, g.o.Workspace) {
		if !contains(st.Continue.Files, f) {
			st.Continue.Files = append(st.Continue.Files, f)
		}
	}
	now := g.o.Now()
	st.Deadline = now.Add(time.Duration(st.TimeoutMinutes) * g.o.Minute)
	if st.ConnectMinutes > 0 {
		st.ConnectDeadline = now.Add(time.Duration(st.ConnectMinutes) * g.o.Minute)
	}
	g.logf("tmate: resuming the session started at %s (socket %s); its %d minutes count from now", st.StartedAt.UTC().Format(clockFormat), st.Socket, st.TimeoutMinutes)
	g.announceStart(st, now)
	reason, detail := g.wait(ctx, st, sess)
	g.finish(st, sess, reason, detail, reason != EndSessionEnded)
	return reason, nil
}

// open finds tmate, prepares access control, starts the session, waits until
// it is ready and announces it. Once the session was started it returns st
// and sess even on error, so the caller can kill it.
func (g *gate) open(ctx context.Context, timeout, connect int) (*state, *session, error) {
	o := g.o
	start := o.Now()
	st := &state{
		Version:        stateVersion,
		StartedAt:      start,
		Deadline:       start.Add(time.Duration(timeout) * o.Minute),
		TimeoutMinutes: timeout,
		ConnectMinutes: connect,
		LimitActor:     o.LimitActor,
	}
	if connect > 0 {
		st.ConnectDeadline = start.Add(time.Duration(connect) * o.Minute)
	}
	st.runIdentity(o.Getenv)

	// Installing tmate and fetching keys count against the timeout too.
	setupCtx, cancelSetup := g.untilDeadline(ctx, st.Deadline, st.Deadline.Sub(start))
	defer cancelSetup()
	setupErr := func(doing string, err error) error {
		if expired(setupCtx) && ctx.Err() == nil {
			return fmt.Errorf("the %d-minute timeout elapsed while %s: %w", timeout, doing, err)
		}
		return err
	}

	tmatePath, how, err := resolveTmate(setupCtx, o.Runner, o.TmatePath, o.Stderr)
	if err != nil {
		return nil, nil, setupErr("installing tmate", err)
	}
	st.Tmate = tmatePath
	g.logf("tmate: %s", how)

	dir, err := g.sessionDir()
	if err != nil {
		return nil, nil, err
	}
	st.Dir = dir
	st.Socket = filepath.Join(dir, "tmate.sock")

	var keysFile, configFile string
	if o.LimitActor {
		client, err := newGitHubClient(o.HTTPClient, o.APIURL, o.Token)
		if err == nil {
			var keys []string
			keys, err = fetchActorKeys(setupCtx, client, o.Actor)
			if err == nil {
				keysFile = filepath.Join(dir, "authorized_keys")
				err = writeAuthorizedKeys(keysFile, o.Actor, keys)
				st.Actor, st.Keys = o.Actor, len(keys)
			}
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, setupErr("fetching the actor's SSH keys", err)
		}
	} else {
		g.warnUnlimited()
	}
	if o.ServerHost != "" {
		configFile = filepath.Join(dir, "tmate.conf")
		if err := writeServerConfig(configFile, o); err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
		st.Server = o.ServerHost + ":" + strconv.Itoa(o.ServerPort)
		g.logf("tmate: using the tmate server %s", st.Server)
	}
	st.Continue = newContinueWatch(continueFiles(o.ContinueFiles, o.Workspace))
	for _, f := range st.Continue.Files {
		if mtime, stale := st.Continue.Stale[f]; stale {
			g.logf("tmate: %s already exists (modified %s): it frees the job only once touched again", f, mtime.UTC().Format(time.RFC3339))
		}
	}

	g.ensureClientKey(setupCtx)
	sess := &session{runner: o.Runner, tmate: tmatePath, socket: st.Socket}
	startCtx, cancel := g.untilDeadline(ctx, st.Deadline, queryTimeout)
	err = sess.start(startCtx, configFile, keysFile)
	cancel()
	if err != nil {
		// A failed new-session may still have left a server behind.
		if _, statErr := os.Stat(st.Socket); statErr == nil {
			return st, sess, err
		}
		os.RemoveAll(dir)
		return nil, nil, err
	}
	if err := st.save(o.Out); err != nil {
		return st, sess, err
	}

	readyCtx, cancel := g.untilDeadline(ctx, st.Deadline, readyTimeoutMinutes*o.Minute)
	err = sess.waitReady(readyCtx)
	timedOut := expired(readyCtx)
	cancel()
	if err != nil {
		if timedOut && ctx.Err() == nil {
			return st, sess, fmt.Errorf("tmate did not become ready within %s (can it reach its server?): %w", left(o.Now().Sub(start)), context.DeadlineExceeded)
		}
		return st, sess, err
	}

	queryCtx, cancel := g.untilDeadline(ctx, st.Deadline, queryTimeout)
	defer cancel()
	if st.SSH, err = sess.display(queryCtx, "#{tmate_ssh}"); err == nil && st.SSH == "" {
		err = errors.New("tmate printed no SSH connection string for #{tmate_ssh}")
	}
	if err != nil {
		return st, sess, err
	}
	if !o.LimitActor {
		if st.Web, err = sess.display(queryCtx, "#{tmate_web}"); err != nil {
			return st, sess, err
		}
	}
	if err := st.save(o.Out); err != nil {
		return st, sess, err
	}
	if err := writeText(o.Out, st, time.Time{}, "", "the session is open"); err != nil {
		return st, sess, err
	}
	g.announceStart(st, o.Now())
	return st, sess, nil
}

// wait polls the end conditions until one holds and returns it with a
// sentence saying what was found. It never sleeps past a deadline.
func (g *gate) wait(ctx context.Context, st *state, sess session) (EndReason, string) {
	o := g.o
	nextAnnounce := o.Now().Add(o.AnnounceInterval)
	attached, clients, clientsErr := false, -1, ""
	// countKnown: the last read of the client count succeeded. The connect timeout ends the
	// session only on a count read as 0: an unreadable one is not "nobody attached", and a
	// person may be in the shell it would kill.
	countKnown, toldUnknown := false, false
	for {
		if ctx.Err() != nil {
			return EndSignal, "interrupted: " + context.Cause(ctx).Error()
		}
		if f, ok := st.Continue.triggered(); ok {
			return EndContinueFile, f + " exists"
		}
		now := o.Now()
		if !now.Before(st.Deadline) {
			return EndTimeout, fmt.Sprintf("the %d-minute timeout elapsed", st.TimeoutMinutes)
		}
		queryCtx, cancel := g.untilDeadline(ctx, st.Deadline, queryTimeout)
		ok, why := sess.alive(queryCtx)
		if !ok {
			cancel()
			return EndSessionEnded, why
		}
		if queryCtx.Err() != nil {
			// has-session used up the time left; the next round decides.
			cancel()
			continue
		}
		n, err := sess.numClients(queryCtx)
		queryExpired := queryCtx.Err() != nil
		cancel()
		countKnown = err == nil
		switch {
		case err != nil && !queryExpired && err.Error() != clientsErr:
			clientsErr = err.Error()
			g.logf("tmate: cannot read the number of attached clients: %v", err)
		case err == nil && n != clients:
			if n > 0 || clients > 0 {
				g.logf("tmate: %d client(s) attached", n)
			}
			clients, clientsErr = n, ""
			attached = attached || n > 0
		}
		now = o.Now()
		if !st.ConnectDeadline.IsZero() && !attached && !now.Before(st.ConnectDeadline) {
			if countKnown {
				return EndConnectTimeout, fmt.Sprintf("nobody attached within the %d-minute connect timeout", st.ConnectMinutes)
			}
			if !toldUnknown {
				g.logf("tmate: the %d-minute connect timeout has passed, but whether anyone attached cannot be told (the number of attached clients could not be read): the session stays open until a continue file or the %d-minute timeout (%s)",
					st.ConnectMinutes, st.TimeoutMinutes, st.Deadline.UTC().Format(clockFormat))
				toldUnknown = true
			}
		}
		if !now.Before(nextAnnounce) {
			g.announceTick(st, now, attached, countKnown)
			nextAnnounce = now.Add(o.AnnounceInterval)
		}

		sleep := min(o.PollInterval, st.Deadline.Sub(now), nextAnnounce.Sub(now))
		if !st.ConnectDeadline.IsZero() && !attached && now.Before(st.ConnectDeadline) {
			sleep = min(sleep, st.ConnectDeadline.Sub(now))
		}
		if sleep > 0 {
			t := time.NewTimer(sleep)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
}

// finish kills the session (when kill is set), removes its files and the
// state, and records and prints the end reason.
func (g *gate) finish(st *state, sess session, reason EndReason, detail string, kill bool) {
	o := g.o
	if kill {
		if err := sess.kill(); err != nil {
			if _, statErr := os.Stat(st.Socket); statErr == nil {
				g.logf("tmate: %v", err)
			}
		}
	}
	if st.Dir != "" {
		os.RemoveAll(st.Dir)
	}
	if err := removeState(o.Out); err != nil {
		g.logf("tmate: %v", err)
	}
	ended := o.Now()
	if err := writeText(o.Out, st, ended, reason, detail); err != nil {
		g.logf("tmate: %v", err)
	}
	g.logf("tmate gate ended: %s: %s (after %s)", reason, detail, left(ended.Sub(st.StartedAt)))
	g.summary(fmt.Sprintf("tmate session ended after %s: **%s** (%s).\n", left(ended.Sub(st.StartedAt)), reason, detail))
	g.output(reason)
}

// endUnopened records and prints the end of a gate that ended before any session was open:
// there is nothing to kill, and tmate.txt has no ssh command.
func (g *gate) endUnopened(started time.Time, reason EndReason, detail string) {
	ended := g.o.Now()
	if err := writeUnopenedText(g.o.Out, started, ended, reason, detail); err != nil {
		g.logf("tmate: %v", err)
	}
	g.logf("tmate gate ended: %s: %s (after %s)", reason, detail, left(ended.Sub(started)))
	g.summary(fmt.Sprintf("tmate gate ended before a session was open: **%s** (%s).\n", reason, detail))
	g.output(reason)
}

// EndOnBadFlags records the end of a gate whose flags or arguments were refused before it ran
// (the command exits 2): the log line, the step summary and the end_reason output bad-input,
// as a gate that refuses its input records them. tmate.txt is not written: a flag error stops
// the parsing, so --out is not known. action and stdout are the command's.
func EndOnBadFlags(action *githubactions.Action, stdout io.Writer, err error) {
	g := &gate{o: Options{Action: action, Stdout: stdout}}
	g.logf("tmate gate ended: %s: %v (before it ran)", EndBadInput, err)
	g.summary(fmt.Sprintf("tmate gate ended before a session was open: **%s** (%v).\n", EndBadInput, err))
	g.output(EndBadInput)
}

// untilDeadline derives a context that ends at the first of limit from now
// and deadline, so that no tmate call outlives the gate's timeout. The
// deadline is counted with the injected clock: besides the timer set from
// it now, the clock is read every PollInterval, so a clock that jumps past
// the deadline (a test's, or a VM's after a suspend) ends the call at the
// next poll. Either way context.Cause is context.DeadlineExceeded.
func (g *gate) untilDeadline(ctx context.Context, deadline time.Time, limit time.Duration) (context.Context, context.CancelFunc) {
	d := min(limit, deadline.Sub(g.o.Now()))
	if d < 0 {
		d = 0
	}
	timed, cancelTimer := context.WithTimeout(ctx, d)
	clocked, cancel := context.WithCancelCause(timed)
	go func() {
		t := time.NewTicker(g.o.PollInterval)
		defer t.Stop()
		for {
			select {
			case <-clocked.Done():
				return
			case <-t.C:
				if !g.o.Now().Before(deadline) {
					cancel(context.DeadlineExceeded)
					return
				}
			}
		}
	}()
	return clocked, func() { cancel(context.Canceled); cancelTimer() }
}

// expired reports whether a context from untilDeadline ended at its deadline or limit.
func expired(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), context.DeadlineExceeded)
}

// sessionDir creates the private directory for the socket, the authorized
// keys and the server config. It lives outside the artifact directory (a
// socket must not be uploaded) and under RUNNER_TEMP when possible, which the
// runner empties after the job; then TMPDIR, then /tmp: the first that is set
// and short enough for the socket path (sun_path is 108 bytes).
func (g *gate) sessionDir() (string, error) {
	base := sessionBase(g.o.Getenv)
	if rt := g.o.Getenv("RUNNER_TEMP"); rt != "" && base != rt {
		g.logf("tmate: RUNNER_TEMP (%s) is too long for tmate's socket path: the session directory goes to %s", rt, base)
	}
	dir, err := os.MkdirTemp(base, "debugflow-tmate-")
	if err != nil {
		return "", fmt.Errorf("creating the tmate session directory: %w", err)
	}
	return dir, nil
}

// sessionBase is where sessionDir creates its directory: RUNNER_TEMP, TMPDIR or /tmp, the
// first that is set and leaves room for the directory and socket names under maxSocketPath.
func sessionBase(getenv func(string) string) string {
	for _, base := range []string{getenv("RUNNER_TEMP"), getenv("TMPDIR")} {
		if base != "" && len(base) <= maxSocketPath-40 {
			return base
		}
	}
	return "/tmp"
}

func (g *gate) logf(format string, args ...any) {
	fmt.Fprintf(g.o.Stdout, format+"\n", args...)
}

// summary appends Markdown to the step summary when the runner provides one.
// go-githubactions panics when the file cannot be written; the gate must not.
func (g *gate) summary(markdown string) {
	if g.o.Action.Getenv("GITHUB_STEP_SUMMARY") == "" {
		return
	}
	defer g.recoverFileCommand("step summary")
	g.o.Action.AddStepSummary(markdown)
}

// output sets the step output end_reason when the runner provides outputs.
func (g *gate) output(reason EndReason) {
	if g.o.Action.Getenv("GITHUB_OUTPUT") == "" {
		return
	}
	defer g.recoverFileCommand("step output")
	g.o.Action.SetOutput("end_reason", string(reason))
}

func (g *gate) recoverFileCommand(what string) {
	if r := recover(); r != nil {
		g.logf("tmate: cannot write the %s: %v", what, r)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

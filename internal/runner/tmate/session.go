package tmate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// killTimeout bounds kill-session, which also runs after a signal when the
// gate's own context is already cancelled.
const killTimeout = 5 * time.Second

// session is one tmate server reached through its socket (-S), so that the
// gate never touches another tmate the user may run.
type session struct {
	runner CommandRunner
	tmate  string
	socket string
}

// run runs a tmate command on this socket; -S comes first because tmate's
// global flags precede the command.
func (s session) run(ctx context.Context, args ...string) (string, error) {
	return output(ctx, s.runner, s.tmate, append([]string{"-S", s.socket}, args...)...)
}

// start runs `tmate -S sock [-f conf] [-a keys] new-session -d`.
func (s session) start(ctx context.Context, configFile, authorizedKeys string) error {
	var args []string
	if configFile != "" {
		args = append(args, "-f", configFile)
	}
	if authorizedKeys != "" {
		args = append(args, "-a", authorizedKeys)
	}
	args = append(args, "new-session", "-d")
	if _, err := s.run(ctx, args...); err != nil {
		return fmt.Errorf("starting the tmate session: %w", err)
	}
	return nil
}

// waitReady blocks in `tmate wait tmate-ready` until the session has
// registered with its server (and so has connection strings) or ctx ends.
func (s session) waitReady(ctx context.Context) error {
	if _, err := s.run(ctx, "wait", "tmate-ready"); err != nil {
		return fmt.Errorf("waiting for the tmate session to be ready: %w", err)
	}
	return nil
}

// display evaluates a tmate format such as #{tmate_ssh}.
func (s session) display(ctx context.Context, format string) (string, error) {
	out, err := s.run(ctx, "display", "-p", format)
	if err != nil {
		return "", fmt.Errorf("reading %s from tmate: %w", format, err)
	}
	return out, nil
}

// numClients returns #{tmate_num_clients}, the number of attached clients.
func (s session) numClients(ctx context.Context) (int, error) {
	out, err := s.display(ctx, "#{tmate_num_clients}")
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(out)
	if err != nil {
		return 0, fmt.Errorf("tmate printed %q for #{tmate_num_clients}, not a number", out)
	}
	return n, nil
}

// alive reports whether the session still exists: its socket is there and
// has-session succeeds. why says what was found when it is not. A has-session
// cut short by ctx is not evidence that the session ended.
func (s session) alive(ctx context.Context) (ok bool, why string) {
	if _, err := os.Stat(s.socket); errors.Is(err, fs.ErrNotExist) {
		return false, "the tmate socket " + s.socket + " is gone"
	}
	if _, err := s.run(ctx, "has-session"); err != nil {
		if ctx.Err() != nil {
			return true, ""
		}
		return false, "tmate has-session failed: " + err.Error()
	}
	return true, ""
}

// kill ends the session. It uses its own short context because it also runs
// after the gate's context was cancelled by a signal.
func (s session) kill() error {
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	if _, err := s.run(ctx, "kill-session"); err != nil {
		return fmt.Errorf("killing the tmate session: %w", err)
	}
	return nil
}

package tmate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/testenv"
)

// TestGateEndConditions drives a blocking gate against the tmate double and
// ends it once with each condition.
func TestGateEndConditions(t *testing.T) {
	tests := []struct {
		name string
		// end makes the condition hold once the session is ready.
		end        func(t *testing.T, h *harness, st *state)
		want       EndReason
		wantDetail string
		killed     bool // kill-session must be called
	}{
		{
			name:       "configured continue file",
			end:        func(t *testing.T, h *harness, _ *state) { touch(t, h.cont) },
			want:       EndContinueFile,
			wantDetail: "continue exists",
			killed:     true,
		},
		{
			name:       "root continue file",
			end:        func(t *testing.T, _ *harness, _ *state) { touch(t, rootContinueFile) },
			want:       EndContinueFile,
			wantDetail: "rootfs-continue exists",
			killed:     true,
		},
		{
			name:       "workspace continue file",
			end:        func(t *testing.T, h *harness, _ *state) { touch(t, filepath.Join(h.workspace, "continue")) },
			want:       EndContinueFile,
			wantDetail: filepath.Join("ws", "continue") + " exists",
			killed:     true,
		},
		{
			name: "socket gone",
			end: func(t *testing.T, _ *harness, st *state) {
				if err := os.Remove(st.Socket); err != nil {
					t.Fatal(err)
				}
			},
			want:       EndSessionEnded,
			wantDetail: "socket",
		},
		{
			name:       "has-session fails",
			end:        func(t *testing.T, _ *harness, st *state) { touch(t, st.Socket+".ended") },
			want:       EndSessionEnded,
			wantDetail: "has-session failed",
		},
		{
			name:       "timeout",
			end:        func(*testing.T, *harness, *state) {},
			want:       EndTimeout,
			wantDetail: "8-minute timeout elapsed",
			killed:     true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			o := h.options()
			if tc.want == EndTimeout {
				o.TimeoutMinutes = "8" // 800 ms
			}
			ch := h.start(context.Background(), o)
			var st *state
			if tc.want != EndTimeout { // the timeout may end the gate before ready() sees it
				st = h.ready()
				tc.end(t, h, st)
			}
			r := h.wait(ch)
			if st == nil {
				st = &state{Socket: h.socket(), SSH: "ssh D"}
				st.Dir = filepath.Dir(st.Socket)
			}
			if r.err != nil {
				t.Fatalf("Run error: %v\n%s", r.err, h.stdout.String())
			}
			if r.reason != tc.want {
				t.Fatalf("reason = %q, want %q\n%s", r.reason, tc.want, h.stdout.String())
			}
			out := h.stdout.String()
			if !strings.Contains(out, "tmate gate ended: "+string(tc.want)+": ") || !strings.Contains(out, tc.wantDetail) {
				t.Errorf("stdout does not say what ended the gate (%s, %q):\n%s", tc.want, tc.wantDetail, out)
			}
			if got := h.called("kill-session"); got != tc.killed {
				t.Errorf("kill-session called = %v, want %v; calls: %q", got, tc.killed, h.commands())
			}
			if exists(st.Socket) && tc.want != EndSessionEnded {
				t.Errorf("socket %s still exists after the gate ended", st.Socket)
			}
			if exists(st.Dir) {
				t.Errorf("session directory %s was not removed", st.Dir)
			}
			if exists(filepath.Join(h.out, StateFile)) {
				t.Errorf("%s left behind after the session ended", StateFile)
			}
			text := readFile(t, filepath.Join(h.out, TextFile))
			for _, want := range []string{"ssh: " + st.SSH, "end_reason: " + string(tc.want), "end_detail: ", "ended: "} {
				if !strings.Contains(text, want) {
					t.Errorf("%s lacks %q:\n%s", TextFile, want, text)
				}
			}
		})
	}
}

// TestGateTimeoutIsPrompt checks that the gate never waits past its timeout
// by more than 2 s, even with a poll interval far longer than the timeout
// and even when tmate hangs.
func TestGateTimeoutIsPrompt(t *testing.T) {
	tests := []struct {
		name      string
		poll      time.Duration
		doubleEnv []string
	}{
		{"long poll interval", time.Hour, nil},
		{"has-session hangs", 5 * time.Millisecond, []string{"TMATE_DOUBLE_HANG=has-session"}},
		{"display hangs", 5 * time.Millisecond, []string{"TMATE_DOUBLE_HANG=display"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			o := h.options()
			o.TimeoutMinutes = "8" // 800 ms
			o.PollInterval = tc.poll
			timeout := 8 * o.Minute
			h.doubleEnv = tc.doubleEnv
			begin := time.Now()
			r := h.wait(h.start(context.Background(), o))
			elapsed := time.Since(begin)
			// A hanging display (used to read the SSH command) makes the
			// timeout strike while the session is set up: still a timeout.
			if r.reason != EndTimeout || (r.err != nil && !strings.Contains(r.err.Error(), "timeout elapsed before the tmate session was usable")) {
				t.Fatalf("Run = %q, %v; want timeout\n%s", r.reason, r.err, h.stdout.String())
			}
			if exists(h.socket()) {
				t.Error("the session was not killed")
			}
			if elapsed < timeout {
				t.Errorf("gate ended after %v, before its %v timeout", elapsed, timeout)
			}
			if elapsed > timeout+2*time.Second {
				t.Errorf("gate ended %v after its %v timeout (limit 2 s)", elapsed-timeout, timeout)
			}
		})
	}
}

func TestGateConnectTimeout(t *testing.T) {
	t.Run("nobody attaches", func(t *testing.T) {
		h := newHarness(t)
		o := h.options()
		o.ConnectTimeoutMinutes = "2" // 200 ms
		r := h.wait(h.start(context.Background(), o))
		if r.err != nil || r.reason != EndConnectTimeout {
			t.Fatalf("Run = %q, %v; want connect-timeout\n%s", r.reason, r.err, h.stdout.String())
		}
		if r.elapsed > 2*time.Second {
			t.Errorf("connect timeout of 200 ms took %v", r.elapsed)
		}
		if !h.called("kill-session") {
			t.Errorf("session not killed; calls %q", h.commands())
		}
		if !strings.Contains(h.stdout.String(), "nobody attached within the 2-minute connect timeout") {
			t.Errorf("stdout does not explain the connect timeout:\n%s", h.stdout.String())
		}
	})
	t.Run("a client attached", func(t *testing.T) {
		h := newHarness(t)
		o := h.options()
		o.ConnectTimeoutMinutes = "10" // 1 s
		ch := h.start(context.Background(), o)
		st := h.ready()
		if err := os.WriteFile(st.Socket+".clients", []byte("1"), 0o600); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return strings.Contains(h.stdout.String(), "1 client(s) attached") })
		// The client leaves again: the connect timeout stays disarmed.
		if err := os.WriteFile(st.Socket+".clients", []byte("0"), 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(st.ConnectDeadline) + 100*time.Millisecond) // past the connect deadline
		touch(t, h.cont)
		r := h.wait(ch)
		if r.err != nil || r.reason != EndContinueFile {
			t.Fatalf("Run = %q, %v; want continue-file (the connect timeout must not fire once someone attached)\n%s", r.reason, r.err, h.stdout.String())
		}
	})
	// tmate_num_clients unreadable: "nobody attached" is not known, and killing a shell
	// someone may be using on that guess is worse than waiting out the timeout.
	t.Run("the client count cannot be read", func(t *testing.T) {
		h := newHarness(t)
		h.doubleEnv = []string{"TMATE_DOUBLE_CLIENTS=?"}
		o := h.options()
		o.TimeoutMinutes = "8"        // 800 ms
		o.ConnectTimeoutMinutes = "1" // 100 ms
		o.AnnounceInterval = 300 * time.Millisecond
		r := h.wait(h.start(context.Background(), o))
		out := h.stdout.String()
		if r.err != nil || r.reason != EndTimeout {
			t.Fatalf("Run = %q, %v; want timeout (the connect timeout cannot tell nobody attached)\n%s", r.reason, r.err, out)
		}
		if strings.Contains(out, "nobody attached") {
			t.Errorf("the gate says nobody attached, which it could not read:\n%s", out)
		}
		if !strings.Contains(out, "whether anyone attached cannot be told") {
			t.Errorf("the gate does not say why the connect timeout did not end the session:\n%s", out)
		}
	})
	t.Run("attached from the start", func(t *testing.T) {
		h := newHarness(t)
		h.doubleEnv = []string{"TMATE_DOUBLE_CLIENTS=1"}
		o := h.options()
		o.TimeoutMinutes = "15"       // 1.5 s
		o.ConnectTimeoutMinutes = "1" // 100 ms
		r := h.wait(h.start(context.Background(), o))
		if r.err != nil || r.reason != EndTimeout {
			t.Fatalf("Run = %q, %v; want timeout\n%s", r.reason, r.err, h.stdout.String())
		}
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestGateCancelKillsSession(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := h.start(ctx, h.options())
	st := h.ready()
	cancel()
	r := h.wait(ch)
	if r.err != nil || r.reason != EndSignal {
		t.Fatalf("Run = %q, %v; want signal", r.reason, r.err)
	}
	if !h.called("kill-session") || exists(st.Socket) {
		t.Errorf("session not killed: calls %q, socket exists %v", h.commands(), exists(st.Socket))
	}
}

func TestGateStaleContinueFile(t *testing.T) {
	h := newHarness(t)
	touch(t, h.cont)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(h.cont, old, old); err != nil {
		t.Fatal(err)
	}
	o := h.options()
	ch := h.start(context.Background(), o)
	h.ready()
	time.Sleep(50 * time.Millisecond) // ten polls: the stale file must not end the gate
	select {
	case r := <-ch:
		t.Fatalf("gate ended on a stale continue file: %q %v\n%s", r.reason, r.err, h.stdout.String())
	default:
	}
	if !strings.Contains(h.stdout.String(), "already exists") {
		t.Errorf("stdout does not mention the stale continue file:\n%s", h.stdout.String())
	}
	now := time.Now()
	if err := os.Chtimes(h.cont, now, now); err != nil { // touch it again
		t.Fatal(err)
	}
	r := h.wait(ch)
	if r.reason != EndContinueFile {
		t.Fatalf("reason = %q after touching the continue file, want continue-file", r.reason)
	}
}

func TestGateAnnouncements(t *testing.T) {
	for _, limit := range []bool{false, true} {
		name := map[bool]string{false: "anyone", true: "actor only"}[limit]
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			summary := filepath.Join(t.TempDir(), "summary.md")
			outputs := filepath.Join(t.TempDir(), "outputs")
			h.env["GITHUB_STEP_SUMMARY"] = summary
			h.env["GITHUB_OUTPUT"] = outputs
			o := h.options()
			o.AnnounceInterval = 20 * time.Millisecond
			if limit {
				api := newFakeAPI(t)
				o.LimitActor, o.Actor, o.APIURL, o.Token = true, "octocat", api.URL, "tok-secret"
			}
			ch := h.start(context.Background(), o)
			h.ready()
			waitFor(t, func() bool { return strings.Count(h.stdout.String(), "left (ends ") >= 3 })
			touch(t, h.cont)
			r := h.wait(ch)
			if r.err != nil || r.reason != EndContinueFile {
				t.Fatalf("Run = %q, %v", r.reason, r.err)
			}
			out := h.stdout.String()
			ssh := "ssh D"
			hint := "touch " + h.cont
			if n := strings.Count(out, "::notice title=tmate session::"+ssh); n != 1 {
				t.Errorf("want exactly one SSH notice, got %d:\n%s", n, out)
			}
			if n := strings.Count(out, "left (ends "); n < 3 {
				t.Errorf("want the SSH line repeated with the time left at least 3 times, got %d:\n%s", n, out)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, ssh) && !strings.Contains(line, hint) {
					t.Errorf("announcement without %q: %s", hint, line)
				}
			}
			hasWeb := strings.Contains(out, "https://nyc1.tmate.double/t/")
			if hasWeb == limit {
				t.Errorf("web URL shown = %v with limit %v:\n%s", hasWeb, limit, out)
			}
			hasWarning := strings.Contains(out, "::warning title=tmate access not limited::")
			if hasWarning == limit {
				t.Errorf("not-limited warning = %v with limit %v:\n%s", hasWarning, limit, out)
			}
			if strings.Contains(out, "tok-secret") || strings.Contains(readFile(t, summary), "tok-secret") {
				t.Error("the token was printed")
			}
			sum := readFile(t, summary)
			for _, want := range []string{"### tmate session", "Connect: `" + ssh, "`" + hint + "`", "**continue-file**"} {
				if !strings.Contains(sum, want) {
					t.Errorf("step summary lacks %q:\n%s", want, sum)
				}
			}
			if got := readFile(t, outputs); !strings.Contains(got, "end_reason<<") || !strings.Contains(got, "\ncontinue-file\n") {
				t.Errorf("outputs file lacks end_reason=continue-file:\n%s", got)
			}
			// Access control reached tmate: -a with the actor's keys, or no -a.
			var newSession call
			for _, c := range h.calls() {
				if strings.Contains(c.String(), "new-session -d") {
					newSession = c
				}
			}
			keys, hasKeys := newSession.Files["-a"]
			if hasKeys != limit {
				t.Fatalf("new-session -a given = %v with limit %v: %q", hasKeys, limit, newSession.Argv)
			}
			if limit && !strings.Contains(keys, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOcto1 github:octocat") {
				t.Errorf("authorized keys passed to tmate:\n%s", keys)
			}
		})
	}
}

func TestGateSelfHostedServer(t *testing.T) {
	h := newHarness(t)
	o := h.options()
	o.ServerHost, o.ServerPort = "tmate.example.com", 2222
	o.ServerED25519Fingerprint = "SHA256:jfttvoypkHiQYUqUCwKeqd9d1fJj/ZiQlFOHVl6E9sI"
	ch := h.start(context.Background(), o)
	st := h.ready()
	touch(t, h.cont)
	if r := h.wait(ch); r.err != nil {
		t.Fatal(r.err)
	}
	if want := "ssh -p2222 "; !strings.HasPrefix(st.SSH, want) || !strings.HasSuffix(st.SSH, "@tmate.example.com") {
		t.Errorf("SSH command %q does not use the self-hosted server", st.SSH)
	}
	var conf string
	for _, c := range h.calls() {
		if strings.Contains(c.String(), "new-session") {
			conf = c.Files["-f"]
			if c.Argv[0] != "-f" {
				t.Errorf("new-session argv %q: -f must come before the command", c.Argv)
			}
		}
	}
	for _, want := range []string{
		`set -g tmate-server-host "tmate.example.com"`,
		`set -g tmate-server-port 2222`,
		`set -g tmate-server-ed25519-fingerprint "SHA256:jfttvoypkHiQYUqUCwKeqd9d1fJj/ZiQlFOHVl6E9sI"`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("config passed with -f lacks %q:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "rsa-fingerprint") {
		t.Errorf("config sets an RSA fingerprint that was not given:\n%s", conf)
	}
}

func TestGateDetachThenWait(t *testing.T) {
	h := newHarness(t)
	o := h.options()
	o.Detach = true
	o.TimeoutMinutes = "8" // 800 ms from the detach start
	begin := time.Now()
	reason, err := Run(context.Background(), o)
	if err != nil || reason != EndDetached {
		t.Fatalf("detach: Run = %q, %v", reason, err)
	}
	st, note := loadState(h.out, h.getenv)
	if st == nil {
		t.Fatalf("no state after --detach: %s", note)
	}
	if !exists(st.Socket) || h.called("kill-session") {
		t.Fatalf("--detach must leave the session open: socket %v, calls %q", exists(st.Socket), h.commands())
	}
	if text := readFile(t, filepath.Join(h.out, TextFile)); !strings.Contains(text, "end_reason: detached") {
		t.Errorf("%s after --detach:\n%s", TextFile, text)
	}

	// The reproducer runs here (as long as it likes: the session's time is not spent).
	time.Sleep(600 * time.Millisecond)

	o = h.options()
	o.Wait = true
	o.TimeoutMinutes = "50" // ignored: the session's own timeout, recorded at its start, wins
	waitStart := time.Now()
	reason, err = Run(context.Background(), o)
	elapsed := time.Since(waitStart)
	if err != nil || reason != EndTimeout {
		t.Fatalf("wait: Run = %q, %v\n%s", reason, err, h.stdout.String())
	}
	// Counted from the --wait (after the upload), not from the session start before the
	// reproducer: 800 ms, not the 200 ms the sweep left of them.
	if elapsed < 800*time.Millisecond || elapsed > 800*time.Millisecond+2*time.Second {
		t.Errorf("--wait ended %v after it started (%v after the session start), want 800 ms (+2 s at most)", elapsed, time.Since(begin))
	}
	if n := strings.Count(h.stdout.String(), "::notice title=tmate session::"); n != 2 {
		t.Errorf("want the session announced by --detach and again by --wait, got %d notices", n)
	}
	if exists(st.Socket) || exists(filepath.Join(h.out, StateFile)) || exists(st.Dir) {
		t.Error("--wait left the session, its folder or its state behind")
	}
	if filepath.Dir(st.Dir) != h.runnerTmp {
		t.Errorf("session folder %s, want one in RUNNER_TEMP %s", st.Dir, h.runnerTmp)
	}
	if n := strings.Count(strings.Join(h.commands(), "\n"), "new-session"); n != 1 {
		t.Errorf("--wait started a second session (%d new-session calls)", n)
	}
}

// TestSessionBase: the session folder goes to RUNNER_TEMP (emptied by the runner after the
// job), else TMPDIR, else /tmp, skipping any too long for tmate's socket path.
func TestSessionBase(t *testing.T) {
	long := "/" + strings.Repeat("x", maxSocketPath)
	tests := []struct {
		name, runnerTemp, tmpdir, want string
	}{
		{"runner temp", "/home/runner/work/_temp", "/var/tmp", "/home/runner/work/_temp"},
		{"no runner temp", "", "/var/tmp", "/var/tmp"},
		{"runner temp too long", long, "/var/tmp", "/var/tmp"},
		{"both too long", long, long, "/tmp"},
		{"neither", "", "", "/tmp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"RUNNER_TEMP": tt.runnerTemp, "TMPDIR": tt.tmpdir}
			if got := sessionBase(func(k string) string { return env[k] }); got != tt.want {
				t.Errorf("sessionBase = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestGateLongRunnerTemp: with a RUNNER_TEMP too long for the socket the gate says so, puts
// its folder in TMPDIR and removes it at the end (it once went to /tmp and stayed there).
func TestGateLongRunnerTemp(t *testing.T) {
	h := newHarness(t)
	long := filepath.Join(h.runnerTmp, strings.Repeat("r", maxSocketPath))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	tmpdir := testenv.ShortTempDir(t)
	h.env["RUNNER_TEMP"], h.env["TMPDIR"] = long, tmpdir
	ch := h.start(context.Background(), h.options())
	h.ready()
	entries, err := os.ReadDir(tmpdir)
	if err != nil || len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "debugflow-tmate-") {
		t.Fatalf("TMPDIR holds %v (%v), want the session folder", entries, err)
	}
	touch(t, h.cont)
	if r := h.wait(ch); r.err != nil || r.reason != EndContinueFile {
		t.Fatalf("Run = %q, %v", r.reason, r.err)
	}
	if !strings.Contains(h.stdout.String(), "RUNNER_TEMP ("+long+") is too long for tmate's socket path") {
		t.Errorf("no note on the long RUNNER_TEMP:\n%s", h.stdout.String())
	}
	if entries, _ := os.ReadDir(tmpdir); len(entries) != 0 {
		t.Errorf("TMPDIR still holds %v after the gate ended", entries)
	}
}

func TestGateWaitContinueTouchedDuringReproducer(t *testing.T) {
	h := newHarness(t)
	o := h.options()
	o.Detach = true
	if reason, err := Run(context.Background(), o); err != nil || reason != EndDetached {
		t.Fatalf("detach: %q %v", reason, err)
	}
	touch(t, filepath.Join(h.workspace, "continue")) // touched while the reproducer ran
	o.Detach, o.Wait = false, true
	reason, err := Run(context.Background(), o)
	if err != nil || reason != EndContinueFile {
		t.Fatalf("wait: Run = %q, %v; want continue-file", reason, err)
	}
}

func TestGateWaitWithoutState(t *testing.T) {
	tests := []struct {
		name  string
		state func(t *testing.T, h *harness)
		note  string
	}{
		{"no state file", func(*testing.T, *harness) {}, "no tmate session state"},
		{"corrupt state", func(t *testing.T, h *harness) {
			touch(t, filepath.Join(h.out, StateFile))
		}, "ignoring"},
		{"state of another run", func(t *testing.T, h *harness) {
			o := h.options()
			o.Detach = true
			h.env["GITHUB_RUN_ID"] = "41"
			if _, err := Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			h.env["GITHUB_RUN_ID"] = "42"
			h.stdout = &syncBuffer{} // forget the detached session's announcement
		}, "left by run 41"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if err := os.MkdirAll(h.out, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.state(t, h)
			before := strings.Count(strings.Join(h.commands(), "\n"), "new-session")
			o := h.options()
			o.Wait = true
			ch := h.start(context.Background(), o)
			h.ready()
			touch(t, h.cont)
			r := h.wait(ch)
			if r.err != nil || r.reason != EndContinueFile {
				t.Fatalf("Run = %q, %v", r.reason, r.err)
			}
			if after := strings.Count(strings.Join(h.commands(), "\n"), "new-session"); after != before+1 {
				t.Errorf("--wait without usable state must start its own session (new-session calls %d -> %d)", before, after)
			}
			if !strings.Contains(h.stdout.String(), tc.note) {
				t.Errorf("stdout lacks %q:\n%s", tc.note, h.stdout.String())
			}
		})
	}
}

// TestGateStartFailures checks the three ways a session can fail to start. Time is the
// injected clock's alone: the gate counts minutes of real length, so none of its timers can
// fire during the test, and the clock stands still unless the test moves it. A failure that
// ends the gate with the clock unmoved did not wait for any deadline; the session that never
// becomes ready ends exactly when the clock reaches its 2-minute timeout, which the test
// does only once the tmate double is blocked in `wait tmate-ready` (the readiness signal is
// its call log). No assertion depends on how fast this machine is.
func TestGateStartFailures(t *testing.T) {
	tests := []struct {
		name      string
		doubleEnv []string
		wantErr   string
		reason    EndReason
		// jumpAt: once the double runs this command, the clock jumps to the gate's deadline.
		jumpAt string
	}{
		{"new-session fails", []string{"TMATE_DOUBLE_FAIL=new-session"}, "starting the tmate session", "", ""},
		{"never ready", []string{"TMATE_DOUBLE_READY=never"}, "tmate did not become ready within 2m0s", EndTimeout, "wait tmate-ready"},
		{"wait fails", []string{"TMATE_DOUBLE_FAIL=wait"}, "waiting for the tmate session to be ready", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.doubleEnv = tc.doubleEnv
			o := h.options()
			o.Minute = time.Minute
			o.TimeoutMinutes = "2"
			base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
			var jumped atomic.Bool
			o.Now = func() time.Time {
				if jumped.Load() {
					return base.Add(2 * time.Minute)
				}
				return base
			}
			ch := h.start(context.Background(), o)
			if tc.jumpAt != "" {
				h.waitForCall(tc.jumpAt, ch)
				jumped.Store(true)
			}
			r := h.wait(ch)
			if r.err == nil || !strings.Contains(r.err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", r.err, tc.wantErr)
			}
			if errors.Is(r.err, ErrInvalidInput) {
				t.Errorf("a tmate failure is not an input error: %v", r.err)
			}
			if r.reason != tc.reason {
				t.Errorf("reason = %q, want %q", r.reason, tc.reason)
			}
			if tc.reason == EndTimeout && !strings.Contains(h.stdout.String(), "tmate gate ended: timeout: ") ||
				tc.reason == EndTimeout && !strings.Contains(h.stdout.String(), "(after 2m0s)") {
				t.Errorf("the gate does not say it ended at its 2-minute timeout:\n%s", h.stdout.String())
			}
			entries, _ := os.ReadDir(h.runnerTmp)
			if len(entries) != 0 {
				t.Errorf("session directory left in RUNNER_TEMP: %v", entries)
			}
		})
	}
}

// waitForCall returns once the tmate double logged a call containing sub; it fails the test
// when the gate ends first, or (a hang) after 10 s.
func (h *harness) waitForCall(sub string, gate <-chan result) {
	h.t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	hang := time.After(10 * time.Second)
	for !h.called(sub) {
		select {
		case r := <-gate:
			h.t.Fatalf("the gate ended (%q, %v) before tmate ran %q", r.reason, r.err, sub)
		case <-hang:
			h.t.Fatalf("tmate never ran %q; calls: %q", sub, h.commands())
		case <-tick.C:
		}
	}
}

func TestGateNoKeysStartsNothing(t *testing.T) {
	h := newHarness(t)
	api := newFakeAPI(t)
	o := h.options()
	o.LimitActor, o.Actor, o.APIURL = true, "nokeys", api.URL
	_, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), `GitHub user "nokeys" has no public SSH keys: add one at`) {
		t.Fatalf("err = %v", err)
	}
	if h.called("new-session") {
		t.Error("a session was started although access could not be limited")
	}
	if entries, _ := os.ReadDir(h.runnerTmp); len(entries) != 0 {
		t.Errorf("session directory left in RUNNER_TEMP: %v", entries)
	}
}

// TestGateFailsBeforeASession: a gate that fails before any session was open (tmate missing, the
// actor's keys not fetched, new-session failing) still records why, in tmate.txt and the
// end_reason output: a later step reading end_reason gets no-session, not "".
func TestGateFailsBeforeASession(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, h *harness, o *Options)
		wantErr string
	}{
		{"tmate missing", func(t *testing.T, h *harness, o *Options) {
			o.TmatePath = filepath.Join(t.TempDir(), "tmate")
		}, "tmate binary "},
		{"no keys", func(t *testing.T, h *harness, o *Options) {
			o.LimitActor, o.Actor, o.APIURL = true, "nokeys", newFakeAPI(t).URL
		}, `GitHub user "nokeys" has no public SSH keys`},
		{"new-session fails", func(t *testing.T, h *harness, o *Options) {
			h.doubleEnv = []string{"TMATE_DOUBLE_FAIL=new-session"}
		}, "starting the tmate session"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			outputs := filepath.Join(t.TempDir(), "outputs")
			h.env["GITHUB_OUTPUT"] = outputs
			o := h.options()
			tc.setup(t, h, &o)
			_, err := Run(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
			assertEndedWithoutSession(t, h, outputs, h.out, "no-session", tc.wantErr)
		})
	}
}

// TestGateBadInputRecordsEndReason: a gate that ends on bad input (exit 2: a flag or spec
// value, the actor) records why, as a gate that fails before a session does: end_reason
// bad-input in tmate.txt and the output. A validation error wrote nothing, and an actor the
// keys cannot be fetched for recorded no-session, which the docs give for exit 1.
func TestGateBadInputRecordsEndReason(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(o *Options)
		wantErr string
	}{
		{"timeout not a number", func(o *Options) { o.TimeoutMinutes = "abc" }, `--timeout-minutes "abc" is not a whole number of minutes`},
		{"detach and wait", func(o *Options) { o.Detach, o.Wait = true, true }, "--detach and --wait exclude each other"},
		{"the actor is a bot", func(o *Options) { o.LimitActor, o.Actor = true, "dependabot[bot]" }, `the run was started by the bot "dependabot[bot]"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			outputs := filepath.Join(t.TempDir(), "outputs")
			h.env["GITHUB_OUTPUT"] = outputs
			o := h.options()
			o.Out = filepath.Join(t.TempDir(), "not-yet") // created for tmate.txt
			tc.setup(&o)
			_, err := Run(context.Background(), o)
			if err == nil || !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want an input error containing %q", err, tc.wantErr)
			}
			if h.called("new-session") {
				t.Error("a session was started on bad input")
			}
			assertEndedWithoutSession(t, h, outputs, o.Out, "bad-input", err.Error())
		})
	}
}

// assertEndedWithoutSession checks what a gate that ended before any session opened records:
// end_reason in the step outputs, tmate.txt in out (no ssh line, the reason and its detail),
// and the log line. Missing files read as "", so that each check says what is missing.
func assertEndedWithoutSession(t *testing.T, h *harness, outputs, out, reason, detail string) {
	t.Helper()
	readFileQuiet := func(path string) string {
		b, _ := os.ReadFile(path)
		return string(b)
	}
	if got := readFileQuiet(outputs); !strings.Contains(got, "end_reason<<") || !strings.Contains(got, "\n"+reason+"\n") {
		t.Errorf("outputs file lacks end_reason=%s:\n%s", reason, got)
	}
	text := readFileQuiet(filepath.Join(out, TextFile))
	for _, want := range []string{"ssh: (none: no session was opened)\n", "end_reason: " + reason + "\n", "end_detail: " + detail} {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", TextFile, want, text)
		}
	}
	if !strings.Contains(h.stdout.String(), "tmate gate ended: "+reason+": ") {
		t.Errorf("the log does not say the gate ended:\n%s", h.stdout.String())
	}
}

// TestGateFakeClock shows that every deadline is counted with the injected
// clock: once the clock jumps two hours, a 60-minute gate ends at the next
// poll, and tmate.txt records the clock's times.
func TestGateFakeClock(t *testing.T) {
	h := newHarness(t)
	o := h.options()
	o.Minute = time.Minute
	o.TimeoutMinutes = "60"
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	var jumped atomic.Bool
	o.Now = func() time.Time {
		if jumped.Load() {
			return base.Add(2 * time.Hour)
		}
		return base
	}
	ch := h.start(context.Background(), o)
	h.ready()
	jumped.Store(true)
	r := h.wait(ch)
	if r.err != nil || r.reason != EndTimeout {
		t.Fatalf("Run = %q, %v", r.reason, r.err)
	}
	text := readFile(t, filepath.Join(h.out, TextFile))
	for _, want := range []string{"deadline: 2024-05-01T13:00:00Z (timeout 60 min)", "ended: 2024-05-01T14:00:00Z (after 2h0m0s)"} {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", TextFile, want, text)
		}
	}
}

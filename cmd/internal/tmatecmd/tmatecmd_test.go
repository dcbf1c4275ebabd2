package tmatecmd

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/cmd/internal/lazyflags"
	"github.com/debugflow/debugflow/internal/runner/tmate"
)

func execute(t *testing.T, runF func(*tmate.Options) error, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	f := &factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &out}, Getenv: func(k string) string { return "" }}
	cmd := NewCmdGate(f, runF)
	lazyflags.Bind(cmd, args)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.Execute()
	return out.String(), err
}

// TestFlags checks the gate fills tmate.Options from every flag, with the factory's streams
// (cli/cli style: the run function is replaced).
func TestFlags(t *testing.T) {
	var got *tmate.Options
	capture := func(o *tmate.Options) error { got = o; return nil }
	if _, err := execute(t, capture, "--out", "/o", "--timeout-minutes", "30", "--connect-timeout-minutes", "5", "--limit-actor=false",
		"--continue-file", "/a", "--continue-file", "/b", "--detach", "--server-host", "h", "--server-port", "2222",
		"--server-rsa-fingerprint", "SHA256:r", "--server-ed25519-fingerprint", "SHA256:e", "--tmate", "/bin/tmate"); err != nil {
		t.Fatal(err)
	}
	if got.Out != "/o" || got.TimeoutMinutes != "30" || got.ConnectTimeoutMinutes != "5" || got.LimitActor || !got.Detach || got.Wait ||
		strings.Join(got.ContinueFiles, ",") != "/a,/b" || got.ServerHost != "h" || got.ServerPort != 2222 ||
		got.ServerRSAFingerprint != "SHA256:r" || got.ServerED25519Fingerprint != "SHA256:e" || got.TmatePath != "/bin/tmate" {
		t.Errorf("options %+v", got)
	}
	if got.Stdout == nil || got.Stderr == nil || got.Action == nil {
		t.Error("streams or the Actions seam not set")
	}
	if _, err := execute(t, capture, "--timeout-minutes", "30"); err != nil {
		t.Fatal(err)
	}
	if got.Out != tmate.DefaultOut || !got.LimitActor || strings.Join(got.ContinueFiles, ",") != tmate.DefaultContinueFile || got.Wait {
		t.Errorf("defaults %+v", got)
	}
}

// TestUsageErrors: flag and argument errors exit 2, before the gate runs; an input the gate
// refuses exits 2 through tmate.RunGate.
func TestUsageErrors(t *testing.T) {
	never := func(*tmate.Options) error { t.Error("the gate ran"); return nil }
	for _, tt := range []struct {
		args []string
		runF func(*tmate.Options) error
		want string
	}{
		{[]string{"--timeout-minutes", "5", "--bogus"}, never, "unknown flag: --bogus"},
		{[]string{"--timeout-minutes", "5", "--limit-actor=maybe"}, never, "invalid argument"},
		{[]string{"--timeout-minutes", "5", "extra"}, never, "gate takes no arguments"},
		{[]string{"--out", t.TempDir(), "--timeout-minutes", "0"}, nil, "out of range"},
	} {
		_, err := execute(t, tt.runF, tt.args...)
		var ec *tmate.ExitCodeError
		if !errors.As(err, &ec) || ec.ExitCode() != tmate.ExitUsage || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want exit 2 and %q", tt.args, err, tt.want)
		}
	}
}

// TestUsageErrorsRecordEndReason: a flag or argument cobra refuses ends the gate on bad input
// (exit 2) as an input the gate refuses does: the end_reason output is bad-input, so a later
// step reading it learns why (it read ""). tmate.txt is not written: a flag error stops the
// parsing, so --out is not known.
func TestUsageErrorsRecordEndReason(t *testing.T) {
	never := func(*tmate.Options) error { t.Error("the gate ran"); return nil }
	for _, args := range [][]string{
		{"--timeout-minutes", "5", "--bogus"},
		{"--timeout-minutes", "5", "--limit-actor=maybe"},
		{"--timeout-minutes", "5", "extra"},
	} {
		outputs := filepath.Join(t.TempDir(), "outputs")
		var out bytes.Buffer
		f := &factory.Factory{IO: factory.IOStreams{Out: &out, ErrOut: &out}, Getenv: func(k string) string {
			if k == "GITHUB_OUTPUT" {
				return outputs
			}
			return ""
		}}
		cmd := NewCmdGate(f, never)
		lazyflags.Bind(cmd, args)
		cmd.SetArgs(args)
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		err := cmd.Execute()
		var ec *tmate.ExitCodeError
		if !errors.As(err, &ec) || ec.ExitCode() != tmate.ExitUsage {
			t.Errorf("%q: err = %v, want exit 2", args, err)
		}
		got, _ := os.ReadFile(outputs)
		if !strings.Contains(string(got), "end_reason<<") || !strings.Contains(string(got), "\nbad-input\n") {
			t.Errorf("%q: outputs file lacks end_reason=bad-input:\n%s", args, got)
		}
		if !strings.Contains(out.String(), "tmate gate ended: bad-input: ") {
			t.Errorf("%q: the log does not say the gate ended:\n%s", args, out.String())
		}
	}
}

func TestHelp(t *testing.T) {
	help, err := execute(t, nil, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Examples:", "touch /tmp/continue", "--detach", "--wait", "--out", "--timeout-minutes",
		"--limit-actor", "--continue-file", "--connect-timeout-minutes", "--server-host", "--server-port",
		"--server-rsa-fingerprint", "--server-ed25519-fingerprint", "continue-file", "session-ended",
		"connect-timeout", "Exit status",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

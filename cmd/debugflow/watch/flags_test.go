package watch

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
)

// TestCommandFlags checks watch fills its options struct from flags (cli/cli style: the run
// function is replaced).
func TestCommandFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"--latest", "-b", "debug/t4", "-i", "1m"}, time.Minute},
		{[]string{"1", "-i", "5"}, 5 * time.Second},
		{[]string{"1", "--interval=500ms", "--exit-status"}, 500 * time.Millisecond},
		{[]string{"1"}, ghrun.DefaultWatchInterval},
	} {
		var got *WatchOptions
		cmd := NewCmdWatch(&ghcmd.Factory{Factory: &factory.Factory{}}, func(o *WatchOptions) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if got.Interval != tt.want {
			t.Errorf("%q: interval %s, want %s", tt.args, got.Interval, tt.want)
		}
	}
	var got *WatchOptions
	cmd := NewCmdWatch(&ghcmd.Factory{Factory: &factory.Factory{}}, func(o *WatchOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--latest", "-b", "debug/t4", "-R", "acme/kernels", "--hostname", "h.example"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if want := (ghrun.RunSelector{Latest: true, Branch: "debug/t4"}); got.RunSelector != want ||
		got.Repo != "acme/kernels" || got.Hostname != "h.example" || got.GitHub == nil {
		t.Errorf("options %+v", got)
	}
	for _, bad := range []string{"0", "-3", "0s", "5x", "-1s", "100000"} {
		cmd := NewCmdWatch(&ghcmd.Factory{Factory: &factory.Factory{}}, func(*WatchOptions) error { return nil })
		cmd.SetArgs([]string{"1", "-i", bad})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); ghrun.ExitCode(err) != ghrun.ExitUsage {
			t.Errorf("-i %s: err = %v, want a usage error", bad, err)
		}
	}
}

// Every flag has a usage line, and the help shows the gh conventions with examples.
func TestHelpDocumentsEveryFlag(t *testing.T) {
	cmd := NewCmdWatch(&ghcmd.Factory{Factory: &factory.Factory{}}, nil)
	var help strings.Builder
	cmd.SetOut(&help)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"-i, --interval seconds|duration", "-i 10", "--exit-status", "always on", "exit 130"} {
		if !strings.Contains(help.String(), w) {
			t.Errorf("watch --help lacks %q", w)
		}
	}
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if strings.TrimSpace(fl.Usage) == "" && fl.Name != "help" {
			t.Errorf("watch --%s has no usage text", fl.Name)
		}
	})
	if !cmd.HasExample() {
		t.Error("watch has no examples")
	}
}

package download

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
)

func parse(t *testing.T, args ...string) *DownloadOptions {
	t.Helper()
	var got *DownloadOptions
	cmd := NewCmdDownload(&ghcmd.Factory{Factory: &factory.Factory{}}, func(o *DownloadOptions) error { got = o; return nil })
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestCommandFlags checks download fills its options struct from flags (cli/cli style: the
// run function is replaced).
func TestCommandFlags(t *testing.T) {
	got := parse(t, "42", "-n", "evidence", "-n", "other", "-p", "ev-*", "--pattern", "x?", "-D", "out", "--max-files", "7", "--max-size", "1GiB")
	if got.Arg != "42" || got.Dir != "out" || got.MaxFiles != 7 || got.MaxSize != "1GiB" ||
		!slices.Equal(got.Names, []string{"evidence", "other"}) || !slices.Equal(got.Patterns, []string{"ev-*", "x?"}) || got.GitHub == nil {
		t.Errorf("options %+v", got)
	}
}

func TestDefaults(t *testing.T) {
	got := parse(t, "42")
	if got.MaxFiles != ghrun.DefaultExtractLimits.MaxFiles || got.MaxSize != "4GiB" || got.IdleTimeout != ghrun.DefaultIdleTimeout {
		t.Errorf("defaults %+v", got)
	}
	if n, _ := ghrun.ParseSize(got.MaxSize); n != ghrun.DefaultExtractLimits.MaxBytes {
		t.Errorf("--max-size default %d != DefaultExtractLimits.MaxBytes %d", n, ghrun.DefaultExtractLimits.MaxBytes)
	}
}

// Every flag has a usage line, and the help shows the gh conventions with examples.
func TestHelpDocumentsEveryFlag(t *testing.T) {
	cmd := NewCmdDownload(&ghcmd.Factory{Factory: &factory.Factory{}}, nil)
	var help strings.Builder
	cmd.SetOut(&help)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"-n, --name NAME", "-p, --pattern PATTERN", "debugflow-run-<RUN_ID> in the current folder",
		"-p 'evidence-t4*'", "--idle-timeout", "--max-size"} {
		if !strings.Contains(help.String(), w) {
			t.Errorf("download --help lacks %q", w)
		}
	}
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if strings.TrimSpace(fl.Usage) == "" && fl.Name != "help" {
			t.Errorf("download --%s has no usage text", fl.Name)
		}
	})
	if !cmd.HasExample() {
		t.Error("download has no examples")
	}
}

package dispatch

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
)

// parse runs dispatch with args and returns the options its run function got (cli/cli style:
// the run function is replaced).
func parse(t *testing.T, args ...string) (*DispatchOptions, error) {
	t.Helper()
	var got *DispatchOptions
	cmd := NewCmdDispatch(&ghcmd.Factory{Factory: &factory.Factory{}}, func(o *DispatchOptions) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	return got, err
}

// TestCommandFlags checks dispatch fills its options struct from flags.
func TestCommandFlags(t *testing.T) {
	got, err := parse(t, "-R", "ghe.example.com/acme/kernels", "-r", "debug/t4", "-f", "a=1", "-F", "b=@x.txt", "--raw-field", "c=x=y",
		"--field", "d=2", "--watch", "--download", "ev", "--json", "runId,url", "--interval", "10", "--hostname", "h.example", "--idle-timeout", "2m")
	if err != nil {
		t.Fatal(err)
	}
	want := ghrun.DispatchOptions{RepoFlags: ghrun.RepoFlags{Repo: "ghe.example.com/acme/kernels", Hostname: "h.example"}, Ref: "debug/t4",
		RawFields: []string{"a=1", "c=x=y"}, Fields: []string{"b=@x.txt", "d=2"}, Watch: true, DownloadDir: "ev", JSON: "runId,url",
		Interval: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	if diff := cmp.Diff(want, got.DispatchOptions, cmpopts.IgnoreFields(ghrun.DispatchOptions{}, "Stdin", "StdinHint")); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if got.GitHub == nil {
		t.Error("no GitHub environment in the options")
	}
}

func TestJSONForms(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--json"}, "run_id,html_url"},
		{[]string{"--json", "--watch"}, "run_id,html_url"},
		{[]string{"--json=runId"}, "runId"},
		{[]string{"--json", "runId,url"}, "runId,url"},
		{[]string{"--watch", "--json", "url"}, "url"},
		{nil, ""},
	} {
		got, err := parse(t, tt.args...)
		if err != nil || got.JSON != tt.want {
			t.Errorf("%q: JSON %q, %v; want %q", tt.args, got.JSON, err, tt.want)
		}
	}
	if _, err := parse(t, "--json", "reproduce_count=5"); ghrun.ExitCode(err) != ghrun.ExitUsage || !strings.Contains(err.Error(), "inputs go in -f") {
		t.Errorf("--json followed by a non-field argument: %v", err)
	}
}

// Every flag has a usage line, and the help shows the gh conventions with examples.
func TestHelpDocumentsEveryFlag(t *testing.T) {
	cmd := NewCmdDispatch(&ghcmd.Factory{Factory: &factory.Factory{}}, nil)
	var help strings.Builder
	cmd.SetOut(&help)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"-r, --ref", "-f, --raw-field NAME=VALUE", "-F, --field NAME=VALUE", "@FILE", "@-",
		"--json FIELDS", "runId, url", "JSON object", "</dev/null", "--json runId,url", "-F quadrants_ref=@ref.txt", "| debugflow dispatch",
		"--idle-timeout", "whole seconds"} {
		if !strings.Contains(help.String(), w) {
			t.Errorf("dispatch --help lacks %q", w)
		}
	}
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if strings.TrimSpace(fl.Usage) == "" && fl.Name != "help" {
			t.Errorf("dispatch --%s has no usage text", fl.Name)
		}
	})
	if !cmd.HasExample() {
		t.Error("dispatch has no examples")
	}
}

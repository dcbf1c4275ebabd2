package ghrun

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestCommandFlags checks each command fills its options struct from flags
// (cli/cli style: the run function is replaced).
func TestCommandFlags(t *testing.T) {
	f := &Factory{}
	dispatch := func(t *testing.T, args ...string) (*dispatchOptions, error) {
		var got *dispatchOptions
		cmd := newCmdDispatch(f, func(_ context.Context, o *dispatchOptions) error { got = o; return nil })
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		return got, err
	}
	t.Run("dispatch", func(t *testing.T) {
		got, err := dispatch(t, "-R", "ghe.example.com/acme/kernels", "-r", "debug/t4", "-f", "a=1", "-F", "b=@x.txt", "--raw-field", "c=x=y",
			"--field", "d=2", "--watch", "--download", "ev", "--json", "runId,url", "--interval", "10", "--hostname", "h.example", "--idle-timeout", "2m")
		if err != nil {
			t.Fatal(err)
		}
		want := &dispatchOptions{f: f, repoFlags: repoFlags{Repo: "ghe.example.com/acme/kernels", Hostname: "h.example"}, Ref: "debug/t4",
			RawFields: []string{"a=1", "c=x=y"}, Fields: []string{"b=@x.txt", "d=2"}, Watch: true, DownloadDir: "ev", JSON: "runId,url",
			Interval: 10 * time.Second, IdleTimeout: 2 * time.Minute}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(dispatchOptions{}), cmpopts.IgnoreFields(dispatchOptions{}, "f", "stdin", "stdinHint")); diff != "" {
			t.Errorf("options (-want +got):\n%s", diff)
		}
	})
	t.Run("dispatch --json forms", func(t *testing.T) {
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
			got, err := dispatch(t, tt.args...)
			if err != nil || got.JSON != tt.want {
				t.Errorf("%q: JSON %q, %v; want %q", tt.args, got.JSON, err, tt.want)
			}
		}
		if _, err := dispatch(t, "--json", "reproduce_count=5"); ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "inputs go in -f") {
			t.Errorf("--json followed by a non-field argument: %v", err)
		}
	})
	t.Run("watch", func(t *testing.T) {
		for _, tt := range []struct {
			args []string
			want time.Duration
		}{
			{[]string{"--latest", "-b", "debug/t4", "-i", "1m"}, time.Minute},
			{[]string{"1", "-i", "5"}, 5 * time.Second},
			{[]string{"1", "--interval=500ms", "--exit-status"}, 500 * time.Millisecond},
			{[]string{"1"}, DefaultWatchInterval},
		} {
			var got *watchCmdOptions
			cmd := newCmdWatch(f, func(_ context.Context, o *watchCmdOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			if err := cmd.Execute(); err != nil {
				t.Fatalf("%q: %v", tt.args, err)
			}
			if got.Interval != tt.want {
				t.Errorf("%q: interval %s, want %s", tt.args, got.Interval, tt.want)
			}
		}
		for _, bad := range []string{"0", "-3", "0s", "5x", "-1s", "100000"} {
			cmd := newCmdWatch(f, func(context.Context, *watchCmdOptions) error { return nil })
			cmd.SetArgs([]string{"1", "-i", bad})
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			if err := cmd.Execute(); ExitCode(err) != ExitUsage {
				t.Errorf("-i %s: err = %v, want a usage error", bad, err)
			}
		}
	})
	t.Run("download", func(t *testing.T) {
		var got *downloadCmdOptions
		cmd := newCmdDownload(f, func(_ context.Context, o *downloadCmdOptions) error { got = o; return nil })
		cmd.SetArgs([]string{"42", "-n", "evidence", "-n", "other", "-p", "ev-*", "--pattern", "x?", "-D", "out", "--max-files", "7", "--max-size", "1GiB"})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if got.Arg != "42" || got.Dir != "out" || got.MaxFiles != 7 || got.MaxSize != "1GiB" ||
			!slices.Equal(got.Names, []string{"evidence", "other"}) || !slices.Equal(got.Patterns, []string{"ev-*", "x?"}) {
			t.Errorf("options %+v", got)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		var got *downloadCmdOptions
		cmd := newCmdDownload(f, func(_ context.Context, o *downloadCmdOptions) error { got = o; return nil })
		cmd.SetArgs([]string{"42"})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if got.MaxFiles != DefaultExtractLimits.MaxFiles || got.MaxSize != "4GiB" || got.IdleTimeout != DefaultIdleTimeout {
			t.Errorf("defaults %+v", got)
		}
		if n, _ := ParseSize(got.MaxSize); n != DefaultExtractLimits.MaxBytes {
			t.Errorf("--max-size default %d != DefaultExtractLimits.MaxBytes %d", n, DefaultExtractLimits.MaxBytes)
		}
	})
}

// TestRunDispatchDirect calls the run function without cobra, as the lead may.
func TestRunDispatchDirect(t *testing.T) {
	srv := newServer(t)
	h := newHarness(t, srv)
	err := runDispatch(context.Background(), &dispatchOptions{f: h.f, repoFlags: repoFlags{Repo: "acme/kernels"}, Ref: "main",
		RawFields: []string{"open_tmate=false"}, Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	runs := srv.Runs()
	if len(runs) != 1 || runs[0].Branch != "main" || runs[0].Inputs["open_tmate"] != "false" {
		t.Fatalf("runs %+v", runs)
	}
	if h.out.String() != "https://github.com/acme/kernels/actions/runs/"+itoa64(runs[0].ID)+"\n" {
		t.Errorf("stdout %q: want just the run URL", h.out.String())
	}
}

func TestHelpHasExamples(t *testing.T) {
	for _, cmd := range []interface {
		Name() string
		HasExample() bool
	}{NewCmdDispatch(&Factory{}), NewCmdWatch(&Factory{}), NewCmdDownload(&Factory{})} {
		if !cmd.HasExample() {
			t.Errorf("%s --help has no examples", cmd.Name())
		}
	}
}

func TestNewFactory(t *testing.T) {
	f := NewFactory(func() (Workflow, error) { return testWorkflow(), nil }, fakeReport)
	if f.Getenv == nil || f.Stdout == nil || f.Stderr == nil || f.GitRemote == nil || f.GitBranch == nil || f.Report == nil {
		t.Fatalf("unset fields: %+v", f)
	}
	if f.IsTTY {
		t.Error("IsTTY under go test, where stdout is not a terminal")
	}
	wf, err := f.Workflow()
	if err != nil || wf.File != wfFile {
		t.Errorf("Workflow() = %v, %v", wf, err)
	}
}

// FuzzParseInterval: never panics; what it accepts is positive and at most a day.
func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{"5", "500ms", "1m30s", "0", "-1", "86400", "86401", "1e3", " 7 ", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseInterval(s)
		if err != nil {
			return
		}
		if d <= 0 {
			t.Fatalf("parseInterval(%q) = %s", s, d)
		}
	})
}

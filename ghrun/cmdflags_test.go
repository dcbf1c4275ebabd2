package ghrun

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestCommandFlags checks each command fills its options struct from flags
// (cli/cli style: the run function is replaced).
func TestCommandFlags(t *testing.T) {
	f := &Factory{}
	t.Run("dispatch", func(t *testing.T) {
		var got *dispatchOptions
		cmd := newCmdDispatch(f, func(_ context.Context, o *dispatchOptions) error { got = o; return nil })
		cmd.SetArgs([]string{"-R", "ghe.example.com/acme/kernels", "--ref", "debug/t4", "-f", "a=1", "-f", "b=x=y",
			"--watch", "--download", "ev", "--json", "--interval", "10s", "--hostname", "h.example"})
		cmd.SetOut(io.Discard)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		want := &dispatchOptions{f: f, repoFlags: repoFlags{Repo: "ghe.example.com/acme/kernels", Hostname: "h.example"}, Ref: "debug/t4",
			Fields: []string{"a=1", "b=x=y"}, Watch: true, DownloadDir: "ev", JSON: true, Interval: 10 * time.Second, IdleTimeout: DefaultIdleTimeout}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(dispatchOptions{}), cmpopts.IgnoreFields(dispatchOptions{}, "f")); diff != "" {
			t.Errorf("options (-want +got):\n%s", diff)
		}
	})
	t.Run("watch", func(t *testing.T) {
		var got *watchCmdOptions
		cmd := newCmdWatch(f, func(_ context.Context, o *watchCmdOptions) error { got = o; return nil })
		cmd.SetArgs([]string{"--latest", "-b", "debug/t4", "-i", "1m"})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if !got.Latest || got.Branch != "debug/t4" || got.Interval != time.Minute || got.Arg != "" {
			t.Errorf("options %+v", got)
		}
	})
	t.Run("download", func(t *testing.T) {
		var got *downloadCmdOptions
		cmd := newCmdDownload(f, func(_ context.Context, o *downloadCmdOptions) error { got = o; return nil })
		cmd.SetArgs([]string{"42", "-n", "evidence", "-D", "out", "--max-files", "7", "--max-size", "1GiB"})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if got.Arg != "42" || got.Name != "evidence" || got.Dir != "out" || got.MaxFiles != 7 || got.MaxSize != "1GiB" {
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
		if got.MaxFiles != DefaultExtractLimits.MaxFiles || got.MaxSize != "4GiB" {
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
		Fields: []string{"open_tmate=false"}, Interval: time.Second})
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

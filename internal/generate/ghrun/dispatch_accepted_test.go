package ghrun

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// A dispatch GitHub accepted with 204 is said at once, with its dispatch_id, before the run
// is found; whatever stops dispatch after that (Ctrl-C, an API outage) says the dispatch WAS
// sent and how to find its run, never "may have been sent".
func TestDispatchAcceptedThenStopped(t *testing.T) {
	findRun := "find its run (its name contains dispatch_id ID) with:\n  debugflow watch --latest -b debug/t4 -R acme/kernels\n" +
		"  gh run list --workflow " + wfFile + " --branch debug/t4 -R acme/kernels"
	tests := []struct {
		name     string
		setup    func(*ghtest.Server)
		ctrlC    bool
		wantCode int
		want     []string
	}{
		{
			name:     "Ctrl-C while looking for the run",
			ctrlC:    true,
			wantCode: ExitInterrupted,
			want:     []string{"interrupted: the dispatch WAS sent (GitHub accepted it) and its run goes on; do not dispatch again: " + findRun},
		},
		{
			name: "the API fails while looking for the run",
			setup: func(s *ghtest.Server) {
				s.Fail(ghtest.Fault{Method: "GET", Path: "/runs", Status: 502, Times: 1 << 20})
			},
			wantCode: ExitAPIUnavailable,
			want:     []string{"GitHub answered 502", "the dispatch WAS sent (GitHub accepted it); do not dispatch again: " + findRun},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Mode = ghtest.DispatchNoContent
			srv.AddWorkflow(ghtest.Workflow{File: wfFile, Name: "Debug CUDA repro", Inputs: inputNames(testWorkflow()),
				RunName: "debug CUDA repro [{dispatch_id}]", VisibleAfterLists: 1 << 20})
			if tt.setup != nil {
				tt.setup(srv)
			}
			h := newHarness(t, srv)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.ctrlC {
				h.f.Sleep = func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }
			}
			cmd := dispatchCmd(h.f)
			cmd.SetArgs([]string{"-R", "acme/kernels"})
			err := cmd.ExecuteContext(ctx)
			if ExitCode(err) != tt.wantCode {
				t.Fatalf("exit %d, want %d: %v", ExitCode(err), tt.wantCode, err)
			}
			runs := srv.Runs()
			if len(runs) != 1 {
				t.Fatalf("%d runs", len(runs))
			}
			id, _ := runs[0].Inputs[DispatchIDInput].(string)
			accepted := "dispatch of " + wfFile + " on acme/kernels@debug/t4 accepted by GitHub (HTTP 204, dispatch_id " + id + "); looking for its run ...\n"
			if id == "" || !strings.Contains(h.err.String(), accepted) {
				t.Errorf("stderr lacks %q:\n%s", accepted, h.err.String())
			}
			for _, want := range tt.want {
				if want = strings.ReplaceAll(want, "ID", id); !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			if strings.Contains(err.Error(), "may have been sent") {
				t.Errorf("error hedges:\n%v", err)
			}
		})
	}
}

// A run found from the dispatch answer needs no "accepted" line: the "dispatched" line follows
// at once.
func TestDispatchWithRunDetailsSaysNothingMore(t *testing.T) {
	srv := newServer(t)
	h := newHarness(t, srv)
	if err := h.run(dispatchCmd, "-R", "acme/kernels"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.err.String(), "accepted by GitHub") || !strings.Contains(h.err.String(), "(found from the dispatch answer)") {
		t.Errorf("stderr:\n%s", h.err.String())
	}
}

package watch

import (
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd/ghcmdtest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

func TestWatchCommand(t *testing.T) {
	tests := []struct {
		name       string
		conclusion string
		args       func(id int64) []string
		wantCode   int
	}{
		{name: "success by id", conclusion: "success", args: func(id int64) []string { return []string{ghcmdtest.Itoa64(id)} }, wantCode: 0},
		{name: "failure by URL", conclusion: "failure", args: func(id int64) []string {
			return []string{"https://github.com/acme/kernels/actions/runs/" + ghcmdtest.Itoa64(id)}
		}, wantCode: 1},
		{name: "cancelled, latest", conclusion: "cancelled", args: func(int64) []string { return []string{"--latest"} }, wantCode: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := ghcmdtest.NewServer(t)
			id := srv.AddRun(ghtest.Run{WorkflowFile: ghcmdtest.WorkflowFile, Branch: "debug/t4", Frames: ghtest.DefaultFrames(ghcmdtest.FixedNow, tt.conclusion)})
			h := ghcmdtest.NewHarness(t, srv)
			h.F.GitRemote = nil // the repo must come from the URL or be found without git
			args := tt.args(id)
			if args[0] != "https://github.com/acme/kernels/actions/runs/"+ghcmdtest.Itoa64(id) {
				args = append(args, "-R", "acme/kernels")
			}
			err := h.Run(watchCmd, append(args, "-i", "1s")...)
			if ghrun.ExitCode(err) != tt.wantCode {
				t.Fatalf("err = %v (code %d), want code %d", err, ghrun.ExitCode(err), tt.wantCode)
			}
			if !strings.Contains(h.Out.String(), "completed: "+tt.conclusion) {
				t.Errorf("stdout:\n%s", h.Out.String())
			}
		})
	}
	for _, args := range [][]string{{}, {"1", "--latest"}, {"1", "2"}, {"abc"}, {"1", "--interval", "-1s"}} {
		srv := ghcmdtest.NewServer(t)
		h := ghcmdtest.NewHarness(t, srv)
		if err := h.Run(watchCmd, args...); ghrun.ExitCode(err) != ghrun.ExitUsage {
			t.Errorf("watch %q: err = %v (code %d), want a usage error", args, err, ghrun.ExitCode(err))
		}
	}
}

// watch -i 5 waits 5 seconds between polls, as gh does.
func TestWatchIntervalSeconds(t *testing.T) {
	srv := ghcmdtest.NewServer(t)
	id := srv.AddRun(ghtest.Run{WorkflowFile: ghcmdtest.WorkflowFile, Branch: "main", Frames: ghtest.DefaultFrames(ghcmdtest.FixedNow, "success")})
	h := ghcmdtest.NewHarness(t, srv)
	if err := h.Run(watchCmd, ghcmdtest.Itoa64(id), "-R", "acme/kernels", "-i", "5", "--exit-status"); err != nil {
		t.Fatal(err)
	}
	waits := h.Sleeper.Waits()
	if len(waits) == 0 || slices.ContainsFunc(waits, func(d time.Duration) bool { return d != 5*time.Second }) {
		t.Errorf("waits %v, want 5s each", waits)
	}
}

package watch

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// TestTokenNeverPrinted drives watch through success and failure,
// with servers that echo the token back, and checks no output shows it.
func TestTokenNeverPrinted(t *testing.T) {
	echo := `{"message":"Bad credentials: Bearer ` + testToken + `"}`
	tests := []struct {
		name     string
		setup    func(*ghtest.Server, *harness)
		cmd      func(*ghcmd.Factory) *cobra.Command
		args     []string
		wantEcho bool // the server echoed the token, so *** must show where it was
	}{
		{name: "watch with the token in step names", cmd: watchCmd, args: []string{"--latest"}, wantEcho: true,
			setup: func(s *ghtest.Server, _ *harness) {
				s.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "main", DisplayTitle: "run " + testToken, Frames: []ghtest.Frame{{Status: "completed", Conclusion: "failure",
					Jobs: []ghtest.Job{{ID: 1, Name: "job " + testToken, Status: "completed", Conclusion: "failure",
						Steps: []ghtest.Step{{Number: 1, Name: "tmate " + testToken, Status: "in_progress"}}}}}}})
			}},
		{name: "watch on a terminal", cmd: watchCmd, args: []string{"--latest"}, wantEcho: true,
			setup: func(s *ghtest.Server, h *harness) {
				h.F.IO.IsTTY = true
				s.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "main", DisplayTitle: "run " + testToken, Frames: ghtest.DefaultFrames(fixedNow, "success")})
			}},
		{name: "watch 404 echo", cmd: watchCmd, args: []string{"77"}, wantEcho: true,
			setup: func(s *ghtest.Server, _ *harness) { s.Fail(ghtest.Fault{Path: "/runs/77", Status: 404, Body: echo}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1)})
			h := newHarness(t, srv)
			if tt.setup != nil {
				tt.setup(srv, h)
			}
			args := append([]string(nil), tt.args...)
			for i, a := range args {
				if a == "DIR" {
					args[i] = filepath.Join(t.TempDir(), "out")
				}
			}
			err := h.Run(tt.cmd, args...)
			all := h.Out.String() + h.Err.String() + fmt.Sprint(err)
			if strings.Contains(all, testToken) {
				t.Fatalf("the token was printed:\nstdout: %s\nstderr: %s\nerr: %v", h.Out.String(), h.Err.String(), err)
			}
			if tt.wantEcho && !strings.Contains(all, "***") {
				t.Errorf("the echoed token was not masked (or not echoed):\n%s", all)
			}
			if len(all) < 20 {
				t.Errorf("suspiciously little output: %q", all)
			}
		})
	}
}

package watch

import (
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd/ghcmdtest"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// TestTokenNeverPrinted drives watch through success and failure,
// with servers that echo the token back, and checks no output shows it.
func TestTokenNeverPrinted(t *testing.T) {
	echo := `{"message":"Bad credentials: Bearer ` + ghcmdtest.Token + `"}`
	tests := []ghcmdtest.TokenCase{
		{Name: "watch with the token in step names", Cmd: watchCmd, Args: []string{"--latest"}, WantEcho: true,
			Setup: func(s *ghtest.Server, _ *ghcmdtest.Harness) {
				s.AddRun(ghtest.Run{WorkflowFile: ghcmdtest.WorkflowFile, Branch: "main", DisplayTitle: "run " + ghcmdtest.Token, Frames: []ghtest.Frame{{Status: "completed", Conclusion: "failure",
					Jobs: []ghtest.Job{{ID: 1, Name: "job " + ghcmdtest.Token, Status: "completed", Conclusion: "failure",
						Steps: []ghtest.Step{{Number: 1, Name: "tmate " + ghcmdtest.Token, Status: "in_progress"}}}}}}})
			}},
		{Name: "watch on a terminal", Cmd: watchCmd, Args: []string{"--latest"}, WantEcho: true,
			Setup: func(s *ghtest.Server, h *ghcmdtest.Harness) {
				h.F.IO.IsTTY = true
				s.AddRun(ghtest.Run{WorkflowFile: ghcmdtest.WorkflowFile, Branch: "main", DisplayTitle: "run " + ghcmdtest.Token, Frames: ghtest.DefaultFrames(ghcmdtest.FixedNow, "success")})
			}},
		{Name: "watch 404 echo", Cmd: watchCmd, Args: []string{"77"}, WantEcho: true,
			Setup: func(s *ghtest.Server, _ *ghcmdtest.Harness) {
				s.Fail(ghtest.Fault{Path: "/runs/77", Status: 404, Body: echo})
			}},
		{Name: "watch through an outage that echoes the token, then the resume commands", Cmd: watchCmd, Args: []string{"--latest"},
			Setup: func(s *ghtest.Server, _ *ghcmdtest.Harness) {
				s.AddRun(ghtest.Run{WorkflowFile: ghcmdtest.WorkflowFile, Branch: "main", Frames: []ghtest.Frame{{Status: "in_progress"}}})
				s.Fail(ghtest.Fault{Method: "GET", Path: "/jobs", Status: 502, Times: 1 << 20, Body: echo})
			}},
	}
	ghcmdtest.CheckTokenNeverPrinted(t, tests)
}

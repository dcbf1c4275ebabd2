package watch

import (
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd/ghcmdtest"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// TestTokenNeverPrinted drives watch through success and failure,
// with servers that echo the token back, and checks no output shows it.
func TestTokenNeverPrinted(t *testing.T) {
	echo := `{"message":"Bad credentials: Bearer ` + testToken + `"}`
	tests := []ghcmdtest.TokenCase{
		{Name: "watch with the token in step names", Cmd: watchCmd, Args: []string{"--latest"}, WantEcho: true,
			Setup: func(s *ghtest.Server, _ *harness) {
				s.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "main", DisplayTitle: "run " + testToken, Frames: []ghtest.Frame{{Status: "completed", Conclusion: "failure",
					Jobs: []ghtest.Job{{ID: 1, Name: "job " + testToken, Status: "completed", Conclusion: "failure",
						Steps: []ghtest.Step{{Number: 1, Name: "tmate " + testToken, Status: "in_progress"}}}}}}})
			}},
		{Name: "watch on a terminal", Cmd: watchCmd, Args: []string{"--latest"}, WantEcho: true,
			Setup: func(s *ghtest.Server, h *harness) {
				h.F.IO.IsTTY = true
				s.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "main", DisplayTitle: "run " + testToken, Frames: ghtest.DefaultFrames(fixedNow, "success")})
			}},
		{Name: "watch 404 echo", Cmd: watchCmd, Args: []string{"77"}, WantEcho: true,
			Setup: func(s *ghtest.Server, _ *harness) { s.Fail(ghtest.Fault{Path: "/runs/77", Status: 404, Body: echo}) }},
	}
	ghcmdtest.CheckTokenNeverPrinted(t, tests)
}

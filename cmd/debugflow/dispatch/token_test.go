package dispatch

import (
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd/ghcmdtest"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// TestTokenNeverPrinted drives dispatch through success and failure,
// with servers that echo the token back, and checks no output shows it.
func TestTokenNeverPrinted(t *testing.T) {
	echo := `{"message":"Bad credentials: Bearer ` + ghcmdtest.Token + `"}`
	tests := []ghcmdtest.TokenCase{
		{Name: "dispatch --json succeeds", Cmd: dispatchCmd, Args: []string{"--json", "--watch", "--download", "DIR"}},
		{Name: "dispatch 401 echo", Cmd: dispatchCmd, WantEcho: true,
			Setup: func(s *ghtest.Server, _ *ghcmdtest.Harness) {
				s.Fail(ghtest.Fault{Path: "/dispatches", Status: 401, Body: echo})
			}},
		{Name: "dispatch 403 echo", Cmd: dispatchCmd, WantEcho: true,
			Setup: func(s *ghtest.Server, _ *ghcmdtest.Harness) {
				s.Fail(ghtest.Fault{Path: "/dispatches", Status: 403, Body: echo})
			}},
		{Name: "dispatch 422 echo", Cmd: dispatchCmd, Args: []string{"--json"}, WantEcho: true,
			Setup: func(s *ghtest.Server, _ *ghcmdtest.Harness) {
				s.Fail(ghtest.Fault{Path: "/dispatches", Status: 422, Body: echo})
			}},
		{Name: "token only in GITHUB_TOKEN", Cmd: dispatchCmd, WantEcho: true,
			Setup: func(s *ghtest.Server, h *ghcmdtest.Harness) {
				h.Env[ghrun.EnvGHToken] = ""
				h.Env[ghrun.EnvGitHubToken] = ghcmdtest.Token
				s.Fail(ghtest.Fault{Path: "/dispatches", Status: 401, Body: echo})
			}},
	}
	ghcmdtest.CheckTokenNeverPrinted(t, tests)
}

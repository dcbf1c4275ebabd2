package download

import (
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd/ghcmdtest"
	"github.com/debugflow/debugflow/internal/generate/ghrun"
	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// TestTokenNeverPrinted drives download through success and failure,
// with servers that echo the token back, and checks no output shows it.
func TestTokenNeverPrinted(t *testing.T) {
	echo := `{"message":"Bad credentials: Bearer ` + ghcmdtest.Token + `"}`
	tests := []ghcmdtest.TokenCase{
		{Name: "download with retries and an echo", Cmd: downloadCmd, Args: []string{"--latest", "-D", "DIR"},
			Setup: func(s *ghtest.Server, _ *ghcmdtest.Harness) {
				id := s.AddRun(ghcmdtest.FinishedRun(ghcmdtest.WorkflowFile, "main"))
				s.AddArtifact(id, ghtest.ArtifactFile{Name: "evidence", Zip: ghcmdtest.EvidenceZip(t, 1)})
				s.Fail(ghtest.Fault{Path: "/artifacts", Status: 503, Times: 2})
				s.Fail(ghtest.Fault{Path: "/zip", Status: 403, Body: echo})
			}},
		{Name: "token in GITHUB_API_URL", Cmd: downloadCmd, Args: []string{"1"},
			Setup: func(s *ghtest.Server, h *ghcmdtest.Harness) {
				h.Env[ghrun.EnvAPIURL] = "http://x:" + ghcmdtest.Token + "@127.0.0.1:1/"
			}},
	}
	ghcmdtest.CheckTokenNeverPrinted(t, tests)
}

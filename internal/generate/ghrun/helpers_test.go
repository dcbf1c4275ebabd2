package ghrun

import (
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

// The shared fakes (ghtest), under this package's names.
const (
	testToken = ghtest.Token
	wfFile    = ghtest.WorkflowFile
)

var fixedNow = ghtest.FixedNow

type sleeper = ghtest.Sleeper

// testWorkflow mirrors the default spec's inputs plus one of each other type.
func testWorkflow() Workflow {
	return Workflow{File: wfFile, Inputs: []InputDef{
		{Name: "quadrants_ref", Type: InputString, Default: "main", Description: "ref to build"},
		{Name: "tmate_timeout_minutes", Type: InputNumber, Default: "30"},
		{Name: "reproduce_count", Type: InputNumber, Default: "50"},
		{Name: "sanitizer_tool", Type: InputChoice, Default: "memcheck", Options: []string{"memcheck", "racecheck", "initcheck"}},
		{Name: "open_tmate", Type: InputBoolean, Default: "true"},
		{Name: DispatchIDInput, Type: InputString},
	}}
}

func inputNames(w Workflow) []string {
	var out []string
	for _, in := range w.Inputs {
		out = append(out, in.Name)
	}
	return out
}

// newServer starts the fake GitHub with the debug workflow on branch debug/t4.
func newServer(t *testing.T, artifacts ...ghtest.ArtifactFile) *ghtest.Server {
	t.Helper()
	srv := ghtest.New(t, "acme", "kernels", testToken)
	srv.AddBranch("debug/t4")
	srv.AddWorkflow(ghtest.Workflow{
		File: wfFile, Name: "Debug CUDA repro", Inputs: inputNames(testWorkflow()),
		RunName: "debug CUDA repro [{dispatch_id}]", Artifacts: artifacts,
	})
	return srv
}

var testRepo = Repo{Owner: "acme", Name: "kernels"}

func newTestClient(t *testing.T, srv *ghtest.Server) (*Client, *sleeper) {
	t.Helper()
	sl := &sleeper{}
	c, err := NewClient(ClientOptions{Token: testToken, APIURL: srv.URL(), Sleep: sl.Sleep, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	return c, sl
}

type zipEntry = ghtest.ZipEntry

var (
	makeZip     = ghtest.MakeZip
	evidenceZip = ghtest.EvidenceZip
)

// ghtestRun is a finished successful run of file on branch.
func ghtestRun(file, branch string) ghtest.Run {
	return ghtest.Run{WorkflowFile: file, Branch: branch, Name: "Debug CUDA repro", DisplayTitle: "debug CUDA repro [manual]",
		Frames: ghtest.DefaultFrames(fixedNow.Add(-2*time.Minute), "success")[3:]}
}

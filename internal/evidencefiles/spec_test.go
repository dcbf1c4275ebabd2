package evidencefiles_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/spec"
)

// Every file of the folder, and a member of every family, is refused as the smoke test's log:
// a spec cannot make a step overwrite evidence (issue 24). Driven by Files, so a file added
// there is checked here.
func TestSpecRefusesEveryReservedName(t *testing.T) {
	for _, f := range evidencefiles.Files {
		for _, name := range []string{f.Sample(), strings.ToUpper(f.Sample())} {
			yaml := fmt.Sprintf("runners: [gpu]\nsmoke:\n  command: \"true\"\n  log: %q\nreproducer: {paths: [t]}\n", name)
			_, err := spec.Parse("debugflow.yaml", []byte(yaml))
			if err == nil || !strings.Contains(err.Error(), "a file the steps write themselves") {
				t.Errorf("smoke.log %s: got %v, want the reserved-name error", name, err)
			}
		}
	}
	// A name of no file is accepted: the check is not refusing everything.
	if _, err := spec.Parse("debugflow.yaml", []byte("runners: [gpu]\nsmoke:\n  command: \"true\"\n  log: cuda_init.log\nreproducer: {paths: [t]}\n")); err != nil {
		t.Errorf("smoke.log cuda_init.log: %v", err)
	}
}

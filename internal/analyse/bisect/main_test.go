package bisect

import (
	"os"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
)

// TestMain gives fuzzing a short minimization budget (testenv.MinimizeBriefly).
func TestMain(m *testing.M) {
	testenv.MinimizeBriefly()
	os.Exit(testenv.RunWithPytestTempRoot(m.Run))
}

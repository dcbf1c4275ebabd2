package bisect

import (
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
)

// TestMain gives the pytest runs of these tests a temporary root of their own, removed when
// they end (testenv.PytestTempRoot): pytest-xdist leaves a folder there at every run.
func TestMain(m *testing.M) { testenv.Main(m) }

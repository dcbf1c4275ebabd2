package main

import (
	"testing"

	"github.com/debugflow/debugflow/internal/lazyre"
)

// Every pattern of the packages linked into debugflow is compiled on first use
// (internal/lazyre); here they all compile, including those only rare paths reach.
func TestEveryLazyPatternCompiles(t *testing.T) {
	if lazyre.Count() == 0 {
		t.Fatal("no lazy patterns registered")
	}
	if bad := lazyre.CompileAll(); len(bad) > 0 {
		t.Errorf("patterns that do not compile:\n%q", bad)
	}
}

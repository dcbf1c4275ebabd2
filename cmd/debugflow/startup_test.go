package main

import (
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
)

// BenchmarkStartup measures `debugflow --version` against its anchor, a Go hello world built
// the same way, in turn: `go test -run '^$' -bench Startup -benchtime 300x ./cmd/debugflow` (the -x metrics
// are multiples of hello-ms). The target is
// at most twice the hello world. The floor is a program that links only what debugflow cannot
// do without (testdata/startupfloor: actionlint, go-github, goccy/go-yaml, cobra, the early
// signal catch) and does nothing: their package initialisation (actionlint's tables above
// all) is paid by every process whatever it runs. All are built static, so the comparison
// leaves the dynamic loader out.
func BenchmarkStartup(b *testing.B) {
	testenv.BenchStartup(b, "debugflow", []string{"--version"})
}

package main

import (
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
)

// BenchmarkStartup measures one debugflow-step process (about fifteen per job) against its
// anchor, a Go hello world built the same way, in turn: `go test -run '^$' -bench
// Startup -benchtime 300x ./cmd/debugflow-step` (the -x metrics are multiples of
// hello-ms). The target is at most twice the hello world. The floor is a program that links
// only what the step binary cannot do without (testdata/startupfloor: go-githubactions,
// which brings net/http; the HTTPS client of the gate's key fetch; cobra; the early signal
// catch) and does nothing: what no change inside debugflow-step can go below. All are
// built static, as the bundle and the release deliver the step binary.
func BenchmarkStartup(b *testing.B) {
	testenv.BenchStartup(b, "debugflow-step", []string{"--version"}, []string{"check-inputs", "--help"})
}

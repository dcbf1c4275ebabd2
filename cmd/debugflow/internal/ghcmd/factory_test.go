package ghcmd

import (
	"bytes"
	"context"
	"testing"

	"github.com/debugflow/debugflow/cmd/internal/factory"
)

// TestGitHub: the GitHub environment carries the factory's seams, and is the same at every
// call, so the secrets it learns stay learnt.
func TestGitHub(t *testing.T) {
	var out bytes.Buffer
	branch := func(context.Context) (string, error) { return "debug/t4", nil }
	f := &Factory{Factory: &factory.Factory{IO: factory.IOStreams{Out: &out, IsTTY: true}, Getenv: func(k string) string { return "v-" + k }}, GitBranch: branch}
	gh := f.GitHub()
	if gh != f.GitHub() {
		t.Error("GitHub() built twice")
	}
	if gh.Stdout != &out || gh.Stderr == nil || !gh.IsTTY || gh.Getenv("X") != "v-X" {
		t.Errorf("env %+v", gh)
	}
	if b, _ := gh.GitBranch(context.Background()); b != "debug/t4" {
		t.Errorf("GitBranch = %q", b)
	}
}

func TestNewFactory(t *testing.T) {
	f := NewFactory(factory.New(nil, &bytes.Buffer{}, &bytes.Buffer{}))
	if f.TokenFromGH == nil || f.GitRemote == nil || f.GitBranch == nil || f.Factory == nil {
		t.Fatalf("unset fields: %+v", f)
	}
}

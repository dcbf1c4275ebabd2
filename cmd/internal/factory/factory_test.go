package factory

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	var out, errOut bytes.Buffer
	f := New(strings.NewReader("{}"), &out, &errOut)
	if f.Getenv == nil || f.GitRemote == nil || f.GitBranch == nil || f.TokenFromGH == nil || f.IO.In == nil {
		t.Fatalf("unset fields: %+v", f)
	}
	if f.IO.IsTTY {
		t.Error("IsTTY with buffers for streams")
	}
	if New(nil, nil, nil).IO.Out != os.Stdout {
		t.Error("a nil stream is not the process's own")
	}
}

// TestGitHub: the GitHub environment carries the factory's seams, and is the same at every
// call, so the secrets it learns stay learnt.
func TestGitHub(t *testing.T) {
	var out bytes.Buffer
	branch := func(context.Context) (string, error) { return "debug/t4", nil }
	f := &Factory{IO: IOStreams{Out: &out, IsTTY: true}, Getenv: func(k string) string { return "v-" + k }, GitBranch: branch}
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
	if f.Env("Y") != "v-Y" || (&Factory{}).Dir() != "." {
		t.Error("Env or Dir")
	}
}

func TestIsTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if IsTerminal(null) || IsTerminal(&bytes.Buffer{}) {
		t.Error("/dev/null or a buffer is a terminal")
	}
}

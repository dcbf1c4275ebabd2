package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// Every mkrelease line of the release workflow parses with this command's flags, the values
// coming from the step's env as on the runner.
func TestReleaseWorkflowLinesParse(t *testing.T) {
	data, err := os.ReadFile("../../../.github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	var parsed []*options
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			for _, line := range strings.Split(st.Run, "\n") {
				rest, ok := strings.CutPrefix(strings.TrimSpace(line), "go run ./internal/release/mkrelease ")
				if !ok {
					continue
				}
				cmd := exec.Command("bash", "-c", "set -- "+rest+"\nprintf '%s\\0' \"$@\"")
				cmd.Env = append(os.Environ(), "TAG=v1.2.3", "REVISION=0123456789abcdef0123456789abcdef01234567", "RUNNER_TEMP=/tmp/rt")
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("bash could not expand %q: %v", rest, err)
				}
				args := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
				o, err := parse(args, &bytes.Buffer{})
				if err != nil {
					t.Errorf("%q: %v", line, err)
					continue
				}
				parsed = append(parsed, o)
			}
		}
	}
	if len(parsed) != 2 {
		t.Fatalf("%d mkrelease lines, want the build and the build again with --compare", len(parsed))
	}
	for _, o := range parsed {
		if o.Version != "v1.2.3" || o.Revision != "0123456789abcdef0123456789abcdef01234567" || len(o.Platforms) != 0 {
			t.Errorf("parsed %+v, want the tag, the revision and every platform", o.Options)
		}
	}
	if parsed[0].Out != "dist" || parsed[1].Compare != "dist" || parsed[1].Out == "dist" {
		t.Errorf("want a build into dist, then one elsewhere compared with dist: %+v, %+v", parsed[0], parsed[1])
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--version", "v1.0.0"},
		{"--version", "v1.0.0", "--revision", "x", "extra"},
		{"--version", "v1.0.0", "--revision", "x", "--platforms", "linux"},
		{"--nope"},
	} {
		var out bytes.Buffer
		if code := run(context.Background(), args, &out, &out); code != 2 {
			t.Errorf("%q: exit %d, want 2:\n%s", args, code, out.String())
		}
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"--version", "main", "--revision", strings.Repeat("a", 40), "--out", t.TempDir()}, &out, &out); code != 1 ||
		!strings.Contains(out.String(), "is not a release tag") {
		t.Errorf("a branch name as version: exit %d:\n%s", code, out.String())
	}
}

package audit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadTriggers(t *testing.T) {
	tests := []struct {
		on   string
		want []string
	}{
		{"on: push", []string{"push"}},
		{"on: [push, Pull_Request]", []string{"push", "pull_request"}},
		{"on:\n  pull_request_target:\n    types: [opened]\n  workflow_run:\n", []string{"pull_request_target", "workflow_run"}},
		{"\"on\": issue_comment", []string{"issue_comment"}},
		{"name: x", nil},
	}
	for _, tt := range tests {
		src := tt.on + "\njobs: {}\n"
		f, err := parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		doc := newDocument([]byte(src))
		var got []string
		for _, tr := range readTriggers(doc, doc.lookup(doc.resolve(f.Docs[0].Body), "on")) {
			got = append(got, tr.Event)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.on, diff)
		}
	}
}

// TestWithSelfHostedLabels: a label declared self-hosted counts even when GitHub hosts a
// runner of that name (a spec may name its own machines so).
func TestWithSelfHostedLabels(t *testing.T) {
	content := []byte(`on: pull_request
permissions:
  contents: read
jobs:
  a:
    runs-on: ubuntu-latest
    timeout-minutes: 5
    steps:
      - run: echo a
`)
	for _, tt := range []struct {
		opts []Option
		want int
	}{
		{nil, 0},
		{[]Option{WithSelfHostedLabels("Ubuntu-Latest")}, 1},
	} {
		findings, err := Workflow("w.yml", content, tt.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if len(findings) != tt.want || (tt.want == 1 && !strings.Contains(findings[0].String(), `[self-hosted-runner] job "a" runs on self-hosted runner "ubuntu-latest"`)) {
			t.Errorf("options %d: got %v", len(tt.opts), findings)
		}
	}
}

// TestWithOpenTmateGate: the option accepts only debugflow's gate opened by its spec, not
// other SSH steps.
func TestWithOpenTmateGate(t *testing.T) {
	content := []byte(`on: workflow_dispatch
permissions:
  contents: read
jobs:
  a:
    runs-on: ubuntu-latest
    timeout-minutes: 5
    steps:
      - run: debugflow-step gate --out /tmp/repro --limit-actor=false
      - run: tmate -S /tmp/s new-session -d
`)
	findings, err := Workflow("w.yml", content, WithOpenTmateGate())
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 1 || findings[0].Line != 10 || findings[0].Rule != "tmate-access" {
		t.Errorf("got %v, want only the raw tmate session", findings)
	}
}

package tmate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func sampleState() *state {
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	return &state{
		Version: stateVersion, Tmate: "/usr/bin/tmate", Socket: "/tmp/d/tmate.sock", Dir: "/tmp/d",
		StartedAt: start, Deadline: start.Add(30 * time.Minute), ConnectDeadline: start.Add(10 * time.Minute),
		TimeoutMinutes: 30, ConnectMinutes: 10, SSH: "ssh abc@nyc1.tmate.io", LimitActor: true, Actor: "octocat", Keys: 2,
		Continue: continueWatch{Files: []string{"/tmp/continue", "/continue"}, Stale: map[string]time.Time{"/continue": start.Add(-time.Hour)}},
		RunID:    "42", RunAttempt: "1", Job: "debug",
	}
}

func TestStateRoundTrip(t *testing.T) {
	out := t.TempDir()
	want := sampleState()
	if err := want.save(out); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GITHUB_RUN_ID": "42", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_JOB": "debug"}
	got, note := loadState(out, func(k string) string { return env[k] })
	if got == nil {
		t.Fatalf("loadState: %s", note)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("state round trip (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Errorf("save left temporary files: %v", entries)
	}

	env["GITHUB_RUN_ATTEMPT"] = "2"
	if got, note := loadState(out, func(k string) string { return env[k] }); got != nil || !strings.Contains(note, "attempt 1") {
		t.Errorf("state of another attempt accepted (%s)", note)
	}
	if err := removeState(out); err != nil {
		t.Fatal(err)
	}
	if err := removeState(out); err != nil {
		t.Errorf("removing a missing state: %v", err)
	}
}

func TestDecodeStateRejects(t *testing.T) {
	tests := []struct {
		name, json, wantErr string
	}{
		{"not json", "{", "decoding tmate state"},
		{"old version", `{"version":0,"tmate":"t","socket":"s","started_at":"2024-05-01T12:00:00Z","deadline":"2024-05-01T12:30:00Z"}`, "version 0"},
		{"no socket", `{"version":1,"tmate":"t","started_at":"2024-05-01T12:00:00Z","deadline":"2024-05-01T12:30:00Z"}`, "no tmate binary or socket"},
		{"no deadline", `{"version":1,"tmate":"t","socket":"s","started_at":"2024-05-01T12:00:00Z"}`, "no start time or deadline"},
		{"no continue file", `{"version":1,"tmate":"t","socket":"s","started_at":"2024-05-01T12:00:00Z","deadline":"2024-05-01T12:30:00Z"}`, "no continue file"},
		{"deadline before start", `{"version":1,"tmate":"t","socket":"s","started_at":"2024-05-01T12:00:00Z","deadline":"2024-05-01T11:00:00Z"}`, "deadline before its start"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeState(strings.NewReader(tc.json)); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("decodeState error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func FuzzDecodeState(f *testing.F) {
	dir := f.TempDir()
	if err := sampleState().save(dir); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add(`{"version":1}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		st, err := decodeState(strings.NewReader(s))
		if err != nil {
			return
		}
		if st.Version != stateVersion || st.Tmate == "" || st.Socket == "" || st.Deadline.Before(st.StartedAt) || len(st.Continue.Files) == 0 {
			t.Fatalf("decodeState accepted an unusable state: %+v", st)
		}
	})
}

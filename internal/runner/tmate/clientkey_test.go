package tmate

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsureClientKey(t *testing.T) {
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Fatal("ssh-keygen is not installed: apt-get install openssh-client")
	}
	tests := []struct {
		name     string
		existing string // a key file already in ~/.ssh
		runner   CommandRunner
		wantKeys []string
		wantLog  string
	}{
		{"fresh runner", "", ExecRunner{}, []string{"id_ed25519", "id_ed25519.pub", "id_rsa", "id_rsa.pub"}, "created the client SSH keys"},
		{"user already has a key", "id_ecdsa", ExecRunner{}, []string{"id_ecdsa"}, ""},
		{"no ssh-keygen", "", &fakeRunner{onPath: map[string]string{}}, nil, "ssh-keygen is not installed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.existing != "" {
				os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
				os.WriteFile(filepath.Join(home, ".ssh", tt.existing), []byte("key"), 0o600)
			}
			var log bytes.Buffer
			g := &gate{o: Options{Home: home, Runner: tt.runner, Stdout: &log, Getenv: func(string) string { return "" }}.withDefaults()}
			g.ensureClientKey(context.Background())
			entries, _ := os.ReadDir(filepath.Join(home, ".ssh"))
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			if strings.Join(got, " ") != strings.Join(tt.wantKeys, " ") {
				t.Errorf("~/.ssh holds %v, want %v", got, tt.wantKeys)
			}
			if tt.wantLog != "" && !strings.Contains(log.String(), tt.wantLog) {
				t.Errorf("log lacks %q:\n%s", tt.wantLog, log.String())
			}
			if tt.wantLog == "" && log.Len() > 0 {
				t.Errorf("want a silent no-op, got:\n%s", log.String())
			}
			if len(tt.wantKeys) == 4 {
				if fi, _ := os.Stat(filepath.Join(home, ".ssh", "id_rsa")); fi.Mode().Perm() != 0o600 {
					t.Errorf("id_rsa mode %v, want 0600", fi.Mode().Perm())
				}
				if out, err := exec.Command(keygen, "-y", "-f", filepath.Join(home, ".ssh", "id_ed25519")).Output(); err != nil || !bytes.HasPrefix(out, []byte("ssh-ed25519 ")) {
					t.Errorf("id_ed25519 is not a usable key: %v %s", err, out)
				}
			}
		})
	}
}
